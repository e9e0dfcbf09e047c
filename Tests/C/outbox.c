/*
 * outbox.c - the outbox by hand: dedupe keys, outbox_next, transient failures with backoff,
 * the retry limit settled by the policy (rollback, or keep as FAILED until retry), freshness
 * and views; the retry policy given at open; then extreme numbers at the boundary (no trap, a
 * plain result code).
 */
#include "fixtures.h"

#include <stdint.h>

static void test_dedupe_outbox(void) {
    optimist_store *s = NULL;
    CHECK_RC(optimist_open(NULL, &s), OPTIMIST_OK);
    CHECK_RC(optimist_set_retry_policy(s, 2, 100, 1000), OPTIMIST_OK);

    optimist_batch *b = batch_of_incr("likes", "p1", "n", 1);
    uint64_t a = 0, dup = 0;
    CHECK_RC(optimist_mutate(s, b, "like-p1", &a), OPTIMIST_OK);
    CHECK_RC(optimist_mutate(s, b, "like-p1", &dup), OPTIMIST_DUPLICATE);
    CHECK(dup == a);
    CHECK_RC(optimist_mutate(s, b, "like-p1", NULL), OPTIMIST_DUPLICATE);

    uint64_t id = 0;
    char *ops = NULL;
    CHECK_RC(optimist_outbox_next(s, 1000, &id, &ops), OPTIMIST_OK);
    CHECK(id == a);
    CHECK_JSON(ops, "[{\"coll\":\"likes\",\"delta\":1,\"field\":\"n\",\"key\":\"p1\",\"op\":\"incr\"}]");
    int st = 0;
    CHECK_RC(optimist_status(s, a, &st), OPTIMIST_OK);
    CHECK(st == OPTIMIST_INFLIGHT);
    ops = NULL;
    CHECK_RC(optimist_outbox_next(s, 1000, &id, &ops), OPTIMIST_NOTFOUND);
    CHECK(ops == NULL);
    CHECK_RC(optimist_retry(s, a), OPTIMIST_STATE);

    /* Transient failure: back to pending, due only after the backoff. */
    CHECK_RC(optimist_fail(s, a, 1, "timeout", 1000), OPTIMIST_OK);
    CHECK_RC(optimist_status(s, a, &st), OPTIMIST_OK);
    CHECK(st == OPTIMIST_PENDING);
    CHECK_RC(optimist_outbox_next(s, 1000, &id, &ops), OPTIMIST_NOTFOUND);
    CHECK_RC(optimist_outbox_next(s, 1000 + 1000, &id, &ops), OPTIMIST_OK);
    optimist_free(ops);
    /* Second failure with max_attempts 2: the policy (rollback) decides; the key is free again. */
    CHECK_RC(optimist_fail(s, a, 1, NULL, 3000), OPTIMIST_OK);
    CHECK_RC(optimist_status(s, a, &st), OPTIMIST_OK);
    CHECK(st == OPTIMIST_ROLLED_BACK);
    uint64_t again = 0;
    CHECK_RC(optimist_mutate(s, b, "like-p1", &again), OPTIMIST_OK);
    CHECK(again > a);

    /* Policy keep: a permanent failure stays visible as failed until retry. */
    uint64_t k = 0;
    optimist_batch *put = batch_of_put("likes", "p2", "{\"n\":5}");
    CHECK_RC(optimist_mutate_with_policy(s, put, NULL, OPTIMIST_POLICY_KEEP, &k), OPTIMIST_OK);
    CHECK_RC(optimist_fail(s, k, 0, "forbidden", 4000), OPTIMIST_OK);
    CHECK_RC(optimist_status(s, k, &st), OPTIMIST_OK);
    CHECK(st == OPTIMIST_FAILED);
    char *json = NULL;
    CHECK_RC(optimist_get(s, "likes", "p2", &json), OPTIMIST_OK);
    CHECK_JSON(json, "{\"n\":5}");
    CHECK_RC(optimist_fail(s, k, 0, NULL, 4000), OPTIMIST_STATE);
    CHECK_RC(optimist_retry(s, k), OPTIMIST_OK);
    CHECK_RC(optimist_status(s, k, &st), OPTIMIST_OK);
    CHECK(st == OPTIMIST_PENDING);
    CHECK_RC(optimist_retry(s, 424242), OPTIMIST_NOTFOUND);

    /* Freshness and views. */
    int flag = -1;
    CHECK_RC(optimist_mark_loaded(s, "likes", "p0", "p9", 5000), OPTIMIST_OK);
    CHECK_RC(optimist_needs_reload(s, "likes", "p5", 5500, 1000, &flag), OPTIMIST_OK);
    CHECK(flag == 0);
    CHECK_RC(optimist_needs_reload(s, "likes", "p5", 7000, 1000, &flag), OPTIMIST_OK);
    CHECK(flag == 1);
    CHECK_RC(optimist_needs_reload(s, "likes", "q", 5500, 1000, &flag), OPTIMIST_OK);
    CHECK(flag == 1);
    double v = -1;
    CHECK_RC(optimist_view_define(s, "total", "likes", "p", "sum:n"), OPTIMIST_OK);
    CHECK_RC(optimist_view_define(s, "rows", "likes", NULL, "count"), OPTIMIST_OK);
    CHECK_RC(optimist_view_get(s, "total", &v), OPTIMIST_OK);
    CHECK(v == 6); /* p1: 1 (the re-made incr), p2: 5 */
    CHECK_RC(optimist_view_get(s, "rows", &v), OPTIMIST_OK);
    CHECK(v == 2);
    CHECK_RC(optimist_view_get(s, "nope", &v), OPTIMIST_NOTFOUND);

    optimist_batch_free(b);
    optimist_batch_free(put);
    CHECK_RC(optimist_flush(s), OPTIMIST_OK);
    CHECK_RC(optimist_close(s), OPTIMIST_OK);
}

/* Extreme numbers at the boundary: no trap, a plain result code. */
static void test_extremes(void) {
    optimist_store *s = NULL;
    CHECK_RC(optimist_open(NULL, &s), OPTIMIST_OK);
    int st = 0, flag = -1;
    uint64_t id = 0;
    char *json = NULL;
    CHECK_RC(optimist_status(s, UINT64_MAX, &st), OPTIMIST_NOTFOUND);
    CHECK_RC(optimist_status(s, 0, &st), OPTIMIST_NOTFOUND);
    CHECK_RC(optimist_commit(s, UINT64_MAX, NULL), OPTIMIST_NOTFOUND);
    CHECK_RC(optimist_rollback(s, UINT64_MAX, NULL), OPTIMIST_NOTFOUND);
    CHECK_RC(optimist_fail(s, UINT64_MAX, 1, NULL, INT64_MAX), OPTIMIST_NOTFOUND);
    CHECK_RC(optimist_retry(s, UINT64_MAX), OPTIMIST_NOTFOUND);
    CHECK_RC(optimist_unsubscribe(s, UINT64_MAX), OPTIMIST_NOTFOUND);
    CHECK_RC(optimist_outbox_next(s, INT64_MIN, &id, &json), OPTIMIST_NOTFOUND);
    CHECK_RC(optimist_set_retry_policy(s, INT32_MAX, INT64_MAX, INT64_MAX), OPTIMIST_OK);

    optimist_batch *b = batch_of_incr("x", "k", "n", 1.7976931348623157e308);
    CHECK_RC(optimist_mutate(s, b, NULL, &id), OPTIMIST_OK);
    CHECK_RC(optimist_mutate(s, b, NULL, NULL), OPTIMIST_INVALID); /* would overflow to inf */
    CHECK_RC(optimist_get(s, "x", "k", &json), OPTIMIST_OK);
    CHECK_JSON(json, "{\"n\":1.7976931348623157e+308}");
    json = NULL;
    CHECK_RC(optimist_outbox_next(s, INT64_MAX, &id, &json), OPTIMIST_OK);
    optimist_free(json);
    CHECK_RC(optimist_fail(s, id, 1, "", INT64_MAX), OPTIMIST_OK); /* backoff saturates */
    CHECK_RC(optimist_status(s, id, &st), OPTIMIST_OK);
    CHECK(st == OPTIMIST_PENDING);
    CHECK_RC(optimist_mark_loaded(s, "x", "", "\xf4\x8f\xbf\xbf", INT64_MIN), OPTIMIST_OK);
    CHECK_RC(optimist_needs_reload(s, "x", "k", INT64_MAX, INT64_MAX, &flag), OPTIMIST_OK);
    CHECK(flag == 1); /* the age overflows: treated as too old */
    CHECK_RC(optimist_needs_reload(s, "x", "k", INT64_MIN, INT64_MIN, &flag), OPTIMIST_OK);
    optimist_batch_free(b);
    CHECK_RC(optimist_close(s), OPTIMIST_OK);
}

/* Sends one due mutation and fails it transiently at now_ms; returns its status after. */
static int send_and_fail(optimist_store *s, uint64_t id, int64_t now_ms) {
    uint64_t sent = 0;
    char *ops = NULL;
    int st = 0;
    CHECK_OK(optimist_outbox_next(s, now_ms, &sent, &ops));
    optimist_free(ops);
    CHECK(sent == id);
    CHECK_OK(optimist_fail(s, id, 1, "timeout", now_ms));
    CHECK_OK(optimist_status(s, id, &st));
    return st;
}

/* The retry policy given at open (optimist_open_options version 2); a version 1 struct, as a
 * program built against the first header passes it, opens with the default policy. */
static void test_open_retry_policy(void) {
    optimist_open_options o = OPTIMIST_OPEN_OPTIONS_INIT;
    CHECK(o.version == 3 && o.local_only == 0 && o.max_attempts == 5 && o.base_delay_ms == 1000 && o.max_delay_ms == 60000);
    optimist_store *s = NULL;
    o.max_attempts = 0;
    CHECK_FAILS(optimist_open_ext(NULL, &o, &s), OPTIMIST_MISUSE);
    o.max_attempts = 1;
    o.max_delay_ms = -1;
    CHECK_FAILS(optimist_open_ext(NULL, &o, &s), OPTIMIST_MISUSE);
    CHECK(s == NULL);
    o.max_delay_ms = 100;
    CHECK_OK(optimist_open_ext(NULL, &o, &s));
    /* One attempt: the first transient failure is final, and the policy rolls it back. */
    CHECK(send_and_fail(s, mutate_put(s, "c", "k", "{}"), 0) == OPTIMIST_ROLLED_BACK);
    CHECK_OK(optimist_close(s));

    struct { unsigned int version; size_t cache_bytes; } v1 = {1, (size_t)1 << 20};
    s = NULL;
    CHECK_OK(optimist_open_ext(NULL, (const optimist_open_options *)(const void *)&v1, &s));
    CHECK(send_and_fail(s, mutate_put(s, "c", "k", "{}"), 0) == OPTIMIST_PENDING); /* 5 attempts */
    CHECK_OK(optimist_close(s));
}

int main(void) {
    test_dedupe_outbox();
    test_open_retry_policy();
    test_extremes();
    return CHECK_DONE();
}
