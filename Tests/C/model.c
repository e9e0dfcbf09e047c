/*
 * model.c - the model through the C ABI, the paths that succeed: the library's version and
 * result-code strings; put, incr, rollback of one mutation under another, commit with and
 * without server ops, server_apply with patch and delete, scan, an atomic mutation refused as
 * a whole; and optimist_mutate_ext with its versioned options.
 */
#include "fixtures.h"

static void test_library(void) {
    CHECK_STR(optimist_version(), OPTIMIST_VERSION);
    CHECK_STR(optimist_errstr(OPTIMIST_OK), "not an error");
    CHECK_STR(optimist_errstr(12345), "unknown result code");
    CHECK_STR(optimist_errstr(-1), "unknown result code");
    optimist_free(NULL);
}

static void test_basics(void) {
    optimist_store *s = NULL;
    CHECK_RC(optimist_open(NULL, &s), OPTIMIST_OK);
    CHECK(s != NULL);

    char *id = NULL;
    CHECK_RC(optimist_client_id(s, &id), OPTIMIST_OK);
    CHECK(id != NULL && strlen(id) == 36 && id[14] == '4');
    optimist_free(id);

    /* put, then an incr on top: both visible; rolling back the put keeps the incr. */
    optimist_batch *put = batch_of_put("todos", "t1", "{ \"title\": \"milk\", \"n\": 1 }");
    uint64_t m1 = 0, m2 = 0;
    CHECK_RC(optimist_mutate(s, put, NULL, &m1), OPTIMIST_OK);
    optimist_batch *incr = batch_of_incr("todos", "t1", "n", 2);
    CHECK_RC(optimist_mutate(s, incr, NULL, &m2), OPTIMIST_OK);
    CHECK(m2 > m1 && m1 > 0);

    char *json = NULL;
    CHECK_RC(optimist_get(s, "todos", "t1", &json), OPTIMIST_OK);
    CHECK_JSON(json, "{\"n\":3,\"title\":\"milk\"}");
    int flag = -1;
    CHECK_RC(optimist_is_pending(s, "todos", "t1", &flag), OPTIMIST_OK);
    CHECK(flag == 1);
    uint64_t count = 0;
    CHECK_RC(optimist_pending_count(s, &count), OPTIMIST_OK);
    CHECK(count == 2);

    CHECK_RC(optimist_rollback(s, m1, "server said no"), OPTIMIST_OK);
    json = NULL;
    CHECK_RC(optimist_get(s, "todos", "t1", &json), OPTIMIST_OK);
    CHECK_JSON(json, "{\"n\":2}");
    int st = 0;
    CHECK_RC(optimist_status(s, m1, &st), OPTIMIST_OK);
    CHECK(st == OPTIMIST_ROLLED_BACK);
    CHECK_RC(optimist_rollback(s, m1, NULL), OPTIMIST_STATE);

    /* Commit, then commit again: STATE. Unknown ids: NOTFOUND. */
    CHECK_RC(optimist_commit(s, m2, NULL), OPTIMIST_OK);
    CHECK_RC(optimist_commit(s, m2, NULL), OPTIMIST_STATE);
    CHECK(strlen(optimist_last_error()) > 0);
    CHECK_RC(optimist_commit(s, 999999, NULL), OPTIMIST_NOTFOUND);
    CHECK_RC(optimist_status(s, 999999, &st), OPTIMIST_NOTFOUND);
    json = NULL;
    CHECK_RC(optimist_get_confirmed(s, "todos", "t1", &json), OPTIMIST_OK);
    CHECK_JSON(json, "{\"n\":2}");
    CHECK_RC(optimist_is_pending(s, "todos", "t1", &flag), OPTIMIST_OK);
    CHECK(flag == 0);

    /* An absent record: NOTFOUND, and the out-parameter is left alone. */
    json = (char *)"untouched";
    CHECK_RC(optimist_get(s, "todos", "nope", &json), OPTIMIST_NOTFOUND);
    CHECK(strcmp(json, "untouched") == 0);

    /* Commit with server ops: the server's value wins. */
    uint64_t m3 = 0;
    optimist_batch *put2 = batch_of_put("todos", "t2", "{\"title\":\"eggs\"}");
    CHECK_RC(optimist_mutate(s, put2, NULL, &m3), OPTIMIST_OK);
    optimist_batch *server = batch_of_put("todos", "t2", "{\"title\":\"eggs\",\"id\":42}");
    CHECK_RC(optimist_commit(s, m3, server), OPTIMIST_OK);
    json = NULL;
    CHECK_RC(optimist_get(s, "todos", "t2", &json), OPTIMIST_OK);
    CHECK_JSON(json, "{\"id\":42,\"title\":\"eggs\"}");

    /* server_apply, patch, delete, scan. */
    optimist_batch *b = NULL;
    CHECK_RC(optimist_batch_new(&b), OPTIMIST_OK);
    CHECK_RC(optimist_batch_patch(b, "todos", "t2", "{\"id\":null,\"done\":true}"), OPTIMIST_OK);
    CHECK_RC(optimist_batch_put(b, "todos", "t3", "{}"), OPTIMIST_OK);
    CHECK_RC(optimist_batch_delete(b, "todos", "t1"), OPTIMIST_OK);
    CHECK_RC(optimist_server_apply(s, b), OPTIMIST_OK);
    json = NULL;
    CHECK_RC(optimist_scan(s, "todos", NULL, 0, &json), OPTIMIST_OK);
    CHECK_JSON(json, "[[\"t2\",{\"done\":true,\"title\":\"eggs\"}],[\"t3\",{}]]");
    json = NULL;
    CHECK_RC(optimist_scan(s, "todos", "t", 1, &json), OPTIMIST_OK);
    CHECK_JSON(json, "[[\"t2\",{\"done\":true,\"title\":\"eggs\"}]]");
    json = NULL;
    CHECK_RC(optimist_scan(s, "todos", "x", (size_t)-1, &json), OPTIMIST_OK);
    CHECK_JSON(json, "[]");

    /* An op that cannot apply rejects the whole mutation; nothing changes. */
    optimist_batch *bad = NULL;
    CHECK_RC(optimist_batch_new(&bad), OPTIMIST_OK);
    CHECK_RC(optimist_batch_put(bad, "todos", "t4", "{}"), OPTIMIST_OK);
    CHECK_RC(optimist_batch_incr(bad, "todos", "t2", "title", 1), OPTIMIST_OK);
    uint64_t unset = 77;
    CHECK_RC(optimist_mutate(s, bad, NULL, &unset), OPTIMIST_INVALID);
    CHECK(unset == 77);
    CHECK_RC(optimist_get(s, "todos", "t4", &json), OPTIMIST_NOTFOUND);

    optimist_batch_free(put);
    optimist_batch_free(incr);
    optimist_batch_free(put2);
    optimist_batch_free(server);
    optimist_batch_free(b);
    optimist_batch_free(bad);
    CHECK_RC(optimist_close(s), OPTIMIST_OK);
}

/* optimist_mutate_ext: the options' dedupe key and policy; NULL options are the defaults; a
 * version this library does not read, or an unknown policy, is MISUSE and changes nothing. */
static void test_mutate_options(void) {
    optimist_store *s = open_memory();
    optimist_batch *b = batch_of_put("habits", "run", "{\"done\":true}");
    optimist_mutate_options o = OPTIMIST_MUTATE_OPTIONS_INIT;
    CHECK(o.version == OPTIMIST_MUTATE_OPTIONS_VERSION && o.dedupe_key == NULL &&
          o.policy == OPTIMIST_POLICY_ROLLBACK);
    uint64_t kept = 0, dup = 0, plain = 0, unset = 77, count = 0;
    o.dedupe_key = "tap-1";
    o.policy = OPTIMIST_POLICY_KEEP;
    CHECK_OK(optimist_mutate_ext(s, b, &o, &kept));
    CHECK_RC(optimist_mutate_ext(s, b, &o, &dup), OPTIMIST_DUPLICATE);
    CHECK(dup == kept);
    /* The policy took: a permanent failure keeps it visible as FAILED. */
    char *ops = NULL;
    uint64_t sent = 0;
    CHECK_OK(optimist_outbox_next(s, 0, &sent, &ops));
    optimist_free(ops);
    CHECK(sent == kept);
    CHECK_OK(optimist_fail(s, kept, 0, "forbidden", 0));
    int st = 0;
    CHECK_OK(optimist_status(s, kept, &st));
    CHECK(st == OPTIMIST_FAILED);
    /* NULL options: no dedupe key, the default policy (a permanent failure rolls back). */
    CHECK_OK(optimist_mutate_ext(s, b, NULL, &plain));
    CHECK(plain > kept);
    CHECK_OK(optimist_fail(s, plain, 0, "forbidden", 0));
    CHECK_OK(optimist_status(s, plain, &st));
    CHECK(st == OPTIMIST_ROLLED_BACK);
    /* Bad options: MISUSE, nothing written, nothing mutated. */
    CHECK_OK(optimist_pending_count(s, &count));
    o.version = OPTIMIST_MUTATE_OPTIONS_VERSION + 1;
    CHECK_FAILS(optimist_mutate_ext(s, b, &o, &unset), OPTIMIST_MISUSE);
    CHECK(strstr(optimist_last_error(), "OPTIMIST_MUTATE_OPTIONS_INIT") != NULL);
    o.version = 0;
    CHECK_FAILS(optimist_mutate_ext(s, b, &o, &unset), OPTIMIST_MISUSE);
    o.version = OPTIMIST_MUTATE_OPTIONS_VERSION;
    o.dedupe_key = NULL;
    o.policy = 7;
    CHECK_FAILS(optimist_mutate_ext(s, b, &o, &unset), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_mutate_ext(NULL, b, NULL, &unset), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_mutate_ext(s, NULL, NULL, &unset), OPTIMIST_MISUSE);
    CHECK(unset == 77);
    uint64_t after = 0;
    CHECK_OK(optimist_pending_count(s, &after));
    CHECK(after == count);
    optimist_batch_free(b);
    CHECK_OK(optimist_close(s));
}

int main(void) {
    test_library();
    test_basics();
    test_mutate_options();
    return CHECK_DONE();
}
