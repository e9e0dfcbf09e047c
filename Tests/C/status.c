/*
 * status.c - status you can see: optimist_mutations lists the not-yet-ended mutations as JSON
 * (all, or one status) in id order, and optimist_explain shows a record's confirmed value, its
 * pending layers and its visible value; both on a store file too, across a reopen. Bad
 * status values, NULL and closed handles are MISUSE; bad UTF-8 is INVALID; nothing is
 * written on failure.
 */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, rmdir under -std=c11 */
#include "fixtures.h"

#include <unistd.h>

/* Checks that *json (freed here) is exactly `want`. */
#define CHECK_OUT_JSON(call, want)                                                       \
    do {                                                                                 \
        char *check_out_ = NULL;                                                         \
        CHECK_OK(call);                                                                  \
        CHECK_STR(check_out_, (want));                                                   \
        optimist_free(check_out_);                                                       \
    } while (0)

static void lists_and_explains(optimist_store *s) {
    optimist_batch *server = batch_of_put("h", "run", "{\"n\":1}");
    CHECK_OK(optimist_server_apply(s, server));
    optimist_batch_free(server);

    /* a: an incr on run and a put elsewhere, with a dedupe key; b: a kept patch; c: elsewhere */
    optimist_batch *b1 = batch_of_incr("h", "run", "n", 1);
    CHECK_OK(optimist_batch_put(b1, "h", "x", "{}"));
    uint64_t a = 0, b = 0;
    CHECK_OK(optimist_mutate(s, b1, "tap", &a));
    optimist_batch_free(b1);
    optimist_batch *b2 = NULL;
    CHECK_OK(optimist_batch_new(&b2));
    CHECK_OK(optimist_batch_patch(b2, "h", "run", "{\"note\":\"am\"}"));
    CHECK_OK(optimist_mutate_with_policy(s, b2, NULL, OPTIMIST_POLICY_KEEP, &b));
    optimist_batch_free(b2);
    uint64_t c = mutate_put(s, "h", "y", "{}");
    CHECK(a == 1 && b == 2 && c == 3);

    /* b is sent and fails for good: kept as failed, with its reason. */
    uint64_t id = 0;
    char *ops = NULL;
    CHECK_OK(optimist_outbox_next(s, 0, &id, &ops));
    CHECK(id == a);
    optimist_free(ops);
    CHECK_OK(optimist_fail(s, a, 1, "timeout", 0));   /* a: back to pending, backing off */
    CHECK_OK(optimist_fail(s, b, 0, "rejected", 0));  /* b: sent by other means, failed for good */

    char *json = NULL;
    CHECK_OK(optimist_mutations(s, 0, &json));
    CHECK(json != NULL && strstr(json, "\"id\":1,") && strstr(json, "\"id\":2,") && strstr(json, "\"id\":3,"));
    CHECK(json != NULL && strstr(json, "\"id\":1,") < strstr(json, "\"id\":2,"));
    CHECK(json != NULL && strstr(json, "\"dedupe_key\":\"tap\"") && strstr(json, "\"last_error\":\"timeout\""));
    CHECK(json != NULL && strstr(json, "\"created_ms\":null"));
    optimist_free(json);

    CHECK_OUT_JSON(optimist_mutations(s, OPTIMIST_FAILED, &check_out_),
               "[{\"attempts\":1,\"created_ms\":null,\"dedupe_key\":null,\"id\":2,\"last_error\":\"rejected\","
               "\"next_attempt_ms\":0,\"ops\":[{\"coll\":\"h\",\"key\":\"run\",\"op\":\"patch\",\"value\":{\"note\":\"am\"}}],"
               "\"policy\":\"keep\",\"retry\":0,\"status\":\"failed\"}]");
    CHECK_OUT_JSON(optimist_mutations(s, OPTIMIST_INFLIGHT, &check_out_), "[]");

    CHECK_OUT_JSON(optimist_explain(s, "h", "run", &check_out_),
               "{\"confirmed\":{\"n\":1},\"layers\":["
               "{\"id\":1,\"ops\":[{\"coll\":\"h\",\"delta\":1,\"field\":\"n\",\"key\":\"run\",\"op\":\"incr\"}],"
               "\"status\":\"pending\",\"value\":{\"n\":2}},"
               "{\"id\":2,\"ops\":[{\"coll\":\"h\",\"key\":\"run\",\"op\":\"patch\",\"value\":{\"note\":\"am\"}}],"
               "\"status\":\"failed\",\"value\":{\"n\":2,\"note\":\"am\"}}],"
               "\"visible\":{\"n\":2,\"note\":\"am\"}}");
    CHECK_OUT_JSON(optimist_explain(s, "h", "nothing", &check_out_), "{\"confirmed\":null,\"layers\":[],\"visible\":null}");

    /* Ending them leaves nothing to list or explain. */
    CHECK_OK(optimist_commit(s, a, NULL));
    CHECK_OK(optimist_rollback(s, b, "no"));
    CHECK_OK(optimist_commit(s, c, NULL));
    CHECK_OUT_JSON(optimist_mutations(s, 0, &check_out_), "[]");
    CHECK_OUT_JSON(optimist_explain(s, "h", "run", &check_out_), "{\"confirmed\":{\"n\":2},\"layers\":[],\"visible\":{\"n\":2}}");
}

static void refuses_bad_arguments(optimist_store *s) {
    char *json = NULL;
    static const int bad_status[] = {-1, 4, 5, 6, 1000};
    for (size_t i = 0; i < sizeof bad_status / sizeof bad_status[0]; i++) {
        CHECK_FAILS(optimist_mutations(s, bad_status[i], &json), OPTIMIST_MISUSE);
    }
    CHECK_FAILS(optimist_mutations(NULL, 0, &json), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_mutations(s, 0, NULL), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_explain(NULL, "c", "k", &json), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_explain(s, NULL, "k", &json), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_explain(s, "c", NULL, &json), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_explain(s, "c", "k", NULL), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_explain(s, "c\xff", "k", &json), OPTIMIST_INVALID);
    CHECK_FAILS(optimist_explain(s, "c", "\xc3(", &json), OPTIMIST_INVALID);
    CHECK(json == NULL); /* nothing written on failure */

    optimist_batch *b = batch_of_put("c", "k", "{}");
    optimist_store *closed = open_memory();
    CHECK_OK(optimist_close(closed));
    CHECK_FAILS(optimist_mutations(closed, 0, &json), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_explain(closed, "c", "k", &json), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_mutations((optimist_store *)b, 0, &json), OPTIMIST_MISUSE); /* a batch is no store */
    CHECK(json == NULL);
    optimist_batch_free(b);
}

/* On a file: what is listed survives a reopen (an inflight mutation comes back pending). */
static void on_a_file(void) {
    char dir[] = "/tmp/optimist-status-XXXXXX";
    if (mkdtemp(dir) == NULL) {
        perror("mkdtemp");
        check_failures++;
        return;
    }
    char path[sizeof dir + 16];
    snprintf(path, sizeof path, "%s/s.db", dir);
    optimist_store *s = NULL;
    CHECK_OK(optimist_open(path, &s));
    uint64_t a = mutate_incr(s, "h", "k", "n", 2);
    uint64_t id = 0;
    char *ops = NULL;
    CHECK_OK(optimist_outbox_next(s, 0, &id, &ops));
    optimist_free(ops);
    CHECK(id == a);
    CHECK_OUT_JSON(optimist_mutations(s, OPTIMIST_INFLIGHT, &check_out_),
               "[{\"attempts\":1,\"created_ms\":null,\"dedupe_key\":null,\"id\":1,\"last_error\":null,"
               "\"next_attempt_ms\":0,\"ops\":[{\"coll\":\"h\",\"delta\":2,\"field\":\"n\",\"key\":\"k\",\"op\":\"incr\"}],"
               "\"policy\":\"rollback\",\"retry\":0,\"status\":\"inflight\"}]");
    CHECK_OK(optimist_close(s));
    CHECK_OK(optimist_open(path, &s));
    CHECK_OUT_JSON(optimist_mutations(s, OPTIMIST_PENDING, &check_out_),
               "[{\"attempts\":1,\"created_ms\":null,\"dedupe_key\":null,\"id\":1,\"last_error\":null,"
               "\"next_attempt_ms\":0,\"ops\":[{\"coll\":\"h\",\"delta\":2,\"field\":\"n\",\"key\":\"k\",\"op\":\"incr\"}],"
               "\"policy\":\"rollback\",\"retry\":0,\"status\":\"pending\"}]");
    CHECK_OUT_JSON(optimist_explain(s, "h", "k", &check_out_),
               "{\"confirmed\":null,\"layers\":[{\"id\":1,\"ops\":[{\"coll\":\"h\",\"delta\":2,\"field\":\"n\",\"key\":\"k\","
               "\"op\":\"incr\"}],\"status\":\"pending\",\"value\":{\"n\":2}}],\"visible\":{\"n\":2}}");
    CHECK_OK(optimist_close(s));
    unlink(path);
    rmdir(dir);
}

int main(void) {
    optimist_store *s = open_memory();
    lists_and_explains(s);
    refuses_bad_arguments(s);
    CHECK_OK(optimist_close(s));
    on_a_file();
    return CHECK_DONE();
}
