/*
 * reopen.c - a store file keeps the visible state, the pending mutations (status, policy,
 * dedupe key) and the client id across close and reopen; ids keep increasing.
 */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, rmdir under -std=c11 */

#include "fixtures.h"

#include <unistd.h>

/* A file-backed store keeps V, the pending list and the client id across close and reopen.
 */
static void test_file_backed(void) {
    char dir[] = "/tmp/optimist-reopen-XXXXXX";
    if (mkdtemp(dir) == NULL) {
        CHECK(!"mkdtemp");
        return;
    }
    char path[sizeof dir + 16];
    snprintf(path, sizeof path, "%s/store.db", dir);
    optimist_store *s = NULL;
    int rc = optimist_open(path, &s);
    CHECK_RC(rc, OPTIMIST_OK);
    if (rc != OPTIMIST_OK) return;
    char *id1 = NULL, *id2 = NULL, *json = NULL;
    CHECK_RC(optimist_client_id(s, &id1), OPTIMIST_OK);
    optimist_batch *b = batch_of_put("docs", "d1", "{\"v\":1}");
    uint64_t m1 = 0, m2 = 0;
    CHECK_RC(optimist_mutate(s, b, NULL, &m1), OPTIMIST_OK);
    CHECK_RC(optimist_commit(s, m1, NULL), OPTIMIST_OK);
    optimist_batch *inc = batch_of_incr("docs", "d1", "v", 10);
    CHECK_RC(optimist_mutate_with_policy(s, inc, "bump", OPTIMIST_POLICY_KEEP, &m2), OPTIMIST_OK);
    CHECK_RC(optimist_flush(s), OPTIMIST_OK);
    CHECK_RC(optimist_close(s), OPTIMIST_OK);

    s = NULL;
    CHECK_RC(optimist_open(path, &s), OPTIMIST_OK);
    CHECK_RC(optimist_client_id(s, &id2), OPTIMIST_OK);
    CHECK(id1 && id2 && strcmp(id1, id2) == 0);
    CHECK_RC(optimist_get(s, "docs", "d1", &json), OPTIMIST_OK);
    CHECK_JSON(json, "{\"v\":11}");
    json = NULL;
    CHECK_RC(optimist_get_confirmed(s, "docs", "d1", &json), OPTIMIST_OK);
    CHECK_JSON(json, "{\"v\":1}");
    int st = 0;
    CHECK_RC(optimist_status(s, m2, &st), OPTIMIST_OK);
    CHECK(st == OPTIMIST_PENDING);
    uint64_t dup = 0, m3 = 0;
    CHECK_RC(optimist_mutate(s, inc, "bump", &dup), OPTIMIST_DUPLICATE);
    CHECK(dup == m2);
    CHECK_RC(optimist_mutate(s, inc, NULL, &m3), OPTIMIST_OK);
    CHECK(m3 > m2);
    CHECK_RC(optimist_close(s), OPTIMIST_OK);
    optimist_free(id1);
    optimist_free(id2);
    optimist_batch_free(b);
    optimist_batch_free(inc);
    /* Remove what the store left: the file and any journal beside it. */
    const char *suffixes[] = {"", "-wal", "-shm", "-journal", ".lock"};
    for (size_t i = 0; i < sizeof suffixes / sizeof *suffixes; i++) {
        char f[sizeof path + 16];
        snprintf(f, sizeof f, "%s%s", path, suffixes[i]);
        remove(f);
    }
    rmdir(dir);
}

int main(void) {
    test_file_backed();
    return CHECK_DONE();
}
