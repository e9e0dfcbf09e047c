/* Per-call cost of the C hot path, for callgrind (instruction counts, repeatable on a noisy
 * machine) and for a quick median: a store holding the workload's 1,000 logs with a count view,
 * then REPS calls of each measured step, each in a function of its own so that
 *
 *   valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.out \
 *       --toggle-collect='step_*' /tmp/percall FILE 2000
 *   callgrind_annotate --inclusive=yes /tmp/cg.out | grep step_
 *
 * gives each step's instructions (divide by REPS). Benchmarks/callgrind.sh does exactly that.
 * The steps (every tap is rolled back, untimed, so each sees the same store):
 *   step_tap_json       batch_new + batch_put (JSON) + mutate + batch_free + view_get
 *   step_tap_fields     the same with batch_put_fields
 *   step_put_json       optimist_put (one op, no batch) + view_get: optimistic_tap's way
 *   step_put_fields     optimist_put_fields + view_get
 *   step_commit         commit of a pending one-put mutation
 *   step_get            optimist_get of an existing log + optimist_free
 *   step_get_into       optimist_get_into of the same log into a buffer on the stack (skipped
 *                       with a library from before it: the symbol is weak)
 * Build:
 *   cc -O2 -IInclude -IBenchmarks/C Benchmarks/C/percall.c Benchmarks/C/common.c \
 *      Benchmarks/C/optimistic.c -Lbuild -loptimist -Wl,-rpath,$PWD/build -o /tmp/percall
 *   /tmp/percall mem|FILE [REPS] [batch] [n=LOGS] [buckets]
 *     prints each step's median, ns. "batch" skips the optimist_put steps, for a library from
 *     before them; n=LOGS loads LOGS logs instead of 1,000 (a store's size: n=1000000 opens
 *     in seconds); "buckets" also prints each tap step's median over every 1,000 calls in
 *     order, which shows work left by the load and paid by the first calls after it. */
#define _POSIX_C_SOURCE 200809L
#include "common.h"
#include "optimistic.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int N = 1000;  /* logs loaded (n=LOGS) */

static void ok(int rc, const char *what) {
    if (rc != OPTIMIST_OK) die(what, optimist_last_error());
}

#define STEP __attribute__((noinline)) static

/* The tap through a batch: what optimistic_tap did before optimist_put existed. */
STEP uint64_t step_tap_json(optimist_store *s, const char *day, const char *habit, int seq) {
    char key[32], text[256];
    uint64_t id = 0;
    double v = 0;
    optimist_batch *b = NULL;
    log_key(key, day, habit);
    log_json(text, sizeof text, day, habit, seq);
    ok(optimist_batch_new(&b), "batch_new");
    ok(optimist_batch_put(b, "logs", key, text), "batch_put");
    ok(optimist_mutate(s, b, NULL, &id), "mutate");
    optimist_batch_free(b);
    ok(optimist_view_get(s, "today", &v), "view_get");
    return id;
}

STEP uint64_t step_tap_fields(optimist_store *s, const char *day, const char *habit, int seq) {
    char key[32];
    optimist_field f[5];
    uint64_t id = 0;
    double v = 0;
    optimist_batch *b = NULL;
    log_key(key, day, habit);
    log_fields(f, day, habit, seq);
    ok(optimist_batch_new(&b), "batch_new");
    ok(optimist_batch_put_fields(b, "logs", key, f, 5), "batch_put_fields");
    ok(optimist_mutate(s, b, NULL, &id), "mutate");
    optimist_batch_free(b);
    ok(optimist_view_get(s, "today", &v), "view_get");
    return id;
}

/* The tap as the bench and the demo make it (optimistic_tap): a one-op mutation. */
STEP uint64_t step_put_json(optimist_store *s, const char *day, const char *habit, int seq) {
    uint64_t id = 0;
    optimistic_tap(s, day, habit, seq, 1, &id);
    return id;
}

STEP uint64_t step_put_fields(optimist_store *s, const char *day, const char *habit, int seq) {
    uint64_t id = 0;
    optimistic_tap(s, day, habit, seq, 0, &id);
    return id;
}

STEP void step_commit(optimist_store *s, uint64_t id) { ok(optimist_commit(s, id, NULL), "commit"); }

STEP void step_get(optimist_store *s, const char *key) {
    char *out = NULL;
    ok(optimist_get(s, "logs", key, &out), "get");
    optimist_free(out);
}

#pragma weak optimist_get_into

STEP void step_get_into(optimist_store *s, const char *key) {
    char buf[512];
    size_t len = 0;
    ok(optimist_get_into(s, "logs", key, buf, sizeof buf, &len), "get_into");
    if (len >= sizeof buf) die("get_into", "the record did not fit");
}

typedef uint64_t (*tap_fn)(optimist_store *, const char *, const char *, int);

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s mem|FILE [REPS] [batch] [n=LOGS] [buckets]\n", argv[0]);
        return 2;
    }
    const char *path = strcmp(argv[1], "mem") ? argv[1] : NULL;
    int reps = argc > 2 ? atoi(argv[2]) : 20000, file_backed = 0, seq = 0;
    if (reps < 1) reps = 1;
    int steps = 4, buckets = 0;
    for (int a = 3; a < argc; a++) {
        if (!strcmp(argv[a], "batch")) steps = 2;  /* a library without optimist_put */
        else if (!strncmp(argv[a], "n=", 2) && atoi(argv[a] + 2) > 0) N = atoi(argv[a] + 2);
        else if (!strcmp(argv[a], "buckets")) buckets = 1;
        else { fprintf(stderr, "unknown argument %s\n", argv[a]); return 2; }
    }
    optimist_store *s = optimistic_open(path, N, &file_backed);
    uint64_t *t = malloc(sizeof *t * (size_t)reps);
    if (!t) die("malloc", "samples");
    const char *names[] = {"tap_json", "tap_fields", "put_json", "put_fields"};
    tap_fn taps[] = {step_tap_json, step_tap_fields, step_put_json, step_put_fields};
    for (int k = 0; k < steps; k++) {
        for (int i = 0; i < reps; i++, seq++) {
            char day[16], habit[16];
            tap_pick(seq, N, day, habit);
            uint64_t t0 = now_ns(), id = taps[k](s, day, habit, seq);
            t[i] = now_ns() - t0;
            ok(optimist_rollback(s, id, NULL), "rollback");
        }
        for (int b = 0; buckets && b + 1000 <= reps; b += 1000) {
            printf("  %s calls %d-%d: median %.0f ns\n", names[k], b, b + 999, summarize(t + b, 1000).median * 1000);
        }
        printf("%-12s median %8.0f ns  (%s)\n", names[k], summarize(t, (size_t)reps).median * 1000,
               file_backed ? "file" : "memory");
    }
    for (int i = 0; i < reps; i++, seq++) {
        char key[32], day[16], habit[16], text[256];
        uint64_t id = 0;
        tap_pick(seq, N, day, habit);
        log_key(key, day, habit);
        log_json(text, sizeof text, day, habit, seq);
        optimist_batch *b = NULL;
        ok(optimist_batch_new(&b), "batch_new");
        ok(optimist_batch_put(b, "logs", key, text), "batch_put");
        ok(optimist_mutate(s, b, NULL, &id), "mutate");
        optimist_batch_free(b);
        uint64_t t0 = now_ns();
        step_commit(s, id);
        t[i] = now_ns() - t0;
    }
    printf("%-12s median %8.0f ns\n", "commit", summarize(t, (size_t)reps).median * 1000);
    for (int i = 0; i < N; i++) {  /* every log read once first: the gets below hit the cache */
        char key[32], day[16], habit[16];
        existing_log(i, N, key, day, habit);
        char *out = NULL;
        ok(optimist_get(s, "logs", key, &out), "get");
        optimist_free(out);
    }
    for (int i = 0; i < reps; i++) {
        char key[32], day[16], habit[16];
        existing_log((i * 7919) % N, N, key, day, habit);
        uint64_t t0 = now_ns();
        step_get(s, key);
        t[i] = now_ns() - t0;
    }
    printf("%-12s median %8.0f ns\n", "get", summarize(t, (size_t)reps).median * 1000);
    if (optimist_get_into != NULL) {
        for (int i = 0; i < reps; i++) {
            char key[32], day[16], habit[16];
            existing_log((i * 7919) % N, N, key, day, habit);
            uint64_t t0 = now_ns();
            step_get_into(s, key);
            t[i] = now_ns() - t0;
        }
        printf("%-12s median %8.0f ns\n", "get_into", summarize(t, (size_t)reps).median * 1000);
    }
    free(t);
    ok(optimist_close(s), "close");
    return 0;
}
