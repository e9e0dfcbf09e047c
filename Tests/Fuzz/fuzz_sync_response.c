/*
 * fuzz_sync_response - the sync's parsing of server answers, fed the fuzzer's bytes through a
 * host transport (as Tests/C/sync_callback.c plugs one in).
 *
 * The input is a list of answers, each: a status selector byte (mostly 200; 400, 401, 413,
 * 429, 503, a raw value, or "no answer"), a retry-after byte, a 16-bit body length and the
 * body. The transport hands them out in order, to pushes and pulls alike, then answers "no
 * answer" until the sync is stopped. The store starts with two pending mutations (ids 1 and 2
 * on a fresh in-memory store) so the first push carries them, and the main thread nudges the
 * sync (sync_now, new headers after a 401) until every answer was taken or a short deadline.
 *
 * Promises checked: nothing crashes or hangs; the sync stops; afterwards every read answers
 * with a result code and canonical JSON, and the store still takes and commits a mutation.
 */
#define _POSIX_C_SOURCE 200809L
#include "fuzz_common.h"

#include <stdatomic.h>
#include <time.h>

typedef struct {
    const uint8_t *p;
    size_t n;
    atomic_int exhausted; /* every answer was taken */
    atomic_int calls;
    char *body;           /* the last body handed out, kept until the next call */
} feed;

static int transport(void *ctx, const char *endpoint, const char *url, const char *body,
                     const char *const *headers, int64_t timeout_ms, int *out_status,
                     const char **out_body, int64_t *out_retry_after_ms) {
    feed *f = ctx;
    (void)url;
    (void)timeout_ms;
    (void)headers;
    if (!endpoint || !body) FUZZ_FAIL("transport called without an endpoint or a body");
    FUZZ_JSON(body, '{'); /* what the sync sends is canonical JSON too */
    atomic_fetch_add(&f->calls, 1);
    free(f->body);
    f->body = NULL;
    fuzz_in in = {f->p, f->n};
    if (fz_empty(&in)) {
        atomic_store(&f->exhausted, 1);
        *out_body = "no more answers (fuzz)";
        return 1;
    }
    uint8_t sel = fz_u8(&in), ra = fz_u8(&in);
    size_t len = ((size_t)fz_u8(&in) << 8) | fz_u8(&in);
    if (len > in.n) len = in.n;
    f->body = malloc(len + 1);
    if (!f->body) abort();
    memcpy(f->body, in.p, len);
    f->body[len] = '\0';
    f->p = in.p + len;
    f->n = in.n - len;
    static const int statuses[] = {200, 200, 200, 200, 200, 200, 200, 200, 400, 401, 403, 413, 429, 500, 503};
    int nstat = (int)(sizeof statuses / sizeof statuses[0]);
    if (ra & 0x80) *out_retry_after_ms = (int64_t)(ra & 0x7f) - 8; /* a few negative ones too */
    *out_body = (sel & 0x10) ? NULL : f->body; /* NULL counts as an empty body */
    if (sel >= 0xF0) return 1;                  /* no answer, with the body as the message */
    if (sel >= 0xE0) {
        *out_status = (int)((uint32_t)sel * 2654435761u); /* any int at all */
        return 0;
    }
    *out_status = statuses[(sel & 0x0f) % nstat];
    return 0;
}

static void sleep_ms(long ms) {
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

static long long now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static void mutate_put(optimist_store *s, const char *key, const char *json) {
    optimist_batch *b = NULL;
    optimist_batch_new(&b);
    if (optimist_batch_put(b, "c", key, json) != OPTIMIST_OK) FUZZ_FAIL("put");
    if (optimist_mutate(s, b, NULL, NULL) != OPTIMIST_OK) FUZZ_FAIL("mutate");
    optimist_batch_free(b);
}

static void check_usable(optimist_store *s) {
    char *json = NULL;
    if (FUZZ_RC(optimist_sync_status(s, &json)) != OPTIMIST_OK) FUZZ_FAIL("sync_status after stop");
    FUZZ_JSON(json, '{');
    if (!strstr(json, "\"state\":\"stopped\"")) FUZZ_FAIL("the sync is stopped but says %s", json);
    optimist_free(json);
    json = NULL;
    if (FUZZ_RC(optimist_mutations(s, 0, &json)) != OPTIMIST_OK) FUZZ_FAIL("mutations");
    FUZZ_JSON(json, '[');
    optimist_free(json);
    json = NULL;
    /* Whatever the server's answers put into the confirmed state reads back canonical. */
    if (FUZZ_RC(optimist_scan(s, "c", NULL, 0, &json)) != OPTIMIST_OK) FUZZ_FAIL("scan");
    FUZZ_JSON(json, '[');
    optimist_free(json);
    json = NULL;
    for (int k = 0; k < 2; k++) {
        const char *key = k ? "k2" : "k1";
        int rc = FUZZ_RC(optimist_get(s, "c", key, &json));
        if (rc == OPTIMIST_OK) FUZZ_JSON(json, '{');
        else if (rc != OPTIMIST_NOTFOUND) FUZZ_FAIL("get %s returned %d", key, rc);
        optimist_free(json);
        json = NULL;
        if (FUZZ_RC(optimist_explain(s, "c", key, &json)) != OPTIMIST_OK) FUZZ_FAIL("explain");
        FUZZ_JSON(json, '{');
        optimist_free(json);
        json = NULL;
    }
    /* The hand-driven outbox works again; every mutation still listed has a sane status. */
    uint64_t id = 0;
    char *ops = NULL;
    int rc;
    while ((rc = FUZZ_RC(optimist_outbox_next(s, INT64_MAX, &id, &ops))) == OPTIMIST_OK) {
        FUZZ_JSON(ops, '[');
        optimist_free(ops);
        if (FUZZ_RC(optimist_commit(s, id, NULL)) != OPTIMIST_OK) FUZZ_FAIL("commit after the sync stopped");
    }
    if (rc != OPTIMIST_NOTFOUND) FUZZ_FAIL("outbox_next after the sync stopped returned %d", rc);
    /* And a new mutation goes through. */
    optimist_batch *b = NULL;
    optimist_batch_new(&b);
    optimist_batch_put(b, "c", "after", "{\"ok\":true}");
    if (FUZZ_RC(optimist_mutate(s, b, NULL, &id)) != OPTIMIST_OK) FUZZ_FAIL("mutate after the sync");
    optimist_batch_free(b);
    if (FUZZ_RC(optimist_commit(s, id, NULL)) != OPTIMIST_OK) FUZZ_FAIL("commit after the sync");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    optimist_store *s = NULL;
    if (optimist_open(NULL, &s) != OPTIMIST_OK) FUZZ_FAIL("open");
    mutate_put(s, "k1", "{\"n\":1}");
    mutate_put(s, "k2", "{\"n\":2}");

    feed f = {data, size, 0, 0, NULL};
    static const char *const headers[] = {"Authorization: Bearer fuzz", NULL};
    optimist_sync_options o = OPTIMIST_SYNC_OPTIONS_INIT;
    o.transport = transport;
    o.transport_ctx = &f;
    o.headers = headers;
    o.pull_interval_ms = 0;
    o.max_batch = 1 + (size & 1); /* one or both mutations per push */
    o.timeout_ms = 1000;
    o.backoff_base_ms = 1;
    o.backoff_max_ms = 1;
    if (optimist_sync_start(s, &o) != OPTIMIST_OK) FUZZ_FAIL("sync_start");

    /* Until every answer was taken: an idle or paused sync is asked to go again. */
    long long deadline = now_ms() + 500;
    while (!atomic_load(&f.exhausted) && now_ms() < deadline) {
        int idle = 0;
        if (FUZZ_RC(optimist_sync_wait_idle(s, 2, &idle)) != OPTIMIST_OK) FUZZ_FAIL("wait_idle");
        char *st = NULL;
        if (FUZZ_RC(optimist_sync_status(s, &st)) != OPTIMIST_OK) FUZZ_FAIL("sync_status");
        FUZZ_JSON(st, '{');
        int paused = strstr(st, "\"state\":\"unauthorized\"") != NULL;
        optimist_free(st);
        if (paused && FUZZ_RC(optimist_sync_set_headers(s, headers)) != OPTIMIST_OK) FUZZ_FAIL("set_headers");
        if (idle || paused) {
            if (FUZZ_RC(optimist_sync_now(s)) != OPTIMIST_OK) FUZZ_FAIL("sync_now");
        }
        sleep_ms(1);
    }
    if (FUZZ_RC(optimist_sync_stop(s)) != OPTIMIST_OK) FUZZ_FAIL("sync_stop");
    check_usable(s);
    if (optimist_close(s) != OPTIMIST_OK) FUZZ_FAIL("close");
    free(f.body);
    return 0;
}
