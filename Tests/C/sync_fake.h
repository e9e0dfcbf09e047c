/*
 * sync_fake.h - a tiny in-test server of the sync wire protocol (docs/protocol.md), version 2
 * (what the library sends) without shared spaces: it never answers a "drop". Shared by the
 * sync tests: sync_callback.c calls it from a C transport callback, sync_http.c from a loopback
 * HTTP server.
 *
 * It keeps what a server must: the records (collection, key -> JSON value), a change log whose
 * length is the pull cursor, and each mutation id's recorded outcome, so a re-sent id is
 * answered from the record and never applied twice. It understands `put` and `delete` ops
 * (what the tests send) and answers `ok` without canonical ops, so the client folds its own.
 * It also records what a test checks afterwards: the ids pushed in order, the largest push,
 * and whether every push carried its ids in increasing order.
 *
 * The JSON it reads is the library's canonical output, so the scanner below only needs to be
 * correct for well-formed input; it still returns NULL rather than reading past the end.
 */
#ifndef OPTIMIST_TEST_SYNC_FAKE_H
#define OPTIMIST_TEST_SYNC_FAKE_H

#include "fixtures.h" /* status_of, pending_count */

#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- a growing string ------------------------------------------------------------------- */

typedef struct {
    char *p;
    size_t len, cap;
} sbuf;

static inline void sb_printf(sbuf *b, const char *fmt, ...) {
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        size_t room = b->cap - b->len;
        int n = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? room : 0, fmt, ap);
        va_end(ap);
        if (n < 0) abort();
        if (b->p && (size_t)n < room) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + (size_t)n + 1) cap *= 2;
        char *q = realloc(b->p, cap);
        if (!q) abort();
        b->p = q;
        b->cap = cap;
    }
}

/* Appends n bytes as they are. */
static inline void sb_put(sbuf *b, const char *s, size_t n) {
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n + 1) cap *= 2;
        char *q = realloc(b->p, cap);
        if (!q) abort();
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

/* ---- a minimal JSON scanner --------------------------------------------------------------- */

static inline const char *js_ws(const char *p) {
    while (p && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')) p++;
    return p;
}

static inline const char *js_skip_string(const char *p) {
    if (!p || *p != '"') return NULL;
    for (p++; *p && *p != '"'; p++)
        if (*p == '\\' && !*++p) return NULL;
    return *p == '"' ? p + 1 : NULL;
}

/* The end of the JSON value at p, or NULL when it is not one. */
static inline const char *js_skip(const char *p) {
    p = js_ws(p);
    if (!p) return NULL;
    if (*p == '"') return js_skip_string(p);
    if (*p == '{' || *p == '[') {
        char close = *p == '{' ? '}' : ']';
        p = js_ws(p + 1);
        if (*p == close) return p + 1;
        for (;;) {
            if (close == '}') {
                p = js_ws(js_skip_string(js_ws(p)));
                if (!p || *p != ':') return NULL;
                p++;
            }
            p = js_ws(js_skip(p));
            if (!p) return NULL;
            if (*p == ',') {
                p++;
                continue;
            }
            return *p == close ? p + 1 : NULL;
        }
    }
    const char *start = p;
    while (*p && strchr("-+.eE0123456789truefalsn", *p)) p++;
    return p == start ? NULL : p;
}

/* The value of member `name` of the object at p, or NULL. */
static inline const char *js_member(const char *p, const char *name) {
    p = js_ws(p);
    if (!p || *p != '{') return NULL;
    p = js_ws(p + 1);
    size_t n = strlen(name);
    while (p && *p == '"') {
        const char *k = p + 1, *e = js_skip_string(p);
        if (!e) return NULL;
        int match = (size_t)(e - 1 - k) == n && memcmp(k, name, n) == 0;
        p = js_ws(e);
        if (*p != ':') return NULL;
        p = js_ws(p + 1);
        if (match) return p;
        p = js_ws(js_skip(p));
        if (!p || *p != ',') return NULL;
        p = js_ws(p + 1);
    }
    return NULL;
}

/* The first element of the array at p, or NULL when it is empty or not an array. */
static inline const char *js_first(const char *p) {
    p = js_ws(p);
    if (!p || *p != '[') return NULL;
    p = js_ws(p + 1);
    return *p == ']' ? NULL : p;
}

/* The element after the one at p, or NULL after the last. */
static inline const char *js_next(const char *p) {
    p = js_ws(js_skip(p));
    if (!p || *p != ',') return NULL;
    return js_ws(p + 1);
}

/* Copies the string at p (test data holds no escapes) into out; 0 when it is not a string. */
static inline int js_string(const char *p, char *out, size_t cap) {
    const char *e = js_skip_string(js_ws(p));
    if (!e) return 0;
    p = js_ws(p) + 1;
    size_t n = (size_t)(e - 1 - p);
    if (n >= cap) return 0;
    memcpy(out, p, n);
    out[n] = '\0';
    return 1;
}

/* ---- the server -------------------------------------------------------------------------- */

enum { FAKE_RECORDS = 1024, FAKE_LOG = 8192, FAKE_IDS = 1 << 16, FAKE_SENT = 16384 };
enum { FAKE_NONE = 0, FAKE_OK = 1, FAKE_REJECTED = 2 };

typedef struct {
    char coll[32], key[64];
    char *value; /* NULL: deleted */
} fake_record;

typedef struct {
    int record;
    char *value; /* the value the change set (NULL: a delete) */
} fake_change;

typedef struct {
    pthread_mutex_t lock;
    fake_record records[FAKE_RECORDS];
    int nrecords;
    fake_change log[FAKE_LOG];
    int nlog;
    unsigned char outcome[FAKE_IDS]; /* by mutation id: FAKE_NONE, _OK, _REJECTED */
    unsigned char reject[FAKE_IDS];  /* ids to reject */
    uint64_t sent[FAKE_SENT];        /* every id pushed, in the order received */
    int nsent;
    int pushes, pulls, max_push;
    int in_order; /* stays 1 while every push carries increasing ids */
} fake_server;

static inline fake_server *fake_new(void) {
    fake_server *f = calloc(1, sizeof *f);
    if (!f) abort();
    pthread_mutex_init(&f->lock, NULL);
    f->in_order = 1;
    return f;
}

static inline void fake_free(fake_server *f) {
    for (int i = 0; i < f->nrecords; i++) free(f->records[i].value);
    for (int i = 0; i < f->nlog; i++) free(f->log[i].value);
    pthread_mutex_destroy(&f->lock);
    free(f);
}

/* Sets coll/key to value (NULL deletes) and logs it. Called with the lock held. */
static inline void fake_apply_locked(fake_server *f, const char *coll, const char *key, const char *value, size_t len) {
    int r = 0;
    while (r < f->nrecords && (strcmp(f->records[r].coll, coll) != 0 || strcmp(f->records[r].key, key) != 0)) r++;
    if (r == f->nrecords) {
        if (r == FAKE_RECORDS || f->nlog == FAKE_LOG) abort();
        snprintf(f->records[r].coll, sizeof f->records[r].coll, "%s", coll);
        snprintf(f->records[r].key, sizeof f->records[r].key, "%s", key);
        f->nrecords++;
    }
    if (f->nlog == FAKE_LOG) abort();
    free(f->records[r].value);
    f->records[r].value = value ? strndup(value, len) : NULL;
    f->log[f->nlog].record = r;
    f->log[f->nlog].value = value ? strndup(value, len) : NULL;
    f->nlog++;
}

/* A change made on the server by someone else (another device). */
static inline void fake_put(fake_server *f, const char *coll, const char *key, const char *json) {
    pthread_mutex_lock(&f->lock);
    fake_apply_locked(f, coll, key, json, strlen(json));
    pthread_mutex_unlock(&f->lock);
}

/* Marks mutation id to be rejected when pushed. */
static inline void fake_reject(fake_server *f, uint64_t id) {
    pthread_mutex_lock(&f->lock);
    if (id < FAKE_IDS) f->reject[id] = 1;
    pthread_mutex_unlock(&f->lock);
}

/* Applies one mutation's ops; 0 when they are not the ops it understands. */
static inline int fake_apply_ops_locked(fake_server *f, const char *ops) {
    for (const char *op = js_first(ops); op; op = js_next(op)) {
        char kind[16], coll[32], key[64];
        if (!js_string(js_member(op, "op"), kind, sizeof kind) || !js_string(js_member(op, "coll"), coll, sizeof coll) ||
            !js_string(js_member(op, "key"), key, sizeof key))
            return 0;
        if (strcmp(kind, "put") == 0) {
            const char *v = js_member(op, "value"), *e = js_skip(v);
            if (!e) return 0;
            fake_apply_locked(f, coll, key, v, (size_t)(e - v));
        } else if (strcmp(kind, "delete") == 0) {
            fake_apply_locked(f, coll, key, NULL, 0);
        } else {
            return 0;
        }
    }
    return 1;
}

/* The reply to a push request body (malloc'd, the caller frees it), or NULL when the body is
   not a push. */
static inline char *fake_push(fake_server *f, const char *body) {
    const char *list = js_member(body, "mutations");
    if (!list) return NULL;
    sbuf out = {0};
    sb_printf(&out, "{\"results\":[");
    pthread_mutex_lock(&f->lock);
    f->pushes++;
    int count = 0;
    uint64_t previous = 0;
    for (const char *m = js_first(list); m; m = js_next(m)) {
        const char *idp = js_member(m, "id");
        uint64_t id = idp ? strtoull(idp, NULL, 10) : 0;
        if (id == 0 || id >= FAKE_IDS) break;
        if (id <= previous) f->in_order = 0;
        previous = id;
        if (f->nsent < FAKE_SENT) f->sent[f->nsent++] = id;
        if (f->outcome[id] == FAKE_NONE || (f->outcome[id] == FAKE_REJECTED && !f->reject[id])) {
            if (f->reject[id] || !fake_apply_ops_locked(f, js_member(m, "ops")))
                f->outcome[id] = FAKE_REJECTED;
            else
                f->outcome[id] = FAKE_OK;
        }
        if (f->outcome[id] == FAKE_OK)
            sb_printf(&out, "%s{\"id\":%llu,\"status\":\"ok\"}", count ? "," : "", (unsigned long long)id);
        else
            sb_printf(&out, "%s{\"id\":%llu,\"status\":\"rejected\",\"error\":\"refused by the test\"}",
                      count ? "," : "", (unsigned long long)id);
        count++;
    }
    if (count > f->max_push) f->max_push = count;
    pthread_mutex_unlock(&f->lock);
    sb_printf(&out, "]}");
    return out.p;
}

/* The reply to a pull request body: every change after the cursor, and the outcomes of the
   unacked ids the server has recorded. */
static inline char *fake_pull(fake_server *f, const char *body) {
    char cursor_text[32];
    long cursor = 0;
    if (js_string(js_member(body, "cursor"), cursor_text, sizeof cursor_text)) cursor = strtol(cursor_text, NULL, 10);
    sbuf out = {0};
    pthread_mutex_lock(&f->lock);
    f->pulls++;
    if (cursor < 0 || cursor > f->nlog) cursor = 0;
    sb_printf(&out, "{\"changes\":[");
    for (int i = (int)cursor; i < f->nlog; i++) {
        const fake_record *r = &f->records[f->log[i].record];
        if (f->log[i].value)
            sb_printf(&out, "%s{\"op\":\"put\",\"coll\":\"%s\",\"key\":\"%s\",\"value\":%s}", i > cursor ? "," : "",
                      r->coll, r->key, f->log[i].value);
        else
            sb_printf(&out, "%s{\"op\":\"delete\",\"coll\":\"%s\",\"key\":\"%s\"}", i > cursor ? "," : "", r->coll, r->key);
    }
    sb_printf(&out, "],\"cursor\":\"%d\",\"more\":false,\"outcomes\":[", f->nlog);
    int n = 0;
    for (const char *u = js_first(js_member(body, "unacked")); u; u = js_next(u)) {
        uint64_t id = strtoull(u, NULL, 10);
        if (id == 0 || id >= FAKE_IDS || f->outcome[id] == FAKE_NONE) continue;
        if (f->outcome[id] == FAKE_OK)
            sb_printf(&out, "%s{\"id\":%llu,\"status\":\"ok\"}", n++ ? "," : "", (unsigned long long)id);
        else
            sb_printf(&out, "%s{\"id\":%llu,\"status\":\"rejected\",\"error\":\"refused by the test\"}",
                      n++ ? "," : "", (unsigned long long)id);
    }
    pthread_mutex_unlock(&f->lock);
    sb_printf(&out, "]}");
    return out.p;
}

/* Checks that the store's confirmed state holds exactly the server's records; returns the
   number of mismatches (each printed). */
static inline int fake_compare(fake_server *f, optimist_store *s) {
    int bad = 0;
    pthread_mutex_lock(&f->lock);
    for (int i = 0; i < f->nrecords; i++) {
        const fake_record *r = &f->records[i];
        char *got = NULL;
        int rc = optimist_get_confirmed(s, r->coll, r->key, &got);
        int same = r->value ? rc == OPTIMIST_OK && strcmp(got, r->value) == 0 : rc == OPTIMIST_NOTFOUND;
        if (!same) {
            fprintf(stderr, "confirmed %s/%s is %s (rc %d), the server holds %s\n", r->coll, r->key,
                    rc == OPTIMIST_OK ? got : "(none)", rc, r->value ? r->value : "(none)");
            bad++;
        }
        if (rc == OPTIMIST_OK) optimist_free(got);
    }
    pthread_mutex_unlock(&f->lock);
    return bad;
}

/* ---- waiting on the sync ------------------------------------------------------------------ */

/* Milliseconds on the monotonic clock. */
static inline long long now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static inline void sleep_ms(long ms) {
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&t, &t) != 0) {
    }
}

/* The sync's status JSON now (free with optimist_free), or NULL. */
static inline char *sync_status(optimist_store *s) {
    char *json = NULL;
    return optimist_sync_status(s, &json) == OPTIMIST_OK ? json : NULL;
}

/* Waits (up to 20 s) for the sync to be idle; says why not on stderr. */
static inline int wait_idle(optimist_store *s) {
    int idle = -1;
    CHECK_OK(optimist_sync_wait_idle(s, 20000, &idle));
    if (idle != 1) {
        char *json = sync_status(s);
        fprintf(stderr, "the sync did not become idle; status: %s\n", json ? json : "(none)");
        optimist_free(json);
    }
    return idle == 1;
}

/* Whether the status JSON has "state":"<state>". */
static inline int status_has_state(const char *json, const char *state) {
    char want[64];
    snprintf(want, sizeof want, "\"state\":\"%s\"", state);
    return json && strstr(json, want) != NULL;
}

/* Polls the sync's status until its state is `state`; 0 (and a message) after timeout_ms. */
static inline int wait_state(optimist_store *s, const char *state, long timeout_ms) {
    for (long waited = 0;; waited += 5) {
        char *json = sync_status(s);
        int ok = status_has_state(json, state);
        if (ok || waited >= timeout_ms) {
            if (!ok) fprintf(stderr, "state never became %s; status: %s\n", state, json ? json : "(none)");
            optimist_free(json);
            return ok;
        }
        optimist_free(json);
        sleep_ms(5);
    }
}

#endif
