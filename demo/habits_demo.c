/*
 * habits_demo.c: the habit-tracker story, played through liboptimist's C ABI.
 *
 * A habit app keeps habits ("run", "read", "water") and daily logs keyed by ISO date, e.g.
 * "2026-11-22/run". Every tap must show at once, survive a crash, be undone exactly when the
 * server refuses it, and give way to the server's canonical value when it arrives. Each
 * section below plays one of those moments against a SQLite-backed store file and checks the
 * outcome, so the demo doubles as an end-to-end test: it exits non-zero if any check fails.
 *
 * Usage: habits_demo [WORKDIR]        (default demo/.work; the store files go there)
 *        habits_demo --crash-child PATH   (internal: the process section 4 kills with SIGKILL)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
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

#include "optimist.h"

/* ------------------------------------------------------------------------------------------
 * Reporting: every check prints a check mark or a cross; a cross makes the exit status 1.
 * ---------------------------------------------------------------------------------------- */

static int g_failed;

static void section(const char *title, const char *why) {
    printf("\n━━ %s\n", title);
    if (why) printf("   %s\n", why);
}

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

static const char *keep(char *owned) {
    static char ring[8][512];
    static int next;
    char *slot = ring[next++ % 8];
    snprintf(slot, sizeof ring[0], "%s", owned);
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

static int same(const char *a, const char *b) { return strcmp(a, b) == 0; }

/* Shows one record: visible value, and the confirmed one when they differ. */
static void show(optimist_store *s, const char *label, const char *coll, const char *key) {
    const char *v = visible(s, coll, key);
    const char *c = confirmed(s, coll, key);
    if (same(v, c))
        printf("     %-26s %s\n", label, v);
    else
        printf("     %-26s %s   (server has %s, pending)\n", label, v, c);
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
 * Section 4's child: a phone app that makes changes, flushes, and is then killed (SIGKILL).
 * ---------------------------------------------------------------------------------------- */

static int crash_child(const char *path) {
    optimist_store *s = NULL;
    MUST(optimist_open(path, &s));
    char *client = NULL;
    MUST(optimist_client_id(s, &client));

    /* Tomorrow's run, with the double-tap guard key the UI uses for "complete today's run". */
    optimist_batch *b = batch();
    MUST(optimist_batch_put(b, "logs", "2026-11-23/run", "{\"done\":true,\"minutes\":28}"));
    MUST(optimist_batch_incr(b, "habits", "run", "streak", 1));
    uint64_t a = mutate(s, b, "2026-11-23/run", OPTIMIST_POLICY_ROLLBACK);

    b = batch();
    MUST(optimist_batch_incr(b, "logs", "2026-11-23/water", "glasses", 1));
    uint64_t w = mutate(s, b, NULL, OPTIMIST_POLICY_ROLLBACK);

    /* A rename the user wants kept on screen even if the server refuses it ("keep" policy). */
    b = batch();
    MUST(optimist_batch_patch(b, "habits", "read", "{\"name\":\"Read 30 pages\"}"));
    uint64_t r = mutate(s, b, NULL, OPTIMIST_POLICY_KEEP);

    /* The sender takes all three; the water one times out (transient), the rename is refused
     * for good (permanent, kept visible as failed), the run one is still on the wire. */
    uint64_t got = 0;
    char *ops = NULL;
    for (int i = 0; i < 3; i++) {
        MUST(optimist_outbox_next(s, 5000, &got, &ops));
        optimist_free(ops);
    }
    MUST(optimist_fail(s, w, 1, "timeout", 5000));
    MUST(optimist_fail(s, r, 0, "422 name too long for the server", 5000));

    MUST(optimist_flush(s));
    printf("READY %s %llu %llu %llu %d %d %d\n", client, (unsigned long long)a, (unsigned long long)w,
           (unsigned long long)r, status_of(s, a), status_of(s, w), status_of(s, r));
    fflush(stdout);
    optimist_free(client);
    /* Wait to be killed: no close, no exit handlers, nothing after the flush. */
    for (;;) pause();
}

/* ------------------------------------------------------------------------------------------
 * Section 5: reload versus optimistic, measured on this machine.
 * ---------------------------------------------------------------------------------------- */

static const char *const HABITS[] = {"run", "read", "water", "stretch", "journal"};

/* The key of the i-th log: five habits a day, days counted from 2020-01-01. */
static void log_key(char *out, size_t cap, int i) {
    time_t t = 1577836800 + (time_t)(i / 5) * 86400;
    struct tm tm;
    gmtime_r(&t, &tm);
    char day[16];
    strftime(day, sizeof day, "%Y-%m-%d", &tm);
    snprintf(out, cap, "%s/%s", day, HABITS[i % 5]);
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void progress(const char *what, int done, int total) {
    if (!isatty(STDOUT_FILENO)) return;
    printf("\r     %-44s %4d/%d", what, done, total);
    if (done == total) printf("\r%78s\r", "");
    fflush(stdout);
}

#define SQL(db, text)                                                                        \
    do {                                                                                     \
        char *err_ = NULL;                                                                   \
        if (sqlite3_exec(db, text, NULL, NULL, &err_) != SQLITE_OK) {                        \
            printf("   \xE2\x9C\x98 FAILED: sqlite: %s\n", err_ ? err_ : "?");               \
            exit(1);                                                                         \
        }                                                                                    \
    } while (0)

/* The reload way: write the log to SQLite, then SELECT every log and recount. Returns the
 * median time per tap in µs; `*count_out` gets the final count (so the work is not skipped). */
static double bench_reload(const char *path, int n, int reps, long *count_out) {
    unlink(path);
    sqlite3 *db = NULL;
    if (sqlite3_open(path, &db) != SQLITE_OK) {
        printf("   \xE2\x9C\x98 FAILED: cannot open %s\n", path);
        exit(1);
    }
    /* What a careful app would use: WAL, synchronous=NORMAL (no fsync per commit). */
    SQL(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;");
    SQL(db, "CREATE TABLE logs(key TEXT PRIMARY KEY, json TEXT NOT NULL)");
    sqlite3_stmt *ins = NULL, *sel = NULL;
    sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO logs(key, json) VALUES(?1, ?2)", -1, &ins, NULL);
    sqlite3_prepare_v2(db, "SELECT key, json FROM logs ORDER BY key", -1, &sel, NULL);
    char key[64];
    SQL(db, "BEGIN");
    for (int i = 0; i < n; i++) {
        log_key(key, sizeof key, i);
        sqlite3_bind_text(ins, 1, key, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(ins, 2, "{\"done\":true,\"minutes\":30}", -1, SQLITE_STATIC);
        sqlite3_step(ins);
        sqlite3_reset(ins);
    }
    SQL(db, "COMMIT");

    double *t = malloc(sizeof(double) * (size_t)reps);
    long count = 0;
    for (int r = 0; r < reps; r++) {
        log_key(key, sizeof key, n + r);
        double t0 = now_us();
        sqlite3_bind_text(ins, 1, key, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(ins, 2, "{\"done\":true,\"minutes\":30}", -1, SQLITE_STATIC);
        if (sqlite3_step(ins) != SQLITE_DONE) {
            printf("   \xE2\x9C\x98 FAILED: sqlite insert: %s\n", sqlite3_errmsg(db));
            exit(1);
        }
        sqlite3_reset(ins);
        count = 0;
        while (sqlite3_step(sel) == SQLITE_ROW) {
            const char *json = (const char *)sqlite3_column_text(sel, 1);
            if (json && strstr(json, "\"done\":true")) count++;
        }
        sqlite3_reset(sel);
        t[r] = now_us() - t0;
        if (r % 20 == 19 || r == reps - 1) progress("reload (SQLite write + SELECT all + count)", r + 1, reps);
    }
    sqlite3_finalize(ins);
    sqlite3_finalize(sel);
    sqlite3_close(db);
    double m = median(t, reps);
    free(t);
    *count_out = count;
    return m;
}

/* The optimistic way: one mutate on a file-backed store, then the count from a view (O(1)).
 * Also reports how long the final flush took to make all those taps durable. */
static double bench_optimist(const char *path, int n, int reps, double *count_out, double *flush_ms) {
    unlink(path);
    optimist_store *s = NULL;
    MUST(optimist_open(path, &s));
    optimist_batch *seed = batch();
    char key[64];
    for (int i = 0; i < n; i++) {
        log_key(key, sizeof key, i);
        MUST(optimist_batch_put(seed, "logs", key, "{\"done\":true,\"minutes\":30}"));
    }
    MUST(optimist_server_apply(s, seed));
    optimist_batch_free(seed);
    MUST(optimist_view_define(s, "logs_done", "logs", "", "count"));
    MUST(optimist_flush(s));

    double *t = malloc(sizeof(double) * (size_t)reps);
    double count = 0;
    for (int r = 0; r < reps; r++) {
        log_key(key, sizeof key, n + r);
        double t0 = now_us();
        optimist_batch *b = NULL;
        MUST(optimist_batch_new(&b));
        /* The record as typed fields: no JSON to format or parse (reads back as the JSON above). */
        optimist_field f[] = {{"done", NULL, 1, OPTIMIST_FIELD_BOOL}, {"minutes", NULL, 30, OPTIMIST_FIELD_NUMBER}};
        MUST(optimist_batch_put_fields(b, "logs", key, f, 2));
        uint64_t id = 0;
        MUST(optimist_mutate(s, b, NULL, &id));
        optimist_batch_free(b);
        MUST(optimist_view_get(s, "logs_done", &count));
        t[r] = now_us() - t0;
        if (r % 20 == 19 || r == reps - 1) progress("optimistic (mutate + view read)", r + 1, reps);
    }
    double f0 = now_us();
    MUST(optimist_flush(s));
    *flush_ms = (now_us() - f0) / 1e3;
    MUST(optimist_close(s));
    double m = median(t, reps);
    free(t);
    *count_out = count;
    return m;
}

/* ------------------------------------------------------------------------------------------
 * The story.
 * ---------------------------------------------------------------------------------------- */

static void remove_store(const char *path) {
    const char *suffixes[] = {"", "-wal", "-shm", "-journal"};
    char p[1024];
    for (size_t i = 0; i < sizeof suffixes / sizeof *suffixes; i++) {
        snprintf(p, sizeof p, "%s%s", path, suffixes[i]);
        unlink(p);
    }
}

int main(int argc, char **argv) {
    if (argc >= 3 && strcmp(argv[1], "--crash-child") == 0) return crash_child(argv[2]);
    setvbuf(stdout, NULL, _IOLBF, 0);

    const char *workdir = argc >= 2 ? argv[1] : "demo/.work";
    mkdir(workdir, 0755);
    char path[1024];
    snprintf(path, sizeof path, "%s/habits.optimist", workdir);
    remove_store(path);

    printf("Optimist %s: the habit tracker, through the C library\n", optimist_version());
    printf("Store file: %s\n", path);

    optimist_store *s = NULL;
    MUST(optimist_open(path, &s));

    /* What the server already knows: three habits and yesterday's logs. */
    optimist_batch *b = batch();
    MUST(optimist_batch_put(b, "habits", "run", "{\"name\":\"Morning run\",\"streak\":4}"));
    MUST(optimist_batch_put(b, "habits", "read", "{\"name\":\"Read 20 pages\",\"streak\":9}"));
    MUST(optimist_batch_put(b, "habits", "water", "{\"goal\":8,\"name\":\"Water\"}"));
    MUST(optimist_batch_put(b, "logs", "2026-11-21/run", "{\"done\":true,\"minutes\":30}"));
    MUST(optimist_batch_put(b, "logs", "2026-11-21/read", "{\"done\":true,\"pages\":20}"));
    MUST(optimist_server_apply(s, b));
    optimist_batch_free(b);
    /* Today's progress ring: how many logs exist for 2026-11-22, kept up to date in O(1). */
    MUST(optimist_view_define(s, "today", "logs", "2026-11-22/", "count"));
    note("Loaded from the server: habits run, read, water; logs of 2026-11-21. Today's ring = %.0f.",
         view(s, "today"));

    /* ---- 1 -------------------------------------------------------------------------------- */
    section("1. Complete a habit: it shows at once",
            "The tap writes today's log and bumps the streak in one mutation; the UI reads it back at once.");
    b = batch();
    MUST(optimist_batch_put(b, "logs", "2026-11-22/run", "{\"done\":true,\"minutes\":32}"));
    MUST(optimist_batch_incr(b, "habits", "run", "streak", 1));
    uint64_t m_run = 0;
    double t0 = now_us();
    int rc = optimist_mutate(s, b, "2026-11-22/run", &m_run);
    double t1 = now_us();
    MUST(rc);
    char *json = NULL;
    rc = optimist_get(s, "logs", "2026-11-22/run", &json);
    double t2 = now_us();
    MUST(rc);
    const char *log_run = keep(json);
    optimist_batch_free(b);
    note("mutate took %.1f µs, the get after it %.1f µs (the process's first calls; the disk write",
         t1 - t0, t2 - t1);
    note("happens in the background; warmed-up medians in section 5).");
    show(s, "logs/2026-11-22/run", "logs", "2026-11-22/run");
    show(s, "habits/run", "habits", "run");
    check(same(log_run, "{\"done\":true,\"minutes\":32}"), "get returns the new log");
    check(pending(s, "logs", "2026-11-22/run"), "is_pending(logs/2026-11-22/run) is true (the UI shows a sync badge)");
    check(same(visible(s, "habits", "run"), "{\"name\":\"Morning run\",\"streak\":5}"), "the streak shows 5 at once");
    check(view(s, "today") == 1, "today's ring counts 1 log");
    b = batch();
    MUST(optimist_batch_put(b, "logs", "2026-11-22/run", "{\"done\":true,\"minutes\":32}"));
    MUST(optimist_batch_incr(b, "habits", "run", "streak", 1));
    uint64_t dup = 0;
    rc = optimist_mutate(s, b, "2026-11-22/run", &dup);
    optimist_batch_free(b);
    check(rc == OPTIMIST_DUPLICATE && dup == m_run,
          "a double tap is refused as DUPLICATE of mutation #%llu; the streak stays %s",
          (unsigned long long)m_run, visible(s, "habits", "run"));

    /* ---- 2 -------------------------------------------------------------------------------- */
    section("2. A failed write is undone exactly",
            "Two more changes wait: A completes \"read\", B renames \"run\". The server refuses A for good.");
    b = batch();
    MUST(optimist_batch_put(b, "logs", "2026-11-22/read", "{\"done\":true,\"pages\":20}"));
    MUST(optimist_batch_incr(b, "habits", "read", "streak", 1));
    uint64_t m_a = mutate(s, b, "2026-11-22/read", OPTIMIST_POLICY_ROLLBACK);
    b = batch();
    MUST(optimist_batch_patch(b, "habits", "run", "{\"name\":\"Evening run\"}"));
    uint64_t m_b = mutate(s, b, NULL, OPTIMIST_POLICY_ROLLBACK);
    note("Before (A = #%llu, B = #%llu, %llu mutations pending):", (unsigned long long)m_a,
         (unsigned long long)m_b, (unsigned long long)pending_count(s));
    show(s, "habits/read", "habits", "read");
    show(s, "logs/2026-11-22/read", "logs", "2026-11-22/read");
    show(s, "habits/run", "habits", "run");
    note("today's ring = %.0f", view(s, "today"));

    uint64_t sent[2] = {0, 0};
    char *ops = NULL;
    MUST(optimist_outbox_next(s, 1000, &sent[0], &ops));
    note("outbox hands out #%llu: %s", (unsigned long long)sent[0], keep(ops));
    MUST(optimist_outbox_next(s, 1000, &sent[1], &ops));
    note("outbox hands out #%llu: %s", (unsigned long long)sent[1], keep(ops));
    check(sent[0] == m_run && sent[1] == m_a, "the outbox hands them out oldest first");
    MUST(optimist_fail(s, m_a, 0, "403: habit 'read' was archived on another device", 1200));
    note("The server answers 403 for A; the sender reports a permanent failure.");
    note("After:");
    show(s, "habits/read", "habits", "read");
    show(s, "logs/2026-11-22/read", "logs", "2026-11-22/read");
    show(s, "habits/run", "habits", "run");
    check(status_of(s, m_a) == OPTIMIST_ROLLED_BACK, "A is rolled_back (default policy)");
    check(same(visible(s, "habits", "read"), "{\"name\":\"Read 20 pages\",\"streak\":9}") &&
              same(visible(s, "logs", "2026-11-22/read"), "(none)") && !pending(s, "habits", "read"),
          "A is gone exactly: streak back to 9, no log, no badge");
    check(same(visible(s, "habits", "run"), "{\"name\":\"Evening run\",\"streak\":5}") &&
              status_of(s, m_b) == OPTIMIST_PENDING,
          "B's rename is kept, and so is the earlier streak +1 on the same record");
    check(view(s, "today") == 1, "today's ring is back to 1");

    /* ---- 3 -------------------------------------------------------------------------------- */
    section("3. The server's canonical value wins, pending changes stay on top",
            "The server accepts the run but computes the streak itself (it saw runs logged on the watch).");
    note("Before:");
    show(s, "habits/run", "habits", "run");
    show(s, "logs/2026-11-22/run", "logs", "2026-11-22/run");
    b = batch();
    MUST(optimist_batch_put(b, "logs", "2026-11-22/run", "{\"done\":true,\"minutes\":32,\"source\":\"phone\"}"));
    MUST(optimist_batch_patch(b, "habits", "run", "{\"streak\":12}"));
    MUST(optimist_commit(s, m_run, b));
    optimist_batch_free(b);
    note("commit #%llu with the server's ops: put the log with \"source\", patch streak = 12.",
         (unsigned long long)m_run);
    note("After:");
    show(s, "habits/run", "habits", "run");
    show(s, "logs/2026-11-22/run", "logs", "2026-11-22/run");
    check(same(confirmed(s, "habits", "run"), "{\"name\":\"Morning run\",\"streak\":12}"),
          "confirmed streak is the server's 12, not our predicted 5");
    check(same(visible(s, "habits", "run"), "{\"name\":\"Evening run\",\"streak\":12}") && pending(s, "habits", "run"),
          "visible = server value with the pending rename B re-applied on top (still badged)");
    check(!pending(s, "logs", "2026-11-22/run") &&
              same(visible(s, "logs", "2026-11-22/run"), "{\"done\":true,\"minutes\":32,\"source\":\"phone\"}"),
          "the log is confirmed as the server wrote it");

    note("You tap \"+1 glass\"; meanwhile the watch syncs 5 glasses to the server, which pushes them to us.");
    b = batch();
    MUST(optimist_batch_incr(b, "logs", "2026-11-22/water", "glasses", 1));
    uint64_t m_w = mutate(s, b, NULL, OPTIMIST_POLICY_ROLLBACK);
    show(s, "logs/2026-11-22/water", "logs", "2026-11-22/water");
    b = batch();
    MUST(optimist_batch_put(b, "logs", "2026-11-22/water", "{\"glasses\":5}"));
    MUST(optimist_server_apply(s, b));
    optimist_batch_free(b);
    note("server_apply from the watch: put logs/2026-11-22/water {\"glasses\":5}");
    show(s, "logs/2026-11-22/water", "logs", "2026-11-22/water");
    check(same(visible(s, "logs", "2026-11-22/water"), "{\"glasses\":6}") &&
              same(confirmed(s, "logs", "2026-11-22/water"), "{\"glasses\":5}"),
          "the pending +1 is rebased on the watch's 5: you see 6, the server has 5");
    MUST(optimist_commit(s, m_b, NULL));
    MUST(optimist_commit(s, m_w, NULL));
    note("The server then accepts B and the +1 as sent.");
    show(s, "habits/run", "habits", "run");
    show(s, "logs/2026-11-22/water", "logs", "2026-11-22/water");
    check(pending_count(s) == 0 && same(confirmed(s, "habits", "run"), "{\"name\":\"Evening run\",\"streak\":12}") &&
              same(confirmed(s, "logs", "2026-11-22/water"), "{\"glasses\":6}"),
          "nothing pending; confirmed = visible everywhere");
    check(view(s, "today") == 2, "today's ring counts 2 logs (run, water)");
    MUST(optimist_close(s));
    s = NULL;

    /* ---- 4 -------------------------------------------------------------------------------- */
    section("4. A restart with the outbox intact",
            "A child process opens the store file, makes 3 changes, flushes, and is killed with SIGKILL.");
    int fds[2];
    if (pipe(fds) != 0) { perror("pipe"); return 1; }
    pid_t pid = fork();
    if (pid < 0) { perror("fork"); return 1; }
    if (pid == 0) {
        dup2(fds[1], STDOUT_FILENO);
        close(fds[0]);
        close(fds[1]);
        execl("/proc/self/exe", argv[0], "--crash-child", path, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    /* Never hang the demo on a child that got stuck: give it 60 s to report. */
    struct pollfd pfd = {.fd = fds[0], .events = POLLIN};
    int ready = poll(&pfd, 1, 60000) == 1;
    FILE *from_child = ready ? fdopen(fds[0], "r") : NULL;
    if (!from_child) close(fds[0]);
    char line[512] = {0};
    char client_before[128] = {0};
    unsigned long long id_run = 0, id_water = 0, id_rename = 0;
    int st_run = 0, st_water = 0, st_rename = 0;
    int got = from_child && fgets(line, sizeof line, from_child) &&
              sscanf(line, "READY %127s %llu %llu %llu %d %d %d", client_before, &id_run, &id_water, &id_rename,
                     &st_run, &st_water, &st_rename) == 7;
    kill(pid, SIGKILL);
    int wstatus = 0;
    waitpid(pid, &wstatus, 0);
    if (from_child) fclose(from_child);
    if (!got) {
        check(0, "the child reported its mutations (got: %s)", line[0] ? line : "nothing");
        return 1;
    }
    note("Child (pid %d) before the kill: client id %s", (int)pid, client_before);
    note("  #%llu complete 2026-11-23/run   %s", id_run, status_name(st_run));
    note("  #%llu +1 glass 2026-11-23       %s (transient failure, waiting for its retry)", id_water,
         status_name(st_water));
    note("  #%llu rename read (keep policy) %s (refused for good, kept on screen)", id_rename, status_name(st_rename));
    check(WIFSIGNALED(wstatus) && WTERMSIG(wstatus) == SIGKILL, "the child died of SIGKILL (no close, no exit)");

    MUST(optimist_open(path, &s));
    char *client_after = NULL;
    MUST(optimist_client_id(s, &client_after));
    note("Reopened %s:", path);
    check(same(client_after, client_before), "same client id %s (the server's idempotency key half)", client_after);
    optimist_free(client_after);
    check(pending_count(s) == 3, "3 mutations pending (got %llu)", (unsigned long long)pending_count(s));
    int sr = status_of(s, id_run), sw = status_of(s, id_water), sn = status_of(s, id_rename);
    check(sr == OPTIMIST_PENDING, "#%llu was %s, is %s: it was on the wire when the app died, so it is sent again",
          id_run, status_name(st_run), status_name(sr));
    check(sw == st_water, "#%llu is still %s", id_water, status_name(sw));
    check(sn == st_rename, "#%llu is still %s", id_rename, status_name(sn));
    show(s, "logs/2026-11-23/run", "logs", "2026-11-23/run");
    show(s, "habits/run", "habits", "run");
    show(s, "logs/2026-11-23/water", "logs", "2026-11-23/water");
    show(s, "habits/read", "habits", "read");
    check(same(visible(s, "logs", "2026-11-23/run"), "{\"done\":true,\"minutes\":28}") &&
              same(visible(s, "habits", "run"), "{\"name\":\"Evening run\",\"streak\":13}") &&
              same(visible(s, "logs", "2026-11-23/water"), "{\"glasses\":1}") &&
              same(visible(s, "habits", "read"), "{\"name\":\"Read 30 pages\",\"streak\":9}"),
          "the screen looks exactly as before the crash");
    check(status_of(s, m_run) == OPTIMIST_COMMITTED && status_of(s, m_a) == OPTIMIST_ROLLED_BACK,
          "ended mutations remember how they ended (#%llu committed, #%llu rolled_back)",
          (unsigned long long)m_run, (unsigned long long)m_a);

    b = batch();
    MUST(optimist_batch_put(b, "logs", "2026-11-23/run", "{\"done\":true,\"minutes\":28}"));
    rc = optimist_mutate(s, b, "2026-11-23/run", &dup);
    optimist_batch_free(b);
    check(rc == OPTIMIST_DUPLICATE && dup == id_run, "the double-tap guard survived too: DUPLICATE of #%llu", id_run);

    uint64_t out1 = 0, out2 = 0, out3 = 0;
    int64_t later = 5000 + 60000; /* past any backoff */
    MUST(optimist_outbox_next(s, later, &out1, &ops));
    note("outbox hands out #%llu: %s", (unsigned long long)out1, keep(ops));
    MUST(optimist_outbox_next(s, later, &out2, &ops));
    note("outbox hands out #%llu: %s", (unsigned long long)out2, keep(ops));
    rc = optimist_outbox_next(s, later, &out3, &ops);
    check(out1 == id_run && out2 == id_water && rc == OPTIMIST_NOTFOUND,
          "the outbox hands out the run and the water again; the failed rename waits for the user");
    MUST(optimist_retry(s, id_rename));
    MUST(optimist_outbox_next(s, later, &out3, &ops));
    optimist_free(ops);
    check(out3 == id_rename, "after retry (the user taps \"try again\"), the rename goes out too (#%llu)",
          (unsigned long long)out3);
    b = batch();
    MUST(optimist_batch_incr(b, "logs", "2026-11-23/water", "glasses", 1));
    uint64_t fresh = mutate(s, b, NULL, OPTIMIST_POLICY_ROLLBACK);
    check(fresh > id_rename, "new ids keep increasing after the restart (#%llu)", (unsigned long long)fresh);
    MUST(optimist_close(s));

    /* ---- 5 -------------------------------------------------------------------------------- */
    section("5. Reload vs optimistic, measured on this machine",
            "Per tap: reload = SQLite INSERT + SELECT every log + recount (WAL, synchronous=NORMAL);\n"
            "   optimistic = optimist_mutate (the record as typed fields) on a file-backed store + view read.\n"
            "   300 taps each, medians; Benchmarks/run measures the same more carefully (BENCHMARKS.md).");
    const int reps = 300;
    const int sizes[] = {1000, 10000};
    double reload_med[2], opt_med[2], flush_ms[2];
    for (int i = 0; i < 2; i++) {
        char p1[1024], p2[1024];
        snprintf(p1, sizeof p1, "%s/reload-%d.sqlite", workdir, sizes[i]);
        snprintf(p2, sizeof p2, "%s/bench-%d.optimist", workdir, sizes[i]);
        remove_store(p1);
        remove_store(p2);
        note("measuring N = %d logs ...", sizes[i]);
        long sql_count = 0;
        double opt_count = 0;
        reload_med[i] = bench_reload(p1, sizes[i], reps, &sql_count);
        opt_med[i] = bench_optimist(p2, sizes[i], reps, &opt_count, &flush_ms[i]);
        check(sql_count == sizes[i] + reps && opt_count == sizes[i] + reps,
              "both ways end with the same count (%ld, %.0f)", sql_count, opt_count);
    }
    printf("\n     %-10s %22s %22s %10s\n", "logs", "reload (median)", "optimistic (median)", "ratio");
    for (int i = 0; i < 2; i++)
        printf("     %-10d %19.1f µs %19.1f µs %9.0fx\n", sizes[i], reload_med[i], opt_med[i],
               opt_med[i] > 0 ? reload_med[i] / opt_med[i] : 0.0);
    printf("\n");
    note("The optimistic store wrote those taps in the background; the flush after %d taps took %.1f ms / %.1f ms.",
         reps, flush_ms[0], flush_ms[1]);
    check(opt_med[0] < reload_med[0] && opt_med[1] < reload_med[1], "optimistic is faster than reload at both sizes");

    printf("\n%s\n", g_failed ? "\xE2\x9C\x98 Some checks FAILED." : "\xE2\x9C\x94 All C checks passed.");
    return g_failed ? 1 : 0;
}
