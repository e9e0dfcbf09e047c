/*
 * invalid_input.c - malformed JSON, JSON that is not an object, invalid UTF-8 in names and
 * non-numeric increments are OPTIMIST_INVALID, and a refused call changes nothing.
 */
#include "fixtures.h"

#include <math.h>

/* Bytes that are not UTF-8: a lone continuation byte and a truncated sequence. */
static const char bad_utf8_key[] = {'k', (char)0x80, 0};
static const char truncated_utf8[] = {'a', (char)0xE2, (char)0x82, 0};

static void bad_json(void) {
    optimist_batch *b = NULL;
    CHECK_OK(optimist_batch_new(&b));
    CHECK_FAILS(optimist_batch_put(b, "c", "k", "{"), OPTIMIST_INVALID);
    CHECK_FAILS(optimist_batch_put(b, "c", "k", "{\"a\":}"), OPTIMIST_INVALID);
    CHECK_FAILS(optimist_batch_put(b, "c", "k", "{\"a\":1} trailing"), OPTIMIST_INVALID);
    CHECK_FAILS(optimist_batch_put(b, "c", "k", ""), OPTIMIST_INVALID);
    CHECK_FAILS(optimist_batch_patch(b, "c", "k", "{'a':1}"), OPTIMIST_INVALID);
    /* Valid JSON, but a record must be an object. */
    CHECK_FAILS(optimist_batch_put(b, "c", "k", "[1,2]"), OPTIMIST_INVALID);
    CHECK_FAILS(optimist_batch_put(b, "c", "k", "42"), OPTIMIST_INVALID);
    CHECK_FAILS(optimist_batch_put(b, "c", "k", "\"text\""), OPTIMIST_INVALID);
    CHECK_FAILS(optimist_batch_put(b, "c", "k", "null"), OPTIMIST_INVALID);
    CHECK_FAILS(optimist_batch_patch(b, "c", "k", "[]"), OPTIMIST_INVALID);
    /* Invalid UTF-8 inside a JSON string. */
    char json[32];
    snprintf(json, sizeof json, "{\"a\":\"%s\"}", truncated_utf8);
    CHECK_FAILS(optimist_batch_put(b, "c", "k", json), OPTIMIST_INVALID);
    optimist_batch_free(b);
}

static void bad_utf8_names(optimist_store *s) {
    optimist_batch *b = NULL;
    char *out = NULL;
    int flag = 0;
    CHECK_OK(optimist_batch_new(&b));
    CHECK_FAILS(optimist_batch_put(b, "c", bad_utf8_key, "{}"), OPTIMIST_INVALID);
    CHECK_FAILS(optimist_batch_put(b, bad_utf8_key, "k", "{}"), OPTIMIST_INVALID);
    CHECK_FAILS(optimist_batch_patch(b, "c", truncated_utf8, "{}"), OPTIMIST_INVALID);
    CHECK_FAILS(optimist_batch_delete(b, "c", bad_utf8_key), OPTIMIST_INVALID);
    CHECK_FAILS(optimist_batch_incr(b, "c", "k", bad_utf8_key, 1), OPTIMIST_INVALID);
    optimist_batch_free(b);
    CHECK_FAILS(optimist_get(s, "c", bad_utf8_key, &out), OPTIMIST_INVALID);
    CHECK_FAILS(optimist_get_confirmed(s, bad_utf8_key, "k", &out), OPTIMIST_INVALID);
    CHECK_FAILS(optimist_is_pending(s, "c", truncated_utf8, &flag), OPTIMIST_INVALID);
    CHECK_FAILS(optimist_scan(s, "c", bad_utf8_key, 0, &out), OPTIMIST_INVALID);
    CHECK_FAILS(optimist_mark_loaded(s, "c", "a", bad_utf8_key, 0), OPTIMIST_INVALID);
    CHECK_FAILS(optimist_needs_reload(s, bad_utf8_key, "k", 0, 0, &flag), OPTIMIST_INVALID);
    CHECK_FAILS(optimist_view_define(s, bad_utf8_key, "c", "", "count"), OPTIMIST_INVALID);
    CHECK_FAILS(optimist_view_define(s, "v", "c", truncated_utf8, "count"), OPTIMIST_INVALID);
    CHECK(out == NULL && flag == 0);
}

/* Every other string argument is checked too: dedupe keys, reasons, filters, paths. */
static void bad_utf8_elsewhere(optimist_store *s) {
    optimist_batch *b = batch_of_put("c", "k", "{}");
    uint64_t id = 0, pending = 99;
    optimist_store *other = NULL;
    CHECK_FAILS(optimist_mutate(s, b, bad_utf8_key, &id), OPTIMIST_INVALID);
    CHECK(id == 0);
    CHECK_OK(optimist_pending_count(s, &pending));
    CHECK(pending == 0);
    CHECK_OK(optimist_mutate(s, b, NULL, &id));
    CHECK_FAILS(optimist_rollback(s, id, bad_utf8_key), OPTIMIST_INVALID);
    CHECK_FAILS(optimist_fail(s, id, 1, truncated_utf8, 0), OPTIMIST_INVALID);
    int status = 0;
    CHECK_OK(optimist_status(s, id, &status));
    CHECK(status == OPTIMIST_PENDING); /* neither refused call changed it */
    CHECK_FAILS(optimist_open(bad_utf8_key, &other), OPTIMIST_INVALID);
    CHECK(other == NULL);
    CHECK_OK(optimist_rollback(s, id, NULL));
    optimist_batch_free(b);
}

static void on_change(void *ctx, const optimist_change *changes, size_t n) {
    (void)ctx; (void)changes; (void)n;
}

static void bad_utf8_filters(optimist_store *s) {
    uint64_t sub = 0;
    CHECK_FAILS(optimist_subscribe(s, bad_utf8_key, NULL, on_change, NULL, &sub), OPTIMIST_INVALID);
    CHECK_FAILS(optimist_subscribe(s, "c", truncated_utf8, on_change, NULL, &sub), OPTIMIST_INVALID);
    CHECK(sub == 0);
}

/* An incr on a string field rejects the whole mutation; the first op leaves no trace. */
static void non_numeric_incr(optimist_store *s) {
    optimist_batch *seed = batch_of_put("stats", "s", "{\"count\":\"many\"}");
    CHECK_OK(optimist_server_apply(s, seed));
    optimist_batch_free(seed);

    optimist_batch *b = NULL;
    uint64_t id = 0, pending = 99;
    char *out = NULL;
    CHECK_OK(optimist_batch_new(&b));
    CHECK_OK(optimist_batch_put(b, "stats", "other", "{\"x\":1}"));
    CHECK_OK(optimist_batch_incr(b, "stats", "s", "count", 1));
    CHECK_FAILS(optimist_mutate(s, b, NULL, &id), OPTIMIST_INVALID);
    CHECK(id == 0);
    CHECK_RC(optimist_get(s, "stats", "other", &out), OPTIMIST_NOTFOUND);
    CHECK_OK(optimist_pending_count(s, &pending));
    CHECK(pending == 0);
    /* The same ops as a server change are malformed: INVALID and nothing changes. */
    CHECK_FAILS(optimist_server_apply(s, b), OPTIMIST_INVALID);
    CHECK_RC(optimist_get_confirmed(s, "stats", "other", &out), OPTIMIST_NOTFOUND);
    CHECK(out == NULL);
    CHECK_GET(s, "stats", "s", "{\"count\":\"many\"}");
    optimist_batch_free(b);
}

/* Numbers that are no JSON number, a surrogate code point, and nesting deeper than the parser
 * allows (rejected, not a stack overflow). */
static void bad_values(void) {
    optimist_batch *b = NULL;
    CHECK_OK(optimist_batch_new(&b));
    CHECK_FAILS(optimist_batch_patch(b, "c", "k", "{\"a\":1e999}"), OPTIMIST_INVALID);
    CHECK_FAILS(optimist_batch_incr(b, "c", "k", "\xed\xa0\x80", 1), OPTIMIST_INVALID);
    CHECK_FAILS(optimist_batch_incr(b, "c", "k", "n", NAN), OPTIMIST_INVALID);
    CHECK_FAILS(optimist_batch_incr(b, "c", "k", "n", INFINITY), OPTIMIST_INVALID);
    size_t depth = 100000;
    char *deep = malloc(2 * depth + 8);
    CHECK(deep != NULL);
    if (deep != NULL) {
        size_t n = 0;
        memcpy(deep, "{\"a\":", 5);
        n = 5;
        for (size_t i = 0; i < depth; i++) deep[n++] = '[';
        deep[n] = 0;
        CHECK_FAILS(optimist_batch_put(b, "c", "k", deep), OPTIMIST_INVALID);
        free(deep);
    }
    /* None of them added an op: the batch is still empty, and an empty batch is no mutation. */
    optimist_store *s = open_memory();
    uint64_t id = 0;
    CHECK_FAILS(optimist_mutate(s, b, NULL, &id), OPTIMIST_MISUSE);
    CHECK(strstr(optimist_last_error(), "at least one op") != NULL);
    CHECK_OK(optimist_close(s));
    optimist_batch_free(b);
}

int main(void) {
    optimist_store *s = open_memory();
    bad_json();
    bad_values();
    bad_utf8_names(s);
    bad_utf8_elsewhere(s);
    bad_utf8_filters(s);
    non_numeric_incr(s);
    CHECK_OK(optimist_close(s));
    return CHECK_DONE();
}
