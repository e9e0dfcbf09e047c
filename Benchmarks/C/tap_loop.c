/* The C tap alone, in a loop, for profilers: n = 1,000 confirmed logs and a count view, then
 * REPS taps (format the key, build the batch with the record as typed fields or as JSON,
 * mutate, read the view), each rolled back. Prints the median tap. Build and run:
 *
 *   cc -O2 -IInclude -IBenchmarks/C Benchmarks/C/tap_loop.c Benchmarks/C/common.c \
 *      -Lbuild -loptimist -Wl,-rpath,$PWD/build -o /tmp/tap_loop
 *   /tmp/tap_loop fields|json mem|FILE [REPS]
 *   valgrind --tool=callgrind --toggle-collect=optimist_mutate /tmp/tap_loop fields mem 5000
 *   perf record -g /tmp/tap_loop fields /tmp/t.optimist 200000
 *
 * (The per-call instruction counts in the notes on issue 6 came from the callgrind form:
 * divide a function's inclusive count by REPS.) */
#define _POSIX_C_SOURCE 200809L
#include "common.h"
#include "optimist.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void ok(int rc, const char *what) {
    if (rc != OPTIMIST_OK) die(what, optimist_last_error());
}

int main(int argc, char **argv) {
    if (argc < 3 || (strcmp(argv[1], "fields") && strcmp(argv[1], "json"))) {
        fprintf(stderr, "usage: %s fields|json mem|FILE [REPS]\n", argv[0]);
        return 2;
    }
    int json = !strcmp(argv[1], "json"), n = 1000, reps = argc > 3 ? atoi(argv[3]) : 100000;
    const char *path = strcmp(argv[2], "mem") ? argv[2] : NULL;
    if (reps < 1) reps = 1;
    if (path) {
        char p[4096];
        const char *suffixes[] = {"", "-wal", "-shm"};
        for (int i = 0; i < 3; i++) { snprintf(p, sizeof p, "%s%s", path, suffixes[i]); unlink(p); }
    }
    optimist_store *s = NULL;
    optimist_batch *b = NULL;
    ok(optimist_open(path, &s), "open");
    ok(optimist_batch_new(&b), "batch_new");
    for (int i = 0; i < n; i++) {
        char key[32], day[16], habit[16], text[256];
        existing_log(i, n, key, day, habit);
        log_json(text, sizeof text, day, habit, i);
        ok(optimist_batch_put(b, "logs", key, text), "batch_put");
    }
    ok(optimist_server_apply(s, b), "server_apply");
    optimist_batch_free(b);
    char prefix[32];
    snprintf(prefix, sizeof prefix, "d%06d/", today_index(n));
    ok(optimist_view_define(s, "today", "logs", prefix, "count"), "view_define");
    ok(optimist_flush(s), "flush");

    uint64_t *t = malloc(sizeof *t * (size_t)reps);
    if (!t) die("malloc", "samples");
    for (int i = 0; i < reps; i++) {
        char key[32], day[16], habit[16], text[256];
        uint64_t id = 0;
        double v = 0;
        tap_pick(i, n, day, habit);
        uint64_t t0 = now_ns();
        log_key(key, day, habit);
        ok(optimist_batch_new(&b), "batch_new");
        if (json) {
            log_json(text, sizeof text, day, habit, i);
            ok(optimist_batch_put(b, "logs", key, text), "batch_put");
        } else {
            optimist_field f[] = {{"habit", habit, 0, OPTIMIST_FIELD_TEXT}, {"day", day, 0, OPTIMIST_FIELD_TEXT},
                                  {"done", NULL, 1, OPTIMIST_FIELD_NUMBER},
                                  {"at", NULL, (double)(LOG_AT + i), OPTIMIST_FIELD_NUMBER},
                                  {"note", LOG_NOTE, 0, OPTIMIST_FIELD_TEXT}};
            ok(optimist_batch_put_fields(b, "logs", key, f, 5), "batch_put_fields");
        }
        ok(optimist_mutate(s, b, NULL, &id), "mutate");
        optimist_batch_free(b);
        ok(optimist_view_get(s, "today", &v), "view_get");
        t[i] = now_ns() - t0;
        ok(optimist_rollback(s, id, NULL), "rollback");
    }
    summary sm = summarize(t, (size_t)reps);
    printf("%s tap (%s store): median %.3f us, p99 %.3f us over %d taps\n", argv[1], path ? "file" : "memory",
           sm.median, sm.p99, reps);
    free(t);
    ok(optimist_close(s), "close");
    return 0;
}
