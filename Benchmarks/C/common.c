#define _POSIX_C_SOURCE 200809L
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Nearest-rank quantile of sorted samples, in microseconds. */
static double quantile(const uint64_t *s, size_t n, double p) {
    size_t rank = (size_t)(p * (double)n + 0.999999999);
    if (rank < 1) rank = 1;
    if (rank > n) rank = n;
    return (double)s[rank - 1] / 1000.0;
}

summary summarize(uint64_t *ns, size_t count) {
    summary r = {0};
    if (count == 0) die("summarize", "no samples");
    qsort(ns, count, sizeof *ns, cmp_u64);
    double total = 0;
    for (size_t i = 0; i < count; i++) total += (double)ns[i];
    r.reps = count;
    r.median = quantile(ns, count, 0.5);
    r.p99 = quantile(ns, count, 0.99);
    r.p25 = quantile(ns, count, 0.25);
    r.p75 = quantile(ns, count, 0.75);
    r.min = (double)ns[0] / 1000.0;
    r.max = (double)ns[count - 1] / 1000.0;
    r.mean = total / (double)count / 1000.0;
    return r;
}

void emit(const char *prefix, summary s) {
    printf("{%s,\"median_us\":%.3f,\"p99_us\":%.3f,\"p25_us\":%.3f,\"p75_us\":%.3f,"
           "\"min_us\":%.3f,\"max_us\":%.3f,\"mean_us\":%.3f,\"reps\":%zu}\n",
           prefix, s.median, s.p99, s.p25, s.p75, s.min, s.max, s.mean, s.reps);
    fflush(stdout);
}

int today_index(int n) { return (n - TODAY_SEED) / HABITS_PER_DAY + 1; }

void existing_log(int i, int n, char key[32], char day[16], char habit[16]) {
    if (i >= n - TODAY_SEED) {
        snprintf(day, 16, "d%06d", today_index(n));
        snprintf(habit, 16, "h%03d", i - (n - TODAY_SEED));
    } else {
        snprintf(day, 16, "d%06d", i / HABITS_PER_DAY);
        snprintf(habit, 16, "h%03d", i % HABITS_PER_DAY);
    }
    snprintf(key, 32, "%s/%s", day, habit);
}

void tap_pick(int seq, int n, char day[16], char habit[16]) {
    snprintf(day, 16, "d%06d", today_index(n));
    snprintf(habit, 16, "t%06d", seq);
}

void log_key(char key[32], const char *day, const char *habit) { snprintf(key, 32, "%s/%s", day, habit); }

int log_json(char *out, size_t cap, const char *day, const char *habit, long long seq) {
    return snprintf(out, cap, "{\"habit\":\"%s\",\"day\":\"%s\",\"done\":1,\"at\":%lld,\"note\":\"%s\"}",
                    habit, day, LOG_AT + seq, LOG_NOTE);
}

void die(const char *what, const char *detail) {
    fprintf(stderr, "c bench: %s: %s\n", what, detail ? detail : "");
    exit(1);
}
