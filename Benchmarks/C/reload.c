#define _POSIX_C_SOURCE 200809L
#include "reload.h"
#include "common.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct reload_db {
    sqlite3 *db;
    sqlite3_stmt *insert, *select_all, *delete_one, *begin, *commit;
    sqlite3_stmt *insert_lean, *select_lean, *delete_lean;
    int n;
    char today[16];
};

static void check(reload_db *r, int rc, const char *what) {
    if (rc != SQLITE_OK) die(what, sqlite3_errmsg(r->db));
}

static sqlite3_stmt *prepare(reload_db *r, const char *sql) {
    sqlite3_stmt *s = NULL;
    check(r, sqlite3_prepare_v2(r->db, sql, -1, &s, NULL), sql);
    return s;
}

static void step(reload_db *r, sqlite3_stmt *s) {
    int rc = sqlite3_step(s);
    sqlite3_reset(s);
    if (rc != SQLITE_DONE && rc != SQLITE_ROW) die("step", sqlite3_errmsg(r->db));
}

static void insert_row(reload_db *r, const char *key, const char *habit, const char *day, int seq) {
    sqlite3_bind_text(r->insert, 1, key, -1, SQLITE_STATIC);
    sqlite3_bind_text(r->insert, 2, habit, -1, SQLITE_STATIC);
    sqlite3_bind_text(r->insert, 3, day, -1, SQLITE_STATIC);
    sqlite3_bind_int64(r->insert, 4, LOG_AT + seq);
    sqlite3_bind_text(r->insert, 5, LOG_NOTE, -1, SQLITE_STATIC);
    step(r, r->insert);
}

/* Day "d000123" and habit "h001" / "t000045" as the lean table's integers. */
static void insert_lean_row(reload_db *r, long long id, const char *habit, const char *day, int seq) {
    sqlite3_bind_int64(r->insert_lean, 1, id);
    sqlite3_bind_int(r->insert_lean, 2, atoi(habit + 1));
    sqlite3_bind_int(r->insert_lean, 3, atoi(day + 1));
    sqlite3_bind_int64(r->insert_lean, 4, LOG_AT + seq);
    step(r, r->insert_lean);
}

reload_db *reload_open(const char *path, int n) {
    reload_db *r = calloc(1, sizeof *r);
    char buf[4096];
    const char *suffixes[] = {"", "-wal", "-shm"};
    for (int i = 0; i < 3; i++) { snprintf(buf, sizeof buf, "%s%s", path, suffixes[i]); unlink(buf); }
    r->n = n;
    snprintf(r->today, sizeof r->today, "d%06d", today_index(n));
    check(r, sqlite3_open(path, &r->db), "open");
    check(r, sqlite3_exec(r->db, "PRAGMA journal_mode=WAL", NULL, NULL, NULL), "wal");
    check(r, sqlite3_exec(r->db, "PRAGMA synchronous=NORMAL", NULL, NULL, NULL), "synchronous");
    check(r, sqlite3_exec(r->db, "CREATE TABLE logs(id TEXT PRIMARY KEY, habit TEXT NOT NULL, day TEXT NOT NULL, "
                                 "done INTEGER NOT NULL, at INTEGER NOT NULL, note TEXT NOT NULL)", NULL, NULL, NULL), "create");
    r->insert = prepare(r, "INSERT INTO logs(id, habit, day, done, at, note) VALUES(?1, ?2, ?3, 1, ?4, ?5)");
    r->select_all = prepare(r, "SELECT id, habit, day, done, at, note FROM logs");
    /* The lean table: the five narrow (integer) columns the screen needs, rowid as the id. */
    check(r, sqlite3_exec(r->db, "CREATE TABLE lean_logs(id INTEGER PRIMARY KEY, habit INTEGER NOT NULL, "
                                 "day INTEGER NOT NULL, done INTEGER NOT NULL, at INTEGER NOT NULL)", NULL, NULL, NULL), "create");
    r->insert_lean = prepare(r, "INSERT INTO lean_logs(id, habit, day, done, at) VALUES(?1, ?2, ?3, 1, ?4)");
    r->select_lean = prepare(r, "SELECT id, habit, day, done, at FROM lean_logs");
    r->delete_lean = prepare(r, "DELETE FROM lean_logs WHERE id = ?1");
    r->delete_one = prepare(r, "DELETE FROM logs WHERE id = ?1");
    r->begin = prepare(r, "BEGIN IMMEDIATE");
    r->commit = prepare(r, "COMMIT");
    check(r, sqlite3_exec(r->db, "BEGIN", NULL, NULL, NULL), "begin");
    for (int i = 0; i < n; i++) {
        char key[32], day[16], habit[16];
        existing_log(i, n, key, day, habit);
        insert_row(r, key, habit, day, i);
        insert_lean_row(r, i, habit, day, i);
    }
    check(r, sqlite3_exec(r->db, "COMMIT", NULL, NULL, NULL), "commit");
    check(r, sqlite3_exec(r->db, "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL, NULL), "checkpoint");
    return r;
}

/* SELECT every log, touching each column as a list screen would, and count today's done. */
static int count_today(reload_db *r) {
    int count = 0;
    size_t tlen = strlen(r->today);
    for (;;) {
        int rc = sqlite3_step(r->select_all);
        if (rc == SQLITE_DONE) break;
        if (rc != SQLITE_ROW) die("select", sqlite3_errmsg(r->db));
        (void)sqlite3_column_text(r->select_all, 0);
        (void)sqlite3_column_text(r->select_all, 1);
        (void)sqlite3_column_int64(r->select_all, 4);
        (void)sqlite3_column_text(r->select_all, 5);
        if (!sqlite3_column_int(r->select_all, 3)) continue;
        const unsigned char *day = sqlite3_column_text(r->select_all, 2);
        if ((size_t)sqlite3_column_bytes(r->select_all, 2) == tlen && memcmp(day, r->today, tlen) == 0) count++;
    }
    sqlite3_reset(r->select_all);
    return count;
}

/* The lean read: every row of the narrow table, `done` and `day` first, the other columns
 * touched only for the rows a list shows as done. */
static int count_today_lean(reload_db *r) {
    int count = 0, today = atoi(r->today + 1);
    for (;;) {
        int rc = sqlite3_step(r->select_lean);
        if (rc == SQLITE_DONE) break;
        if (rc != SQLITE_ROW) die("select", sqlite3_errmsg(r->db));
        if (!sqlite3_column_int(r->select_lean, 3)) continue;
        (void)sqlite3_column_int64(r->select_lean, 0);
        (void)sqlite3_column_int(r->select_lean, 1);
        (void)sqlite3_column_int64(r->select_lean, 4);
        if (sqlite3_column_int(r->select_lean, 2) == today) count++;
    }
    sqlite3_reset(r->select_lean);
    return count;
}

static void write_log(reload_db *r, const char *day, const char *habit, int seq) {
    char key[32];
    log_key(key, day, habit);
    step(r, r->begin);
    insert_row(r, key, habit, day, seq);
    step(r, r->commit);
}

int reload_tap(reload_db *r, const char *day, const char *habit, int seq) {
    write_log(r, day, habit, seq);
    return count_today(r);
}

int reload_tap_lean(reload_db *r, const char *day, const char *habit, int seq) {
    step(r, r->begin);
    insert_lean_row(r, (long long)r->n + seq, habit, day, seq);
    step(r, r->commit);
    return count_today_lean(r);
}

int reload_tap_split(reload_db *r, const char *day, const char *habit, int seq,
                     unsigned long long *write_ns, unsigned long long *read_ns) {
    char key[32];
    uint64_t t0 = now_ns();
    log_key(key, day, habit);
    step(r, r->begin);
    insert_row(r, key, habit, day, seq);
    step(r, r->commit);
    uint64_t t1 = now_ns();
    int c = count_today(r);
    *write_ns = t1 - t0;
    *read_ns = now_ns() - t1;
    return c;
}

void reload_undo_lean(reload_db *r, int seq) {
    sqlite3_bind_int64(r->delete_lean, 1, (long long)r->n + seq);
    step(r, r->delete_lean);
}

void reload_undo(reload_db *r, int seq) {
    char key[32], day[16], habit[16];
    tap_pick(seq, r->n, day, habit);
    log_key(key, day, habit);
    sqlite3_bind_text(r->delete_one, 1, key, -1, SQLITE_STATIC);
    step(r, r->delete_one);
}

void reload_close(reload_db *r) {
    sqlite3_stmt *all[] = {r->insert, r->select_all, r->delete_one, r->begin, r->commit,
                           r->insert_lean, r->select_lean, r->delete_lean};
    for (int i = 0; i < 8; i++) sqlite3_finalize(all[i]);
    sqlite3_close(r->db);
    free(r);
}
