/* A tap's worst case as pending mutations pile up (a sync that cannot send): TAPS taps with
 * optimist_put on 1,000 records of an in-memory store, none committed; prints each tap over
 * 1 ms (a table regrown inside the tap's hold) and the longest.
 *
 *   cc -O2 -IInclude Benchmarks/C/backlog.c -Lbuild -loptimist -Wl,-rpath,$PWD/build -o /tmp/backlog
 *   /tmp/backlog [TAPS]      (default 600000)
 */
#define _POSIX_C_SOURCE 200809L
#include "optimist.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

int main(int argc, char **argv) {
    long taps = argc > 1 ? atol(argv[1]) : 600000;
    optimist_store *s = NULL;
    if (optimist_open(NULL, &s) != OPTIMIST_OK) {
        fprintf(stderr, "open: %s\n", optimist_last_error());
        return 1;
    }
    uint64_t longest = 0;
    long at = 0, over = 0;
    for (long i = 0; i < taps; i++) {
        char key[32], json[128];
        snprintf(key, sizeof key, "r%04ld", i % 1000);
        snprintf(json, sizeof json, "{\"n\":%ld}", i);
        uint64_t id, t0 = now_ns();
        if (optimist_put(s, "items", key, json, &id) != OPTIMIST_OK) {
            fprintf(stderr, "put: %s\n", optimist_last_error());
            return 1;
        }
        uint64_t took = now_ns() - t0;
        if (took > 1000000) {
            over++;
            printf("tap %ld (%ld pending) took %.1f ms\n", i, i, took / 1e6);
        }
        if (took > longest) {
            longest = took;
            at = i;
        }
    }
    printf("{\"taps\":%ld,\"over_1ms\":%ld,\"longest_ms\":%.2f,\"at\":%ld}\n", taps, over, longest / 1e6, at);
    optimist_close(s);
    return 0;
}
