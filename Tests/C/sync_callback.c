/*
 * sync_callback.c - the background sync through a host transport written in C: the callback
 * plays a scripted server (sync_fake.h) on the sync's thread while the main thread mutates.
 *
 * Checks: pushes in id order within max_batch, headers and URL reach the callback, every
 * mutation commits and the confirmed state equals the server's; subscribers see the sync's
 * events (OPTIMIST_CAUSE_SYNC, commits with the record status going 1 -> 0, a kept failure as
 * OPTIMIST_RECORD_FAILED); no answer -> "offline" with nothing rolled back, then recovery on
 * optimist_sync_now; 401 -> "unauthorized" and silence until new headers; bodies that are not
 * the protocol (including 5 MB of garbage) -> "error", nothing lost; stop and close while the
 * callback is blocked; and misuse of every new entry point. Also run under ThreadSanitizer.
 */
#define _POSIX_C_SOURCE 200809L /* strndup, mkdtemp, nanosleep under -std=c11 */

#include "fixtures.h"
#include "sync_fake.h"

#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <unistd.h>

/* The library reads optimist_sync_options from raw memory with this layout (see
 * Sources/OptimistC/Sync.swift). */
#if UINTPTR_MAX == 0xffffffffffffffffu
_Static_assert(offsetof(optimist_sync_options, version) == 0, "optimist_sync_options layout");
_Static_assert(offsetof(optimist_sync_options, url) == 8, "optimist_sync_options layout");
_Static_assert(offsetof(optimist_sync_options, headers) == 16, "optimist_sync_options layout");
_Static_assert(offsetof(optimist_sync_options, pull_interval_ms) == 24, "optimist_sync_options layout");
_Static_assert(offsetof(optimist_sync_options, max_batch) == 32, "optimist_sync_options layout");
_Static_assert(offsetof(optimist_sync_options, timeout_ms) == 40, "optimist_sync_options layout");
_Static_assert(offsetof(optimist_sync_options, backoff_base_ms) == 48, "optimist_sync_options layout");
_Static_assert(offsetof(optimist_sync_options, backoff_max_ms) == 56, "optimist_sync_options layout");
_Static_assert(offsetof(optimist_sync_options, transport) == 64, "optimist_sync_options layout");
_Static_assert(offsetof(optimist_sync_options, transport_ctx) == 72, "optimist_sync_options layout");
_Static_assert(offsetof(optimist_sync_options, on_status) == 80, "optimist_sync_options layout");
_Static_assert(offsetof(optimist_sync_options, status_ctx) == 88, "optimist_sync_options layout");
_Static_assert(offsetof(optimist_sync_options, events) == 96, "optimist_sync_options layout");
_Static_assert(sizeof(optimist_sync_options) == 104, "optimist_sync_options layout");
#endif

/* ---- the host: a transport callback over the fake server ---------------------------------- */

enum mode { MODE_OK, MODE_OFFLINE, MODE_AUTH, MODE_GARBAGE, MODE_BLOCK, MODE_503 };

typedef struct {
    fake_server *server;
    atomic_int mode;
    _Atomic(const char *) garbage; /* MODE_GARBAGE: the body answered (NULL: a NULL body) */
    atomic_int garbage_status;     /* ... with this HTTP status */
    atomic_int garbage_pull;       /* ... to pulls (1) or to pushes (0); the other works */
    atomic_int entered, release;   /* MODE_BLOCK: a push is in the callback; may leave it */
    atomic_int calls;
    atomic_llong last_503_ms;      /* MODE_503: when it last answered 503 (0: not yet) */
    atomic_llong gap_after_503;    /* the shortest wait from a 503 to the next call (-1: none) */
    atomic_int broken; /* a promise of the header the callback saw broken */
    pthread_mutex_t lock; /* guards what follows */
    char url[128];        /* the last request's */
    char headers[512];    /* the last request's headers, each followed by '\n' */
    char *reply;          /* the last body handed to the library, kept until the next call */
} host;

static host *host_new(void) {
    host *h = calloc(1, sizeof *h);
    if (!h) abort();
    h->server = fake_new();
    atomic_store(&h->gap_after_503, -1);
    pthread_mutex_init(&h->lock, NULL);
    return h;
}

static void host_free(host *h) {
    free(h->reply);
    fake_free(h->server);
    pthread_mutex_destroy(&h->lock);
    free(h);
}

static int transport(void *ctx, const char *endpoint, const char *url, const char *body,
                     const char *const *headers, int64_t timeout_ms, int *out_status,
                     const char **out_body, int64_t *out_retry_after_ms) {
    host *h = ctx;
    atomic_fetch_add(&h->calls, 1);
    long long t = now_ms(), last = atomic_exchange(&h->last_503_ms, 0), gap = atomic_load(&h->gap_after_503);
    if (last && (gap < 0 || t - last < gap)) atomic_store(&h->gap_after_503, t - last);
    int push = strcmp(endpoint, "push") == 0;
    if ((!push && strcmp(endpoint, "pull") != 0) || !url || !body || !headers || timeout_ms < 1 ||
        *out_retry_after_ms != -1 || *out_body != NULL)
        atomic_fetch_add(&h->broken, 1);

    pthread_mutex_lock(&h->lock);
    snprintf(h->url, sizeof h->url, "%s", url);
    h->headers[0] = '\0';
    for (size_t i = 0; headers[i]; i++) {
        strncat(h->headers, headers[i], sizeof h->headers - strlen(h->headers) - 2);
        strcat(h->headers, "\n");
    }
    int authorized = strstr(h->headers, "Authorization: Bearer good\n") != NULL;
    free(h->reply); /* the previous body may go now: the library copied it */
    h->reply = NULL;
    pthread_mutex_unlock(&h->lock);

    switch (atomic_load(&h->mode)) {
    case MODE_OFFLINE:
        *out_body = "connection refused (test)";
        return 1;
    case MODE_AUTH:
        if (!authorized) {
            *out_status = 401;
            *out_body = "{\"error\":\"who are you?\"}";
            return 0;
        }
        break;
    case MODE_GARBAGE:
        if (push != atomic_load(&h->garbage_pull)) {
            *out_status = atomic_load(&h->garbage_status);
            *out_body = atomic_load(&h->garbage);
            return 0;
        }
        break;
    case MODE_503:
        *out_status = 503;
        *out_body = "{\"error\":\"overloaded\"}";
        *out_retry_after_ms = 700;
        atomic_store(&h->last_503_ms, now_ms());
        return 0;
    case MODE_BLOCK: /* pushes only: the pull at start goes through */
        if (push) {
            atomic_store(&h->entered, 1);
            while (!atomic_load(&h->release)) sleep_ms(1);
        }
        break;
    default:
        break;
    }
    char *reply = push ? fake_push(h->server, body) : fake_pull(h->server, body);
    if (!reply) {
        *out_status = 400;
        *out_body = "{\"error\":\"not a protocol request\"}";
        return 0;
    }
    pthread_mutex_lock(&h->lock);
    h->reply = reply;
    pthread_mutex_unlock(&h->lock);
    *out_status = 200;
    *out_body = reply;
    return 0;
}

/* ---- what listeners saw -------------------------------------------------------------------- */

typedef struct {
    pthread_mutex_t lock;
    int calls, saw_stopped, null_json;
    char last[1024];
} status_log;

static void on_status(void *ctx, const char *json) {
    status_log *log = ctx;
    pthread_mutex_lock(&log->lock);
    log->calls++;
    if (!json) {
        log->null_json++;
    } else {
        snprintf(log->last, sizeof log->last, "%s", json);
        if (status_has_state(json, "stopped")) log->saw_stopped = 1;
    }
    pthread_mutex_unlock(&log->lock);
}

typedef struct {
    pthread_mutex_t lock;
    int mutate_pending;   /* cause MUTATE with status PENDING */
    int commit_confirmed; /* cause COMMIT with status CONFIRMED */
    int sync_events;      /* cause SYNC (status left PENDING) */
    int failed;           /* cause FAIL with status FAILED */
    int bad;              /* a status out of range, or a SYNC event that is not PENDING */
} change_log;

static void on_changes(void *ctx, const optimist_change *c, size_t n) {
    change_log *log = ctx;
    pthread_mutex_lock(&log->lock);
    for (size_t i = 0; i < n; i++) {
        int st = c[i].pending;
        if (st < OPTIMIST_RECORD_CONFIRMED || st > OPTIMIST_RECORD_FAILED) log->bad++;
        if (c[i].cause == OPTIMIST_CAUSE_MUTATE && st == OPTIMIST_RECORD_PENDING) log->mutate_pending++;
        if (c[i].cause == OPTIMIST_CAUSE_COMMIT && st == OPTIMIST_RECORD_CONFIRMED) log->commit_confirmed++;
        if (c[i].cause == OPTIMIST_CAUSE_SYNC) {
            log->sync_events++;
            if (st != OPTIMIST_RECORD_PENDING) log->bad++;
        }
        if (c[i].cause == OPTIMIST_CAUSE_FAIL && st == OPTIMIST_RECORD_FAILED) log->failed++;
    }
    pthread_mutex_unlock(&log->lock);
}

static void logs_init(status_log *sl, change_log *cl) {
    memset(sl, 0, sizeof *sl);
    memset(cl, 0, sizeof *cl);
    pthread_mutex_init(&sl->lock, NULL);
    pthread_mutex_init(&cl->lock, NULL);
}

static void logs_destroy(status_log *sl, change_log *cl) {
    pthread_mutex_destroy(&sl->lock);
    pthread_mutex_destroy(&cl->lock);
}

/* ---- helpers ---------------------------------------------------------------------------- */

/* Options for a sync through h: quick backoff, pulls only when something happened. */
static optimist_sync_options options_for(host *h, status_log *log) {
    optimist_sync_options o = OPTIMIST_SYNC_OPTIONS_INIT;
    o.transport = transport;
    o.transport_ctx = h;
    o.on_status = log ? on_status : NULL;
    o.status_ctx = log;
    o.pull_interval_ms = 0;
    o.timeout_ms = 2000;
    o.backoff_base_ms = 10;
    o.backoff_max_ms = 50;
    return o;
}

static uint64_t mutate_key(optimist_store *s, int i, int policy) {
    char key[32], json[32];
    snprintf(key, sizeof key, "k%03d", i);
    snprintf(json, sizeof json, "{\"i\":%d}", i);
    optimist_batch *b = batch_of_put("logs", key, json);
    uint64_t id = 0;
    CHECK_OK(optimist_mutate_with_policy(s, b, NULL, policy, &id));
    optimist_batch_free(b);
    return id;
}

/* ---- the cases ------------------------------------------------------------------------ */

/* Mutations before and during the sync all commit, in id order, within max_batch. */
static void push_commit_pull(void) {
    optimist_store *s = open_memory();
    host *h = host_new();
    status_log sl;
    change_log cl;
    logs_init(&sl, &cl);
    uint64_t sub = 0, ids[40];
    CHECK_OK(optimist_subscribe(s, NULL, NULL, on_changes, &cl, &sub));
    for (int i = 0; i < 25; i++) ids[i] = mutate_key(s, i, OPTIMIST_POLICY_ROLLBACK);
    fake_put(h->server, "logs", "elsewhere", "{\"by\":\"another device\"}");

    const char *headers[] = {"Authorization: Bearer t1", "X-Trace:   abc", NULL};
    optimist_sync_options o = options_for(h, &sl);
    o.url = "http://fake.test/";
    o.headers = headers;
    o.max_batch = 10;
    CHECK_OK(optimist_sync_start(s, &o));

    uint64_t id = 0;
    char *ops = NULL;
    CHECK_FAILS(optimist_outbox_next(s, 0, &id, &ops), OPTIMIST_MISUSE); /* the sync owns it */
    for (int i = 25; i < 40; i++) ids[i] = mutate_key(s, i, OPTIMIST_POLICY_ROLLBACK);

    CHECK(wait_idle(s));
    pthread_mutex_lock(&sl.lock);
    CHECK(sl.calls >= 3); /* every exchange's status but maybe the last: none was missed */
    pthread_mutex_unlock(&sl.lock);
    for (int i = 0; i < 40; i++) CHECK(status_of(s, ids[i]) == OPTIMIST_COMMITTED);
    CHECK(pending_count(s) == 0);
    CHECK(fake_compare(h->server, s) == 0);
    CHECK_GET(s, "logs", "elsewhere", "{\"by\":\"another device\"}");

    pthread_mutex_lock(&h->server->lock);
    CHECK(h->server->in_order);
    CHECK(h->server->max_push >= 1 && h->server->max_push <= 10);
    CHECK(h->server->nsent == 40); /* nothing sent twice */
    for (int i = 1; i < h->server->nsent; i++) CHECK(h->server->sent[i] > h->server->sent[i - 1]);
    CHECK(h->server->pulls >= 1);
    pthread_mutex_unlock(&h->server->lock);

    pthread_mutex_lock(&h->lock);
    CHECK(strstr(h->headers, "Authorization: Bearer t1\n") != NULL);
    CHECK(strstr(h->headers, "X-Trace: abc\n") != NULL); /* split at ':', leading spaces dropped */
    CHECK_STR(h->url, "http://fake.test/pull");         /* the last request: the final pull */
    pthread_mutex_unlock(&h->lock);
    CHECK(atomic_load(&h->broken) == 0);

    char *json = sync_status(s);
    CHECK(status_has_state(json, "idle"));
    CHECK(json && strstr(json, "\"pushed\":40") && strstr(json, "\"pending\":0") && strstr(json, "\"last_error\":null"));
    CHECK(json && strstr(json, "\"cursor\":\"41\"")); /* 40 mutations + the other device's */
    optimist_free(json);

    CHECK_OK(optimist_sync_stop(s));
    CHECK_OK(optimist_sync_stop(s)); /* none runs: OK */
    json = sync_status(s);
    CHECK(status_has_state(json, "stopped"));
    CHECK(json && strstr(json, "\"cursor\":\"41\"")); /* persisted with the store */
    optimist_free(json);
    CHECK_RC(optimist_outbox_next(s, 0, &id, &ops), OPTIMIST_NOTFOUND); /* v1 works again */

    pthread_mutex_lock(&sl.lock);
    CHECK(sl.calls >= 2 && sl.saw_stopped && sl.null_json == 0);
    CHECK(status_has_state(sl.last, "stopped")); /* the last word */
    pthread_mutex_unlock(&sl.lock);
    pthread_mutex_lock(&cl.lock);
    CHECK(cl.mutate_pending == 40);
    CHECK(cl.commit_confirmed >= 40); /* each record: 1 -> 0 */
    CHECK(cl.sync_events >= 40);      /* each handed to the server */
    CHECK(cl.bad == 0);
    pthread_mutex_unlock(&cl.lock);

    CHECK_OK(optimist_close(s));
    logs_destroy(&sl, &cl);
    host_free(h);
}

/* No answer: "offline", nothing rolled back; optimist_sync_now recovers at once. */
static void offline_then_recover(void) {
    optimist_store *s = open_memory();
    host *h = host_new();
    atomic_store(&h->mode, MODE_OFFLINE);
    uint64_t ids[3];
    for (int i = 0; i < 3; i++) ids[i] = mutate_key(s, i, OPTIMIST_POLICY_ROLLBACK);
    optimist_sync_options o = options_for(h, NULL);
    o.backoff_base_ms = 2000; /* the recovery below is sync_now's doing, not the backoff's */
    o.backoff_max_ms = 60000;
    CHECK_OK(optimist_sync_start(s, &o));

    CHECK(wait_state(s, "offline", 10000));
    CHECK(pending_count(s) == 3);
    for (int i = 0; i < 3; i++) CHECK(status_of(s, ids[i]) == OPTIMIST_PENDING);
    CHECK_GET(s, "logs", "k001", "{\"i\":1}");
    char *json = sync_status(s);
    CHECK(json && strstr(json, "connection refused (test)"));
    optimist_free(json);
    int idle = -1;
    CHECK_OK(optimist_sync_wait_idle(s, 30, &idle));
    CHECK(idle == 0);

    atomic_store(&h->mode, MODE_OK);
    CHECK_OK(optimist_sync_now(s));
    CHECK(wait_idle(s));
    for (int i = 0; i < 3; i++) CHECK(status_of(s, ids[i]) == OPTIMIST_COMMITTED);
    CHECK(fake_compare(h->server, s) == 0);
    CHECK_OK(optimist_close(s)); /* stops the sync */
    host_free(h);
}

/* 401: "unauthorized", nothing sent until new headers. */
static void unauthorized_until_headers(void) {
    optimist_store *s = open_memory();
    host *h = host_new();
    atomic_store(&h->mode, MODE_AUTH);
    uint64_t a = mutate_key(s, 1, OPTIMIST_POLICY_ROLLBACK), b = mutate_key(s, 2, OPTIMIST_POLICY_ROLLBACK);
    const char *bad[] = {"Authorization: Bearer expired", NULL};
    optimist_sync_options o = options_for(h, NULL);
    o.headers = bad;
    CHECK_OK(optimist_sync_start(s, &o));

    CHECK(wait_state(s, "unauthorized", 10000));
    int calls = atomic_load(&h->calls);
    sleep_ms(300);
    CHECK(atomic_load(&h->calls) == calls); /* paused: nothing sent */
    CHECK(pending_count(s) == 2);
    CHECK(status_of(s, a) == OPTIMIST_PENDING && status_of(s, b) == OPTIMIST_PENDING);

    const char *no_colon[] = {"Authorization Bearer good", NULL};
    CHECK_FAILS(optimist_sync_set_headers(s, no_colon), OPTIMIST_MISUSE);
    CHECK(strstr(optimist_last_error(), "good") == NULL); /* a header's text is never echoed */
    const char *bad_name[] = {"Author ization: Bearer good", NULL};
    CHECK_FAILS(optimist_sync_set_headers(s, bad_name), OPTIMIST_MISUSE);
    const char *line_break[] = {"Authorization: Bearer good\r\nX-Evil: 1", NULL};
    CHECK_FAILS(optimist_sync_set_headers(s, line_break), OPTIMIST_MISUSE);
    const char *not_utf8[] = {"Authorization: \xff\xfe", NULL};
    CHECK_FAILS(optimist_sync_set_headers(s, not_utf8), OPTIMIST_INVALID);
    sleep_ms(100);
    CHECK(atomic_load(&h->calls) == calls);
    CHECK(wait_state(s, "unauthorized", 10));

    const char *good[] = {"Authorization:\t Bearer good", NULL};
    CHECK_OK(optimist_sync_set_headers(s, good));
    CHECK(wait_idle(s));
    CHECK(status_of(s, a) == OPTIMIST_COMMITTED && status_of(s, b) == OPTIMIST_COMMITTED);
    CHECK(fake_compare(h->server, s) == 0);

    CHECK_OK(optimist_sync_set_headers(s, NULL)); /* none */
    CHECK_OK(optimist_sync_stop(s));
    CHECK_OK(optimist_close(s));
    host_free(h);
}

/* Answers that are not the protocol: "error", nothing lost, and recovery once they are. */
static void garbage_answers(void) {
    size_t big_size = 5u << 20;
    char *big = malloc(big_size + 1);
    if (!big) abort();
    memset(big, '[', big_size);
    big[big_size] = '\0';
    struct {
        const char *name, *body;
        int status, pull;
    } cases[] = {
        {"not JSON", "this is not JSON {", 200, 0},
        {"no results", "{}", 200, 0},
        {"results not an array", "{\"results\":{}}", 200, 0},
        {"a result without an id", "{\"results\":[{\"status\":\"ok\"}]}", 200, 0},
        {"a result for an id not sent", "{\"results\":[{\"id\":99999,\"status\":\"ok\"}]}", 200, 0},
        {"an empty body", "", 200, 0},
        {"a NULL body", NULL, 200, 0},
        {"5 MB of garbage", big, 200, 0},
        /* Not 400, 413 or 422: those blame the content, and a push is narrowed instead. */
        {"HTTP 404", "{\"error\":\"no such endpoint\"}", 404, 0},
        {"HTTP 302", "", 302, 0},
        {"HTTP status 0", "{}", 0, 0},
        {"a pull without a cursor", "{\"changes\":[]}", 200, 1},
        {"a pull with a numeric cursor", "{\"cursor\":7}", 200, 1},
        {"a pull with an unknown op", "{\"cursor\":\"9\",\"changes\":[{\"op\":\"explode\"}]}", 200, 1},
        {"5 MB of garbage to a pull", big, 200, 1},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        fprintf(stderr, "garbage: %s\n", cases[c].name);
        optimist_store *s = open_memory();
        host *h = host_new();
        atomic_store(&h->garbage, cases[c].body);
        atomic_store(&h->garbage_status, cases[c].status);
        atomic_store(&h->garbage_pull, cases[c].pull);
        atomic_store(&h->mode, MODE_GARBAGE);
        uint64_t a = mutate_key(s, 1, OPTIMIST_POLICY_ROLLBACK), b = mutate_key(s, 2, OPTIMIST_POLICY_KEEP);
        optimist_sync_options o = options_for(h, NULL);
        CHECK_OK(optimist_sync_start(s, &o));

        CHECK(wait_state(s, "error", 10000));
        /* Nothing rolled back or failed: not ended yet, or (a pull's garbage) committed by a
           push that went through. */
        int sa = status_of(s, a), sb = status_of(s, b);
        CHECK(sa == OPTIMIST_PENDING || sa == OPTIMIST_INFLIGHT || (cases[c].pull && sa == OPTIMIST_COMMITTED));
        CHECK(sb == OPTIMIST_PENDING || sb == OPTIMIST_INFLIGHT || (cases[c].pull && sb == OPTIMIST_COMMITTED));
        CHECK_GET(s, "logs", "k001", "{\"i\":1}");
        CHECK_GET(s, "logs", "k002", "{\"i\":2}");
        char *json = sync_status(s);
        CHECK(json && strstr(json, "\"last_error\":\""));
        optimist_free(json);

        atomic_store(&h->mode, MODE_OK);
        CHECK_OK(optimist_sync_now(s));
        CHECK(wait_idle(s));
        CHECK(status_of(s, a) == OPTIMIST_COMMITTED && status_of(s, b) == OPTIMIST_COMMITTED);
        CHECK(fake_compare(h->server, s) == 0);
        CHECK_OK(optimist_sync_stop(s));
        CHECK_OK(optimist_close(s));
        host_free(h);
    }
    free(big);
}

/* HTTP 503 with a retry-after from the host: "backoff", nothing lost, the wait honoured. */
static void backoff_retry_after(void) {
    optimist_store *s = open_memory();
    host *h = host_new();
    atomic_store(&h->mode, MODE_503);
    uint64_t id = mutate_key(s, 5, OPTIMIST_POLICY_ROLLBACK);
    optimist_sync_options o = options_for(h, NULL);
    CHECK_OK(optimist_sync_start(s, &o));
    CHECK(wait_state(s, "backoff", 10000));
    atomic_store(&h->mode, MODE_OK);
    CHECK(pending_count(s) == 1);
    CHECK(status_of(s, id) == OPTIMIST_PENDING);
    char *json = sync_status(s);
    CHECK(json && strstr(json, "HTTP 503") && strstr(json, "overloaded"));
    optimist_free(json);
    CHECK(wait_idle(s)); /* by itself, after the wait */
    CHECK(status_of(s, id) == OPTIMIST_COMMITTED);
    long long gap = atomic_load(&h->gap_after_503);
    if (gap < 650) {
        fprintf(stderr, "the call after a 503 with retry-after 700 ms came %lld ms later\n", gap);
        check_failures++;
    }
    CHECK_OK(optimist_close(s));
    host_free(h);
}

/* A rejection: policy keep -> FAILED (the listener sees OPTIMIST_RECORD_FAILED), policy
   rollback -> rolled back; the sync still becomes idle. */
static void rejected(void) {
    optimist_store *s = open_memory();
    host *h = host_new();
    status_log sl;
    change_log cl;
    logs_init(&sl, &cl);
    uint64_t sub = 0;
    CHECK_OK(optimist_subscribe(s, "logs", NULL, on_changes, &cl, &sub));
    uint64_t ok = mutate_key(s, 1, OPTIMIST_POLICY_ROLLBACK);
    uint64_t kept = mutate_key(s, 2, OPTIMIST_POLICY_KEEP);
    uint64_t gone = mutate_key(s, 3, OPTIMIST_POLICY_ROLLBACK);
    uint64_t after = mutate_key(s, 4, OPTIMIST_POLICY_ROLLBACK);
    fake_reject(h->server, kept);
    fake_reject(h->server, gone);
    optimist_sync_options o = options_for(h, &sl);
    CHECK_OK(optimist_sync_start(s, &o));

    CHECK(wait_idle(s)); /* failed mutations excepted */
    CHECK(status_of(s, ok) == OPTIMIST_COMMITTED);
    CHECK(status_of(s, kept) == OPTIMIST_FAILED);
    CHECK(status_of(s, gone) == OPTIMIST_ROLLED_BACK);
    CHECK(status_of(s, after) == OPTIMIST_COMMITTED); /* a kept failure blocks nothing */
    CHECK_GET(s, "logs", "k002", "{\"i\":2}");       /* still visible */
    char *json = NULL;
    CHECK_RC(optimist_get(s, "logs", "k003", &json), OPTIMIST_NOTFOUND);
    int flag = -1;
    CHECK_OK(optimist_is_pending(s, "logs", "k002", &flag));
    CHECK(flag == 1);
    json = sync_status(s);
    CHECK(json && strstr(json, "\"failed\":1") && strstr(json, "\"pending\":0"));
    optimist_free(json);
    pthread_mutex_lock(&cl.lock);
    CHECK(cl.failed == 1);
    CHECK(cl.bad == 0);
    pthread_mutex_unlock(&cl.lock);

    /* retry: the server now accepts it. */
    pthread_mutex_lock(&h->server->lock);
    h->server->reject[kept] = 0;
    pthread_mutex_unlock(&h->server->lock);
    CHECK_OK(optimist_retry(s, kept));
    CHECK(wait_idle(s));
    CHECK(status_of(s, kept) == OPTIMIST_COMMITTED);
    CHECK(fake_compare(h->server, s) == 0);

    CHECK_OK(optimist_close(s));
    pthread_mutex_lock(&sl.lock);
    CHECK(sl.saw_stopped); /* close stopped the sync, and said so */
    pthread_mutex_unlock(&sl.lock);
    logs_destroy(&sl, &cl);
    host_free(h);
}

typedef struct {
    host *h;
    long after_ms;
} releaser_arg;

static void *releaser(void *p) {
    releaser_arg *r = p;
    sleep_ms(r->after_ms);
    atomic_store(&r->h->release, 1);
    return NULL;
}

static int wait_entered(host *h) {
    for (int i = 0; i < 10000 && !atomic_load(&h->entered); i++) sleep_ms(1);
    return atomic_load(&h->entered);
}

/* Stop while the callback is blocked: stop waits for it, ignores its answer, keeps the
   mutation pending; a new sync sends it again and the server answers from its record. */
static void stop_during_request(void) {
    optimist_store *s = open_memory();
    host *h = host_new();
    status_log sl;
    change_log cl;
    logs_init(&sl, &cl);
    atomic_store(&h->mode, MODE_BLOCK);
    uint64_t id = mutate_key(s, 7, OPTIMIST_POLICY_ROLLBACK);
    optimist_sync_options o = options_for(h, &sl);
    CHECK_OK(optimist_sync_start(s, &o));
    CHECK(wait_entered(h));
    CHECK(status_of(s, id) == OPTIMIST_INFLIGHT);

    pthread_t t;
    releaser_arg r = {h, 300};
    CHECK(pthread_create(&t, NULL, releaser, &r) == 0);
    CHECK_OK(optimist_sync_stop(s)); /* returns once the callback has */
    CHECK(atomic_load(&h->release) == 1);
    pthread_join(t, NULL);

    CHECK(status_of(s, id) == OPTIMIST_PENDING); /* the answer was ignored */
    CHECK(pending_count(s) == 1);
    char *json = sync_status(s);
    CHECK(status_has_state(json, "stopped"));
    optimist_free(json);
    pthread_mutex_lock(&sl.lock);
    CHECK(sl.saw_stopped);
    pthread_mutex_unlock(&sl.lock);

    atomic_store(&h->mode, MODE_OK);
    CHECK_OK(optimist_sync_start(s, &o)); /* a store can be synced again */
    CHECK(wait_idle(s));
    CHECK(status_of(s, id) == OPTIMIST_COMMITTED);
    CHECK(fake_compare(h->server, s) == 0);
    pthread_mutex_lock(&h->server->lock);
    CHECK(h->server->nlog == 1); /* applied once, though sent twice */
    pthread_mutex_unlock(&h->server->lock);

    CHECK_OK(optimist_close(s));
    logs_destroy(&sl, &cl);
    host_free(h);
}

static void remove_tree(const char *dir) {
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        char path[512];
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            unlink(path);
        }
        closedir(d);
    }
    rmdir(dir);
}

/* Close while the callback is blocked: close waits for it; the mutation survives, pending. */
static void close_during_request(void) {
    char dir[] = "/tmp/optimist-sync-XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        check_failures++;
        return;
    }
    char path[256];
    snprintf(path, sizeof path, "%s/store.optimist", dir);
    optimist_store *s = NULL;
    CHECK_OK(optimist_open(path, &s));
    host *h = host_new();
    atomic_store(&h->mode, MODE_BLOCK);
    uint64_t id = mutate_key(s, 9, OPTIMIST_POLICY_KEEP);
    optimist_sync_options o = options_for(h, NULL);
    CHECK_OK(optimist_sync_start(s, &o));
    CHECK(wait_entered(h));

    pthread_t t;
    releaser_arg r = {h, 300};
    CHECK(pthread_create(&t, NULL, releaser, &r) == 0);
    CHECK_OK(optimist_close(s));
    pthread_join(t, NULL);
    char *json = NULL;
    CHECK_FAILS(optimist_sync_status(s, &json), OPTIMIST_MISUSE);

    CHECK_OK(optimist_open(path, &s));
    CHECK(pending_count(s) == 1);
    CHECK(status_of(s, id) == OPTIMIST_PENDING);
    CHECK_GET(s, "logs", "k009", "{\"i\":9}");
    CHECK_OK(optimist_close(s));
    host_free(h);
    remove_tree(dir);
}

/* Every way to misuse the new entry points: MISUSE (or INVALID) with a message. */
static void misuse(void) {
    optimist_store *s = open_memory();
    host *h = host_new();
    int idle = -1;
    char *json = NULL;
    const char *headers[] = {"A: b", NULL};

    CHECK_FAILS(optimist_sync_start(s, NULL), OPTIMIST_MISUSE);
    optimist_sync_options o = options_for(h, NULL);
    o.version = 0;
    CHECK_FAILS(optimist_sync_start(s, &o), OPTIMIST_MISUSE);
    CHECK(strstr(optimist_last_error(), "version") != NULL);
    o.version = 99;
    CHECK_FAILS(optimist_sync_start(s, &o), OPTIMIST_MISUSE);

    optimist_sync_options none = OPTIMIST_SYNC_OPTIONS_INIT; /* no url, no transport */
    CHECK_FAILS(optimist_sync_start(s, &none), OPTIMIST_MISUSE);
    none.url = "";
    CHECK_FAILS(optimist_sync_start(s, &none), OPTIMIST_MISUSE);
    none.url = "ftp://example.com";
    CHECK_FAILS(optimist_sync_start(s, &none), OPTIMIST_MISUSE);
    none.url = "\xff\xfe";
    CHECK_FAILS(optimist_sync_start(s, &none), OPTIMIST_INVALID);

    struct {
        const char *what;
        optimist_sync_options o;
    } bad[10];
    int nbad = (int)(sizeof bad / sizeof bad[0]);
    for (int i = 0; i < nbad; i++) bad[i].o = options_for(h, NULL);
    bad[0].what = "max_batch 0", bad[0].o.max_batch = 0;
    bad[1].what = "timeout 0", bad[1].o.timeout_ms = 0;
    bad[2].what = "backoff base 0", bad[2].o.backoff_base_ms = 0;
    bad[3].what = "backoff cap below base", bad[3].o.backoff_base_ms = 100, bad[3].o.backoff_max_ms = 50;
    bad[4].what = "negative pull interval", bad[4].o.pull_interval_ms = -1;
    const char *no_colon[] = {"A: b", "no colon", NULL};
    bad[5].what = "a header without ':'", bad[5].o.headers = no_colon;
    /* values whose time arithmetic would overflow */
    bad[6].what = "pull interval INT64_MAX", bad[6].o.pull_interval_ms = INT64_MAX;
    bad[7].what = "backoff cap INT64_MAX", bad[7].o.backoff_max_ms = INT64_MAX;
    bad[8].what = "backoff base over a day", bad[8].o.backoff_base_ms = 86400001, bad[8].o.backoff_max_ms = 86400001;
    bad[9].what = "events 2", bad[9].o.events = 2;
    for (int i = 0; i < nbad; i++) {
        int rc = optimist_sync_start(s, &bad[i].o);
        if (rc != OPTIMIST_MISUSE || optimist_last_error()[0] == '\0') {
            fprintf(stderr, "sync_start with %s: %d (%s)\n", bad[i].what, rc, optimist_last_error());
            check_failures++;
        }
    }

    /* none of that started a sync */
    CHECK_FAILS(optimist_sync_now(s), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_sync_set_headers(s, headers), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_sync_wait_idle(s, 0, &idle), OPTIMIST_MISUSE);
    CHECK(idle == -1);
    CHECK_OK(optimist_sync_stop(s));
    CHECK_OK(optimist_sync_status(s, &json));
    CHECK(status_has_state(json, "stopped"));
    CHECK(json && strstr(json, "\"pushed\":0") && strstr(json, "\"cursor\":null"));
    CHECK(json && strstr(json, "\"stream\":\"off\""));
    optimist_free(json);
    json = NULL;

    /* a version 1 struct (a program built before events): it starts, and events, past its
       end, is not read */
    o = options_for(h, NULL);
    o.version = 1;
    o.events = 7;
    CHECK_OK(optimist_sync_start(s, &o));
    CHECK_OK(optimist_sync_stop(s));

    /* a transport and no URL is fine, and so is "" with one */
    o = options_for(h, NULL);
    o.url = "";
    CHECK_OK(optimist_sync_start(s, &o));
    CHECK_FAILS(optimist_sync_start(s, &o), OPTIMIST_MISUSE); /* twice */
    CHECK(strstr(optimist_last_error(), "already") != NULL);
    CHECK(wait_idle(s));
    pthread_mutex_lock(&h->lock);
    CHECK_STR(h->url, "");
    pthread_mutex_unlock(&h->lock);
    CHECK_FAILS(optimist_sync_wait_idle(s, 0, NULL), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_sync_wait_idle(s, -1, &idle), OPTIMIST_MISUSE);
    idle = -1;
    CHECK_OK(optimist_sync_wait_idle(s, INT64_MAX, &idle)); /* no overflow: it is idle */
    CHECK(idle == 1);
    CHECK_FAILS(optimist_sync_status(s, NULL), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_sync_set_headers(s, no_colon), OPTIMIST_MISUSE);
    CHECK_OK(optimist_sync_set_headers(s, headers));
    CHECK_OK(optimist_sync_now(s));
    CHECK_OK(optimist_sync_stop(s));
    CHECK_FAILS(optimist_sync_now(s), OPTIMIST_MISUSE); /* stopped */

    /* NULL store */
    CHECK_FAILS(optimist_sync_start(NULL, &o), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_sync_stop(NULL), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_sync_now(NULL), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_sync_set_headers(NULL, headers), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_sync_wait_idle(NULL, 0, &idle), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_sync_status(NULL, &json), OPTIMIST_MISUSE);
    CHECK(json == NULL);

    /* a batch where a store belongs */
    optimist_batch *b = NULL;
    CHECK_OK(optimist_batch_new(&b));
    CHECK_FAILS(optimist_sync_start((optimist_store *)(void *)b, &o), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_sync_stop((optimist_store *)(void *)b), OPTIMIST_MISUSE);
    optimist_batch_free(b);

    /* closed store (with a sync running when it closed) */
    CHECK_OK(optimist_sync_start(s, &o));
    CHECK_OK(optimist_close(s));
    CHECK_FAILS(optimist_sync_start(s, &o), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_sync_stop(s), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_sync_now(s), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_sync_set_headers(s, headers), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_sync_wait_idle(s, 0, &idle), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_sync_status(s, &json), OPTIMIST_MISUSE);
    CHECK(json == NULL);
    host_free(h);
}

int main(void) {
    misuse();
    push_commit_pull();
    offline_then_recover();
    unauthorized_until_headers();
    backoff_retry_after();
    rejected();
    garbage_answers();
    stop_during_request();
    close_during_request();
    return CHECK_DONE();
}
