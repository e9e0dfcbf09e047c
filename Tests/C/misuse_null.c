/*
 * misuse_null.c - every entry point refuses NULL handles, NULL out-pointers and NULL
 * strings with OPTIMIST_MISUSE (and a message) instead of crashing, and writes nothing.
 */
#include "fixtures.h"
#include <string.h>

static void on_change(void *ctx, const optimist_change *changes, size_t n) {
    (void)ctx; (void)changes; (void)n;
}

static void null_store(void) {
    optimist_batch *b = batch_of_put("c", "k", "{}");
    char *out = NULL;
    int flag = 0;
    uint64_t id = 0;
    double d = 0;

    CHECK_OK(optimist_close(NULL)); /* the one documented no-op */
    CHECK_FAILS(optimist_flush(NULL), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_client_id(NULL, &out), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_mutate(NULL, b, NULL, &id), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_mutate_with_policy(NULL, b, NULL, OPTIMIST_POLICY_KEEP, &id), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_commit(NULL, 1, NULL), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_commit_with_renames(NULL, 1, NULL, "[]"), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_mutation(NULL, 1, &out), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_wait_settled(NULL, 1, 0, &flag), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_outbox_wait(NULL, 0, &flag), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_rollback(NULL, 1, NULL), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_server_apply(NULL, b), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_get(NULL, "c", "k", &out), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_get_confirmed(NULL, "c", "k", &out), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_is_pending(NULL, "c", "k", &flag), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_scan(NULL, "c", "", 0, &out), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_status(NULL, 1, &flag), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_pending_count(NULL, &id), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_outbox_next(NULL, 0, &id, &out), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_fail(NULL, 1, 1, "x", 0), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_retry(NULL, 1), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_mark_loaded(NULL, "c", "a", "b", 0), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_needs_reload(NULL, "c", "k", 0, 0, &flag), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_view_define(NULL, "v", "c", "", "count"), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_view_get(NULL, "v", &d), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_subscribe(NULL, NULL, NULL, on_change, NULL, &id), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_unsubscribe(NULL, 1), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_set_retry_policy(NULL, 5, 1000, 60000), OPTIMIST_MISUSE);
    CHECK(out == NULL && id == 0 && flag == 0 && d == 0); /* nothing was written */
    optimist_batch_free(b);
}

static void null_batch(optimist_store *s) {
    uint64_t id = 0;
    CHECK_FAILS(optimist_batch_new(NULL), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_batch_put(NULL, "c", "k", "{}"), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_batch_patch(NULL, "c", "k", "{}"), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_batch_delete(NULL, "c", "k"), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_batch_incr(NULL, "c", "k", "f", 1), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_mutate(s, NULL, NULL, &id), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_mutate_with_policy(s, NULL, NULL, OPTIMIST_POLICY_ROLLBACK, &id), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_server_apply(s, NULL), OPTIMIST_MISUSE);
    optimist_batch_free(NULL); /* must not crash */
    optimist_free(NULL);
    CHECK(id == 0);
}

static void null_strings(optimist_store *s) {
    optimist_batch *b = NULL;
    char *out = NULL;
    int flag = 0;
    CHECK_OK(optimist_batch_new(&b));
    CHECK_FAILS(optimist_batch_put(b, NULL, "k", "{}"), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_batch_put(b, "c", NULL, "{}"), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_batch_put(b, "c", "k", NULL), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_batch_patch(b, NULL, "k", "{}"), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_batch_patch(b, "c", NULL, "{}"), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_batch_patch(b, "c", "k", NULL), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_batch_delete(b, NULL, "k"), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_batch_delete(b, "c", NULL), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_batch_incr(b, NULL, "k", "f", 1), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_batch_incr(b, "c", NULL, "f", 1), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_batch_incr(b, "c", "k", NULL, 1), OPTIMIST_MISUSE);
    optimist_batch_free(b);

    CHECK_FAILS(optimist_get(s, NULL, "k", &out), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_get(s, "c", NULL, &out), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_get_confirmed(s, NULL, "k", &out), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_get_confirmed(s, "c", NULL, &out), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_is_pending(s, NULL, "k", &flag), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_is_pending(s, "c", NULL, &flag), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_scan(s, NULL, "", 0, &out), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_mark_loaded(s, NULL, "a", "b", 0), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_mark_loaded(s, "c", NULL, "b", 0), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_mark_loaded(s, "c", "a", NULL, 0), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_needs_reload(s, NULL, "k", 0, 0, &flag), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_needs_reload(s, "c", NULL, 0, 0, &flag), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_view_define(s, NULL, "c", "", "count"), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_view_define(s, "v", NULL, "", "count"), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_view_define(s, "v", "c", "", NULL), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_view_get(s, NULL, NULL), OPTIMIST_MISUSE);
    CHECK(out == NULL && flag == 0);
}

static void null_out_pointers(optimist_store *s) {
    optimist_batch *b = batch_of_put("c", "k", "{\"v\":1}");
    uint64_t id = 0, sub = 0;
    CHECK_FAILS(optimist_open(NULL, NULL), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_client_id(s, NULL), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_get(s, "c", "k", NULL), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_get_confirmed(s, "c", "k", NULL), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_is_pending(s, "c", "k", NULL), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_scan(s, "c", "", 0, NULL), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_status(s, 1, NULL), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_mutation(s, 1, NULL), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_wait_settled(s, 1, 0, NULL), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_outbox_wait(s, 0, NULL), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_pending_count(s, NULL), OPTIMIST_MISUSE);
    char *ops = NULL;
    CHECK_FAILS(optimist_outbox_next(s, 0, NULL, &ops), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_outbox_next(s, 0, &id, NULL), OPTIMIST_MISUSE);
    CHECK(ops == NULL);
    CHECK_FAILS(optimist_needs_reload(s, "c", "k", 0, 0, NULL), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_view_get(s, "v", NULL), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_subscribe(s, NULL, NULL, on_change, NULL, NULL), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_subscribe(s, NULL, NULL, NULL, NULL, &sub), OPTIMIST_MISUSE);
    /* None of the refused calls may have changed the store. */
    CHECK_OK(optimist_pending_count(s, &id));
    CHECK(id == 0);
    /* out_id is the one optional out-pointer (documented): the mutation happens. */
    CHECK_OK(optimist_mutate(s, b, NULL, NULL));
    CHECK_OK(optimist_mutate_with_policy(s, b, NULL, OPTIMIST_POLICY_KEEP, NULL));
    CHECK_OK(optimist_pending_count(s, &id));
    CHECK(id == 2);
    optimist_batch_free(b);
}

static void bad_arguments(optimist_store *s) {
    optimist_batch *b = batch_of_put("c", "k", "{}");
    uint64_t id = 0, before = 0, after = 0;
    double d = 0;
    CHECK_OK(optimist_pending_count(s, &before));
    CHECK_FAILS(optimist_mutate_with_policy(s, b, NULL, 7, &id), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_mutate_with_policy(s, b, NULL, -1, &id), OPTIMIST_MISUSE);
    CHECK_OK(optimist_pending_count(s, &after));
    CHECK(id == 0 && after == before);
    CHECK_FAILS(optimist_view_define(s, "v", "c", "", "median"), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_view_define(s, "v", "c", "", "sum"), OPTIMIST_MISUSE);
    CHECK_RC(optimist_view_get(s, "v", &d), OPTIMIST_NOTFOUND);
    CHECK_FAILS(optimist_mark_loaded(s, "c", "b", "a", 0), OPTIMIST_MISUSE); /* from > to */
    CHECK_FAILS(optimist_set_retry_policy(s, 0, 1000, 60000), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_set_retry_policy(s, 5, -1, 60000), OPTIMIST_MISUSE);
    optimist_batch_free(b);
}

/* A batch passed where a store is expected is recognised, not misread. */
static void wrong_handle_kind(void) {
    optimist_batch *b = batch_of_put("c", "k", "{}");
    uint64_t n = 0;
    CHECK_FAILS(optimist_pending_count((optimist_store *)(void *)b, &n), OPTIMIST_MISUSE);
    CHECK(n == 0);
    /* ... and a store passed where a batch is expected. */
    optimist_store *s = open_memory();
    uint64_t id = mutate_put(s, "c", "k", "{}");
    CHECK_FAILS(optimist_commit(s, id, (const optimist_batch *)(void *)s), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_batch_put((optimist_batch *)(void *)s, "c", "k", "{}"), OPTIMIST_MISUSE);
    int status = 0;
    CHECK_OK(optimist_status(s, id, &status));
    CHECK(status == OPTIMIST_PENDING); /* the refused commit changed nothing */
    CHECK_OK(optimist_close(s));
    optimist_batch_free(b);
}

/* optimist_open_ext: versioned options; bad ones are MISUSE and open nothing. */
static void open_options(void) {
    optimist_store *t = NULL;
    optimist_open_options o = OPTIMIST_OPEN_OPTIONS_INIT;
    CHECK(o.version == OPTIMIST_OPEN_OPTIONS_VERSION && o.cache_bytes == OPTIMIST_CACHE_BYTES_DEFAULT);
    CHECK_FAILS(optimist_open_ext(NULL, &o, NULL), OPTIMIST_MISUSE);
    o.cache_bytes = 0;
    CHECK_FAILS(optimist_open_ext(NULL, &o, &t), OPTIMIST_MISUSE);
    CHECK(t == NULL);
    o.cache_bytes = 1;
    o.version = 99;
    CHECK_FAILS(optimist_open_ext(NULL, &o, &t), OPTIMIST_MISUSE);
    CHECK(t == NULL);
    o.version = OPTIMIST_OPEN_OPTIONS_VERSION;
    CHECK_OK(optimist_open_ext(NULL, &o, &t)); /* a one-byte cache: slow, but correct */
    optimist_batch *b = batch_of_put("c", "k", "{\"v\":1}");
    uint64_t id = 0;
    char *json = NULL;
    CHECK_OK(optimist_server_apply(t, b));
    CHECK_OK(optimist_mutate(t, b, NULL, &id));
    CHECK_OK(optimist_get(t, "c", "k", &json));
    CHECK(json != NULL && strcmp(json, "{\"v\":1}") == 0);
    optimist_free(json);
    CHECK_OK(optimist_close(t));
    o.cache_bytes = (size_t)-1; /* clamped */
    t = NULL;
    CHECK_OK(optimist_open_ext(NULL, &o, &t));
    CHECK_OK(optimist_close(t));
    t = NULL;
    CHECK_OK(optimist_open_ext(NULL, NULL, &t)); /* NULL: the defaults */
    CHECK_OK(optimist_close(t));
    optimist_batch_free(b);
}

int main(void) {
    optimist_store *s = open_memory();
    open_options();
    null_store();
    null_batch(s);
    null_strings(s);
    null_out_pointers(s);
    bad_arguments(s);
    wrong_handle_kind();
    CHECK(optimist_errstr(OPTIMIST_MISUSE) != NULL && optimist_errstr(OPTIMIST_MISUSE)[0] != '\0');
    CHECK(optimist_errstr(12345) != NULL); /* unknown codes still get a string */
    CHECK_OK(optimist_close(s));
    return CHECK_DONE();
}
