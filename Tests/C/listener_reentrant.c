/*
 * listener_reentrant.c - a listener runs outside the store's locks: it can read the store,
 * mutate it, commit, and unsubscribe itself from inside the callback without deadlock, and
 * what it reads is the change it was told about.
 */
#include "fixtures.h"

typedef struct {
    optimist_store *s;
    uint64_t sub;
    int calls;
    int mismatches;
} listener_ctx;

/* On every habit tick, checks the record it is told about and counts it in stats/today. */
static void count_ticks(void *arg, const optimist_change *changes, size_t n) {
    listener_ctx *ctx = arg;
    ctx->calls++;
    for (size_t i = 0; i < n; i++) {
        char *now = NULL;
        int pending = -1;
        int rc = optimist_get(ctx->s, changes[i].collection, changes[i].key, &now);
        if (changes[i].value_json == NULL ? rc != OPTIMIST_NOTFOUND
                                          : (rc != OPTIMIST_OK || strcmp(now, changes[i].value_json) != 0))
            ctx->mismatches++;
        optimist_free(now);
        if (optimist_is_pending(ctx->s, changes[i].collection, changes[i].key, &pending) != OPTIMIST_OK ||
            pending != changes[i].pending)
            ctx->mismatches++;
        if (changes[i].cause == OPTIMIST_CAUSE_MUTATE) {
            optimist_batch *b = batch_of_incr("stats", "today", "count", 1);
            if (optimist_mutate(ctx->s, b, NULL, NULL) != OPTIMIST_OK) ctx->mismatches++;
            optimist_batch_free(b);
        }
    }
}

/* Takes the newest order out of the outbox and commits it, as an instant sender would. */
static void commit_orders(void *arg, const optimist_change *changes, size_t n) {
    listener_ctx *ctx = arg;
    ctx->calls++;
    if (n == 0 || changes[0].cause != OPTIMIST_CAUSE_MUTATE) return;
    uint64_t id = 0;
    char *ops = NULL;
    if (optimist_outbox_next(ctx->s, 0, &id, &ops) != OPTIMIST_OK) { ctx->mismatches++; return; }
    optimist_free(ops);
    if (optimist_commit(ctx->s, id, NULL) != OPTIMIST_OK) ctx->mismatches++;
}

/* Ends its own subscription on its first call. */
static void one_shot(void *arg, const optimist_change *changes, size_t n) {
    (void)changes; (void)n;
    listener_ctx *ctx = arg;
    ctx->calls++;
    if (optimist_unsubscribe(ctx->s, ctx->sub) != OPTIMIST_OK) ctx->mismatches++;
}

int main(void) {
    optimist_store *s = open_memory();
    listener_ctx ticks = {s, 0, 0, 0}, once = {s, 0, 0, 0}, elsewhere = {s, 0, 0, 0};
    CHECK_OK(optimist_subscribe(s, "habits", NULL, count_ticks, &ticks, &ticks.sub));
    /* Filtered to keys under "x" of habits: none of the changes below is for it. */
    CHECK_OK(optimist_subscribe(s, "habits", "x", one_shot, &elsewhere, &elsewhere.sub));
    CHECK_OK(optimist_subscribe(s, "misc", NULL, one_shot, &once, &once.sub));

    uint64_t h1 = mutate_put(s, "habits", "h1", "{\"done\":true}");
    CHECK(ticks.calls == 1 && ticks.mismatches == 0);
    CHECK_GET(s, "stats", "today", "{\"count\":1}");
    mutate_put(s, "habits", "h2", "{\"done\":true}");
    CHECK_GET(s, "stats", "today", "{\"count\":2}");
    uint64_t m1 = mutate_put(s, "misc", "a", "{}");
    uint64_t m2 = mutate_put(s, "misc", "b", "{}");
    CHECK(once.calls == 1 && once.mismatches == 0); /* gone after its first call */
    CHECK_FAILS(optimist_unsubscribe(s, once.sub), OPTIMIST_NOTFOUND);
    CHECK_OK(optimist_commit(s, m1, NULL));
    CHECK_OK(optimist_commit(s, m2, NULL));

    /* A rollback reaches the listener too; it reads the restored (absent) record. */
    CHECK_OK(optimist_rollback(s, h1, "offline"));
    CHECK(ticks.calls == 3 && ticks.mismatches == 0);
    CHECK(elsewhere.calls == 0);
    CHECK_RC(optimist_get(s, "habits", "h1", NULL), OPTIMIST_MISUSE);

    uint64_t count = 99;
    CHECK_OK(optimist_pending_count(s, &count));
    CHECK(count == 3); /* h2 and two stats increments; h1 was rolled back */
    CHECK_OK(optimist_close(s));

    /* On a store whose outbox holds only the order, the listener takes it out and commits it
       before mutate returns. */
    optimist_store *shop = open_memory();
    listener_ctx orders = {shop, 0, 0, 0};
    CHECK_OK(optimist_subscribe(shop, "orders", NULL, commit_orders, &orders, &orders.sub));
    uint64_t order = mutate_put(shop, "orders", "o1", "{\"qty\":2}");
    int status = 0, pending = -1;
    CHECK_OK(optimist_status(shop, order, &status));
    CHECK(status == OPTIMIST_COMMITTED);
    CHECK_OK(optimist_is_pending(shop, "orders", "o1", &pending));
    CHECK(pending == 0);
    CHECK(orders.mismatches == 0 && orders.calls == 2); /* the mutate, then its commit */
    char *confirmed = NULL;
    CHECK_OK(optimist_get_confirmed(shop, "orders", "o1", &confirmed));
    CHECK_STR(confirmed, "{\"qty\":2}");
    optimist_free(confirmed);
    CHECK_OK(optimist_close(shop));
    return CHECK_DONE();
}
