/*
 * threads.c - one store used from many threads at once: four writers mutate, commit, roll
 * back and read while a reader scans and reads views and a sender drains the outbox with
 * transient failures. Afterwards the counts must add up exactly (V = fold(P, C)), every id
 * must be distinct, and committing what is left must empty the pending list.
 * The sanitizer build runs this under ThreadSanitizer.
 */
#include "expect.h"
#include "fixtures.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

enum { WRITERS = 4, ROUNDS = 300 };

static optimist_store *store;
static uint64_t ids[WRITERS][ROUNDS];
static atomic_int writers_left = WRITERS;
static atomic_long notified;

/* Round i of writer w: commit when i % 3 == 0, roll back when 1, leave pending when 2. */
static void *writer(void *arg) {
    int w = (int)(intptr_t)arg;
    char coll[16], key[16], json[32];
    snprintf(coll, sizeof coll, "t%d", w);
    for (int i = 0; i < ROUNDS; i++) {
        optimist_batch *b = NULL;
        snprintf(key, sizeof key, "k%04d", i);
        snprintf(json, sizeof json, "{\"i\":%d}", i);
        EXPECT(optimist_batch_new(&b) == OPTIMIST_OK);
        EXPECT(optimist_batch_incr(b, "stats", "total", "n", 1) == OPTIMIST_OK);
        EXPECT(optimist_batch_put(b, coll, key, json) == OPTIMIST_OK);
        EXPECT(optimist_mutate(store, b, NULL, &ids[w][i]) == OPTIMIST_OK);
        optimist_batch_free(b);
        if (i % 3 == 0) EXPECT(optimist_commit(store, ids[w][i], NULL) == OPTIMIST_OK);
        if (i % 3 == 1) EXPECT(optimist_rollback(store, ids[w][i], "test") == OPTIMIST_OK);

        char *out = NULL;
        int pending = -1;
        EXPECT(optimist_get(store, "stats", "total", &out) == OPTIMIST_OK);
        optimist_free(out);
        EXPECT(optimist_is_pending(store, coll, key, &pending) == OPTIMIST_OK);
        EXPECT(pending == (i % 3 == 2));
        if (i % 50 == 0) {
            optimist_batch *srv = batch_of_put("server", coll, json);
            EXPECT(optimist_server_apply(store, srv) == OPTIMIST_OK);
            optimist_batch_free(srv);
        }
    }
    atomic_fetch_sub(&writers_left, 1);
    return NULL;
}

/* Reads everything readable while the writers run; every call must succeed. */
static void *reader(void *arg) {
    (void)arg;
    while (atomic_load(&writers_left) > 0) {
        char *out = NULL;
        double total = -1;
        uint64_t count = 0;
        EXPECT(optimist_scan(store, "t0", "k", 10, &out) == OPTIMIST_OK);
        optimist_free(out);
        EXPECT(optimist_view_get(store, "total", &total) == OPTIMIST_OK);
        EXPECT(total >= 0);
        EXPECT(optimist_pending_count(store, &count) == OPTIMIST_OK);
        int rc = optimist_get_confirmed(store, "stats", "total", &out);
        EXPECT(rc == OPTIMIST_OK || rc == OPTIMIST_NOTFOUND);
        optimist_free(rc == OPTIMIST_OK ? out : NULL);
    }
    return NULL;
}

/* Hands out due mutations and fails them transiently; a writer may have ended one meanwhile. */
static void *sender(void *arg) {
    (void)arg;
    int64_t now = 0;
    while (atomic_load(&writers_left) > 0) {
        uint64_t id = 0;
        char *ops = NULL;
        int rc = optimist_outbox_next(store, now, &id, &ops);
        EXPECT(rc == OPTIMIST_OK || rc == OPTIMIST_NOTFOUND);
        if (rc != OPTIMIST_OK) continue;
        optimist_free(ops);
        rc = optimist_fail(store, id, 1, "flaky network", now);
        EXPECT(rc == OPTIMIST_OK || rc == OPTIMIST_STATE);
        now += 1000000; /* far past any backoff */
    }
    return NULL;
}

/* Counts notifications and reads the store from whichever thread made the change. */
static void on_stats(void *ctx, const optimist_change *changes, size_t n) {
    (void)ctx;
    atomic_fetch_add(&notified, (long)n);
    char *out = NULL;
    int rc = optimist_get(store, changes[0].collection, changes[0].key, &out);
    EXPECT(rc == OPTIMIST_OK || rc == OPTIMIST_NOTFOUND);
    optimist_free(rc == OPTIMIST_OK ? out : NULL);
}

static int compare_ids(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

int main(void) {
    store = open_memory();
    uint64_t sub = 0;
    CHECK_OK(optimist_set_retry_policy(store, 1000000, 1, 1)); /* transient never becomes final */
    CHECK_OK(optimist_view_define(store, "total", "stats", "", "sum:n"));
    CHECK_OK(optimist_view_define(store, "rows0", "t0", "", "count"));
    CHECK_OK(optimist_subscribe(store, "stats", NULL, on_stats, NULL, &sub));

    pthread_t threads[WRITERS + 2];
    for (int w = 0; w < WRITERS; w++)
        CHECK(pthread_create(&threads[w], NULL, writer, (void *)(intptr_t)w) == 0);
    CHECK(pthread_create(&threads[WRITERS], NULL, reader, NULL) == 0);
    CHECK(pthread_create(&threads[WRITERS + 1], NULL, sender, NULL) == 0);
    for (int t = 0; t < WRITERS + 2; t++) CHECK(pthread_join(threads[t], NULL) == 0);
    CHECK(atomic_load(&errors) == 0);

    /* Per writer: ROUNDS/3 committed, ROUNDS/3 rolled back, ROUNDS/3 pending. */
    const int third = ROUNDS / 3;
    uint64_t pending = 0;
    double total = 0, rows0 = 0;
    char want[64];
    CHECK_OK(optimist_pending_count(store, &pending));
    CHECK(pending == (uint64_t)(WRITERS * third));
    snprintf(want, sizeof want, "{\"n\":%d}", 2 * WRITERS * third);
    CHECK_GET(store, "stats", "total", want);
    char *confirmed = NULL;
    CHECK_OK(optimist_get_confirmed(store, "stats", "total", &confirmed));
    snprintf(want, sizeof want, "{\"n\":%d}", WRITERS * third);
    CHECK_STR(confirmed, want);
    optimist_free(confirmed);
    CHECK_OK(optimist_view_get(store, "total", &total));
    CHECK(total == 2.0 * WRITERS * third);
    CHECK_OK(optimist_view_get(store, "rows0", &rows0));
    CHECK(rows0 == 2.0 * third);
    CHECK(atomic_load(&notified) >= WRITERS * ROUNDS);

    /* Ids are distinct across threads. */
    uint64_t *all = malloc(sizeof ids);
    memcpy(all, ids, sizeof ids);
    qsort(all, WRITERS * ROUNDS, sizeof *all, compare_ids);
    for (int i = 1; i < WRITERS * ROUNDS; i++) CHECK(all[i] > all[i - 1]);
    free(all);

    /* Committing what is left leaves V == C and nothing pending. */
    for (int w = 0; w < WRITERS; w++)
        for (int i = 2; i < ROUNDS; i += 3) CHECK_OK(optimist_commit(store, ids[w][i], NULL));
    CHECK_OK(optimist_pending_count(store, &pending));
    CHECK(pending == 0);
    snprintf(want, sizeof want, "{\"n\":%d}", 2 * WRITERS * third);
    CHECK_GET(store, "stats", "total", want);
    CHECK_OK(optimist_get_confirmed(store, "stats", "total", &confirmed));
    CHECK_STR(confirmed, want);
    optimist_free(confirmed);

    CHECK_OK(optimist_unsubscribe(store, sub));
    CHECK_OK(optimist_close(store));
    return CHECK_DONE();
}
