/*
 * habits_demo.c: the habit-tracker story, played through liboptimist's C ABI against a real
 * optimist-server.
 *
 * A habit app keeps habits ("run", "read", "water") and daily logs keyed by ISO date, e.g.
 * "2026-11-22/run". Two devices of one user, a phone and a tablet, each with its own store
 * file, sync with the server through the library's own background sync and its built-in HTTP
 * transport (optimist_sync_start): this program has no send loop. Every tap must show at once,
 * reach the server and the other device, be undone exactly (or kept, marked failed) when the
 * server refuses it, and survive the server being down and the app being killed. Each section
 * checks the outcome, so the demo doubles as an end-to-end test: it exits 1 if a check fails.
 *
 * The story comes in three parts, because the server has to go down and come back in between:
 *
 *   habits_demo WORKDIR URL online      server up: sections 1-3
 *   habits_demo WORKDIR URL offline     server stopped: section 4
 *   habits_demo WORKDIR URL catchup     server up again at the same address: sections 5-6
 *   habits_demo --crash-child PATH URL  (internal: the process section 4 kills with SIGKILL)
 *
 * scripts/demo.sh builds it, starts optimist-server with the rule
 * --refuse 'logs/2026-11-1=that week is closed', and stops and restarts it between the parts.
 */
#define _GNU_SOURCE
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "common.h"
#include "optimist.h"
#include "optimistic.h"
#include "reload.h"

#define TODAY "2026-11-22"
#define LOG_RUN TODAY "/run"
#define LOG_READ TODAY "/read"
#define LOG_WATER TODAY "/water"
#define OLD_READ "2026-11-14/read" /* refused by the server's rule: that week is closed */
#define OLD_RUN "2026-11-15/run"   /* refused too */
#define REFUSAL "refused by rule: that week is closed"
#define WAIT_MS 20000 /* the longest a sync may take to settle on loopback before a check fails */

/* ------------------------------------------------------------------------------------------
 * Reporting: every check prints a check mark or a cross; a cross makes the exit status 1.
 * ---------------------------------------------------------------------------------------- */

static int g_failed;

static void section(const char *title) { printf("\n━━ %s\n", title); }

static void note(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    printf("   ");
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
}

static void check(int ok, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    printf(ok ? "   \xE2\x9C\x94 " : "   \xE2\x9C\x98 FAILED: ");
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    if (!ok) g_failed = 1;
}

/* A call that must succeed: on any other result the story cannot go on, so stop here. */
#define MUST(call)                                                                           \
    do {                                                                                     \
        int rc_ = (call);                                                                    \
        if (rc_ != OPTIMIST_OK) {                                                            \
            printf("   \xE2\x9C\x98 FAILED: %s returned %d (%s): %s\n", #call, rc_,          \
                   optimist_errstr(rc_), optimist_last_error());                             \
            exit(1);                                                                         \
        }                                                                                    \
    } while (0)

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* ------------------------------------------------------------------------------------------
 * Small readers. Values are copied into a few rotating buffers so a printf can show several
 * at once without the caller freeing anything (this is a demo, not a pattern for apps).
 * ---------------------------------------------------------------------------------------- */

static char *ring_slot(void) {
    static char ring[16][1024];
    static int next;
    return ring[next++ % 16];
}

static const char *keep(char *owned) {
    char *slot = ring_slot();
    snprintf(slot, 1024, "%s", owned);
    optimist_free(owned);
    return slot;
}

/* The visible record as canonical JSON, or "(none)" when there is no record. */
static const char *visible(optimist_store *s, const char *coll, const char *key) {
    char *json = NULL;
    int rc = optimist_get(s, coll, key, &json);
    if (rc == OPTIMIST_NOTFOUND) return "(none)";
    MUST(rc);
    return keep(json);
}

/* The confirmed record (what the server acknowledged), or "(none)". */
static const char *confirmed(optimist_store *s, const char *coll, const char *key) {
    char *json = NULL;
    int rc = optimist_get_confirmed(s, coll, key, &json);
    if (rc == OPTIMIST_NOTFOUND) return "(none)";
    MUST(rc);
    return keep(json);
}

static int pending(optimist_store *s, const char *coll, const char *key) {
    int out = -1;
    MUST(optimist_is_pending(s, coll, key, &out));
    return out;
}

static int status_of(optimist_store *s, uint64_t id) {
    int st = 0;
    MUST(optimist_status(s, id, &st));
    return st;
}

static uint64_t pending_count(optimist_store *s) {
    uint64_t n = 0;
    MUST(optimist_pending_count(s, &n));
    return n;
}

static double view(optimist_store *s, const char *name) {
    double v = 0;
    MUST(optimist_view_get(s, name, &v));
    return v;
}

static const char *status_name(int st) {
    switch (st) {
    case OPTIMIST_PENDING: return "pending";
    case OPTIMIST_INFLIGHT: return "inflight";
    case OPTIMIST_FAILED: return "failed";
    case OPTIMIST_COMMITTED: return "committed";
    case OPTIMIST_ROLLED_BACK: return "rolled_back";
    default: return "?";
    }
}

static const char *record_status_name(int st) {
    switch (st) {
    case OPTIMIST_RECORD_CONFIRMED: return "confirmed";
    case OPTIMIST_RECORD_PENDING: return "pending";
    case OPTIMIST_RECORD_FAILED: return "failed";
    default: return "?";
    }
}

static const char *cause_name(int cause) {
    switch (cause) {
    case OPTIMIST_CAUSE_MUTATE: return "mutate";
    case OPTIMIST_CAUSE_COMMIT: return "commit";
    case OPTIMIST_CAUSE_ROLLBACK: return "rollback";
    case OPTIMIST_CAUSE_SERVER: return "server";
    case OPTIMIST_CAUSE_FAIL: return "fail";
    case OPTIMIST_CAUSE_RETRY: return "retry";
    case OPTIMIST_CAUSE_SYNC: return "sync";
    default: return "?";
    }
}

static int same(const char *a, const char *b) { return strcmp(a, b) == 0; }

/* Shows one record: its visible value, and the server's (confirmed) one while it is pending. */
static void show(optimist_store *s, const char *label, const char *coll, const char *key) {
    const char *v = visible(s, coll, key);
    if (!pending(s, coll, key)) {
        printf("     %-22s %s\n", label, v);
        return;
    }
    const char *c = confirmed(s, coll, key);
    printf("     %-22s %s   (server: %s)\n", label, v, same(c, "(none)") ? "none" : c);
}

/* ------------------------------------------------------------------------------------------
 * Batches (a mutation's ops). A one-liner per op keeps the story readable.
 * ---------------------------------------------------------------------------------------- */

static optimist_batch *batch(void) {
    optimist_batch *b = NULL;
    MUST(optimist_batch_new(&b));
    return b;
}

static uint64_t mutate(optimist_store *s, optimist_batch *b, const char *dedupe, int policy) {
    uint64_t id = 0;
    MUST(optimist_mutate_with_policy(s, b, dedupe, policy, &id));
    optimist_batch_free(b);
    return id;
}

/* ------------------------------------------------------------------------------------------
 * The sync's status, a JSON object such as
 *   {"cursor":"4","failed":0,"inflight":0,"last_error":null,"pending":0,"pulled":5,"pushed":2,"state":"idle"}
 * read with a tiny member finder (canonical JSON: compact, no surprises).
 * ---------------------------------------------------------------------------------------- */

/* The text of member `name`: a string's characters (escapes kept as they are), or the literal
 * (number, null). "" when absent. */
static const char *member(const char *json, const char *name) {
    char pattern[64];
    snprintf(pattern, sizeof pattern, "\"%s\":", name);
    const char *p = strstr(json, pattern);
    char *out = ring_slot();
    out[0] = '\0';
    if (!p) return out;
    p += strlen(pattern);
    size_t n = 0;
    if (*p == '"') {
        for (p++; *p && *p != '"' && n < 1023; p++) {
            if (*p == '\\' && p[1]) out[n++] = *p++;
            out[n++] = *p;
        }
    } else {
        while (*p && *p != ',' && *p != '}' && n < 1023) out[n++] = *p++;
    }
    out[n] = '\0';
    return out;
}

static const char *sync_status(optimist_store *s) {
    char *json = NULL;
    MUST(optimist_sync_status(s, &json));
    return keep(json);
}

static const char *sync_state(optimist_store *s) { return member(sync_status(s), "state"); }

static void note_sync(optimist_store *s) {
    const char *j = sync_status(s);
    const char *err = member(j, "last_error");
    note("sync: %s, pushed %s, pulled %s, cursor %s, pending %s, failed %s%s%s", member(j, "state"),
         member(j, "pushed"), member(j, "pulled"), member(j, "cursor"), member(j, "pending"), member(j, "failed"),
         same(err, "null") ? "" : "; last error: ", same(err, "null") ? "" : err);
}

/* ------------------------------------------------------------------------------------------
 * The screen: today's logs, longest first, and today's totals, as two live queries the
 * library keeps current. The UI reads their rows once, in the same step as it subscribes
 * (optimist_query_subscribe_numbered), and then only applies the deltas it is sent: it never
 * reloads them. Deliveries are numbered: the sync's thread and the UI's may both change the
 * store, and a delivery that comes before its turn waits until the ones before it are applied.
 * ---------------------------------------------------------------------------------------- */

enum { SCREEN_ROWS = 32, SCREEN_HELD = 64 };

typedef struct {
    optimist_query *q;
    pthread_mutex_t mu;
    char *rows[SCREEN_ROWS]; /* each row's canonical JSON text */
    size_t n;
    uint64_t next;           /* the number of the next delivery to apply */
    char *held[SCREEN_HELD]; /* deliveries that came before their turn, by number */
    int broken;              /* a delta that did not fit the rows (the checks then fail) */
} screen;

/* Just past the end of the JSON object or array that starts at p, or NULL. */
static const char *json_end(const char *p) {
    int depth = 0, in_string = 0;
    for (; *p; p++) {
        if (in_string) {
            if (*p == '\\' && p[1]) p++;
            else if (*p == '"') in_string = 0;
        } else if (*p == '"') {
            in_string = 1;
        } else if (*p == '{' || *p == '[') {
            depth++;
        } else if ((*p == '}' || *p == ']') && --depth == 0) {
            return p + 1;
        }
    }
    return NULL;
}

static char *copy_span(const char *from, const char *to) {
    char *out = malloc((size_t)(to - from) + 1);
    if (!out) exit(1);
    memcpy(out, from, (size_t)(to - from));
    out[to - from] = '\0';
    return out;
}

/* Fills the screen from a JSON array of rows. */
static void screen_fill(screen *sc, const char *rows) {
    const char *p = rows + 1; /* after '[' */
    while (*p == '{' && sc->n < SCREEN_ROWS) {
        const char *end = json_end(p);
        if (!end) { sc->broken = 1; return; }
        sc->rows[sc->n++] = copy_span(p, end);
        p = *end == ',' ? end + 1 : end;
    }
}

/* Applies one delivery's deltas; canonical JSON puts a delta's members in the order index,
 * op, row: {"index":I,"op":"insert","row":{...}}. */
static void screen_apply(screen *sc, const char *deltas) {
    const char *p = deltas + 1;
    while (*p == '{') {
        const char *end = json_end(p);
        char op[8] = "";
        long i = -1;
        if (!end || sscanf(p, "{\"index\":%ld,\"op\":\"%7[a-z]\"", &i, op) != 2 || i < 0) { sc->broken = 1; return; }
        const char *row = strstr(p, ",\"row\":");
        char *text = row && row < end ? copy_span(row + 7, end - 1) : NULL;
        size_t at = (size_t)i;
        if (same(op, "insert") && text && at <= sc->n && sc->n < SCREEN_ROWS) {
            memmove(&sc->rows[at + 1], &sc->rows[at], (sc->n - at) * sizeof *sc->rows);
            sc->rows[at] = text;
            sc->n++;
        } else if (same(op, "update") && text && at < sc->n) {
            free(sc->rows[at]);
            sc->rows[at] = text;
        } else if (same(op, "delete") && at < sc->n) {
            free(sc->rows[at]);
            memmove(&sc->rows[at], &sc->rows[at + 1], (sc->n - at - 1) * sizeof *sc->rows);
            sc->n--;
        } else {
            free(text);
            sc->broken = 1;
            return;
        }
        p = *end == ',' ? end + 1 : end;
    }
}

static void on_screen(void *ctx, uint64_t number, const char *deltas, size_t n) {
    (void)n;
    screen *sc = ctx;
    pthread_mutex_lock(&sc->mu);
    if (number < sc->next || number - sc->next >= SCREEN_HELD || sc->held[number % SCREEN_HELD]) {
        sc->broken = 1;
    } else {
        sc->held[number % SCREEN_HELD] = copy_span(deltas, deltas + strlen(deltas));
        char *d;
        while ((d = sc->held[sc->next % SCREEN_HELD]) != NULL) {
            sc->held[sc->next % SCREEN_HELD] = NULL;
            screen_apply(sc, d);
            free(d);
            sc->next++;
        }
    }
    pthread_mutex_unlock(&sc->mu);
}

static void screen_open(screen *sc, optimist_store *s, const char *spec) {
    pthread_mutex_init(&sc->mu, NULL);
    MUST(optimist_query_open(s, spec, &sc->q));
    char *rows = NULL;
    uint64_t sub = 0, delivered = 0;
    pthread_mutex_lock(&sc->mu); /* a delivery on the sync's thread waits until the rows are in */
    MUST(optimist_query_subscribe_numbered(sc->q, on_screen, sc, &sub, &rows, &delivered));
    sc->next = delivered + 1;
    screen_fill(sc, rows);
    pthread_mutex_unlock(&sc->mu);
    optimist_free(rows);
}

static void screen_close(screen *sc) {
    MUST(optimist_query_close(sc->q));
    for (size_t i = 0; i < sc->n; i++) free(sc->rows[i]);
    for (size_t i = 0; i < SCREEN_HELD; i++) free(sc->held[i]);
    pthread_mutex_destroy(&sc->mu);
}

/* Whether the screen, built from deltas alone, equals the query's rows read now. */
static int screen_current(screen *sc) {
    char *rows = NULL;
    MUST(optimist_query_rows(sc->q, 0, 0, &rows));
    pthread_mutex_lock(&sc->mu);
    size_t len = 1;
    int ok = !sc->broken && rows[0] == '[';
    for (size_t i = 0; ok && i < sc->n; i++) {
        size_t k = strlen(sc->rows[i]);
        ok = strncmp(rows + len, sc->rows[i], k) == 0;
        len += k;
        if (ok && i + 1 < sc->n) ok = rows[len++] == ',';
    }
    ok = ok && same(rows + len, "]");
    pthread_mutex_unlock(&sc->mu);
    optimist_free(rows);
    return ok;
}

/* One line per row: a log's key, minutes and status, or a group's totals. */
static void screen_print(screen *sc) {
    pthread_mutex_lock(&sc->mu);
    for (size_t i = 0; i < sc->n; i++) {
        const char *r = sc->rows[i];
        if (strncmp(r, "{\"group\":", 9) == 0)
            note("  done=%-5s %s log(s), %s min", member(r, "done"), member(r, "logs"), member(r, "minutes"));
        else
            note("  %-16s %3s min   %s", member(r, "key"), member(r, "minutes"), member(r, "status"));
    }
    pthread_mutex_unlock(&sc->mu);
}

/* The status of the screen's row i ("" if there is none). */
static const char *screen_status(screen *sc, size_t i) {
    pthread_mutex_lock(&sc->mu);
    const char *st = i < sc->n ? member(sc->rows[i], "status") : "";
    pthread_mutex_unlock(&sc->mu);
    return st;
}

/* ------------------------------------------------------------------------------------------
 * A device: its store file, today's ring (a view), a subscription that records what the UI
 * hears (some of it on the sync's own thread, hence the mutex), and the background sync.
 * ---------------------------------------------------------------------------------------- */

typedef struct {
    char coll[32], key[48], value[200];
    int cause, status;
} heard_change;

typedef struct {
    const char *name;
    char path[1024];
    optimist_store *s;
    pthread_mutex_t mu;
    heard_change heard[64];
    int n;
    screen list, totals; /* today's logs, longest first; today's totals */
} device;

static void on_change(void *ctx, const optimist_change *changes, size_t n) {
    device *d = ctx;
    pthread_mutex_lock(&d->mu);
    for (size_t i = 0; i < n && d->n < 64; i++) {
        heard_change *h = &d->heard[d->n++];
        snprintf(h->coll, sizeof h->coll, "%s", changes[i].collection);
        snprintf(h->key, sizeof h->key, "%s", changes[i].key);
        snprintf(h->value, sizeof h->value, "%s", changes[i].value_json ? changes[i].value_json : "(none)");
        h->cause = changes[i].cause;
        h->status = changes[i].pending;
    }
    pthread_mutex_unlock(&d->mu);
}

static void forget_heard(device *d) {
    pthread_mutex_lock(&d->mu);
    d->n = 0;
    pthread_mutex_unlock(&d->mu);
}

/* The index-th change heard about one record (index < 0: counted from the end), or NULL. */
static const heard_change *heard_at(device *d, const char *coll, const char *key, int index) {
    const heard_change *hits[64];
    int k = 0;
    pthread_mutex_lock(&d->mu);
    for (int i = 0; i < d->n; i++)
        if (same(d->heard[i].coll, coll) && same(d->heard[i].key, key)) hits[k++] = &d->heard[i];
    pthread_mutex_unlock(&d->mu);
    if (index < 0) index += k;
    return index >= 0 && index < k ? hits[index] : NULL;
}

/* The first change heard about one record with this cause, or NULL. */
static const heard_change *heard_cause(device *d, const char *coll, const char *key, int cause) {
    const heard_change *h;
    for (int i = 0; (h = heard_at(d, coll, key, i)) != NULL; i++)
        if (h->cause == cause) return h;
    return NULL;
}

/* What the UI heard about one record, as "cause/status → cause/status ...". */
static const char *told(device *d, const char *coll, const char *key) {
    char *out = ring_slot();
    size_t len = 0;
    out[0] = '\0';
    const heard_change *h;
    for (int i = 0; (h = heard_at(d, coll, key, i)) != NULL && len < 900; i++)
        len += (size_t)snprintf(out + len, 1024 - len, "%s%s/%s", i ? " → " : "", cause_name(h->cause),
                                record_status_name(h->status));
    return out;
}

/* What a device's UI heard about one record, a line per change: cause, record status, and the
 * value when it changed. */
static void print_heard(device *d, const char *coll, const char *key) {
    note("the %s's UI heard, on %s/%s:", d->name, coll, key);
    const heard_change *h, *prev = NULL;
    for (int i = 0; (h = heard_at(d, coll, key, i)) != NULL; i++) {
        if (!prev || !same(prev->value, h->value))
            printf("     %-9s %-10s %s\n", cause_name(h->cause), record_status_name(h->status), h->value);
        else
            printf("     %-9s %s\n", cause_name(h->cause), record_status_name(h->status));
        prev = h;
    }
}

static void start_sync(device *d, const char *url) {
    optimist_sync_options o = OPTIMIST_SYNC_OPTIONS_INIT;
    o.url = url;
    /* One mutation per request, so each answer of the server shows on its own (apps keep the
     * default, 100); a request gives up after 2 s (loopback). */
    o.max_batch = 1;
    o.timeout_ms = 2000;
    MUST(optimist_sync_start(d->s, &o));
}

/* Opens a device's store; url NULL: no sync yet. */
static device *device_open(const char *name, const char *path, const char *url) {
    device *d = calloc(1, sizeof *d);
    if (!d) exit(1);
    d->name = name;
    snprintf(d->path, sizeof d->path, "%s", path);
    pthread_mutex_init(&d->mu, NULL);
    MUST(optimist_open(path, &d->s));
    MUST(optimist_view_define(d->s, "today", "logs", TODAY "/", "count"));
    uint64_t sub = 0;
    MUST(optimist_subscribe(d->s, NULL, NULL, on_change, d, &sub));
    screen_open(&d->list, d->s, "{\"collection\":\"logs\",\"range\":{\"prefix\":\"" TODAY "/\"},"
                                "\"order\":[{\"field\":\"minutes\",\"desc\":true}]}");
    screen_open(&d->totals, d->s, "{\"collection\":\"logs\",\"range\":{\"prefix\":\"" TODAY "/\"},"
                                  "\"group\":{\"by\":[\"done\"],\"aggregates\":{\"logs\":\"count\",\"minutes\":\"sum:minutes\"}}}");
    if (url) start_sync(d, url);
    return d;
}

/* Closes the store (which stops its sync first) and forgets the device. */
static void device_close(device *d) {
    screen_close(&d->list);
    screen_close(&d->totals);
    MUST(optimist_close(d->s));
    pthread_mutex_destroy(&d->mu);
    free(d);
}

/* Waits until the sync sent everything and pulled after it. */
static int wait_idle(device *d, const char *why) {
    int idle = 0;
    double t0 = now_us();
    MUST(optimist_sync_wait_idle(d->s, WAIT_MS, &idle));
    check(idle, "%s's sync is idle after %.0f ms: %s", d->name, (now_us() - t0) / 1e3, why);
    return idle;
}

static int wait_state(optimist_store *s, const char *state) {
    for (int i = 0; i < WAIT_MS / 10 && !same(sync_state(s), state); i++) usleep(10000);
    return same(sync_state(s), state);
}

/* The server's error kept with a failed mutation. The library keeps it with the mutation, but
 * the C ABI cannot read it yet, so the demo reads it from the store file (closed: an open store
 * holds its file locked). */
static const char *stored_reason(const char *path, uint64_t id) {
    char *out = ring_slot();
    snprintf(out, 1024, "(none)");
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(db, "SELECT last_error FROM mutations WHERE id = ?1", -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, (sqlite3_int64)id);
        if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
            snprintf(out, 1024, "%s", (const char *)sqlite3_column_text(st, 0));
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    return out;
}

static void remove_store(const char *path) {
    const char *suffixes[] = {"", "-wal", "-shm", "-journal"};
    char p[1024];
    for (size_t i = 0; i < sizeof suffixes / sizeof *suffixes; i++) {
        snprintf(p, sizeof p, "%s%s", path, suffixes[i]);
        unlink(p);
    }
}

/* ------------------------------------------------------------------------------------------
 * Part 1, server up: a tap, a second device, refusals.
 * ---------------------------------------------------------------------------------------- */

static void part_online(const char *workdir, const char *url) {
    char phone_path[1024], tablet_path[1024];
    snprintf(phone_path, sizeof phone_path, "%s/phone-c.optimist", workdir);
    snprintf(tablet_path, sizeof tablet_path, "%s/tablet-c.optimist", workdir);
    remove_store(phone_path);
    remove_store(tablet_path);
    printf("Optimist %s: the habit tracker, through the C library\n", optimist_version());
    printf("Server: %s   Store files: %s, %s\n", url, phone_path, tablet_path);

    /* ---- 1 -------------------------------------------------------------------------------- */
    section("1. A tap shows at once; the library's sync sends it");
    note("The phone starts its sync (optimist_sync_start with o.url) and adds three habits.");
    device *phone = device_open("phone", phone_path, url);
    optimist_batch *b = batch();
    MUST(optimist_batch_put(b, "habits", "run", "{\"name\":\"Morning run\",\"streak\":4}"));
    MUST(optimist_batch_put(b, "habits", "read", "{\"name\":\"Read 20 pages\",\"streak\":9}"));
    MUST(optimist_batch_put(b, "habits", "water", "{\"goal\":8,\"name\":\"Water\"}"));
    mutate(phone->s, b, NULL, OPTIMIST_POLICY_ROLLBACK);
    wait_idle(phone, "the habits are on the server");

    note("You complete today's run: one mutation writes the log and bumps the streak.");
    forget_heard(phone);
    b = batch();
    MUST(optimist_batch_put(b, "logs", LOG_RUN, "{\"done\":true,\"minutes\":32}"));
    MUST(optimist_batch_incr(b, "habits", "run", "streak", 1));
    uint64_t m_run = 0;
    double t0 = now_us();
    int rc = optimist_mutate(phone->s, b, LOG_RUN, &m_run);
    double t1 = now_us();
    MUST(rc);
    optimist_batch_free(b);
    note("optimist_mutate took %.0f µs; right after it the phone shows:", t1 - t0);
    show(phone->s, "logs/" LOG_RUN, "logs", LOG_RUN);
    show(phone->s, "habits/run", "habits", "run");
    check(same(visible(phone->s, "logs", LOG_RUN), "{\"done\":true,\"minutes\":32}") &&
              same(visible(phone->s, "habits", "run"), "{\"name\":\"Morning run\",\"streak\":5}"),
          "the log and streak 5 show at once");
    const heard_change *h = heard_at(phone, "logs", LOG_RUN, 0);
    check(h && h->cause == OPTIMIST_CAUSE_MUTATE && h->status == OPTIMIST_RECORD_PENDING,
          "the UI heard it at once with status pending (a sync badge)");
    check(view(phone->s, "today") == 1, "today's ring counts 1 log");
    note("the screen's list and totals, two live queries, kept by their deltas alone:");
    screen_print(&phone->list);
    screen_print(&phone->totals);
    check(screen_current(&phone->list) && screen_current(&phone->totals) && phone->list.n == 1 &&
              same(screen_status(&phone->list, 0), "pending"),
          "the screen shows the tap at once, pending, without reloading anything");
    wait_idle(phone, "the sync sent the tap and the server said ok");
    check(same(screen_status(&phone->list, 0), "confirmed") && screen_current(&phone->list),
          "the screen's row turned confirmed when the server said ok (an update delta)");
    show(phone->s, "logs/" LOG_RUN, "logs", LOG_RUN);
    show(phone->s, "habits/run", "habits", "run");
    note("the UI heard on the log: %s", told(phone, "logs", LOG_RUN));
    check(status_of(phone->s, m_run) == OPTIMIST_COMMITTED, "mutation #%llu is committed", (unsigned long long)m_run);
    check(same(confirmed(phone->s, "habits", "run"), "{\"name\":\"Morning run\",\"streak\":5}") &&
              !pending(phone->s, "habits", "run"),
          "confirmed = visible: no badge any more");
    check(same(told(phone, "logs", LOG_RUN), "mutate/pending → sync/pending → commit/confirmed"),
          "events: mutate (pending) → sync (sent) → commit (confirmed)");
    note_sync(phone->s);

    /* ---- 2 -------------------------------------------------------------------------------- */
    section("2. A second device");
    note("The tablet (its own store file) starts its sync: its first pull brings the phone's taps.");
    device *tablet = device_open("tablet", tablet_path, url);
    wait_idle(tablet, "pulled");
    show(tablet->s, "habits/run", "habits", "run");
    show(tablet->s, "logs/" LOG_RUN, "logs", LOG_RUN);
    check(same(visible(tablet->s, "habits", "run"), "{\"name\":\"Morning run\",\"streak\":5}") &&
              same(visible(tablet->s, "logs", LOG_RUN), "{\"done\":true,\"minutes\":32}"),
          "the tablet shows the phone's run and streak");
    int heard = 0, from_server = 0;
    pthread_mutex_lock(&tablet->mu);
    for (heard = 0; heard < tablet->n; heard++) from_server += tablet->heard[heard].cause == OPTIMIST_CAUSE_SERVER;
    pthread_mutex_unlock(&tablet->mu);
    check(heard == 4 && from_server == 4, "its UI heard %d records arrive, all with cause server", heard);

    note("The phone's app goes to the background: optimist_sync_stop(phone).");
    MUST(optimist_sync_stop(phone->s));
    b = batch();
    MUST(optimist_batch_incr(b, "logs", LOG_WATER, "glasses", 1));
    uint64_t m_w = mutate(phone->s, b, NULL, OPTIMIST_POLICY_ROLLBACK);
    note("On the phone's widget you log +1 glass (it waits: no sync runs); on the tablet, +2.");
    b = batch();
    MUST(optimist_batch_incr(b, "logs", LOG_WATER, "glasses", 2));
    mutate(tablet->s, b, NULL, OPTIMIST_POLICY_ROLLBACK);
    wait_idle(tablet, "the tablet's +2 is on the server");
    show(phone->s, "phone: water", "logs", LOG_WATER);
    show(tablet->s, "tablet: water", "logs", LOG_WATER);
    note("The phone's app comes back: its sync starts, and pulls before it pushes.");
    forget_heard(phone);
    start_sync(phone, url);
    wait_idle(phone, "pulled the tablet's +2, then sent its own +1");
    show(phone->s, "phone: water", "logs", LOG_WATER);
    print_heard(phone, "logs", LOG_WATER);
    h = heard_at(phone, "logs", LOG_WATER, 0);
    check(h && h->cause == OPTIMIST_CAUSE_SERVER && h->status == OPTIMIST_RECORD_PENDING &&
              same(h->value, "{\"glasses\":3}"),
          "the tablet's 2 arrived (cause server) under the pending +1: 3 on screen, still pending");
    check(status_of(phone->s, m_w) == OPTIMIST_COMMITTED && same(confirmed(phone->s, "logs", LOG_WATER), "{\"glasses\":3}"),
          "then the +1 was sent: the server adds it up to 3 (an incr from each device)");
    MUST(optimist_sync_now(tablet->s)); /* the tablet's "pull to refresh" */
    wait_idle(tablet, "pulled again");
    show(tablet->s, "tablet: water", "logs", LOG_WATER);
    check(same(visible(tablet->s, "logs", LOG_WATER), "{\"glasses\":3}"), "the tablet shows 3 too");

    /* ---- 3 -------------------------------------------------------------------------------- */
    section("3. The server refuses a change");
    note("This server refuses any change to the logs of Nov 10-19 (its rule: --refuse 'logs/2026-11-1=...').");
    note("Policy keep: a refused change stays on screen, marked failed, until you retry or discard it.");
    forget_heard(phone);
    b = batch();
    MUST(optimist_batch_patch(b, "logs", OLD_READ, "{\"note\":\"felt great\"}"));
    uint64_t m_note = mutate(phone->s, b, NULL, OPTIMIST_POLICY_KEEP);
    wait_idle(phone, "the server answered (a failed change does not count as busy)");
    show(phone->s, "logs/" OLD_READ, "logs", OLD_READ);
    print_heard(phone, "logs", OLD_READ);
    check(status_of(phone->s, m_note) == OPTIMIST_FAILED, "#%llu is %s (rejected by the server, kept)",
          (unsigned long long)m_note, status_name(status_of(phone->s, m_note)));
    h = heard_at(phone, "logs", OLD_READ, -1);
    check(h && h->cause == OPTIMIST_CAUSE_FAIL && h->status == OPTIMIST_RECORD_FAILED,
          "the UI heard cause fail with status failed: the 'not saved - retry?' badge");
    check(same(member(sync_status(phone->s), "failed"), "1"), "sync status counts 1 failed");
    note("The app restarts (close, reopen): the failed change is still there, with the server's reason:");
    device_close(phone);
    const char *reason = stored_reason(phone_path, m_note);
    note("  last error of #%llu: \"%s\"  (read from the store file: no API gives it yet)",
         (unsigned long long)m_note, reason);
    check(same(reason, REFUSAL), "the server's error is kept with the mutation");
    phone = device_open("phone", phone_path, url);
    wait_idle(phone, "reopened");
    check(status_of(phone->s, m_note) == OPTIMIST_FAILED &&
              same(visible(phone->s, "logs", OLD_READ), "{\"note\":\"felt great\"}"),
          "#%llu is still failed and shown after the restart", (unsigned long long)m_note);
    MUST(optimist_rollback(phone->s, m_note, "discarded by the user"));
    check(same(visible(phone->s, "logs", OLD_READ), "(none)") && pending_count(phone->s) == 0,
          "you tap 'discard' (optimist_rollback): it is gone, nothing pending");

    note("Policy rollback (the default): a refused change is undone exactly.");
    note("With the phone's sync stopped again you log a run for Nov 15, then rename 'run':");
    MUST(optimist_sync_stop(phone->s));
    b = batch();
    MUST(optimist_batch_put(b, "logs", OLD_RUN, "{\"done\":true,\"minutes\":25}"));
    MUST(optimist_batch_incr(b, "habits", "run", "streak", 1));
    uint64_t m_old = mutate(phone->s, b, NULL, OPTIMIST_POLICY_ROLLBACK);
    b = batch();
    MUST(optimist_batch_patch(b, "habits", "run", "{\"name\":\"Evening run\"}"));
    uint64_t m_name = mutate(phone->s, b, NULL, OPTIMIST_POLICY_ROLLBACK);
    show(phone->s, "logs/" OLD_RUN, "logs", OLD_RUN);
    show(phone->s, "habits/run", "habits", "run");
    forget_heard(phone);
    start_sync(phone, url);
    char why[96];
    snprintf(why, sizeof why, "#%llu answered, then #%llu", (unsigned long long)m_old, (unsigned long long)m_name);
    wait_idle(phone, why);
    show(phone->s, "logs/" OLD_RUN, "logs", OLD_RUN);
    show(phone->s, "habits/run", "habits", "run");
    print_heard(phone, "habits", "run");
    check(status_of(phone->s, m_old) == OPTIMIST_ROLLED_BACK && same(visible(phone->s, "logs", OLD_RUN), "(none)"),
          "#%llu was refused and rolled back: the Nov 15 log is gone", (unsigned long long)m_old);
    h = heard_cause(phone, "habits", "run", OPTIMIST_CAUSE_ROLLBACK);
    check(h && h->status == OPTIMIST_RECORD_PENDING && same(h->value, "{\"name\":\"Evening run\",\"streak\":5}"),
          "at that moment the streak went back to 5 and the rename, still pending, stayed");
    check(status_of(phone->s, m_name) == OPTIMIST_COMMITTED &&
              same(confirmed(phone->s, "habits", "run"), "{\"name\":\"Evening run\",\"streak\":5}"),
          "then the rename #%llu was committed", (unsigned long long)m_name);
    MUST(optimist_sync_now(tablet->s));
    wait_idle(tablet, "pulled again");
    check(same(visible(tablet->s, "habits", "run"), "{\"name\":\"Evening run\",\"streak\":5}") &&
              same(visible(tablet->s, "logs", OLD_RUN), "(none)"),
          "the tablet has the rename, and no Nov 15 log");
    note_sync(phone->s);
    device_close(phone);
    device_close(tablet);
}

/* ------------------------------------------------------------------------------------------
 * Part 2, server stopped: taps wait in the outbox, a child process is killed.
 * ---------------------------------------------------------------------------------------- */

/* Section 4's child: taps three times with its sync running, flushes, reports, and waits to be
 * killed with SIGKILL. */
static int crash_child(const char *path, const char *url) {
    device *d = device_open("child", path, url);
    char *client = NULL;
    MUST(optimist_client_id(d->s, &client));
    uint64_t ids[3];
    for (int i = 0; i < 3; i++) {
        optimist_batch *b = batch();
        MUST(optimist_batch_incr(b, "logs", LOG_WATER, "glasses", 1));
        ids[i] = mutate(d->s, b, NULL, OPTIMIST_POLICY_ROLLBACK);
    }
    MUST(optimist_flush(d->s)); /* the durability point: what happened before it survives a crash */
    wait_state(d->s, "offline");
    printf("READY %s %s %llu %llu %llu\n", client, sync_state(d->s), (unsigned long long)ids[0],
           (unsigned long long)ids[1], (unsigned long long)ids[2]);
    fflush(stdout);
    optimist_free(client);
    for (;;) pause(); /* no close, no exit handlers: the parent sends SIGKILL */
}

static void part_offline(const char *workdir, const char *url, const char *self) {
    char phone_path[1024], ids_path[1024];
    snprintf(phone_path, sizeof phone_path, "%s/phone-c.optimist", workdir);
    snprintf(ids_path, sizeof ids_path, "%s/phone-c.offline-ids", workdir);
    section("4. Offline: taps wait in the outbox, even through a crash");
    note("demo.sh stopped the server. The phone reopens its store and starts its sync anyway.");
    device *phone = device_open("phone", phone_path, url);
    check(wait_state(phone->s, "offline"), "the sync's state is offline (connection refused)");
    note_sync(phone->s);

    optimist_batch *b = batch();
    MUST(optimist_batch_put(b, "logs", LOG_READ, "{\"done\":true,\"pages\":20}"));
    MUST(optimist_batch_incr(b, "habits", "read", "streak", 1));
    uint64_t m_read = mutate(phone->s, b, LOG_READ, OPTIMIST_POLICY_ROLLBACK);
    b = batch();
    MUST(optimist_batch_put(b, "logs", LOG_READ, "{\"done\":true,\"pages\":20}"));
    uint64_t dup = 0;
    int rc = optimist_mutate(phone->s, b, LOG_READ, &dup);
    optimist_batch_free(b);
    check(rc == OPTIMIST_DUPLICATE && dup == m_read,
          "you complete 'read' (a double tap is refused: DUPLICATE of #%llu)", (unsigned long long)m_read);
    b = batch();
    MUST(optimist_batch_incr(b, "logs", LOG_WATER, "glasses", 1));
    uint64_t m_w = mutate(phone->s, b, NULL, OPTIMIST_POLICY_ROLLBACK);
    note("... and log +1 glass. Both show at once and wait:");
    show(phone->s, "logs/" LOG_READ, "logs", LOG_READ);
    show(phone->s, "habits/read", "habits", "read");
    show(phone->s, "logs/" LOG_WATER, "logs", LOG_WATER);
    check(wait_state(phone->s, "offline") && pending_count(phone->s) == 2,
          "still offline, 2 changes pending; today's ring says %.0f", view(phone->s, "today"));
    device_close(phone);

    note("A child process opens the phone's store, starts its sync (offline too), logs +1 glass");
    note("three times, flushes, and is killed with SIGKILL (kill -9):");
    int fds[2];
    if (pipe(fds) != 0) { perror("pipe"); exit(1); }
    pid_t pid = fork();
    if (pid < 0) { perror("fork"); exit(1); }
    if (pid == 0) {
        dup2(fds[1], STDOUT_FILENO);
        close(fds[0]);
        close(fds[1]);
        execl("/proc/self/exe", self, "--crash-child", phone_path, url, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    /* Never hang the demo on a child that got stuck: give it 60 s to report. */
    struct pollfd pfd = {.fd = fds[0], .events = POLLIN};
    int ready = poll(&pfd, 1, 60000) == 1;
    FILE *from_child = ready ? fdopen(fds[0], "r") : NULL;
    if (!from_child) close(fds[0]);
    char line[512] = {0}, client[128] = {0}, state[32] = {0};
    unsigned long long c1 = 0, c2 = 0, c3 = 0;
    int got = from_child && fgets(line, sizeof line, from_child) &&
              sscanf(line, "READY %127s %31s %llu %llu %llu", client, state, &c1, &c2, &c3) == 5;
    kill(pid, SIGKILL);
    int wstatus = 0;
    waitpid(pid, &wstatus, 0);
    if (from_child) fclose(from_child);
    if (!got) {
        check(0, "the child reported its taps (got: %s)", line[0] ? line : "nothing");
        return;
    }
    note("  child (pid %d): sync %s, taps #%llu, #%llu, #%llu; then killed", (int)pid, state, c1, c2, c3);
    check(WIFSIGNALED(wstatus) && WTERMSIG(wstatus) == SIGKILL, "the child died of SIGKILL (no close, no exit)");

    optimist_store *s = NULL;
    MUST(optimist_open(phone_path, &s)); /* no sync: just look */
    char *client_after = NULL;
    MUST(optimist_client_id(s, &client_after));
    check(same(client_after, client), "reopened: same client id %s", client_after);
    optimist_free(client_after);
    uint64_t ids[5] = {m_read, m_w, c1, c2, c3};
    int all_pending = 1;
    for (int i = 0; i < 5; i++) all_pending &= status_of(s, ids[i]) == OPTIMIST_PENDING;
    check(pending_count(s) == 5 && all_pending, "the outbox is intact: %llu changes, all pending",
          (unsigned long long)pending_count(s));
    show(s, "logs/" LOG_WATER, "logs", LOG_WATER);
    check(same(visible(s, "logs", LOG_WATER), "{\"glasses\":7}") && same(confirmed(s, "logs", LOG_WATER), "{\"glasses\":3}"),
          "nothing lost: 3 + 1 + 3 = 7 glasses on screen, the server has 3");
    const char *j = sync_status(s);
    note("optimist_sync_status without a sync: state %s, pending %s", member(j, "state"), member(j, "pending"));
    MUST(optimist_close(s));
    FILE *f = fopen(ids_path, "w");
    if (!f) { perror(ids_path); exit(1); }
    for (int i = 0; i < 5; i++) fprintf(f, "%llu\n", (unsigned long long)ids[i]);
    fclose(f);
}

/* ------------------------------------------------------------------------------------------
 * Section 6: reload versus optimistic, measured on this machine, with the benchmark's own two
 * flows (Benchmarks/C/reload.c and optimistic.c, built into this program by demo.sh): the same
 * workload, the same SQLite reload, the same tap as Benchmarks/run, fewer repetitions.
 * ---------------------------------------------------------------------------------------- */

static void progress(const char *what, int done, int total) {
    if (!isatty(STDOUT_FILENO)) return;
    printf("\r     %-44s %4d/%d", what, done, total);
    if (done == total) printf("\r%78s\r", "");
    fflush(stdout);
}

/* `reps` taps of each flow at n logs, interleaved in ten blocks so a change in the machine's
 * load hits both alike. Each tap is undone untimed (reload_undo, optimist_rollback), so every
 * tap sees n logs. Sets the medians in µs and the last count each flow computed. */
static void reload_vs_optimistic(const char *workdir, int n, int reps, double *reload_us, double *opt_us,
                                 int *reload_count, double *opt_count) {
    char path[1024];
    snprintf(path, sizeof path, "%s/reload-%d.sqlite", workdir, n);
    reload_db *r = reload_open(path, n);
    snprintf(path, sizeof path, "%s/bench-%d.optimist", workdir, n);
    int file_backed = 0;
    optimist_store *s = optimistic_open(path, n, &file_backed);
    check(file_backed, "the optimistic side runs on a store file (%s)", path);
    uint64_t *tr = malloc(sizeof *tr * (size_t)reps), *to = malloc(sizeof *to * (size_t)reps);
    int done = 0;
    for (int block = 0; block < 10; block++) {
        int from = done, to_ = block == 9 ? reps : reps * (block + 1) / 10;
        for (int seq = from; seq < to_; seq++) {
            char day[16], habit[16];
            tap_pick(seq, n, day, habit);
            uint64_t t0 = now_ns();
            *reload_count = reload_tap(r, day, habit, seq);
            tr[seq] = now_ns() - t0;
            reload_undo(r, seq);
        }
        for (int seq = from; seq < to_; seq++) {
            char day[16], habit[16];
            uint64_t id = 0;
            tap_pick(seq, n, day, habit);
            uint64_t t0 = now_ns();
            *opt_count = optimistic_tap(s, day, habit, seq, 0, &id);
            to[seq] = now_ns() - t0;
            MUST(optimist_rollback(s, id, NULL));
        }
        done = to_;
        progress("reload and optimistic taps", done, reps);
    }
    reload_close(r);
    MUST(optimist_close(s));
    *reload_us = summarize(tr, (size_t)reps).median;
    *opt_us = summarize(to, (size_t)reps).median;
    free(tr);
    free(to);
}

/* ------------------------------------------------------------------------------------------
 * Part 3, server back: catch-up, then reload versus optimistic.
 * ---------------------------------------------------------------------------------------- */

static void part_catchup(const char *workdir, const char *url) {
    char phone_path[1024], tablet_path[1024], ids_path[1024];
    snprintf(phone_path, sizeof phone_path, "%s/phone-c.optimist", workdir);
    snprintf(tablet_path, sizeof tablet_path, "%s/tablet-c.optimist", workdir);
    snprintf(ids_path, sizeof ids_path, "%s/phone-c.offline-ids", workdir);
    unsigned long long ids[5];
    FILE *f = fopen(ids_path, "r");
    int n = 0;
    while (f && n < 5 && fscanf(f, "%llu", &ids[n]) == 1) n++;
    if (f) fclose(f);
    if (n != 5) {
        check(0, "part 2 left the ids of its 5 taps in %s (run the parts in order)", ids_path);
        return;
    }

    section("5. The server is back: the sync catches up");
    note("demo.sh started the server again (same address, same database). The phone reopens its store:");
    device *phone = device_open("phone", phone_path, NULL);
    note_sync(phone->s);
    start_sync(phone, url);
    wait_idle(phone, "everything sent");
    show(phone->s, "logs/" LOG_WATER, "logs", LOG_WATER);
    show(phone->s, "habits/read", "habits", "read");
    int all_committed = 1;
    for (int i = 0; i < 5; i++) all_committed &= status_of(phone->s, ids[i]) == OPTIMIST_COMMITTED;
    check(all_committed && pending_count(phone->s) == 0,
          "all 5 offline changes are committed (#%llu, #%llu, #%llu, #%llu, #%llu)", ids[0], ids[1], ids[2], ids[3],
          ids[4]);
    check(same(confirmed(phone->s, "logs", LOG_WATER), "{\"glasses\":7}") &&
              same(confirmed(phone->s, "habits", "read"), "{\"name\":\"Read 20 pages\",\"streak\":10}"),
          "the server counted each tap once: 7 glasses, streak 10");
    note_sync(phone->s);
    device *tablet = device_open("tablet", tablet_path, url);
    wait_idle(tablet, "pulled");
    show(tablet->s, "tablet: water", "logs", LOG_WATER);
    show(tablet->s, "tablet: read", "logs", LOG_READ);
    check(same(visible(tablet->s, "logs", LOG_WATER), "{\"glasses\":7}") &&
              same(visible(tablet->s, "logs", LOG_READ), "{\"done\":true,\"pages\":20}") &&
              view(tablet->s, "today") == 3,
          "the tablet sees them all: 7 glasses, the read log; today's ring = 3");
    device_close(phone);
    device_close(tablet);

    /* ---- 6 -------------------------------------------------------------------------------- */
    section("6. Reload vs optimistic, measured on this machine");
    note("Per tap: reload = SQLite INSERT of the log + SELECT every log + recount today (WAL,\n"
         "   synchronous=NORMAL, prepared statements); optimistic = optimist_put_fields (a one-op mutation,\n"
         "   the record as typed fields) on a file-backed store + the view read. ~100-byte logs, 300 taps each, medians: the\n"
         "   benchmark's own code (Benchmarks/C); Benchmarks/run measures it more carefully (BENCHMARKS.md).");
    const int reps = 300;
    const int sizes[] = {1000, 10000};
    double reload_med[2], opt_med[2];
    for (int i = 0; i < 2; i++) {
        note("measuring N = %d logs ...", sizes[i]);
        int reload_count = 0;
        double opt_count = 0;
        reload_vs_optimistic(workdir, sizes[i], reps, &reload_med[i], &opt_med[i], &reload_count, &opt_count);
        check(reload_count == TODAY_SEED + 1 && opt_count == reload_count,
              "both ways count the same logs today (%d, %.0f)", reload_count, opt_count);
    }
    printf("\n     %-10s %22s %22s %10s\n", "logs", "reload (median)", "optimistic (median)", "ratio");
    for (int i = 0; i < 2; i++)
        printf("     %-10d %19.1f µs %19.1f µs %9.0fx\n", sizes[i], reload_med[i], opt_med[i],
               opt_med[i] > 0 ? reload_med[i] / opt_med[i] : 0.0);
    printf("\n");
    check(opt_med[0] < reload_med[0] && opt_med[1] < reload_med[1], "optimistic is faster than reload at both sizes");
}

int main(int argc, char **argv) {
    if (argc == 4 && strcmp(argv[1], "--crash-child") == 0) return crash_child(argv[2], argv[3]);
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc != 4 || (!same(argv[3], "online") && !same(argv[3], "offline") && !same(argv[3], "catchup"))) {
        fprintf(stderr, "usage: %s WORKDIR URL online|offline|catchup   (scripts/demo.sh runs it)\n", argv[0]);
        return 2;
    }
    const char *workdir = argv[1], *url = argv[2], *part = argv[3];
    mkdir(workdir, 0755);
    if (same(part, "online")) part_online(workdir, url);
    else if (same(part, "offline")) part_offline(workdir, url, argv[0]);
    else part_catchup(workdir, url);

    if (g_failed) printf("\n\xE2\x9C\x98 Some checks FAILED.\n");
    else if (same(part, "catchup")) printf("\n\xE2\x9C\x94 All C checks passed.\n");
    return g_failed ? 1 : 0;
}
