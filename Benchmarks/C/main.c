/* optimist C bench: reload against optimistic apply, rollback cost, and a breakdown of both
 * flows. Prints JSON lines on stdout (collected by Benchmarks/run), progress on stderr.
 *
 *   optimist-c-bench [--quick|--full] [--dir DIR] [--only reload|breakdown|rollback] [--n N]
 *
 * --n N runs the reload section at that one n (of 1,000, 10,000, 100,000, 1,000,000) only.
 *
 * Built without -DHAVE_OPTIMIST (no library yet) it runs the SQLite reload baseline only. */
#define _POSIX_C_SOURCE 200809L
#include "common.h"
#include "reload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef HAVE_OPTIMIST
#include "optimistic.h"
#endif

static int full = 0;
static const char *only = NULL;  /* one section, for quick reruns while tuning */
static int only_n = 0;           /* one n of the reload section (--n), 0: each */
static const char *dir = "/tmp/optimist-bench";

static uint64_t *samples(size_t n) {
    uint64_t *p = malloc(n * sizeof *p);
    if (!p) die("malloc", "samples");
    return p;
}

#ifdef HAVE_OPTIMIST
static void ok(int rc, const char *what) {
    if (rc != OPTIMIST_OK) die(what, optimist_last_error());
}

#endif

/* Both flows at n, interleaved in BLOCKS blocks (some reload taps, then some optimistic taps,
 * and again), so a change in the shared machine's load hits both sides alike; warm-up taps of
 * both first. */
#define BLOCKS 10
static void reload_vs_optimistic(int n) {
    int reload_reps = full ? (3000000 / n > 600 ? 600 : 3000000 / n) : (2000000 / n > 500 ? 500 : 2000000 / n);
    if (reload_reps < 20) reload_reps = 20;
    reload_reps = (reload_reps + BLOCKS - 1) / BLOCKS * BLOCKS;
    int warm = reload_reps / 10 > 2 ? reload_reps / 10 : 2;
    char path[4096], prefix[256];
    fprintf(stderr, "c reload/optimistic n=%d\n", n);

    snprintf(path, sizeof path, "%s/reload-c-%d.db", dir, n);
    reload_db *r = reload_open(path, n);
    uint64_t *rs[2] = {samples((size_t)reload_reps), samples((size_t)reload_reps)};
    int count = 0, lean_count = 0, rseq = 0, rdone[2] = {0, 0};
#ifdef HAVE_OPTIMIST
    int opt_reps = full ? 10000 : 5000, owarm = opt_reps / 10, file_backed = 0, oseq = 0, odone[2] = {0, 0};
    snprintf(path, sizeof path, "%s/opt-c-%d.optimist", dir, n);
    optimist_store *st = optimistic_open(path, n, &file_backed);
    uint64_t *os[2] = {samples((size_t)opt_reps), samples((size_t)opt_reps)};
    double v = 0;
#endif
    for (int block = -1; block < BLOCKS; block++) {  /* block -1: warm-up, discarded */
        int rn = block < 0 ? warm : reload_reps / BLOCKS;
        /* Both reloads in each block: the heavy one (every column), then the lean one. */
        for (int lean = 0; lean < 2; lean++) {
            for (int i = 0; i < rn; i++, rseq++) {
                char day[16], habit[16];
                tap_pick(rseq, n, day, habit);
                uint64_t t0 = now_ns();
                if (lean) lean_count = reload_tap_lean(r, day, habit, rseq); else count = reload_tap(r, day, habit, rseq);
                uint64_t t = now_ns() - t0;
                if (lean) reload_undo_lean(r, rseq); else reload_undo(r, rseq);
                if (block >= 0) rs[lean][rdone[lean]++] = t;
            }
        }
#ifdef HAVE_OPTIMIST
        /* Both optimistic variants in each block: fields (the headline), then JSON. */
        int on = block < 0 ? owarm : opt_reps / BLOCKS;
        for (int json = 0; json < 2; json++) {
            for (int i = 0; i < on; i++, oseq++) {
                char day[16], habit[16];
                tap_pick(oseq, n, day, habit);
                uint64_t id = 0, t0 = now_ns();
                v = optimistic_tap(st, day, habit, oseq, json, &id);
                uint64_t t = now_ns() - t0;
                ok(optimist_rollback(st, id, NULL), "rollback");
                if (block >= 0) os[json][odone[json]++] = t;
            }
        }
#endif
    }
    reload_close(r);
    if (lean_count != count) {
        fprintf(stderr, "c: the heavy reload counted %d, the lean one %d\n", count, lean_count);
        exit(1);
    }
    const char *reloads[] = {"reload", "reload_lean"};
    for (int lean = 0; lean < 2; lean++) {
        snprintf(prefix, sizeof prefix,
                 "\"section\":\"reload_vs_optimistic\",\"host\":\"c\",\"kind\":\"%s\",\"n\":%d,\"store\":\"sqlite\",\"today_count\":%d",
                 reloads[lean], n, count);
        emit(prefix, summarize(rs[lean], (size_t)rdone[lean]));
        free(rs[lean]);
    }
#ifdef HAVE_OPTIMIST
    ok(optimist_close(st), "close");
    if ((int)v != count) {
        fprintf(stderr, "c: reload counted %d, the view says %g\n", count, v);
        exit(1);
    }
    const char *kinds[] = {"optimistic", "optimistic_json"}, *apis[] = {"fields", "json"};
    for (int json = 0; json < 2; json++) {
        snprintf(prefix, sizeof prefix,
                 "\"section\":\"reload_vs_optimistic\",\"host\":\"c\",\"kind\":\"%s\",\"api\":\"%s\",\"n\":%d,\"store\":\"%s\",\"today_count\":%d",
                 kinds[json], apis[json], n, file_backed ? "file" : "memory", (int)v);
        emit(prefix, summarize(os[json], (size_t)odone[json]));
        free(os[json]);
    }
#endif
}

#ifdef HAVE_OPTIMIST
/* Where an optimistic tap's time goes (n logs), for both ways of giving the record: preparing
 * it (the key and the fields, or the key and the JSON text), building the batch
 * (optimist_batch_new + put_fields / put, the JSON parse for the latter), mutate, the view read,
 * freeing the batch; each on a file-backed and on an in-memory store, to show the background
 * writer's share. */
static void breakdown(int n) {
    int reps = full ? 20000 : 5000;
    char path[4096], prefix[256];
    const char *names[] = {"prepare_record", "batch_new_put", "mutate", "view_get", "batch_free", "tap_total"};
    for (int json = 0; json < 2; json++) {
        for (int mem = 0; mem < 2; mem++) {
            int file_backed = 0;
            snprintf(path, sizeof path, "%s/breakdown-c-%d.optimist", dir, n);
            optimist_store *st = optimistic_open(mem ? NULL : path, n, &file_backed);
            uint64_t *t[6];
            for (int i = 0; i < 6; i++) t[i] = samples((size_t)reps);
            for (int s = 0; s < reps + reps / 10; s++) {
                char key[32], day[16], habit[16], text[256];
                optimist_field f[5];
                optimist_batch *b = NULL;
                tap_pick(s, n, day, habit);
                uint64_t id = 0, t0 = now_ns();
                log_key(key, day, habit);
                if (json) log_json(text, sizeof text, day, habit, s); else log_fields(f, day, habit, s);
                uint64_t t1 = now_ns();
                ok(optimist_batch_new(&b), "batch_new");
                ok(json ? optimist_batch_put(b, "logs", key, text) : optimist_batch_put_fields(b, "logs", key, f, 5), "put");
                uint64_t t2 = now_ns();
                ok(optimist_mutate(st, b, NULL, &id), "mutate");
                uint64_t t3 = now_ns();
                double v;
                ok(optimist_view_get(st, "today", &v), "view_get");
                uint64_t t4 = now_ns();
                optimist_batch_free(b);
                uint64_t t5 = now_ns();
                ok(optimist_rollback(st, id, NULL), "rollback");
                if (s >= reps / 10) {
                    int k = s - reps / 10;
                    t[0][k] = t1 - t0; t[1][k] = t2 - t1; t[2][k] = t3 - t2; t[3][k] = t4 - t3; t[4][k] = t5 - t4;
                    t[5][k] = t5 - t0;
                }
            }
            ok(optimist_close(st), "close");
            for (int i = 0; i < 6; i++) {
                snprintf(prefix, sizeof prefix,
                         "\"section\":\"breakdown\",\"host\":\"c\",\"part\":\"%s\",\"api\":\"%s\",\"n\":%d,\"store\":\"%s\"",
                         names[i], json ? "json" : "fields", n, file_backed ? "file" : "memory");
                emit(prefix, summarize(t[i], (size_t)reps));
                free(t[i]);
            }
        }
    }
}

/* Rollback cost through the C ABI: `records` confirmed records, `pending` unrelated pending
 * mutations; each sample times one mutate and its rollback. In memory, like the Swift core. */
static void rollback_cost(int records, int pending) {
    int reps = full ? 20000 : 5000, warm = 500;
    optimist_store *s = NULL;
    ok(optimist_open(NULL, &s), "open");
    optimist_batch *b = NULL;
    ok(optimist_batch_new(&b), "batch_new");
    char key[32], json[256], prefix[256];
    for (int i = 0; i < records; i++) {
        snprintf(key, sizeof key, "r%07d", i);
        log_json(json, sizeof json, "d000001", "h001", i);
        ok(optimist_batch_put(b, "items", key, json), "batch_put");
        if ((i + 1) % 10000 == 0 || i == records - 1) {
            ok(optimist_server_apply(s, b), "server_apply");
            optimist_batch_free(b);
            ok(optimist_batch_new(&b), "batch_new");
        }
    }
    for (int j = 0; j < pending; j++) {
        optimist_batch *p = NULL;
        snprintf(key, sizeof key, "q%06d", j);
        log_json(json, sizeof json, "d999999", "q", j);
        ok(optimist_batch_new(&p), "batch_new");
        ok(optimist_batch_put(p, "items", key, json), "batch_put");
        uint64_t id;
        ok(optimist_mutate(s, p, NULL, &id), "mutate");
        optimist_batch_free(p);
    }
    /* A pool of ready batches on random existing records: only the store calls are timed. */
    enum { POOL = 256 };
    optimist_batch *pool[POOL];
    uint64_t x = 42;
    for (int i = 0; i < POOL; i++) {
        x ^= x >> 12; x ^= x << 25; x ^= x >> 27;
        snprintf(key, sizeof key, "r%07d", (int)((x * 0x2545F4914F6CDD1Dull) % (uint64_t)records));
        log_json(json, sizeof json, "d000001", "h001", i);
        ok(optimist_batch_new(&pool[i]), "batch_new");
        ok(optimist_batch_put(pool[i], "items", key, json), "batch_put");
    }
    uint64_t *tm = samples((size_t)reps), *tr = samples((size_t)reps);
    for (int s2 = 0; s2 < reps + warm; s2++) {
        uint64_t id = 0, t0 = now_ns();
        ok(optimist_mutate(s, pool[s2 % POOL], NULL, &id), "mutate");
        uint64_t t1 = now_ns();
        ok(optimist_rollback(s, id, NULL), "rollback");
        uint64_t t2 = now_ns();
        if (s2 >= warm) { tm[s2 - warm] = t1 - t0; tr[s2 - warm] = t2 - t1; }
    }
    for (int i = 0; i < POOL; i++) optimist_batch_free(pool[i]);
    optimist_batch_free(b);
    ok(optimist_close(s), "close");
    const char *ops[] = {"mutate", "rollback"};
    uint64_t *all[] = {tm, tr};
    for (int i = 0; i < 2; i++) {
        snprintf(prefix, sizeof prefix,
                 "\"section\":\"rollback\",\"host\":\"c\",\"impl\":\"optimist\",\"op\":\"%s\",\"records\":%d,\"pending\":%d,\"correct_with_concurrent\":true",
                 ops[i], records, pending);
        emit(prefix, summarize(all[i], (size_t)reps));
        free(all[i]);
    }
}
#endif

/* The reload's two halves at n: the write transaction and the SELECT-all recount. */
static void reload_breakdown(int n) {
    int reps = full ? 1000 : 300;
    char path[4096], prefix[256];
    snprintf(path, sizeof path, "%s/reload-split-c-%d.db", dir, n);
    reload_db *r = reload_open(path, n);
    uint64_t *tw = samples((size_t)reps), *tr = samples((size_t)reps);
    for (int s = 0; s < reps + 20; s++) {
        unsigned long long w, rd;
        char day[16], habit[16];
        tap_pick(s, n, day, habit);
        reload_tap_split(r, day, habit, s, &w, &rd);
        reload_undo(r, s);
        if (s >= 20) { tw[s - 20] = w; tr[s - 20] = rd; }
    }
    reload_close(r);
    const char *names[] = {"reload_write_txn", "reload_select_all"};
    uint64_t *all[] = {tw, tr};
    for (int i = 0; i < 2; i++) {
        snprintf(prefix, sizeof prefix, "\"section\":\"breakdown\",\"host\":\"c\",\"part\":\"%s\",\"n\":%d,\"store\":\"sqlite\"", names[i], n);
        emit(prefix, summarize(all[i], (size_t)reps));
        free(all[i]);
    }
}

int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick")) full = 0;
        else if (!strcmp(argv[i], "--full")) full = 1;
        else if (!strcmp(argv[i], "--dir") && i + 1 < argc) dir = argv[++i];
        else if (!strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
        else if (!strcmp(argv[i], "--n") && i + 1 < argc) only_n = atoi(argv[++i]);
        else { fprintf(stderr, "unknown argument %s\n", argv[i]); return 2; }
    }
    mkdir(dir, 0755);
    int ns[] = {1000, 10000, 100000, 1000000};
#define SECTION(name) (!only || !strcmp(only, name))
    if (SECTION("reload")) {
        for (int i = 0; i < 4; i++) {
            if (only_n ? ns[i] == only_n : i < (full ? 4 : 3)) reload_vs_optimistic(ns[i]);
        }
    }
    if (SECTION("breakdown")) reload_breakdown(1000);
#ifdef HAVE_OPTIMIST
    if (SECTION("breakdown")) breakdown(1000);
    if (SECTION("rollback")) { rollback_cost(100000, 0); rollback_cost(100000, 10000); }
#else
    fprintf(stderr, "c: built without liboptimist: reload baseline only\n");
#endif
    return 0;
}

