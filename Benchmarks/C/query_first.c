/* A live query's first evaluation: N logs in a fresh store (in memory, or a store file that is
 * closed and opened again, so its records are on disk), then the time optimist_query_open
 * takes for "this week's" 1,000 logs ordered by day, newest first. Without an index it reads
 * the whole collection.
 *
 *   cc -O2 -IInclude Benchmarks/C/query_first.c -Lbuild -loptimist -Wl,-rpath,$PWD/build -o /tmp/query_first
 *   /tmp/query_first 100000; /tmp/query_first 100000 /tmp/q.optimist; /tmp/query_first 1000000 /tmp/q1m.optimist */
#define _POSIX_C_SOURCE 200809L
#include <optimist.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static double now_ms(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e3 + t.tv_nsec / 1e6; }
int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: query_first N [STORE_FILE]\n"); return 2; }
    int n = atoi(argv[1]); const char *path = argc > 2 ? argv[2] : NULL;
    optimist_store *s; optimist_batch *b;
    if (path) remove(path);
    optimist_open(path, &s); optimist_batch_new(&b);
    for (int i = 0; i < n; i++) {
        char key[32], json[96];
        snprintf(key, sizeof key, "d%05d/%07d", i / 20, i);
        snprintf(json, sizeof json, "{\"habit\":\"h%d\",\"day\":%d,\"minutes\":%d}", i % 8, i / 20, 10 + i % 50);
        optimist_batch_put(b, "logs", key, json);
    }
    optimist_server_apply(s, b); optimist_batch_free(b); optimist_flush(s);
    if (path) { optimist_close(s); optimist_open(path, &s); }
    char spec[256];
    snprintf(spec, sizeof spec, "{\"collection\":\"logs\",\"where\":{\"field\":\"day\",\"ge\":%d},\"order\":[{\"field\":\"day\",\"desc\":true}],\"limit\":1000}", n / 20 - 50);
    double t0 = now_ms(); optimist_query *q; int rc = optimist_query_open(s, spec, &q); double t1 = now_ms();
    size_t c = 0; optimist_query_count(q, &c);
    printf("n=%d %s: first evaluation %.1f ms (rc %d, %zu rows)\n", n, path ? "file" : "memory", t1 - t0, rc, c);
    optimist_close(s); return 0;
}
