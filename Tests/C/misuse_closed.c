/*
 * misuse_closed.c - a store handle that has been closed is refused with OPTIMIST_MISUSE by
 * every entry point that takes a store, never used (a second close is OK, as documented).
 */
#include "fixtures.h"

static void on_change(void *ctx, const optimist_change *changes, size_t n) {
    (void)ctx; (void)changes; (void)n;
}

int main(void) {
    optimist_store *s = open_memory();
    uint64_t id = mutate_put(s, "c", "k", "{\"v\":1}");
    optimist_batch *b = batch_of_put("c", "k2", "{}");
    char *out = NULL;
    int flag = 0;
    uint64_t n = 0;
    double d = 0;
    CHECK_OK(optimist_close(s));

    CHECK_OK(optimist_close(s)); /* documented: closing a closed store is OK again */
    CHECK_FAILS(optimist_flush(s), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_client_id(s, &out), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_mutate(s, b, NULL, &n), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_mutate_with_policy(s, b, NULL, OPTIMIST_POLICY_KEEP, &n), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_commit(s, id, NULL), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_commit_with_renames(s, id, NULL, "[]"), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_mutation(s, id, &out), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_wait_settled(s, id, 0, &flag), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_outbox_wait(s, 0, &flag), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_rollback(s, id, "closed"), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_server_apply(s, b), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_get(s, "c", "k", &out), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_get_confirmed(s, "c", "k", &out), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_is_pending(s, "c", "k", &flag), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_scan(s, "c", "", 0, &out), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_status(s, id, &flag), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_pending_count(s, &n), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_outbox_next(s, 0, &n, &out), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_fail(s, id, 1, "x", 0), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_retry(s, id), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_mark_loaded(s, "c", "a", "b", 0), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_needs_reload(s, "c", "k", 0, 0, &flag), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_view_define(s, "v", "c", "", "count"), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_view_get(s, "v", &d), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_subscribe(s, NULL, NULL, on_change, NULL, &n), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_unsubscribe(s, 1), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_set_retry_policy(s, 5, 1000, 60000), OPTIMIST_MISUSE);
    CHECK(out == NULL && flag == 0 && n == 0 && d == 0);

    optimist_batch_free(b);
    return CHECK_DONE();
}
