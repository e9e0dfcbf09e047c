#define _POSIX_C_SOURCE 200809L
#include "optimistic.h"
#include "common.h"

#include <stdio.h>
#include <unistd.h>

static void ok(int rc, const char *what) {
    if (rc != OPTIMIST_OK) die(what, optimist_last_error());
}

static void unlink_store(const char *path) {
    char buf[4096];
    const char *suffixes[] = {"", "-wal", "-shm", "-journal"};
    for (int i = 0; i < 4; i++) { snprintf(buf, sizeof buf, "%s%s", path, suffixes[i]); unlink(buf); }
}

optimist_store *optimistic_open(const char *path, int n, int *file_backed) {
    optimist_store *s = NULL;
    if (path) unlink_store(path);
    *file_backed = path && optimist_open(path, &s) == OPTIMIST_OK;
    if (!*file_backed && path) {
        fprintf(stderr, "c: file-backed store unavailable (%s); using memory\n", optimist_last_error());
    }
    if (!*file_backed) ok(optimist_open(NULL, &s), "open memory");
    optimist_batch *b = NULL;
    ok(optimist_batch_new(&b), "batch_new");
    int in_batch = 0;
    for (int i = 0; i < n; i++) {
        char key[32], day[16], habit[16], json[256];
        existing_log(i, n, key, day, habit);
        log_json(json, sizeof json, day, habit, i);
        ok(optimist_batch_put(b, "logs", key, json), "batch_put");
        if (++in_batch == 10000 || i == n - 1) {
            ok(optimist_server_apply(s, b), "server_apply");
            optimist_batch_free(b);
            ok(optimist_batch_new(&b), "batch_new");
            in_batch = 0;
        }
    }
    optimist_batch_free(b);
    char prefix[32];
    snprintf(prefix, sizeof prefix, "d%06d/", today_index(n));
    ok(optimist_view_define(s, "today", "logs", prefix, "count"), "view_define");
    ok(optimist_flush(s), "flush");
    return s;
}

void log_fields(optimist_field f[5], const char *day, const char *habit, long long seq) {
    f[0] = (optimist_field){"habit", habit, 0, OPTIMIST_FIELD_TEXT};
    f[1] = (optimist_field){"day", day, 0, OPTIMIST_FIELD_TEXT};
    f[2] = (optimist_field){"done", NULL, 1, OPTIMIST_FIELD_NUMBER};
    f[3] = (optimist_field){"at", NULL, (double)(LOG_AT + seq), OPTIMIST_FIELD_NUMBER};
    f[4] = (optimist_field){"note", LOG_NOTE, 0, OPTIMIST_FIELD_TEXT};
}

double optimistic_tap(optimist_store *s, const char *day, const char *habit, int seq, int json, uint64_t *id) {
    char key[32];
    log_key(key, day, habit);
    if (json) {
        char text[256];
        log_json(text, sizeof text, day, habit, seq);
        ok(optimist_put(s, "logs", key, text, id), "put");
    } else {
        optimist_field f[5];
        log_fields(f, day, habit, seq);
        ok(optimist_put_fields(s, "logs", key, f, 5, id), "put_fields");
    }
    double v = 0;
    ok(optimist_view_get(s, "today", &v), "view_get");
    return v;
}
