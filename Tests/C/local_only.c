/*
 * local_only.c - optimist_open_options version 3. read_only: a second open of a file held
 * open is OPTIMIST_BUSY plainly and OK read-only, shows what was flushed (pending included),
 * refuses changes with MISUSE, and the holder's flush still succeeds. local_only: in memory a mutation is COMMITTED before
 * optimist_mutate returns; on a store file optimist_flush commits every mutation before it,
 * and a reopen (not local-only) finds them confirmed; a local-only store has no outbox
 * (optimist_outbox_next, optimist_outbox_wait and optimist_sync_start are MISUSE); a
 * local_only other than 0 or 1 is MISUSE; a version 2 struct opens as before.
 */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, rmdir under -std=c11 */
#include "fixtures.h"

#include <unistd.h>

static void in_memory(void) {
    optimist_open_options o = OPTIMIST_OPEN_OPTIONS_INIT;
    CHECK(o.local_only == 0);
    o.local_only = 1;
    optimist_store *s = NULL;
    CHECK_OK(optimist_open_ext(NULL, &o, &s));
    uint64_t id = mutate_put(s, "habits", "run", "{\"count\":1}");
    CHECK(status_of(s, id) == OPTIMIST_COMMITTED);
    char *out = NULL;
    CHECK_OK(optimist_get_confirmed(s, "habits", "run", &out));
    CHECK_JSON(out, "{\"count\":1}");
    CHECK(pending_count(s) == 0);

    uint64_t next = 0;
    char *ops = NULL;
    int ready = -1;
    CHECK_FAILS(optimist_outbox_next(s, 0, &next, &ops), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_outbox_wait(s, 0, &ready), OPTIMIST_MISUSE);
    CHECK(ops == NULL && ready == -1);
    optimist_sync_options so = OPTIMIST_SYNC_OPTIONS_INIT;
    so.url = "http://127.0.0.1:9";
    CHECK_FAILS(optimist_sync_start(s, &so), OPTIMIST_MISUSE);
    CHECK_OK(optimist_close(s));

    o.local_only = 2;
    s = NULL;
    CHECK_FAILS(optimist_open_ext(NULL, &o, &s), OPTIMIST_MISUSE);
    CHECK(s == NULL);

    /* A version 2 struct (no local_only member read): an ordinary store. */
    optimist_open_options v2 = OPTIMIST_OPEN_OPTIONS_INIT;
    v2.version = 2;
    v2.local_only = 1; /* not read */
    CHECK_OK(optimist_open_ext(NULL, &v2, &s));
    id = mutate_put(s, "habits", "run", "{}");
    CHECK(status_of(s, id) == OPTIMIST_PENDING);
    CHECK_OK(optimist_close(s));
}

static void on_a_file(void) {
    char dir[] = "/tmp/optimist-local-XXXXXX";
    if (mkdtemp(dir) == NULL) {
        CHECK(!"mkdtemp");
        return;
    }
    char path[sizeof dir + 16];
    snprintf(path, sizeof path, "%s/store.db", dir);
    optimist_open_options o = OPTIMIST_OPEN_OPTIONS_INIT;
    o.local_only = 1;
    optimist_store *s = NULL;
    CHECK_OK(optimist_open_ext(path, &o, &s));
    uint64_t ids[50];
    for (int i = 0; i < 50; i++) ids[i] = mutate_incr(s, "habits", "run", "count", 1);
    CHECK_OK(optimist_flush(s));
    for (int i = 0; i < 50; i++) CHECK(status_of(s, ids[i]) == OPTIMIST_COMMITTED);
    char *json = NULL;
    CHECK_OK(optimist_mutation(s, ids[49], &json));
    CHECK(json != NULL && strstr(json, "\"status\":\"committed\"") != NULL);
    optimist_free(json);
    CHECK_OK(optimist_close(s));

    CHECK_OK(optimist_open(path, &s));
    CHECK(pending_count(s) == 0);

    /* read_only beside the holder s. */
    uint64_t held = mutate_put(s, "notes", "n1", "{\"t\":\"hi\"}");
    CHECK_OK(optimist_flush(s));
    optimist_store *busy = NULL;
    CHECK_FAILS(optimist_open(path, &busy), OPTIMIST_BUSY);
    optimist_open_options ro = OPTIMIST_OPEN_OPTIONS_INIT;
    ro.read_only = 1;
    optimist_store *r = NULL;
    CHECK_OK(optimist_open_ext(path, &ro, &r));
    CHECK(status_of(r, held) == OPTIMIST_PENDING);
    CHECK_GET(r, "notes", "n1", "{\"t\":\"hi\"}");
    optimist_batch *b = batch_of_put("notes", "n2", "{}");
    uint64_t refused = 0;
    CHECK_FAILS(optimist_mutate(r, b, NULL, &refused), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_commit(r, held, NULL), OPTIMIST_MISUSE);
    CHECK_OK(optimist_mutate(s, b, NULL, &refused)); /* the holder goes on */
    optimist_batch_free(b);
    CHECK_OK(optimist_flush(s));
    char *none = NULL;
    CHECK_FAILS(optimist_get(r, "notes", "n2", &none), OPTIMIST_NOTFOUND);
    CHECK_OK(optimist_close(r));
    ro.local_only = 1;
    r = NULL;
    CHECK_FAILS(optimist_open_ext(path, &ro, &r), OPTIMIST_MISUSE);
    ro.local_only = 0;
    CHECK_FAILS(optimist_open_ext(NULL, &ro, &r), OPTIMIST_MISUSE);
    ro.read_only = 2;
    CHECK_FAILS(optimist_open_ext(path, &ro, &r), OPTIMIST_MISUSE);
    CHECK(r == NULL);
    char *out = NULL;
    CHECK_OK(optimist_get_confirmed(s, "habits", "run", &out));
    CHECK_JSON(out, "{\"count\":50}");
    CHECK_OK(optimist_close(s));

    char side[sizeof path + 8];
    unlink(path);
    snprintf(side, sizeof side, "%s-wal", path);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", path);
    unlink(side);
    rmdir(dir);
}

int main(void) {
    in_memory();
    on_a_file();
    return CHECK_DONE();
}
