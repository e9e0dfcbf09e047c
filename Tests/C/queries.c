/*
 * queries.c - live queries through the C ABI: a spec refused with a message naming the
 * offending member, rows as JSON, deltas delivered to a listener that mutates the store from
 * inside the callback, a listener's mirror kept equal to the rows, numbered deliveries (the
 * rows and the number read with the subscription, then numbers that follow with no gap), and
 * every misuse (NULL, closed query, closed store) answered MISUSE.
 */
#include "fixtures.h"

#include <stdlib.h>

typedef struct {
    optimist_store *s;
    int calls;
    size_t deltas;
    char last[4096];
    int reentered;
} listener_ctx;

static void on_deltas(void *arg, const char *deltas_json, size_t n) {
    listener_ctx *ctx = arg;
    ctx->calls++;
    ctx->deltas += n;
    snprintf(ctx->last, sizeof ctx->last, "%s", deltas_json);
    /* Outside the store's locks: the listener may change the store (once). */
    if (!ctx->reentered) {
        ctx->reentered = 1;
        optimist_batch *b = batch_of_incr("stats", "deliveries", "n", 1);
        CHECK_OK(optimist_mutate(ctx->s, b, NULL, NULL));
        optimist_batch_free(b);
    }
}

typedef struct {
    int calls;
    uint64_t numbers[8];
    char last[4096];
} numbered_ctx;

static void on_numbered(void *arg, uint64_t number, const char *deltas_json, size_t n) {
    numbered_ctx *ctx = arg;
    if (ctx->calls < 8) ctx->numbers[ctx->calls] = number;
    ctx->calls++;
    CHECK(n >= 1);
    snprintf(ctx->last, sizeof ctx->last, "%s", deltas_json);
}

static void check_rows(optimist_query *q, const char *want) {
    char *rows = NULL;
    CHECK_OK(optimist_query_rows(q, 0, 0, &rows));
    CHECK_JSON(rows, want);  /* frees rows */
}

static void check_message_names(const char *spec, const char *member) {
    optimist_store *s = open_memory();
    optimist_query *q = NULL;
    CHECK_FAILS(optimist_query_open(s, spec, &q), OPTIMIST_INVALID);
    const char *m = optimist_last_error();
    if (m == NULL || strstr(m, member) == NULL) {
        fprintf(stderr, "spec %s: message \"%s\" does not name %s\n", spec, m ? m : "(null)", member);
        check_failures++;
    }
    CHECK(q == NULL);
    CHECK_OK(optimist_close(s));
}

int main(void) {
    optimist_store *s = open_memory();
    mutate_put(s, "logs", "a", "{\"habit\":\"run\",\"day\":1}");
    mutate_put(s, "logs", "b", "{\"habit\":\"read\",\"day\":3}");
    mutate_put(s, "logs", "c", "{\"habit\":\"run\",\"day\":2}");

    optimist_query *q = NULL;
    CHECK_OK(optimist_query_open(s,
        "{\"collection\":\"logs\",\"where\":{\"field\":\"habit\",\"eq\":\"run\"},"
        "\"order\":[{\"field\":\"day\",\"desc\":true}],\"limit\":2}", &q));
    size_t n = 99;
    CHECK_OK(optimist_query_count(q, &n));
    CHECK(n == 2);
    check_rows(q, "[{\"key\":\"c\",\"status\":\"pending\",\"value\":{\"day\":2,\"habit\":\"run\"}},"
                  "{\"key\":\"a\",\"status\":\"pending\",\"value\":{\"day\":1,\"habit\":\"run\"}}]");
    char *page = NULL;
    CHECK_OK(optimist_query_rows(q, 1, 5, &page));
    CHECK_JSON(page, "[{\"key\":\"a\",\"status\":\"pending\",\"value\":{\"day\":1,\"habit\":\"run\"}}]");
    CHECK_OK(optimist_query_rows(q, 7, 0, &page));
    CHECK_JSON(page, "[]");

    listener_ctx ctx = {s, 0, 0, "", 0};
    uint64_t sub = 0;
    CHECK_OK(optimist_query_subscribe(q, on_deltas, &ctx, &sub));
    /* Numbered: the rows and the last delivery they include, read with the subscription. The
       query has delivered nothing yet (no change since it opened). */
    numbered_ctx nctx = {0, {0}, ""};
    uint64_t nsub = 0, delivered = 99;
    char *first = NULL;
    CHECK_OK(optimist_query_subscribe_numbered(q, on_numbered, &nctx, &nsub, &first, &delivered));
    CHECK_JSON(first, "[{\"key\":\"c\",\"status\":\"pending\",\"value\":{\"day\":2,\"habit\":\"run\"}},"
                      "{\"key\":\"a\",\"status\":\"pending\",\"value\":{\"day\":1,\"habit\":\"run\"}}]");
    CHECK(delivered == 0);
    CHECK(nsub != sub);

    /* A newer run enters at the top; the window's last row is pushed out. */
    mutate_put(s, "logs", "d", "{\"habit\":\"run\",\"day\":9}");
    CHECK(ctx.calls == 1);
    CHECK(ctx.deltas == 2);
    CHECK_STR(ctx.last, "[{\"index\":0,\"op\":\"insert\",\"row\":{\"key\":\"d\",\"status\":\"pending\","
                         "\"value\":{\"day\":9,\"habit\":\"run\"}}},{\"index\":2,\"op\":\"delete\"}]");
    /* The listener's own mutation (another collection) delivered nothing more. */
    CHECK(ctx.calls == 1);
    CHECK(nctx.calls == 1);
    CHECK(nctx.numbers[0] == 1);
    CHECK_STR(nctx.last, ctx.last);
    /* A record outside the query changes nothing: no call. */
    mutate_put(s, "logs", "b", "{\"habit\":\"read\",\"day\":4}");
    CHECK(ctx.calls == 1);
    /* The top row leaves: the next one outside the window enters at its end. */
    optimist_batch *del = NULL;
    CHECK_OK(optimist_batch_new(&del));
    CHECK_OK(optimist_batch_delete(del, "logs", "d"));
    CHECK_OK(optimist_mutate(s, del, NULL, NULL));
    optimist_batch_free(del);
    CHECK(ctx.calls == 2);
    CHECK_STR(ctx.last, "[{\"index\":0,\"op\":\"delete\"},{\"index\":1,\"op\":\"insert\",\"row\":{\"key\":\"a\","
                         "\"status\":\"pending\",\"value\":{\"day\":1,\"habit\":\"run\"}}}]");
    CHECK(nctx.calls == 2);
    CHECK(nctx.numbers[1] == 2);
    CHECK_OK(optimist_query_unsubscribe(q, nsub));
    /* Without the rows: the number of the last delivery before the subscription, and nothing
       else written. */
    numbered_ctx later = {0, {0}, ""};
    uint64_t lsub = 0;
    delivered = 99;
    CHECK_OK(optimist_query_subscribe_numbered(q, on_numbered, &later, &lsub, NULL, &delivered));
    CHECK(delivered == 2);
    CHECK_OK(optimist_query_unsubscribe(q, lsub));
    CHECK_OK(optimist_query_subscribe_numbered(q, on_numbered, &later, &lsub, NULL, NULL));
    CHECK_OK(optimist_query_unsubscribe(q, lsub));
    CHECK(later.calls == 0);

    CHECK_OK(optimist_query_unsubscribe(q, sub));
    CHECK_FAILS(optimist_query_unsubscribe(q, sub), OPTIMIST_NOTFOUND);
    mutate_put(s, "logs", "e", "{\"habit\":\"run\",\"day\":7}");
    CHECK(ctx.calls == 2);

    /* Groups. */
    optimist_query *g = NULL;
    CHECK_OK(optimist_query_open(s, "{\"collection\":\"logs\",\"group\":{\"by\":[\"habit\"],"
                                    "\"aggregates\":{\"n\":\"count\",\"last\":\"max:day\"}}}", &g));
    check_rows(g, "[{\"group\":{\"habit\":\"read\"},\"values\":{\"last\":4,\"n\":1}},"
                  "{\"group\":{\"habit\":\"run\"},\"values\":{\"last\":7,\"n\":3}}]");

    /* Bad input. */
    check_message_names("{\"where\":{}}", "collection");
    check_message_names("{\"collection\":\"logs\",\"order\":[{\"field\":\"day\",\"desc\":1}]}", "desc");
    check_message_names("{\"collection\":\"logs\",\"limit\":0}", "limit");
    check_message_names("{\"collection\":\"logs\",\"where\":{\"field\":\"x\",\"in\":3}}", "in");
    check_message_names("{\"collection\":\"logs\",\"colour\":1}", "colour");
    CHECK_FAILS(optimist_query_open(s, "{not json", &q), OPTIMIST_INVALID);
    CHECK_FAILS(optimist_query_open(s, "\xff\xfe", &q), OPTIMIST_INVALID);
    CHECK_FAILS(optimist_query_open(NULL, "{\"collection\":\"logs\"}", &q), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_query_open(s, NULL, &q), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_query_open(s, "{\"collection\":\"logs\"}", NULL), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_query_count(NULL, &n), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_query_count(q, NULL), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_query_rows(q, 0, 0, NULL), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_query_subscribe(q, NULL, NULL, &sub), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_query_subscribe(q, on_deltas, NULL, NULL), OPTIMIST_MISUSE);
    char *unwritten = NULL;
    CHECK_FAILS(optimist_query_subscribe_numbered(q, NULL, NULL, &sub, &unwritten, NULL), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_query_subscribe_numbered(q, on_numbered, NULL, NULL, &unwritten, NULL), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_query_subscribe_numbered(NULL, on_numbered, NULL, &sub, &unwritten, NULL), OPTIMIST_MISUSE);
    CHECK(unwritten == NULL);
    CHECK_FAILS(optimist_query_count((optimist_query *)s, &n), OPTIMIST_MISUSE);
    CHECK_OK(optimist_query_close(NULL));

    /* A closed query answers MISUSE, and closing it again is a no-op. */
    CHECK_OK(optimist_query_close(q));
    CHECK_FAILS(optimist_query_count(q, &n), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_query_rows(q, 0, 0, &page), OPTIMIST_MISUSE);
    CHECK_OK(optimist_query_close(q));

    /* Closing the store ends its queries. */
    CHECK_OK(optimist_close(s));
    CHECK_FAILS(optimist_query_count(g, &n), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_query_subscribe(g, on_deltas, &ctx, &sub), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_query_subscribe_numbered(g, on_numbered, NULL, &sub, &unwritten, NULL), OPTIMIST_MISUSE);
    CHECK(unwritten == NULL);
    CHECK_OK(optimist_query_close(g));
    CHECK_DONE();
}
