/* The habit screen, side by side: after each tap, reload it from SQLite done well, or keep it
 * current with live queries. And the cost of live queries on a tap.
 *
 * The screen is two queries over n logs (key "d<day>/<seq>", {"habit", "day", "minutes"}, 8
 * habits, 20 logs a day):
 *   week:   this week's logs of one habit, newest first, limit 50
 *   totals: minutes per habit today (group by habit, sum)
 *
 * SQLite (WAL, synchronous=NORMAL, prepared statements): logs(key PRIMARY KEY, habit, day,
 * minutes) with indexes on (habit, day) and (day, habit); a tap inserts one log in a
 * transaction, then runs both queries and copies their rows out (what a screen reads).
 * Optimist: both live queries open with a listener each (which takes the deltas' text, as a
 * screen would apply them); a tap is optimist_put_fields of one log.
 *
 * Then the tap's cost with queries open, on a 100k-record collection: mutate + commit of one
 * record with 0 and with 10 live queries open on its collection (filters on two fields,
 * ordered by a third, limit 50, and one group-by), every query affected; the difference over
 * 10 is the cost per affected query.
 *
 * Build:
 *   cc -O2 -IInclude -IBenchmarks/C Benchmarks/C/screen.c Benchmarks/C/common.c \
 *      -Lbuild -loptimist -lsqlite3 -Wl,-rpath,$PWD/build -o /tmp/screen
 *   /tmp/screen [TAPS]      (default 2,000 taps per measurement)
 *   /tmp/screen taps N TAPS QUERIES [INDEXES]   (the tap alone, for callgrind: see taps_only;
 *                                                INDEXES 1 or 2: indexes on habit, then day)
 *   /tmp/screen live N TAPS                     (the screen's live side alone, for callgrind)
 * Prints one JSON line per measurement (common.h's emit). */
#define _POSIX_C_SOURCE 200809L
#include "common.h"

#include <optimist.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PER_DAY 20
#define HABITS 8

static void fail(const char *what) {
    fprintf(stderr, "screen: %s: %s\n", what, optimist_last_error() ? optimist_last_error() : "");
    exit(1);
}

#define OK(call) do { if ((call) != OPTIMIST_OK) fail(#call); } while (0)

static void log_fields(optimist_field f[3], const char *habit, int day, int minutes) {
    f[0] = (optimist_field){.name = "habit", .text = habit, .type = OPTIMIST_FIELD_TEXT};
    f[1] = (optimist_field){.name = "day", .number = day, .type = OPTIMIST_FIELD_NUMBER};
    f[2] = (optimist_field){.name = "minutes", .number = minutes, .type = OPTIMIST_FIELD_NUMBER};
}

/* ---- SQLite ------------------------------------------------------------------------------ */

typedef struct {
    sqlite3 *db;
    sqlite3_stmt *insert, *week, *totals, *begin, *commit, *undo;
} screen_db;

static sqlite3_stmt *prep(sqlite3 *db, const char *sql) {
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK) { fprintf(stderr, "%s\n", sqlite3_errmsg(db)); exit(1); }
    return s;
}

static void run(sqlite3_stmt *s) {
    while (sqlite3_step(s) == SQLITE_ROW) {}
    sqlite3_reset(s);
}

static screen_db sql_open(const char *path, int n) {
    screen_db r;
    unlink(path);
    if (sqlite3_open(path, &r.db) != SQLITE_OK) exit(1);
    sqlite3_exec(r.db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
                       "CREATE TABLE logs(key TEXT PRIMARY KEY, habit TEXT, day INTEGER, minutes INTEGER);"
                       "CREATE INDEX logs_habit_day ON logs(habit, day);"
                       "CREATE INDEX logs_day_habit ON logs(day, habit);", NULL, NULL, NULL);
    r.insert = prep(r.db, "INSERT OR REPLACE INTO logs VALUES (?1, ?2, ?3, ?4)");
    r.week = prep(r.db, "SELECT key, habit, day, minutes FROM logs WHERE habit = ?1 AND day BETWEEN ?2 AND ?3 "
                        "ORDER BY day DESC, key LIMIT 50");
    r.totals = prep(r.db, "SELECT habit, sum(minutes) FROM logs WHERE day = ?1 GROUP BY habit ORDER BY habit");
    r.begin = prep(r.db, "BEGIN");
    r.commit = prep(r.db, "COMMIT");
    r.undo = prep(r.db, "DELETE FROM logs WHERE key = ?1");
    run(r.begin);
    for (int i = 0; i < n; i++) {
        char key[32], habit[16];
        snprintf(key, sizeof key, "d%05d/%06d", i / PER_DAY, i);
        snprintf(habit, sizeof habit, "h%d", i % HABITS);
        sqlite3_bind_text(r.insert, 1, key, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(r.insert, 2, habit, -1, SQLITE_TRANSIENT);
        sqlite3_bind_int(r.insert, 3, i / PER_DAY);
        sqlite3_bind_int(r.insert, 4, 10 + i % 50);
        run(r.insert);
    }
    run(r.commit);
    sqlite3_exec(r.db, "ANALYZE", NULL, NULL, NULL);
    return r;
}

/* The screen's rows, copied out as an app's model would hold them. */
typedef struct {
    char key[32], habit[16];
    int day, minutes;
} row;

static int sql_screen(screen_db *r, const char *habit, int today, row *out) {
    int rows = 0;
    sqlite3_bind_text(r->week, 1, habit, -1, SQLITE_STATIC);
    sqlite3_bind_int(r->week, 2, today - 6);
    sqlite3_bind_int(r->week, 3, today);
    while (sqlite3_step(r->week) == SQLITE_ROW) {
        row *w = &out[rows++];
        snprintf(w->key, sizeof w->key, "%s", (const char *)sqlite3_column_text(r->week, 0));
        snprintf(w->habit, sizeof w->habit, "%s", (const char *)sqlite3_column_text(r->week, 1));
        w->day = sqlite3_column_int(r->week, 2);
        w->minutes = sqlite3_column_int(r->week, 3);
    }
    sqlite3_reset(r->week);
    sqlite3_bind_int(r->totals, 1, today);
    while (sqlite3_step(r->totals) == SQLITE_ROW) {
        row *w = &out[rows++];
        snprintf(w->habit, sizeof w->habit, "%s", (const char *)sqlite3_column_text(r->totals, 0));
        w->minutes = sqlite3_column_int(r->totals, 1);
    }
    sqlite3_reset(r->totals);
    return rows;
}

static int sql_tap(screen_db *r, const char *key, const char *habit, int today, row *out) {
    run(r->begin);
    sqlite3_bind_text(r->insert, 1, key, -1, SQLITE_STATIC);
    sqlite3_bind_text(r->insert, 2, habit, -1, SQLITE_STATIC);
    sqlite3_bind_int(r->insert, 3, today);
    sqlite3_bind_int(r->insert, 4, 25);
    run(r->insert);
    run(r->commit);
    return sql_screen(r, habit, today, out);
}

static void sql_undo(screen_db *r, const char *key) {
    sqlite3_bind_text(r->undo, 1, key, -1, SQLITE_STATIC);
    run(r->undo);
}

/* ---- Optimist ---------------------------------------------------------------------------- */

typedef struct {
    size_t calls, deltas, bytes;
} counter;

static void on_deltas(void *ctx, const char *json, size_t n) {
    counter *c = ctx;
    c->calls++;
    c->deltas += n;
    c->bytes += strlen(json);
}

static optimist_store *store_with_logs(int n) {
    optimist_store *s;
    OK(optimist_open(NULL, &s));
    optimist_batch *b;
    OK(optimist_batch_new(&b));
    for (int i = 0; i < n; i++) {
        char key[32], habit[16];
        optimist_field f[3];
        snprintf(key, sizeof key, "d%05d/%06d", i / PER_DAY, i);
        snprintf(habit, sizeof habit, "h%d", i % HABITS);
        log_fields(f, habit, i / PER_DAY, 10 + i % 50);
        OK(optimist_batch_put_fields(b, "logs", key, f, 3));
    }
    OK(optimist_server_apply(s, b));
    optimist_batch_free(b);
    return s;
}

static optimist_query *open_query(optimist_store *s, const char *spec, counter *c) {
    optimist_query *q;
    uint64_t sub;
    OK(optimist_query_open(s, spec, &q));
    OK(optimist_query_subscribe(q, on_deltas, c, &sub));
    return q;
}

static void emit_row(const char *what, int n, summary sm) {
    char prefix[256];
    snprintf(prefix, sizeof prefix, "\"section\": \"screen\", \"host\": \"c\", \"what\": \"%s\", \"n\": %d", what, n);
    emit(prefix, sm);
}

/* The screen's Optimist side: `taps` taps (optimist_put_fields of one log, each rolled back
 * untimed) on n logs with both live queries open, each with a listener; ns gets each tap's time. */
static summary live_screen(int n, int taps, uint64_t *ns) {
    int today = (n - 1) / PER_DAY;
    const char *habit = "h3";
    optimist_store *s = store_with_logs(n);
    counter cw = {0}, ct = {0};
    char spec[512];
    snprintf(spec, sizeof spec, "{\"collection\": \"logs\", \"where\": {\"and\": [{\"field\": \"habit\", \"eq\": \"%s\"}, "
             "{\"field\": \"day\", \"ge\": %d}, {\"field\": \"day\", \"le\": %d}]}, "
             "\"order\": [{\"field\": \"day\", \"desc\": true}], \"limit\": 50}", habit, today - 6, today);
    optimist_query *week = open_query(s, spec, &cw);
    snprintf(spec, sizeof spec, "{\"collection\": \"logs\", \"where\": {\"field\": \"day\", \"eq\": %d}, "
             "\"group\": {\"by\": [\"habit\"], \"aggregates\": {\"minutes\": \"sum:minutes\"}}}", today);
    optimist_query *totals = open_query(s, spec, &ct);
    for (int i = 0; i < taps; i++) {
        char key[32];
        optimist_field f[3];
        uint64_t id;
        snprintf(key, sizeof key, "d%05d/t%06d", today, i);
        log_fields(f, habit, today, 25);
        uint64_t t0 = now_ns();
        OK(optimist_put_fields(s, "logs", key, f, 3, &id));
        ns[i] = now_ns() - t0;
        OK(optimist_rollback(s, id, NULL));  /* untimed: the next tap sees the same n */
    }
    if (cw.calls < (size_t)taps || ct.calls < (size_t)taps) fail("a live query missed a tap");
    optimist_query_close(week);
    optimist_query_close(totals);
    optimist_close(s);
    return summarize(ns, (size_t)taps);
}

static void screen_side_by_side(int n, int taps) {
    int today = (n - 1) / PER_DAY;
    const char *habit = "h3";
    /* SQLite. */
    char path[64];
    snprintf(path, sizeof path, "/tmp/optimist-screen-%d.sqlite", (int)getpid());
    screen_db r = sql_open(path, n);
    uint64_t *ns = malloc(sizeof(uint64_t) * (size_t)taps);
    row out[64];
    for (int i = 0; i < taps; i++) {
        char key[32];
        snprintf(key, sizeof key, "d%05d/t%06d", today, i);
        uint64_t t0 = now_ns();
        if (sql_tap(&r, key, habit, today, out) < 2) fail("the SQLite screen came back empty");
        ns[i] = now_ns() - t0;
        sql_undo(&r, key);
    }
    summary reload = summarize(ns, (size_t)taps);
    emit_row("sqlite tap + screen reload", n, reload);
    sqlite3_close(r.db);
    unlink(path);

    summary live = live_screen(n, taps, ns);
    emit_row("optimist tap, both live queries maintained", n, live);
    printf("{\"section\": \"screen\", \"host\": \"c\", \"what\": \"ratio\", \"n\": %d, \"reload_over_live\": %.1f}\n",
           n, reload.median / live.median);
    free(ns);
}

/* Mutate + commit of one record, with `queries` live queries open (0 or 10), each affected. */
static summary tap_with_queries(optimist_store *s, int queries, int taps, int n) {
    static int round = 0;  /* new keys every round: a put of an unchanged record changes nothing */
    round++;
    counter c = {0};
    optimist_query *open[10];
    int today = (n - 1) / PER_DAY;
    for (int i = 0; i < queries; i++) {
        char spec[512];
        if (i == queries - 1) {
            snprintf(spec, sizeof spec, "{\"collection\": \"logs\", \"group\": {\"by\": [\"habit\"], "
                     "\"aggregates\": {\"n\": \"count\", \"minutes\": \"sum:minutes\", \"last\": \"max:day\"}}}");
        } else {
            /* Filters on two fields, ordered by a third, limit 50; the tapped record enters each. */
            snprintf(spec, sizeof spec, "{\"collection\": \"logs\", \"where\": {\"and\": [{\"field\": \"habit\", \"eq\": \"h3\"}, "
                     "{\"field\": \"day\", \"ge\": %d}]}, \"order\": [{\"field\": \"minutes\", \"desc\": %s}], \"limit\": 50}",
                     today - i, i % 2 ? "true" : "false");
        }
        open[i] = open_query(s, spec, &c);
    }
    uint64_t *ns = malloc(sizeof(uint64_t) * (size_t)taps);
    for (int i = 0; i < taps; i++) {
        char key[32];
        optimist_field f[3];
        uint64_t id;
        snprintf(key, sizeof key, "d%05d/q%d-%06d", today, round, i);
        log_fields(f, "h3", today, i % 60);
        uint64_t t0 = now_ns();
        OK(optimist_put_fields(s, "logs", key, f, 3, &id));
        OK(optimist_commit(s, id, NULL));
        ns[i] = now_ns() - t0;
    }
    for (int i = 0; i < queries; i++) optimist_query_close(open[i]);
    if (queries > 0 && c.calls < (size_t)taps) {
        fprintf(stderr, "screen: %zu deliveries for %d taps\n", c.calls, taps);
        fail("the live queries missed taps");
    }
    summary sm = summarize(ns, (size_t)taps);
    free(ns);
    return sm;
}

/* `screen taps N TAPS QUERIES`: only mutate + commit with QUERIES live queries open on N logs,
 * for callgrind (the instruction counts in BENCHMARKS.md):
 *   valgrind --tool=callgrind --toggle-collect=optimist_put_fields --toggle-collect=optimist_commit \
 *       /tmp/screen taps 10000 500 10        (and 0 queries, for the difference) */
static int taps_only(int n, int taps, int queries, int indexes) {
    optimist_store *s = store_with_logs(n);
    /* Indexes on the fields a tap writes: each confirmed tap then also updates their entries. */
    if (indexes > 0) OK(optimist_index_define(s, "logs", "habit"));
    if (indexes > 1) OK(optimist_index_define(s, "logs", "day"));
    summary sm = tap_with_queries(s, queries, taps, n);
    printf("mutate+commit, %d live queries, %d indexes, n %d: median %.3f us\n", queries, indexes, n, sm.median);
    optimist_close(s);
    return 0;
}

int main(int argc, char **argv) {
    if ((argc == 5 || argc == 6) && strcmp(argv[1], "taps") == 0)
        return taps_only(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]), argc == 6 ? atoi(argv[5]) : 0);
    if (argc == 4 && strcmp(argv[1], "live") == 0) {
        /* The screen's live side alone, for callgrind (--toggle-collect=optimist_put_fields). */
        int n = atoi(argv[2]), taps = atoi(argv[3]);
        uint64_t *ns = malloc(sizeof(uint64_t) * (size_t)(taps > 0 ? taps : 1));
        summary sm = live_screen(n, taps > 0 ? taps : 1, ns);
        printf("the screen's live tap, n %d: median %.3f us\n", n, sm.median);
        free(ns);
        return 0;
    }
    int taps = argc > 1 ? atoi(argv[1]) : 2000;
    if (taps < 10) taps = 10;
    int sizes[] = {1000, 10000, 100000};
    for (int i = 0; i < 3; i++) screen_side_by_side(sizes[i], taps);

    int n = 100000;
    optimist_store *s = store_with_logs(n);
    /* Alternated, so drift on a shared machine falls on both. */
    summary none = tap_with_queries(s, 0, taps, n);
    summary ten = tap_with_queries(s, 10, taps, n);
    summary none2 = tap_with_queries(s, 0, taps, n);
    summary ten2 = tap_with_queries(s, 10, taps, n);
    emit_row("mutate+commit, no live query", n, none);
    emit_row("mutate+commit, 10 live queries", n, ten);
    emit_row("mutate+commit, no live query (again)", n, none2);
    emit_row("mutate+commit, 10 live queries (again)", n, ten2);
    printf("{\"section\": \"screen\", \"host\": \"c\", \"what\": \"per affected live query\", \"n\": %d, "
           "\"us\": [%.3f, %.3f]}\n", n, (ten.median - none.median) / 10, (ten2.median - none2.median) / 10);
    optimist_close(s);
    return 0;
}
