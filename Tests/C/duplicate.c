/*
 * duplicate.c - a dedupe key held by a not-yet-ended mutation makes a second mutate return
 * OPTIMIST_DUPLICATE, write the holder's id and change nothing; ending frees the key.
 */
#include "fixtures.h"

int main(void) {
    optimist_store *s = open_memory();
    optimist_batch *tap = batch_of_incr("habits", "h1", "done", 1);
    uint64_t first = 0, second = 0, pending = 0;

    CHECK_OK(optimist_mutate(s, tap, "tap-1", &first));
    CHECK(first != 0);
    CHECK_FAILS(optimist_mutate(s, tap, "tap-1", &second), OPTIMIST_DUPLICATE);
    CHECK(second == first); /* the existing id is written */
    second = 0;
    CHECK_FAILS(optimist_mutate_with_policy(s, tap, "tap-1", OPTIMIST_POLICY_KEEP, &second),
                OPTIMIST_DUPLICATE);
    CHECK(second == first);
    CHECK_GET(s, "habits", "h1", "{\"done\":1}");
    CHECK_OK(optimist_pending_count(s, &pending));
    CHECK(pending == 1);

    /* Inflight still holds the key. */
    char *ops = NULL;
    uint64_t out = 0;
    CHECK_OK(optimist_outbox_next(s, 0, &out, &ops));
    CHECK(out == first);
    optimist_free(ops);
    second = 0;
    CHECK_FAILS(optimist_mutate(s, tap, "tap-1", &second), OPTIMIST_DUPLICATE);
    CHECK(second == first);

    /* Once committed, the key is free again; another key never collides. */
    CHECK_OK(optimist_commit(s, first, NULL));
    CHECK_OK(optimist_mutate(s, tap, "tap-1", &second));
    CHECK(second != first);
    uint64_t other = 0;
    CHECK_OK(optimist_mutate(s, tap, "tap-2", &other));
    CHECK(other != second);
    CHECK_GET(s, "habits", "h1", "{\"done\":3}");

    optimist_batch_free(tap);
    CHECK_OK(optimist_close(s));
    return CHECK_DONE();
}
