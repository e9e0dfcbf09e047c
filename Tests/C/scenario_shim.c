/*
 * scenario_shim.c - runs the scenario corpus (the .scn files of Tests/Scenarios, format in
 * its README) against liboptimist loaded with dlopen, calling every entry point by name
 * through libffi (shim_ffi.c), so the scenarios test exactly the exported C ABI.
 *
 *   scenario_shim [--library PATH] SCENARIO_OR_DIR...
 *
 * The library is --library, else $OPTIMIST_LIBRARY, else the one of the build that made this
 * program. Results are compared exactly: canonical JSON as strings, `viewget` numerically.
 * A scenario stops at its first failing line. Prints PASS/FAIL per scenario (with the line,
 * what was expected and what came back) and a last line "N passed, M failed"; exits 1 when
 * anything failed, 2 on bad usage.
 *
 * Sync scenarios (`reply`, `sync`, `syncwait` ...) run the library's background sync with a
 * host transport written here: it plays the server the scenario scripts, on the sync's
 * thread (see "the scripted server" below and the corpus README).
 */
#define _XOPEN_SOURCE 700

#include "shim_ffi.h"
#include "shim_text.h"

#include <optimist.h>

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Calls an entry point by name with the addresses of its arguments. */
#define CALL(name, ...) shim_call_int(name, (void *[]){__VA_ARGS__})

enum { MAX_NAMES = 256, MAX_SUBS = 32, MAX_SEGMENTS = 32, NAME_LEN = 64 };

typedef struct {
    char name[NAME_LEN];
    uint64_t id;
} binding;

/* A subscription and the flattened changes it received since the last `changes`. */
typedef struct {
    char name[NAME_LEN];
    uint64_t id;
    strbuf got;
    pthread_mutex_t *lock; /* the scenario's sync lock */
} subscription;

/* A live query and the deltas it received since the last `deltas` (the listener's JSON
   arrays, joined without their brackets). */
typedef struct {
    char name[NAME_LEN];
    optimist_query *q;
    strbuf got;
    pthread_mutex_t *lock; /* the scenario's sync lock */
} live_query;

/* A reply the scenario queued with `reply`. */
typedef struct {
    char endpoint[8];   /* "push" or "pull" */
    int unreachable;    /* no answer */
    int status;
    int64_t retry_after; /* -1: none */
    char *body;
} scripted_reply;

/* A request the transport answered: push: the mutations sent with their retry counts;
   pull: the cursor (as JSON text) and the unacked ids. */
typedef struct {
    int push;
    strbuf cursor;
    uint64_t *ids;
    long long *retries;
    int n;
} answered_request;

/* The scripted server and what the sync's thread tells the runner, under one lock (the
   sync's thread runs the transport and the listeners while the main thread runs commands). */
typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t cond; /* on CLOCK_MONOTONIC */
    scripted_reply *fifo;
    int n_fifo, cap_fifo;
    answered_request *reqs; /* answered since the last `requests` */
    int n_reqs, cap_reqs;
    double *entered; /* when each answered request reached the transport, in ms */
    int cap_entered;
    int answered;
    char *reply_body; /* the last body handed to the library, kept until the next call */
    strbuf headers;   /* the last answered request's headers, "Name: value\n" each */
    strbuf mismatch;  /* a request that did not match the next reply's endpoint */
    int blocked;      /* the transport waits for a reply to be queued */
    int stop_requested, stopped_seen, running;
    strbuf settled;   /* the last status published that is not pushing/pulling */
    int settled_after; /* `answered` when it was published */
} sync_host;

typedef struct {
    optimist_store *store;
    char dir[PATH_MAX]; /* the temporary directory of a file-backed scenario, or "" */
    char path[PATH_MAX + 32];
    binding names[MAX_NAMES];
    int n_names;
    subscription subs[MAX_SUBS];
    int n_subs;
    live_query queries[MAX_SUBS];
    int n_queries;
    strbuf why; /* what went wrong on the failing line */
    sync_host sync;
} scenario;

/* What one command produced: its result code, and for reads the value as text. */
typedef struct {
    int rc;
    int has_value;
    int numeric;      /* compare value and expectation as numbers */
    uint64_t dup_id;  /* the id written with OPTIMIST_DUPLICATE */
    strbuf value;
} outcome;

static const char *code_names[] = {"OK", "ERROR", "MISUSE", "NOTFOUND", "STATE",
                                   "INVALID", "DUPLICATE", "IO", "CORRUPT", "BUSY"};
static const char *status_names[] = {"?", "pending", "inflight", "failed", "committed", "rolled_back"};
static const char *cause_names[] = {"?", "mutate", "commit", "rollback", "server", "fail", "retry", "sync"};
static const char *record_status_names[] = {"confirmed", "pending", "failed"};

static const char *code_name(int rc) {
    return (rc >= 0 && rc < (int)(sizeof code_names / sizeof *code_names)) ? code_names[rc] : "?";
}

static int code_of(const char *name) {
    for (int i = 0; i < (int)(sizeof code_names / sizeof *code_names); i++)
        if (strcmp(code_names[i], name) == 0) return i;
    return -1;
}

static const char *last_error(void) {
    const char *m = shim_call_str("optimist_last_error", NULL);
    return m ? m : "(null)";
}

/* A syntax error in the scenario itself. */
static int bad_line(scenario *sc, const char *what) {
    sb_put(&sc->why, what);
    return -1;
}

/* ---- names ---------------------------------------------------------------------------- */

static void bind_name(scenario *sc, const char *name, uint64_t id) {
    for (int i = 0; i < sc->n_names; i++)
        if (strcmp(sc->names[i].name, name) == 0) {
            sc->names[i].id = id;
            return;
        }
    if (sc->n_names < MAX_NAMES) {
        snprintf(sc->names[sc->n_names].name, NAME_LEN, "%s", name);
        sc->names[sc->n_names++].id = id;
    }
}

/* A NAME of digits is that literal id; otherwise it must have been bound by `mutate`. */
static int resolve(scenario *sc, const char *name, uint64_t *id) {
    if (all_digits(name)) {
        *id = strtoull(name, NULL, 10);
        return 0;
    }
    for (int i = 0; i < sc->n_names; i++)
        if (strcmp(sc->names[i].name, name) == 0) {
            *id = sc->names[i].id;
            return 0;
        }
    sb_put(&sc->why, "unknown mutation name ");
    sb_put(&sc->why, name);
    return -1;
}

static void name_of(scenario *sc, uint64_t id, strbuf *out) {
    for (int i = 0; i < sc->n_names; i++)
        if (sc->names[i].id == id) {
            sb_put(out, sc->names[i].name);
            return;
        }
    char buf[32];
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)id); /* as the other hosts */
    sb_put(out, buf);
}

static subscription *find_sub(scenario *sc, const char *name) {
    for (int i = 0; i < sc->n_subs; i++)
        if (strcmp(sc->subs[i].name, name) == 0) return &sc->subs[i];
    return NULL;
}

/* ---- listener ------------------------------------------------------------------------- */

/* Flattens each change into [coll, key, value or null, pending, cause, status]. Changes the
   sync makes arrive on its thread: the buffer is guarded by the sync lock. */
static void on_changes(void *ctx, const optimist_change *changes, size_t n) {
    subscription *sub = ctx;
    pthread_mutex_lock(sub->lock);
    for (size_t i = 0; i < n; i++) {
        const optimist_change *c = &changes[i];
        if (sub->got.len > 0) sb_putc(&sub->got, ',');
        sb_putc(&sub->got, '[');
        sb_put_json_string(&sub->got, c->collection);
        sb_putc(&sub->got, ',');
        sb_put_json_string(&sub->got, c->key);
        sb_putc(&sub->got, ',');
        sb_put(&sub->got, c->value_json ? c->value_json : "null");
        sb_put(&sub->got, c->pending ? ",true," : ",false,");
        sb_put_json_string(&sub->got, (c->cause >= 1 && c->cause <= 7) ? cause_names[c->cause] : "?");
        sb_putc(&sub->got, ',');
        sb_put_json_string(&sub->got, (c->pending >= 0 && c->pending <= 2) ? record_status_names[c->pending] : "?");
        sb_putc(&sub->got, ']');
    }
    pthread_mutex_unlock(sub->lock);
}

/* Appends one call's deltas (a JSON array) to the query's buffer, without the brackets. */
static void on_deltas(void *ctx, const char *json, size_t n) {
    live_query *lq = ctx;
    size_t len = strlen(json);
    if (n == 0 || len < 2) return;
    pthread_mutex_lock(lq->lock);
    if (lq->got.len > 0) sb_putc(&lq->got, ',');
    for (size_t i = 1; i + 1 < len; i++) sb_putc(&lq->got, json[i]);
    pthread_mutex_unlock(lq->lock);
}

static live_query *find_query(scenario *sc, const char *name) {
    for (int i = 0; i < sc->n_queries; i++)
        if (strcmp(sc->queries[i].name, name) == 0) return &sc->queries[i];
    return NULL;
}

/* ---- ops ------------------------------------------------------------------------------ */

/* Marks an op segment as malformed; the caller stops building the batch. */
static int bad_op(scenario *sc, int *syntax, const char *what) {
    bad_line(sc, what);
    *syntax = 1;
    return OPTIMIST_OK;
}

/* Adds one op segment ("put COLL KEY JSON" ...) to batch b and returns the library's code;
   a malformed segment sets *syntax instead. */
static int add_op(scenario *sc, optimist_batch *b, char *seg, int *syntax) {
    char *p = seg;
    char *op = next_token(&p), *coll = next_token(&p), *key = NULL;
    if (op == NULL || coll == NULL || (strcmp(op, "put") && strcmp(op, "patch") &&
                                       strcmp(op, "delete") && strcmp(op, "incr")))
        return bad_op(sc, syntax, "bad op");
    if (strcmp(op, "put") == 0 || strcmp(op, "patch") == 0) {
        key = next_token(&p);
        const char *json = p;
        if (key == NULL || *json == '\0') return bad_op(sc, syntax, "op needs KEY JSON");
        return CALL(strcmp(op, "put") == 0 ? "optimist_batch_put" : "optimist_batch_patch",
                    &b, &coll, &key, &json);
    }
    key = next_token(&p);
    if (key == NULL) return bad_op(sc, syntax, "op needs KEY");
    if (strcmp(op, "delete") == 0) return CALL("optimist_batch_delete", &b, &coll, &key);
    char *field = next_token(&p), *delta_text = next_token(&p);
    double delta = 0;
    if (field == NULL || parse_double(delta_text, &delta) != 0)
        return bad_op(sc, syntax, "incr needs FIELD DELTA");
    return CALL("optimist_batch_incr", &b, &coll, &key, &field, &delta);
}

/* Builds a batch from op segments. On a non-OK code the batch is freed and *out is NULL. */
static int build_batch(scenario *sc, char **segs, int n, optimist_batch **out, int *syntax) {
    optimist_batch *b = NULL;
    optimist_batch **bp = &b;
    int rc = CALL("optimist_batch_new", &bp);
    for (int i = 0; rc == OPTIMIST_OK && i < n && !*syntax; i++) rc = add_op(sc, b, segs[i], syntax);
    if (rc != OPTIMIST_OK || *syntax) {
        shim_call_void("optimist_batch_free", (void *[]){&b});
        b = NULL;
    }
    *out = b;
    return rc;
}

static void free_batch(optimist_batch *b) { shim_call_void("optimist_batch_free", (void *[]){&b}); }

/* Takes a library-owned string out-parameter into the outcome and frees it. */
static void take_string(outcome *o, char *s) {
    if (o->rc == OPTIMIST_OK && s) {
        sb_put(&o->value, s);
        o->has_value = 1;
    }
    shim_call_void("optimist_free", (void *[]){&s});
}

static void take_bool(outcome *o, int v) {
    if (o->rc != OPTIMIST_OK) return;
    sb_put(&o->value, v ? "true" : "false");
    o->has_value = 1;
}

/* ---- the scripted server (sync scenarios) ---------------------------------------------- */

/* The sync runs with a host transport that answers each request with the next reply queued by
   `reply` (its endpoint must match) and blocks while none is queued, so every request of a
   scenario is answered by the script and nothing happens between the lines by itself. To stop
   (`sync stop`, `reopen`, the scenario's end), a request blocked in the transport, or one that
   reaches it afterwards, stops the sync from the sync's own thread (optimist_sync_stop from a
   callback asks the sync to stop and returns at once) and gets no answer; the runner then
   waits for the final status "stopped". A status listener keeps the last "settled" status
   (not pushing/pulling): what the sync made of the last answer. */

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1000.0 + (double)t.tv_nsec / 1e6;
}

static void deadline_in(struct timespec *ts, long ms) {
    clock_gettime(CLOCK_MONOTONIC, ts);
    ts->tv_sec += ms / 1000;
    ts->tv_nsec += (ms % 1000) * 1000000L;
    if (ts->tv_nsec >= 1000000000L) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000L;
    }
}

static void *grow(void *p, int *cap, int need, size_t size) {
    if (need <= *cap) return p;
    int cap2 = *cap ? *cap * 2 : 16;
    while (cap2 < need) cap2 *= 2;
    p = realloc(p, (size_t)cap2 * size);
    if (p == NULL) {
        fputs("scenario_shim: out of memory\n", stderr);
        exit(2);
    }
    *cap = cap2;
    return p;
}

static void sync_init(sync_host *h) {
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(&h->cond, &a);
    pthread_condattr_destroy(&a);
    pthread_mutex_init(&h->lock, NULL);
}

static void free_requests(sync_host *h) {
    for (int i = 0; i < h->n_reqs; i++) {
        sb_free(&h->reqs[i].cursor);
        free(h->reqs[i].ids);
        free(h->reqs[i].retries);
    }
    h->n_reqs = 0;
}

static void sync_free(sync_host *h) {
    for (int i = 0; i < h->n_fifo; i++) free(h->fifo[i].body);
    free(h->fifo);
    free_requests(h);
    free(h->reqs);
    free(h->entered);
    free(h->reply_body);
    sb_free(&h->headers);
    sb_free(&h->mismatch);
    sb_free(&h->settled);
    pthread_cond_destroy(&h->cond);
    pthread_mutex_destroy(&h->lock);
}

static void add_id(answered_request *r, uint64_t id, long long retry) {
    r->ids = realloc(r->ids, (size_t)(r->n + 1) * sizeof *r->ids);
    r->retries = realloc(r->retries, (size_t)(r->n + 1) * sizeof *r->retries);
    if (r->ids == NULL || r->retries == NULL) abort();
    r->ids[r->n] = id;
    r->retries[r->n++] = retry;
}

/* Notes an answered request (under the lock): its body's ids, when it came, its headers. */
static void record_request(sync_host *h, const char *endpoint, const char *body,
                           const char *const *headers, double entered) {
    h->reqs = grow(h->reqs, &h->cap_reqs, h->n_reqs + 1, sizeof *h->reqs);
    answered_request *r = &h->reqs[h->n_reqs++];
    memset(r, 0, sizeof *r);
    r->push = strcmp(endpoint, "push") == 0;
    const char *it, *e;
    if (r->push) {
        it = json_member(body, "mutations");
        while (it && (e = json_next(&it)) != NULL) {
            const char *id = json_member(e, "id"), *retry = json_member(e, "retry");
            add_id(r, id ? strtoull(id, NULL, 10) : 0, retry ? strtoll(retry, NULL, 10) : 0);
        }
    } else {
        const char *c = json_member(body, "cursor"), *end = c ? json_skip(c) : NULL;
        if (end) {
            char *raw = strndup(c, (size_t)(end - c));
            sb_put(&r->cursor, raw);
            free(raw);
        } else {
            sb_put(&r->cursor, "null");
        }
        it = json_member(body, "unacked");
        while (it && (e = json_next(&it)) != NULL) add_id(r, strtoull(e, NULL, 10), 0);
    }
    h->entered = grow(h->entered, &h->cap_entered, h->answered + 1, sizeof *h->entered);
    h->entered[h->answered] = entered;
    sb_clear(&h->headers);
    for (int i = 0; headers && headers[i]; i++) {
        sb_put(&h->headers, headers[i]);
        sb_putc(&h->headers, '\n');
    }
}

static int scn_transport(void *ctx, const char *endpoint, const char *url, const char *body,
                         const char *const *headers, int64_t timeout_ms, int *out_status,
                         const char **out_body, int64_t *out_retry_after_ms) {
    scenario *sc = ctx;
    sync_host *h = &sc->sync;
    (void)url;
    (void)timeout_ms;
    pthread_mutex_lock(&h->lock);
    double entered = now_ms();
    for (;;) {
        if (h->stop_requested) {
            h->blocked = 0;
            pthread_cond_broadcast(&h->cond);
            pthread_mutex_unlock(&h->lock);
            optimist_store *s = sc->store;
            CALL("optimist_sync_stop", &s); /* from the sync's thread: returns at once */
            *out_body = "the scenario stopped the sync";
            return 1;
        }
        if (h->mismatch.len == 0 && h->n_fifo > 0) {
            scripted_reply r = h->fifo[0];
            if (strcmp(r.endpoint, endpoint) == 0) {
                memmove(h->fifo, h->fifo + 1, (size_t)--h->n_fifo * sizeof *h->fifo);
                h->blocked = 0;
                record_request(h, endpoint, body, headers, entered);
                h->answered++;
                free(h->reply_body);
                h->reply_body = r.body;
                pthread_cond_broadcast(&h->cond);
                pthread_mutex_unlock(&h->lock);
                if (r.unreachable) {
                    *out_body = "scripted: no answer";
                    return 1;
                }
                *out_status = r.status;
                *out_body = r.body ? r.body : "";
                *out_retry_after_ms = r.retry_after;
                return 0;
            }
            char msg[160];
            snprintf(msg, sizeof msg, "request %d is a %s, the next scripted reply is for %s",
                     h->answered + 1, endpoint, r.endpoint);
            sb_put(&h->mismatch, msg);
        }
        h->blocked = 1;
        pthread_cond_broadcast(&h->cond);
        if (now_ms() - entered > 60000) {
            h->blocked = 0;
            pthread_mutex_unlock(&h->lock);
            *out_body = "no reply scripted for 60 s";
            return 1;
        }
        struct timespec ts;
        deadline_in(&ts, 50);
        pthread_cond_timedwait(&h->cond, &h->lock, &ts);
    }
}

static void scn_on_status(void *ctx, const char *status_json) {
    sync_host *h = &((scenario *)ctx)->sync;
    strbuf state = {0};
    json_string(json_member(status_json, "state"), &state);
    const char *st = sb_str(&state);
    pthread_mutex_lock(&h->lock);
    if (strcmp(st, "pushing") != 0 && strcmp(st, "pulling") != 0) {
        sb_clear(&h->settled);
        sb_put(&h->settled, status_json);
        h->settled_after = h->answered;
    }
    if (strcmp(st, "stopped") == 0) h->stopped_seen = 1;
    pthread_cond_broadcast(&h->cond);
    pthread_mutex_unlock(&h->lock);
    sb_free(&state);
}

/* Stops the sync (see above) and waits for its final status; *rc is optimist_sync_stop's.
   Returns -1 (why filled) when "stopped" did not come within 10 s. */
static int stop_sync(scenario *sc, int *rc) {
    sync_host *h = &sc->sync;
    pthread_mutex_lock(&h->lock);
    h->stop_requested = 1;
    pthread_cond_broadcast(&h->cond);
    int was_running = h->running;
    pthread_mutex_unlock(&h->lock);
    optimist_store *s = sc->store;
    *rc = CALL("optimist_sync_stop", &s);
    int seen = 1;
    pthread_mutex_lock(&h->lock);
    if (was_running) {
        struct timespec ts;
        deadline_in(&ts, 10000);
        while (!h->stopped_seen && pthread_cond_timedwait(&h->cond, &h->lock, &ts) != ETIMEDOUT) {
        }
        seen = h->stopped_seen;
    }
    h->running = 0;
    h->stop_requested = 0;
    pthread_mutex_unlock(&h->lock);
    if (!seen) sb_put(&sc->why, "the sync did not report stopped within 10 s");
    return seen ? 0 : -1;
}

static int is_name_char(char c) { return isalnum((unsigned char)c) || c == '_'; }

/* text with each @NAME replaced by the id bound to NAME. */
static int substitute(scenario *sc, const char *text, strbuf *out) {
    for (const char *c = text; *c;) {
        if (*c != '@' || !is_name_char(c[1])) {
            sb_putc(out, *c++);
            continue;
        }
        const char *e = c + 1;
        while (is_name_char(*e)) e++;
        char name[NAME_LEN], buf[32];
        uint64_t id;
        if (e - c - 1 >= NAME_LEN) return bad_line(sc, "@NAME too long");
        snprintf(name, sizeof name, "%.*s", (int)(e - c - 1), c + 1);
        if (resolve(sc, name, &id)) return -1;
        snprintf(buf, sizeof buf, "%llu", (unsigned long long)id);
        sb_put(out, buf);
        c = e;
    }
    return 0;
}

/* The settled status as JSON (none yet: optimist_sync_status), into out. */
static int settled_status(scenario *sc, strbuf *out) {
    pthread_mutex_lock(&sc->sync.lock);
    sb_put(out, sb_str(&sc->sync.settled));
    pthread_mutex_unlock(&sc->sync.lock);
    if (out->len > 0) return OPTIMIST_OK;
    optimist_store *s = sc->store;
    char *json = NULL, **jp = &json;
    int rc = CALL("optimist_sync_status", &s, &jp);
    if (rc == OPTIMIST_OK) sb_put(out, json);
    shim_call_void("optimist_free", (void *[]){&json});
    return rc;
}

/* `syncwait N`: see the README. Returns -1 (why filled) when it does not come to pass. */
static int sync_wait(scenario *sc, long n) {
    sync_host *h = &sc->sync;
    double deadline = now_ms() + 10000;
    strbuf state = {0};
    int result = -1;
    for (;;) {
        pthread_mutex_lock(&h->lock);
        int answered = h->answered, queued = h->n_fifo, blocked = h->blocked;
        int running = h->running, after = h->settled_after, mismatch = h->mismatch.len > 0;
        json_string(json_member(sb_str(&h->settled), "state"), &state);
        if (mismatch) sb_put(&sc->why, sb_str(&h->mismatch));
        pthread_mutex_unlock(&h->lock);
        char buf[200];
        if (mismatch) break;
        if (answered > n) {
            snprintf(buf, sizeof buf, "%d requests were answered already", answered);
            sb_put(&sc->why, buf);
            break;
        }
        if (answered == n) {
            if (queued == 0 && blocked) {
                result = 0;
                break;
            }
            int rest = !running;
            if (!rest && after == n) {
                if (strcmp(sb_str(&state), "unauthorized") == 0) {
                    rest = 1;
                } else {
                    optimist_store *s = sc->store;
                    int64_t zero = 0;
                    int idle = 0, *ip = &idle;
                    rest = CALL("optimist_sync_wait_idle", &s, &zero, &ip) == OPTIMIST_OK && idle;
                }
            }
            if (rest) {
                if (queued == 0) {
                    result = 0;
                } else {
                    snprintf(buf, sizeof buf, "the sync is at rest with %d scripted replies unused", queued);
                    sb_put(&sc->why, buf);
                }
                break;
            }
        }
        if (now_ms() > deadline) {
            snprintf(buf, sizeof buf, "timed out: %d answered, %d replies queued, blocked %d, settled state %s",
                     answered, queued, blocked, state.len ? sb_str(&state) : "-");
            sb_put(&sc->why, buf);
            break;
        }
        struct timespec ms = {0, 1000000L};
        nanosleep(&ms, NULL);
    }
    sb_free(&state);
    return result;
}

/* The sync commands; returns 1 when cmd is none of them, else as run_command. */
static int sync_command(scenario *sc, const char *cmd, char *p, outcome *o) {
    sync_host *h = &sc->sync;
    optimist_store *s = sc->store;
    if (strcmp(cmd, "reply") == 0) {
        char *endpoint = next_token(&p), *status = next_token(&p);
        scripted_reply r = {{0}, 0, 0, -1, NULL};
        if (endpoint == NULL || status == NULL || (strcmp(endpoint, "push") && strcmp(endpoint, "pull")))
            return bad_line(sc, "reply push|pull STATUS|unreachable ...");
        snprintf(r.endpoint, sizeof r.endpoint, "%s", endpoint);
        if (strcmp(status, "unreachable") == 0 && *p == '\0') {
            r.unreachable = 1;
        } else {
            long long v;
            strbuf body = {0};
            if (parse_i64(status, &v)) return bad_line(sc, "reply needs a STATUS");
            r.status = (int)v;
            if (strncmp(p, "retry-after=", 12) == 0) {
                if (parse_i64(next_token(&p) + 12, &v)) return bad_line(sc, "bad retry-after=MS");
                r.retry_after = v;
            }
            if (substitute(sc, p, &body)) {
                sb_free(&body);
                return -1;
            }
            r.body = strdup(sb_str(&body));
            sb_free(&body);
        }
        pthread_mutex_lock(&h->lock);
        h->fifo = grow(h->fifo, &h->cap_fifo, h->n_fifo + 1, sizeof *h->fifo);
        h->fifo[h->n_fifo++] = r;
        pthread_cond_broadcast(&h->cond);
        pthread_mutex_unlock(&h->lock);
        o->rc = OPTIMIST_OK;
        return 0;
    }
    if (strcmp(cmd, "sync") == 0) {
        char *what = next_token(&p), *opt;
        const char *headers[17];
        int n_headers = 0;
        long long batch = 100;
        if (what == NULL) return bad_line(sc, "sync start|stop|now|headers");
        if (strcmp(what, "start") == 0) {
            while ((opt = next_token(&p)) != NULL) {
                if (strncmp(opt, "batch=", 6) == 0 && parse_i64(opt + 6, &batch) == 0) continue;
                if (strncmp(opt, "header=", 7) == 0 && n_headers < 16) {
                    headers[n_headers++] = opt + 7;
                    continue;
                }
                return bad_line(sc, "bad sync start option");
            }
            headers[n_headers] = NULL;
            pthread_mutex_lock(&h->lock);
            h->stopped_seen = 0;
            h->stop_requested = 0;
            pthread_mutex_unlock(&h->lock);
            optimist_sync_options opts = OPTIMIST_SYNC_OPTIONS_INIT;
            opts.headers = n_headers ? headers : NULL;
            opts.pull_interval_ms = 0;
            opts.max_batch = (uint32_t)batch;
            opts.timeout_ms = 10000;
            opts.backoff_base_ms = 1;
            opts.backoff_max_ms = 20;
            opts.transport = scn_transport;
            opts.transport_ctx = sc;
            opts.on_status = scn_on_status;
            opts.status_ctx = sc;
            const optimist_sync_options *op = &opts;
            o->rc = CALL("optimist_sync_start", &s, &op);
            if (o->rc == OPTIMIST_OK) {
                pthread_mutex_lock(&h->lock);
                h->running = 1;
                pthread_mutex_unlock(&h->lock);
            }
            return 0;
        }
        if (strcmp(what, "stop") == 0) return stop_sync(sc, &o->rc);
        if (strcmp(what, "now") == 0) {
            o->rc = CALL("optimist_sync_now", &s);
            return 0;
        }
        if (strcmp(what, "headers") == 0) {
            while ((opt = next_token(&p)) != NULL && n_headers < 16) headers[n_headers++] = opt;
            headers[n_headers] = NULL;
            const char *const *hp = headers;
            o->rc = CALL("optimist_sync_set_headers", &s, &hp);
            return 0;
        }
        return bad_line(sc, "sync start|stop|now|headers");
    }
    if (strcmp(cmd, "syncwait") == 0) {
        long long n;
        if (parse_i64(next_token(&p), &n)) return bad_line(sc, "syncwait needs N");
        o->rc = OPTIMIST_OK;
        return sync_wait(sc, (long)n);
    }
    if (strcmp(cmd, "requests") == 0) {
        char buf[32];
        pthread_mutex_lock(&h->lock);
        sb_putc(&o->value, '[');
        for (int i = 0; i < h->n_reqs; i++) {
            answered_request *r = &h->reqs[i];
            if (i) sb_putc(&o->value, ',');
            sb_put(&o->value, r->push ? "[\"push\",[" : "[\"pull\",");
            if (!r->push) {
                sb_put(&o->value, sb_str(&r->cursor));
                sb_put(&o->value, ",[");
            }
            for (int k = 0; k < r->n; k++) {
                strbuf name = {0};
                if (k) sb_putc(&o->value, ',');
                name_of(sc, r->ids[k], &name);
                if (r->push && r->retries[k] > 0) {
                    snprintf(buf, sizeof buf, "/%lld", r->retries[k]);
                    sb_put(&name, buf);
                }
                sb_put_json_string(&o->value, sb_str(&name));
                sb_free(&name);
            }
            sb_put(&o->value, "]]");
        }
        sb_putc(&o->value, ']');
        free_requests(h);
        pthread_mutex_unlock(&h->lock);
        o->rc = OPTIMIST_OK;
        o->has_value = 1;
        return 0;
    }
    if (strcmp(cmd, "syncstate") == 0 || strcmp(cmd, "syncerror") == 0 || strcmp(cmd, "syncstatus") == 0) {
        strbuf json = {0};
        o->rc = settled_status(sc, &json);
        if (o->rc == OPTIMIST_OK) {
            const char *j = sb_str(&json), *err = json_member(j, "last_error");
            o->has_value = 1;
            if (strcmp(cmd, "syncstate") == 0) {
                json_string(json_member(j, "state"), &o->value);
            } else if (strcmp(cmd, "syncerror") == 0) {
                if (err == NULL || *err == 'n') sb_put(&o->value, "null");
                else json_string(err, &o->value);
            } else {
                /* Without "last_error":..., which sits between other members (sorted). */
                const char *name = err ? err - strlen("\"last_error\":") : NULL, *end = err ? json_skip(err) : NULL;
                if (name == NULL || end == NULL || name <= j || name[-1] != ',') {
                    sb_put(&o->value, j);
                } else {
                    char *head = strndup(j, (size_t)(name - 1 - j));
                    sb_put(&o->value, head);
                    sb_put(&o->value, end);
                    free(head);
                }
            }
        }
        sb_free(&json);
        return 0;
    }
    if (strcmp(cmd, "gap") == 0) {
        long long k, ms;
        if (parse_i64(next_token(&p), &k) || parse_i64(next_token(&p), &ms)) return bad_line(sc, "gap needs K MS");
        pthread_mutex_lock(&h->lock);
        int known = k >= 2 && k <= h->answered;
        double d = known ? h->entered[k - 1] - h->entered[k - 2] : 0;
        pthread_mutex_unlock(&h->lock);
        if (!known) return bad_line(sc, "no such request yet");
        o->rc = OPTIMIST_OK;
        sb_put(&o->value, d >= (double)ms - 5 ? "true" : "false");
        o->has_value = 1;
        return 0;
    }
    if (strcmp(cmd, "header") == 0) {
        char *name = next_token(&p);
        size_t n = name ? strlen(name) : 0;
        if (name == NULL) return bad_line(sc, "header needs NAME");
        pthread_mutex_lock(&h->lock);
        const char *line = sb_str(&h->headers), *found = NULL;
        for (; *line; line = strchr(line, '\n') + 1)
            if (strncmp(line, name, n) == 0 && line[n] == ':') {
                found = line + n + 1;
                break;
            }
        if (found) {
            while (*found == ' ' || *found == '\t') found++;
            char *value = strndup(found, strcspn(found, "\n"));
            sb_put(&o->value, value);
            free(value);
        } else {
            sb_put(&o->value, "null");
        }
        pthread_mutex_unlock(&h->lock);
        o->rc = OPTIMIST_OK;
        o->has_value = 1;
        return 0;
    }
    return 1;
}

/* ---- commands ------------------------------------------------------------------------- */

/* Runs one command; returns -1 on a scenario syntax error (why is filled), else 0. */
static int run_command(scenario *sc, char *head, char **ops, int n_ops, outcome *o) {
    char *p = head;
    char *cmd = next_token(&p);
    optimist_store *s = sc->store;
    int syntax = 0;
    if (cmd == NULL) return bad_line(sc, "empty command");

    if (strcmp(cmd, "mutate") == 0) {
        char *name = next_token(&p), *opt;
        const char *dedupe = NULL;
        int policy = -1;
        if (name == NULL) return bad_line(sc, "mutate needs NAME");
        while ((opt = next_token(&p)) != NULL) {
            if (strncmp(opt, "dedupe=", 7) == 0) dedupe = opt + 7;
            else if (strcmp(opt, "policy=keep") == 0) policy = OPTIMIST_POLICY_KEEP;
            else if (strcmp(opt, "policy=rollback") == 0) policy = OPTIMIST_POLICY_ROLLBACK;
            else return bad_line(sc, "bad mutate option");
        }
        optimist_batch *b = NULL;
        o->rc = build_batch(sc, ops, n_ops, &b, &syntax);
        if (syntax) return -1;
        if (o->rc != OPTIMIST_OK) return 0;
        uint64_t id = 0, *idp = &id;
        /* Without a policy the plain entry point is used, so both are exercised. */
        o->rc = policy < 0 ? CALL("optimist_mutate", &s, &b, &dedupe, &idp)
                           : CALL("optimist_mutate_with_policy", &s, &b, &dedupe, &policy, &idp);
        free_batch(b);
        if (o->rc == OPTIMIST_OK) bind_name(sc, name, id);
        if (o->rc == OPTIMIST_DUPLICATE) o->dup_id = id;
        return 0;
    }
    if (strcmp(cmd, "commit") == 0) {
        char *name = next_token(&p);
        uint64_t id;
        if (name == NULL) return bad_line(sc, "commit needs NAME");
        if (resolve(sc, name, &id)) return -1;
        optimist_batch *b = NULL;
        if (n_ops > 0) {
            o->rc = build_batch(sc, ops, n_ops, &b, &syntax);
            if (syntax) return -1;
            if (o->rc != OPTIMIST_OK) return 0;
        }
        o->rc = CALL("optimist_commit", &s, &id, &b);
        free_batch(b);
        return 0;
    }
    if (strcmp(cmd, "rollback") == 0) {
        char *name = next_token(&p);
        const char *reason = *p ? p : NULL; /* the rest of the line, spaces included */
        uint64_t id;
        if (name == NULL) return bad_line(sc, "rollback needs NAME");
        if (resolve(sc, name, &id)) return -1;
        o->rc = CALL("optimist_rollback", &s, &id, &reason);
        return 0;
    }
    if (strcmp(cmd, "server") == 0) {
        optimist_batch *b = NULL;
        if (n_ops == 0) return bad_line(sc, "server needs ops");
        o->rc = build_batch(sc, ops, n_ops, &b, &syntax);
        if (syntax) return -1;
        if (o->rc != OPTIMIST_OK) return 0;
        o->rc = CALL("optimist_server_apply", &s, &b);
        free_batch(b);
        return 0;
    }
    if (strcmp(cmd, "get") == 0 || strcmp(cmd, "confirmed") == 0) {
        char *coll = next_token(&p), *key = next_token(&p), *json = NULL, **jp = &json;
        if (key == NULL) return bad_line(sc, "needs COLL KEY");
        o->rc = CALL(cmd[0] == 'g' ? "optimist_get" : "optimist_get_confirmed", &s, &coll, &key, &jp);
        take_string(o, json);
        return 0;
    }
    if (strcmp(cmd, "pending") == 0) {
        char *coll = next_token(&p), *key = next_token(&p);
        int v = 0, *vp = &v;
        if (key == NULL) return bad_line(sc, "pending needs COLL KEY");
        o->rc = CALL("optimist_is_pending", &s, &coll, &key, &vp);
        take_bool(o, v);
        return 0;
    }
    if (strcmp(cmd, "scan") == 0) {
        char *coll = next_token(&p), *prefix = next_token(&p), *limit_text = next_token(&p);
        char *json = NULL, **jp = &json;
        long long limit_ll;
        if (coll == NULL || prefix == NULL || parse_i64(limit_text, &limit_ll) || limit_ll < 0)
            return bad_line(sc, "scan needs COLL PREFIX LIMIT");
        size_t limit = (size_t)limit_ll;
        if (strcmp(prefix, "*") == 0) prefix = "";
        o->rc = CALL("optimist_scan", &s, &coll, &prefix, &limit, &jp);
        take_string(o, json);
        return 0;
    }
    if (strcmp(cmd, "status") == 0) {
        char *name = next_token(&p);
        uint64_t id;
        int st = 0, *stp = &st;
        if (name == NULL) return bad_line(sc, "status needs NAME");
        if (resolve(sc, name, &id)) return -1;
        o->rc = CALL("optimist_status", &s, &id, &stp);
        if (o->rc == OPTIMIST_OK) {
            sb_put(&o->value, (st >= 1 && st <= 5) ? status_names[st] : "?");
            o->has_value = 1;
        }
        return 0;
    }
    if (strcmp(cmd, "count") == 0) {
        uint64_t n = 0, *np = &n;
        char buf[32];
        o->rc = CALL("optimist_pending_count", &s, &np);
        if (o->rc == OPTIMIST_OK) {
            snprintf(buf, sizeof buf, "%llu", (unsigned long long)n);
            sb_put(&o->value, buf);
            o->has_value = 1;
        }
        return 0;
    }
    if (strcmp(cmd, "next") == 0) {
        long long now;
        uint64_t id = 0, *idp = &id;
        char *ops_json = NULL, **jp = &ops_json;
        if (parse_i64(next_token(&p), &now)) return bad_line(sc, "next needs NOW");
        int64_t now64 = now;
        o->rc = CALL("optimist_outbox_next", &s, &now64, &idp, &jp);
        if (o->rc == OPTIMIST_OK) {
            name_of(sc, id, &o->value);
            o->has_value = 1;
        }
        shim_call_void("optimist_free", (void *[]){&ops_json});
        return 0;
    }
    if (strcmp(cmd, "fail") == 0) {
        char *name = next_token(&p), *kind = next_token(&p);
        long long now;
        uint64_t id;
        if (name == NULL || kind == NULL || parse_i64(next_token(&p), &now) ||
            (strcmp(kind, "transient") && strcmp(kind, "permanent")))
            return bad_line(sc, "fail needs NAME transient|permanent NOW");
        if (resolve(sc, name, &id)) return -1;
        int transient = strcmp(kind, "transient") == 0;
        const char *reason = kind;
        int64_t now64 = now;
        o->rc = CALL("optimist_fail", &s, &id, &transient, &reason, &now64);
        return 0;
    }
    if (strcmp(cmd, "retry") == 0) {
        char *name = next_token(&p);
        uint64_t id;
        if (name == NULL) return bad_line(sc, "retry needs NAME");
        if (resolve(sc, name, &id)) return -1;
        o->rc = CALL("optimist_retry", &s, &id);
        return 0;
    }
    if (strcmp(cmd, "loaded") == 0) {
        char *coll = next_token(&p), *from = next_token(&p), *to = next_token(&p);
        long long at;
        if (to == NULL || parse_i64(next_token(&p), &at)) return bad_line(sc, "loaded needs COLL FROM TO AT");
        int64_t at64 = at;
        o->rc = CALL("optimist_mark_loaded", &s, &coll, &from, &to, &at64);
        return 0;
    }
    if (strcmp(cmd, "stale") == 0) {
        char *coll = next_token(&p), *key = next_token(&p);
        long long now, max_age;
        int v = 0, *vp = &v;
        if (key == NULL || parse_i64(next_token(&p), &now) || parse_i64(next_token(&p), &max_age))
            return bad_line(sc, "stale needs COLL KEY NOW MAXAGE");
        int64_t now64 = now, age64 = max_age;
        o->rc = CALL("optimist_needs_reload", &s, &coll, &key, &now64, &age64, &vp);
        take_bool(o, v);
        return 0;
    }
    if (strcmp(cmd, "view") == 0) {
        char *name = next_token(&p), *coll = next_token(&p), *prefix = next_token(&p), *kind = next_token(&p);
        if (kind == NULL) return bad_line(sc, "view needs VIEW COLL PREFIX KIND");
        if (strcmp(prefix, "*") == 0) prefix = "";
        o->rc = CALL("optimist_view_define", &s, &name, &coll, &prefix, &kind);
        return 0;
    }
    if (strcmp(cmd, "viewget") == 0) {
        char *name = next_token(&p), buf[64];
        double v = 0, *vp = &v;
        if (name == NULL) return bad_line(sc, "viewget needs VIEW");
        o->rc = CALL("optimist_view_get", &s, &name, &vp);
        if (o->rc == OPTIMIST_OK) {
            snprintf(buf, sizeof buf, "%.17g", v);
            sb_put(&o->value, buf);
            o->has_value = o->numeric = 1;
        }
        return 0;
    }
    if (strcmp(cmd, "subscribe") == 0) {
        char *name = next_token(&p), *coll = next_token(&p), *prefix = next_token(&p);
        if (prefix == NULL) return bad_line(sc, "subscribe needs SUB COLL PREFIX");
        if (sc->n_subs == MAX_SUBS || find_sub(sc, name)) return bad_line(sc, "too many or duplicate SUB");
        subscription *sub = &sc->subs[sc->n_subs];
        const char *c = strcmp(coll, "*") ? coll : NULL, *pre = strcmp(prefix, "*") ? prefix : NULL;
        optimist_listener fn = on_changes;
        uint64_t *idp = &sub->id;
        snprintf(sub->name, NAME_LEN, "%s", name);
        sub->lock = &sc->sync.lock;
        o->rc = CALL("optimist_subscribe", &s, &c, &pre, &fn, &sub, &idp);
        if (o->rc == OPTIMIST_OK) sc->n_subs++;
        return 0;
    }
    if (strcmp(cmd, "unsubscribe") == 0) {
        char *name = next_token(&p);
        subscription *sub = name ? find_sub(sc, name) : NULL;
        if (sub == NULL) return bad_line(sc, "unknown SUB");
        o->rc = CALL("optimist_unsubscribe", &s, &sub->id);
        return 0;
    }
    if (strcmp(cmd, "changes") == 0) {
        char *name = next_token(&p);
        subscription *sub = name ? find_sub(sc, name) : NULL;
        if (sub == NULL) return bad_line(sc, "unknown SUB");
        o->rc = OPTIMIST_OK;
        sb_putc(&o->value, '[');
        pthread_mutex_lock(&sc->sync.lock);
        sb_put(&o->value, sb_str(&sub->got));
        sb_clear(&sub->got);
        pthread_mutex_unlock(&sc->sync.lock);
        sb_putc(&o->value, ']');
        o->has_value = 1;
        return 0;
    }
    if (strcmp(cmd, "index") == 0) {
        char *coll = next_token(&p), *field = next_token(&p);
        if (coll == NULL || field == NULL) return bad_line(sc, "index needs COLL FIELD");
        o->rc = CALL("optimist_index_define", &s, &coll, &field);
        return 0;
    }
    if (strcmp(cmd, "query") == 0) {
        char *name = next_token(&p);
        const char *spec = p;
        if (name == NULL || spec == NULL || *spec == '\0') return bad_line(sc, "query needs Q SPEC");
        if (sc->n_queries == MAX_SUBS || find_query(sc, name)) return bad_line(sc, "too many or duplicate Q");
        live_query *lq = &sc->queries[sc->n_queries];
        optimist_query **qp = &lq->q;
        snprintf(lq->name, NAME_LEN, "%s", name);
        lq->lock = &sc->sync.lock;
        o->rc = CALL("optimist_query_open", &s, &spec, &qp);
        if (o->rc != OPTIMIST_OK) return 0;
        optimist_query_listener fn = on_deltas;
        uint64_t sub = 0, *subp = &sub;
        o->rc = CALL("optimist_query_subscribe", &lq->q, &fn, &lq, &subp);
        sc->n_queries++;
        return 0;
    }
    if (strcmp(cmd, "rows") == 0) {
        char *name = next_token(&p);
        live_query *lq = name ? find_query(sc, name) : NULL;
        if (lq == NULL) return bad_line(sc, "unknown Q");
        size_t zero = 0;
        char *out = NULL, **outp = &out;
        o->rc = CALL("optimist_query_rows", &lq->q, &zero, &zero, &outp);
        if (o->rc == OPTIMIST_OK) {
            sb_put(&o->value, out);
            o->has_value = 1;
        }
        if (out) shim_call_void("optimist_free", (void *[]){&out});
        return 0;
    }
    if (strcmp(cmd, "deltas") == 0) {
        char *name = next_token(&p);
        live_query *lq = name ? find_query(sc, name) : NULL;
        if (lq == NULL) return bad_line(sc, "unknown Q");
        o->rc = OPTIMIST_OK;
        sb_putc(&o->value, '[');
        pthread_mutex_lock(&sc->sync.lock);
        sb_put(&o->value, sb_str(&lq->got));
        sb_clear(&lq->got);
        pthread_mutex_unlock(&sc->sync.lock);
        sb_putc(&o->value, ']');
        o->has_value = 1;
        return 0;
    }
    if (strcmp(cmd, "qclose") == 0) {
        char *name = next_token(&p);
        live_query *lq = name ? find_query(sc, name) : NULL;
        if (lq == NULL) return bad_line(sc, "unknown Q");
        o->rc = CALL("optimist_query_close", &lq->q);
        return 0;
    }
    if (strcmp(cmd, "reopen") == 0) {
        if (sc->path[0] == '\0') return bad_line(sc, "reopen on an in-memory store");
        optimist_store **sp = &sc->store;
        if (stop_sync(sc, &o->rc)) return -1;
        if (o->rc != OPTIMIST_OK) return 0;
        o->rc = CALL("optimist_flush", &s);
        if (o->rc == OPTIMIST_OK) o->rc = CALL("optimist_close", &s);
        sc->store = NULL;
        const char *path = sc->path;
        if (o->rc == OPTIMIST_OK) o->rc = CALL("optimist_open", &path, &sp);
        return 0;
    }
    int rc = sync_command(sc, cmd, p, o);
    return rc == 1 ? bad_line(sc, "unknown command") : rc;
}

/* ---- judging a line ------------------------------------------------------------------- */

/* Compares an outcome with the line's expectation (NULL: must be OK). Returns 0 if it holds. */
static int judge(scenario *sc, const outcome *o, const char *expected) {
    int ok;
    int want_code = expected ? code_of(expected) : OPTIMIST_OK;
    if (want_code >= 0) {
        ok = o->rc == want_code;
    } else if (strncmp(expected, "DUPLICATE ", 10) == 0) {
        uint64_t other;
        if (resolve(sc, expected + 10, &other)) return -1;
        ok = o->rc == OPTIMIST_DUPLICATE && o->dup_id == other;
    } else if (o->rc != OPTIMIST_OK || !o->has_value) {
        ok = 0;
    } else if (o->numeric) {
        double want, got;
        ok = parse_double(expected, &want) == 0 && parse_double(sb_str(&o->value), &got) == 0 &&
             want == got;
    } else {
        ok = strcmp(sb_str(&o->value), expected) == 0;
    }
    if (ok) return 0;
    char buf[64];
    sb_put(&sc->why, "expected ");
    sb_put(&sc->why, expected ? expected : "OK");
    sb_put(&sc->why, ", got ");
    sb_put(&sc->why, code_name(o->rc));
    if (o->rc == OPTIMIST_DUPLICATE) {
        snprintf(buf, sizeof buf, " (id %llu)", (unsigned long long)o->dup_id);
        sb_put(&sc->why, buf);
    }
    if (o->has_value) {
        sb_put(&sc->why, " ");
        sb_put(&sc->why, sb_str(&o->value));
    }
    if (o->rc != OPTIMIST_OK) {
        sb_put(&sc->why, " (last error: ");
        sb_put(&sc->why, last_error());
        sb_put(&sc->why, ")");
    }
    return -1;
}

/* Splits "HEAD | OP | OP => EXPECTED" in place and runs it. Returns 0 if the line holds. */
static int run_line(scenario *sc, char *line) {
    char *expected = NULL, *arrow = strstr(line, " => ");
    if (arrow) {
        *arrow = '\0';
        expected = arrow + 4;
    }
    char *segs[MAX_SEGMENTS];
    int n = 0;
    segs[n++] = line;
    for (char *bar; n < MAX_SEGMENTS && (bar = strstr(segs[n - 1], " | ")) != NULL;) {
        *bar = '\0';
        segs[n++] = bar + 3;
    }
    outcome o = {0};
    int rc = run_command(sc, segs[0], segs + 1, n - 1, &o);
    if (rc == 0) rc = judge(sc, &o, expected);
    sb_free(&o.value);
    return rc;
}

/* ---- scenarios ------------------------------------------------------------------------ */

/* Whether any line of the file is the command `reopen` (then it runs on a store file). */
static int needs_file(FILE *f) {
    char *line = NULL;
    size_t cap = 0;
    int found = 0;
    while (!found && getline(&line, &cap, f) > 0) {
        line[strcspn(line, "\r\n")] = '\0';
        found = strncmp(line, "reopen", 6) == 0 && (line[6] == '\0' || line[6] == ' ');
    }
    free(line);
    rewind(f);
    return found;
}

/* Removes the scenario's temporary directory and whatever the store left in it. */
static void remove_dir(const char *dir) {
    DIR *d = opendir(dir);
    if (d == NULL) return;
    struct dirent *e;
    char path[PATH_MAX];
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        unlink(path);
    }
    closedir(d);
    rmdir(dir);
}

/* Runs one scenario file; prints PASS or FAIL (with the failing line). Returns 0 on PASS. */
static int run_scenario(const char *file) {
    FILE *f = fopen(file, "r");
    if (f == NULL) {
        printf("FAIL %s\n  cannot open the file\n", file);
        return -1;
    }
    scenario *sc = calloc(1, sizeof *sc);
    int failed = 0, lineno = 0;
    if (sc == NULL) abort();
    sync_init(&sc->sync);
    char *line = NULL, *copy = NULL;
    size_t cap = 0;

    if (needs_file(f)) {
        const char *tmp = getenv("TMPDIR");
        snprintf(sc->dir, sizeof sc->dir, "%s/optimist-scn-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (mkdtemp(sc->dir) == NULL) {
            printf("FAIL %s\n  mkdtemp failed\n", file);
            fclose(f);
            sync_free(&sc->sync);
            free(sc);
            return -1;
        }
        snprintf(sc->path, sizeof sc->path, "%s/store.optimist", sc->dir);
    }
    const char *path = sc->path[0] ? sc->path : NULL;
    optimist_store **sp = &sc->store;
    int rc = CALL("optimist_open", &path, &sp);
    if (rc != OPTIMIST_OK) {
        failed = 1;
        printf("FAIL %s\n  open(%s) returned %s (last error: %s)\n", file, path ? path : "NULL",
               code_name(rc), last_error());
    }
    while (!failed && getline(&line, &cap, f) > 0) {
        lineno++;
        line[strcspn(line, "\r\n")] = '\0';
        if (line[0] == '\0' || line[0] == '#') continue;
        free(copy);
        copy = strdup(line); /* run_line cuts the line up; keep it for the report */
        if (run_line(sc, line) != 0) {
            failed = 1;
            printf("FAIL %s\n  line %d: %s\n    %s\n", file, lineno, copy, sb_str(&sc->why));
        }
    }
    int stop_rc;
    if (stop_sync(sc, &stop_rc) != 0 && !failed) {
        failed = 1;
        printf("FAIL %s\n  at the end: %s\n", file, sb_str(&sc->why));
    }
    if (!failed) printf("PASS %s\n", file);
    optimist_store *s = sc->store;
    CALL("optimist_close", &s);
    for (int i = 0; i < sc->n_subs; i++) sb_free(&sc->subs[i].got);
    for (int i = 0; i < sc->n_queries; i++) {
        /* After the store's close: a closed query's call is a no-op that returns OK. */
        CALL("optimist_query_close", &sc->queries[i].q);
        sb_free(&sc->queries[i].got);
    }
    sb_free(&sc->why);
    sync_free(&sc->sync);
    if (sc->dir[0]) remove_dir(sc->dir);
    free(copy);
    free(line);
    free(sc);
    fclose(f);
    return failed ? -1 : 0;
}

static int by_name(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Runs every *.scn file of a directory, in name order. */
static void run_dir(const char *dir, int *passed, int *failed) {
    DIR *d = opendir(dir);
    char **files = NULL;
    size_t n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 4, ".scn") != 0) continue;
        files = realloc(files, (n + 1) * sizeof *files);
        files[n] = malloc(strlen(dir) + len + 2);
        sprintf(files[n++], "%s/%s", dir, e->d_name);
    }
    if (d) closedir(d);
    qsort(files, n, sizeof *files, by_name);
    for (size_t i = 0; i < n; i++) {
        if (run_scenario(files[i]) == 0) (*passed)++;
        else (*failed)++;
        free(files[i]);
    }
    free(files);
}

int main(int argc, char **argv) {
    const char *library = getenv("OPTIMIST_LIBRARY");
#ifdef OPTIMIST_SHIM_DEFAULT_LIBRARY
    if (library == NULL || *library == '\0') library = OPTIMIST_SHIM_DEFAULT_LIBRARY;
#endif
    int first = 1;
    if (argc > 2 && strcmp(argv[1], "--library") == 0) {
        library = argv[2];
        first = 3;
    }
    if (first >= argc || library == NULL) {
        fprintf(stderr, "usage: %s [--library PATH] SCENARIO_OR_DIR...\n", argv[0]);
        return 2;
    }
    char err[PATH_MAX + 256];
    if (shim_load(library, err, sizeof err) != 0) {
        fprintf(stderr, "scenario_shim: %s\n", err);
        printf("0 passed, %d failed\n", argc - first);
        return 1;
    }
    int passed = 0, failed = 0;
    for (int i = first; i < argc; i++) {
        DIR *d = opendir(argv[i]);
        if (d) {
            closedir(d);
            run_dir(argv[i], &passed, &failed);
        } else if (run_scenario(argv[i]) == 0) {
            passed++;
        } else {
            failed++;
        }
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
