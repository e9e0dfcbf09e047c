/*
 * notfound_state.c - unknown ids, records, views and subscriptions are OPTIMIST_NOTFOUND;
 * ending a mutation twice (or failing an ended one) is OPTIMIST_STATE.
 */
#include "fixtures.h"

static void on_change(void *ctx, const optimist_change *changes, size_t n) {
    (void)ctx; (void)changes; (void)n;
}

static void unknown_things(optimist_store *s) {
    char *out = NULL;
    int status = 0;
    uint64_t id = 0;
    double d = 0;
    CHECK_FAILS(optimist_commit(s, 4242, NULL), OPTIMIST_NOTFOUND);
    CHECK_FAILS(optimist_rollback(s, 4242, "why"), OPTIMIST_NOTFOUND);
    CHECK_FAILS(optimist_status(s, 4242, &status), OPTIMIST_NOTFOUND);
    CHECK_FAILS(optimist_fail(s, 4242, 1, "net", 0), OPTIMIST_NOTFOUND);
    CHECK_FAILS(optimist_retry(s, 4242), OPTIMIST_NOTFOUND);
    CHECK_FAILS(optimist_unsubscribe(s, 4242), OPTIMIST_NOTFOUND);
    CHECK_FAILS(optimist_view_get(s, "no-such-view", &d), OPTIMIST_NOTFOUND);
    CHECK_RC(optimist_get(s, "c", "absent", &out), OPTIMIST_NOTFOUND);
    CHECK_RC(optimist_get_confirmed(s, "c", "absent", &out), OPTIMIST_NOTFOUND);
    CHECK_RC(optimist_outbox_next(s, 0, &id, &out), OPTIMIST_NOTFOUND); /* nothing due */
    CHECK(out == NULL && status == 0 && id == 0 && d == 0);
}

static void ended_twice(optimist_store *s) {
    uint64_t a = mutate_put(s, "c", "a", "{\"v\":1}");
    uint64_t b = mutate_put(s, "c", "b", "{\"v\":2}");
    int status = 0;
    CHECK_OK(optimist_commit(s, a, NULL));
    CHECK_FAILS(optimist_commit(s, a, NULL), OPTIMIST_STATE);
    CHECK_FAILS(optimist_rollback(s, a, NULL), OPTIMIST_STATE);
    CHECK_FAILS(optimist_fail(s, a, 0, "late", 0), OPTIMIST_STATE);
    CHECK_OK(optimist_rollback(s, b, "no"));
    CHECK_FAILS(optimist_rollback(s, b, "no"), OPTIMIST_STATE);
    CHECK_FAILS(optimist_commit(s, b, NULL), OPTIMIST_STATE);
    CHECK_OK(optimist_status(s, a, &status));
    CHECK(status == OPTIMIST_COMMITTED);
    CHECK_OK(optimist_status(s, b, &status));
    CHECK(status == OPTIMIST_ROLLED_BACK);
    CHECK_FAILS(optimist_retry(s, a), OPTIMIST_STATE);
    CHECK_FAILS(optimist_retry(s, b), OPTIMIST_STATE);
    /* retry of an inflight mutation is refused; it stays inflight. */
    uint64_t c = mutate_put(s, "c", "c", "{}"), out = 0;
    char *ops = NULL;
    CHECK_OK(optimist_outbox_next(s, 0, &out, &ops));
    CHECK(out == c);
    optimist_free(ops);
    CHECK_FAILS(optimist_retry(s, c), OPTIMIST_STATE);
    CHECK_OK(optimist_status(s, c, &status));
    CHECK(status == OPTIMIST_INFLIGHT);
    /* A kept permanent failure cannot fail again. */
    optimist_batch *keep = batch_of_put("c", "d", "{}");
    uint64_t d = 0;
    CHECK_OK(optimist_mutate_with_policy(s, keep, NULL, OPTIMIST_POLICY_KEEP, &d));
    optimist_batch_free(keep);
    CHECK_OK(optimist_fail(s, d, 0, "rejected", 0));
    CHECK_OK(optimist_status(s, d, &status));
    CHECK(status == OPTIMIST_FAILED);
    CHECK_FAILS(optimist_fail(s, d, 0, "again", 0), OPTIMIST_STATE);
}

static void unsubscribe_twice(optimist_store *s) {
    uint64_t sub = 0;
    CHECK_OK(optimist_subscribe(s, "c", NULL, on_change, NULL, &sub));
    CHECK_OK(optimist_unsubscribe(s, sub));
    CHECK_FAILS(optimist_unsubscribe(s, sub), OPTIMIST_NOTFOUND);
}

int main(void) {
    optimist_store *s = open_memory();
    unknown_things(s);
    ended_twice(s);
    unsubscribe_twice(s);
    CHECK_OK(optimist_close(s));
    return CHECK_DONE();
}
