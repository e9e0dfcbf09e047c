/* A live query's first evaluation, through an index and without: N logs in a fresh store (in
 * memory, or a store file that is closed and opened again before each round, so its records
 * are on disk), an index on "day", then per round the time optimist_query_open takes for "this
 * week's" 1,000 logs ordered by day, newest first, and the RSS it adds: once with
 * {"field":"day","ge":D}, which the index fits, and once with the same rows asked as
 * {"not":{"field":"day","lt":D}}, which no index fits (it reads the whole collection).
 * Prints each round, then the medians (also as one JSON line, for Benchmarks/run --queries).
 *
 *   cc -O2 -IInclude Benchmarks/C/query_first.c -Lbuild -loptimist -Wl,-rpath,$PWD/build -o /tmp/query_first
 *   /tmp/query_first 100000; /tmp/query_first 1000000 /tmp/q1m.optimist [ROUNDS] */
#define _POSIX_C_SOURCE 200809L
#include <optimist.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e3 + t.tv_nsec / 1e6; }

static double rss_mb(void) {
    long pages = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f) { if (fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0; fclose(f); }
    return resident * (double)sysconf(_SC_PAGESIZE) / (1 << 20);
}

static int cmp(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return (x > y) - (x < y); }
static double median(double *v, int n) { qsort(v, n, sizeof *v, cmp); return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2; }

/* Opens spec and returns its time in ms; *rows and *grown get its row count and RSS growth. */
static double first(optimist_store *s, const char *spec, size_t *rows, double *grown) {
    optimist_query *q = NULL;
    double r0 = rss_mb(), t0 = now_ms();
    int rc = optimist_query_open(s, spec, &q);
    double t1 = now_ms();
    if (rc != OPTIMIST_OK) { fprintf(stderr, "query_open: %d %s\n", rc, optimist_last_error()); exit(1); }
    *grown = rss_mb() - r0;
    optimist_query_count(q, rows);
    optimist_query_close(q);
    return t1 - t0;
}

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: query_first N [STORE_FILE [ROUNDS]]\n"); return 2; }
    int n = atoi(argv[1]);
    const char *path = argc > 2 ? argv[2] : NULL;
    int rounds = argc > 3 ? atoi(argv[3]) : 5;
    if (rounds < 1 || rounds > 100) rounds = 5;
    optimist_store *s;
    optimist_batch *b;
    if (path) { remove(path); char wal[512]; snprintf(wal, sizeof wal, "%s-wal", path); remove(wal); }
    if (optimist_open(path, &s) != OPTIMIST_OK) { fprintf(stderr, "open: %s\n", optimist_last_error()); return 1; }
    optimist_batch_new(&b);
    for (int i = 0; i < n; i++) {
        char key[32], json[96];
        snprintf(key, sizeof key, "d%05d/%07d", i / 20, i);
        snprintf(json, sizeof json, "{\"habit\":\"h%d\",\"day\":%d,\"minutes\":%d}", i % 8, i / 20, 10 + i % 50);
        optimist_batch_put(b, "logs", key, json);
    }
    optimist_server_apply(s, b);
    optimist_batch_free(b);
    optimist_flush(s);
    double d0 = now_ms();
    if (optimist_index_define(s, "logs", "day") != OPTIMIST_OK) { fprintf(stderr, "index: %s\n", optimist_last_error()); return 1; }
    double define_ms = now_ms() - d0;
    printf("n=%d %s: index defined over the records in %.0f ms\n", n, path ? "file" : "memory", define_ms);
    int day = n / 20 - 50;
    char indexed[256], plain[256];
    snprintf(indexed, sizeof indexed, "{\"collection\":\"logs\",\"where\":{\"field\":\"day\",\"ge\":%d},\"order\":[{\"field\":\"day\",\"desc\":true}],\"limit\":1000}", day);
    snprintf(plain, sizeof plain, "{\"collection\":\"logs\",\"where\":{\"not\":{\"field\":\"day\",\"lt\":%d}},\"order\":[{\"field\":\"day\",\"desc\":true}],\"limit\":1000}", day);
    double ti[100], tp[100], gi[100], gp[100];
    for (int r = 0; r < rounds; r++) {
        if (path) { optimist_close(s); optimist_open(path, &s); }
        size_t ci = 0, cp = 0;
        ti[r] = first(s, indexed, &ci, &gi[r]);
        if (path) { optimist_close(s); optimist_open(path, &s); }
        tp[r] = first(s, plain, &cp, &gp[r]);
        printf("  round %d: through the index %.2f ms (+%.1f MB RSS, %zu rows); reading the collection %.1f ms (+%.1f MB RSS, %zu rows)\n",
               r + 1, ti[r], gi[r], ci, tp[r], gp[r], cp);
        if (ci != cp) { fprintf(stderr, "the two queries differ: %zu vs %zu rows\n", ci, cp); return 1; }
    }
    double mi = median(ti, rounds), mp = median(tp, rounds);
    printf("n=%d %s, median of %d: through the index %.2f ms, reading the collection %.1f ms (%.0fx); RSS growth %.1f vs %.1f MB\n",
           n, path ? "file" : "memory", rounds, mi, mp, mp / mi, median(gi, rounds), median(gp, rounds));
    /* The same as one JSON line, for Benchmarks/run --queries. */
    printf("{\"section\": \"first\", \"store\": \"%s\", \"n\": %d, \"rounds\": %d, \"index_ms\": %.3f, \"scan_ms\": %.3f, "
           "\"index_rss_mb\": %.2f, \"scan_rss_mb\": %.2f, \"define_ms\": %.1f}\n",
           path ? "file" : "memory", n, rounds, mi, mp, median(gi, rounds), median(gp, rounds), define_ms);
    optimist_close(s);
    return 0;
}
