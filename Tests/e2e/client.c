/*
** One end-to-end client process in C, through the library's built-in sync: the same workload
** and the same two modes as pyclient.py (see there).
**
**     client run   STORE URL NAME INC SEED MAX_BATCH
**     client final STORE URL NAME DUMP
**
** The test compiles it with: cc -std=c11 -I Include client.c -L DIR -loptimist -Wl,-rpath,DIR
*/
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "optimist.h"

#define FLUSH_EVERY 5
#define PROGRESS_S 5
#define FINAL_IDLE_S 900
#define LIFETIME_S 240

static const char *const COLLECTIONS[] = {"shared", "log", "last", "pc", "pcmark"};

static void die(const char *what, int rc) {
    fprintf(stderr, "client: %s: %s (%d): %s\n", what, optimist_errstr(rc), rc, optimist_last_error());
    exit(2);
}

#define CHECK(what, call)               \
    do {                                \
        int rc_ = (call);               \
        if (rc_ != OPTIMIST_OK) die(what, rc_); \
    } while (0)

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void sleep_ms(double ms) {
    struct timespec t = {(time_t)(ms / 1000), (long)((ms - 1000.0 * (double)(time_t)(ms / 1000)) * 1e6)};
    nanosleep(&t, NULL);
}

/* A small seeded generator (xorshift64*), so a client's pace is reproducible. */
static uint64_t rng_state;
static double rng_unit(void) {
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (double)((rng_state * 2685821657736338717ULL) >> 11) / 9007199254740992.0;
}

static optimist_sync_options sync_options(const char *url, uint32_t max_batch, uint32_t timeout_ms) {
    optimist_sync_options o = OPTIMIST_SYNC_OPTIONS_INIT;
    o.url = url;
    o.pull_interval_ms = 100;
    o.max_batch = max_batch;
    o.timeout_ms = timeout_ms;
    o.backoff_base_ms = 50;
    o.backoff_max_ms = 400;
    return o;
}

static int run(const char *path, const char *url, const char *name, int inc, uint64_t seed, uint32_t max_batch) {
    rng_state = seed * 0x9E3779B97F4A7C15ULL + 1;
    pid_t parent = getppid();
    optimist_store *s;
    CHECK("open", optimist_open(path, &s));
    optimist_sync_options o = sync_options(url, max_batch, 1500);
    CHECK("sync_start", optimist_sync_start(s, &o));
    char *cid;
    CHECK("client_id", optimist_client_id(s, &cid));
    printf("started %s\n", cid);
    fflush(stdout);
    optimist_free(cid);
    double deadline = now_s() + LIFETIME_S;
    char key[256], json[256];
    for (long k = 1; k < 10000000; k++) {
        snprintf(key, sizeof key, "%s/%03d-%06ld", name, inc, k);
        optimist_batch *b;
        CHECK("batch_new", optimist_batch_new(&b));
        CHECK("incr", optimist_batch_incr(b, "shared", "total", "n", 1));
        snprintf(json, sizeof json, "{\"c\":\"%s\",\"inc\":%d,\"k\":%ld}", name, inc, k);
        CHECK("put", optimist_batch_put(b, "log", key, json));
        snprintf(json, sizeof json, "{\"at\":{\"inc\":%d,\"k\":%ld}}", inc, k);
        CHECK("patch", optimist_batch_patch(b, "last", name, json));
        CHECK("mutate", optimist_mutate(s, b, NULL, NULL));
        optimist_batch_free(b);
        if (k % 3 == 0) {
            CHECK("batch_new", optimist_batch_new(&b));
            CHECK("incr", optimist_batch_incr(b, "pc", name, "n", 1));
            CHECK("incr", optimist_batch_incr(b, "pc", name, "sum", (double)k));
            snprintf(json, sizeof json, "{\"k\":%ld}", k);
            CHECK("put", optimist_batch_put(b, "pcmark", key, json));
            CHECK("mutate", optimist_mutate(s, b, NULL, NULL));
            optimist_batch_free(b);
        }
        if (k % FLUSH_EVERY == 0) {
            CHECK("flush", optimist_flush(s));
            printf("flushed %ld\n", k);
            fflush(stdout);
            if (now_s() > deadline || getppid() != parent) break;
        }
        sleep_ms(4.0 + 12.0 * rng_unit());
    }
    return optimist_close(s) == OPTIMIST_OK ? 0 : 2;
}

static int final(const char *path, const char *url, const char *name, const char *dump) {
    optimist_store *s;
    CHECK("open", optimist_open(path, &s));
    /* The library's default timeout, and progress lines until idle: see pyclient.py's final. */
    optimist_sync_options o = sync_options(url, 100, 10000);
    CHECK("sync_start", optimist_sync_start(s, &o));
    int idle = 0;
    pid_t parent = getppid();
    time_t deadline = time(NULL) + FINAL_IDLE_S;
    CHECK("sync_wait_idle", optimist_sync_wait_idle(s, PROGRESS_S * 1000, &idle));
    while (!idle && time(NULL) < deadline && getppid() == parent) {
        char *progress;
        CHECK("sync_status", optimist_sync_status(s, &progress));
        printf("progress %s\n", progress);
        fflush(stdout);
        optimist_free(progress);
        CHECK("sync_wait_idle", optimist_sync_wait_idle(s, PROGRESS_S * 1000, &idle));
    }
    printf("idle %d\n", idle);
    fflush(stdout);
    char line[64];
    if (!fgets(line, sizeof line, stdin) || strncmp(line, "check", 5) != 0) {
        fprintf(stderr, "client %s: expected 'check' on stdin\n", name);
        optimist_close(s);
        return 2;
    }
    CHECK("sync_now", optimist_sync_now(s));
    CHECK("sync_wait_idle", optimist_sync_wait_idle(s, 60000, &idle));
    char *status, *cid;
    CHECK("sync_status", optimist_sync_status(s, &status));
    CHECK("client_id", optimist_client_id(s, &cid));
    FILE *f = fopen(dump, "w");
    if (!f) {
        perror(dump);
        return 2;
    }
    fprintf(f, "{\"idle\":%s,\"client_id\":\"%s\",\"status\":%s,\"scans\":{", idle ? "true" : "false", cid, status);
    for (size_t i = 0; i < sizeof COLLECTIONS / sizeof *COLLECTIONS; i++) {
        char *scan;
        CHECK("scan", optimist_scan(s, COLLECTIONS[i], NULL, 0, &scan));
        fprintf(f, "%s\"%s\":%s", i ? "," : "", COLLECTIONS[i], scan);
        optimist_free(scan);
    }
    fprintf(f, "}}\n");
    if (fclose(f) != 0) {
        perror(dump);
        return 2;
    }
    optimist_free(status);
    optimist_free(cid);
    printf("done\n");
    fflush(stdout);
    return optimist_close(s) == OPTIMIST_OK ? 0 : 2;
}

int main(int argc, char **argv) {
    if (argc == 8 && strcmp(argv[1], "run") == 0)
        return run(argv[2], argv[3], argv[4], atoi(argv[5]), strtoull(argv[6], NULL, 10), (uint32_t)atoi(argv[7]));
    if (argc == 6 && strcmp(argv[1], "final") == 0) return final(argv[2], argv[3], argv[4], argv[5]);
    fprintf(stderr, "usage: client run STORE URL NAME INC SEED MAX_BATCH | client final STORE URL NAME DUMP\n");
    return 2;
}
