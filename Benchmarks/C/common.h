/* Shared helpers of the C bench: the monotonic clock, summaries of timings, JSON-line output
 * and the habit-tracker workload (the same keys and records as the Swift and Python benches). */
#ifndef OPTIMIST_BENCH_COMMON_H
#define OPTIMIST_BENCH_COMMON_H

#include <stddef.h>
#include <stdint.h>

uint64_t now_ns(void);

/* Timings in microseconds: median is the headline, p99 the tail, IQR and min/max the spread. */
typedef struct {
    size_t reps;
    double median, p99, p25, p75, min, max, mean;
} summary;

/* Sorts `ns` in place and summarises it. */
summary summarize(uint64_t *ns, size_t count);

/* Prints `{<prefix>, "median_us":…, …}` on one line; `prefix` is JSON members without braces. */
void emit(const char *prefix, summary s);

/* Workload: n logs over past days, 8 habits a day, keys "d<day>/h<habit>", ~100-byte records;
 * "today" starts with TODAY_SEED logs and each measured tap adds "d<today>/t<seq>". */
#define HABITS_PER_DAY 8
#define TODAY_SEED 3
#define LOG_NOTE "checked in from the widget, streak kept"
#define LOG_AT 1763770000000LL

int today_index(int n);
void existing_log(int i, int n, char key[32], char day[16], char habit[16]);
/* Which log tap `seq` adds: today and a new habit id. The app knows these when the user taps,
 * so both flows pick them before the clock starts; each formats its key (and the optimistic
 * flow its record) inside the timed part. */
void tap_pick(int seq, int n, char day[16], char habit[16]);
/* The key "<day>/<habit>". */
void log_key(char key[32], const char *day, const char *habit);
/* The record as JSON; returns its length. */
int log_json(char *out, size_t cap, const char *day, const char *habit, long long seq);

void die(const char *what, const char *detail);

#endif
