/* The optimistic flow in C, shared by the bench (main.c) and demo/habits_demo.c: a store that
 * holds the workload's logs (common.h) with a count view "today", and one tap as a C app
 * writes it. Needs liboptimist (optimist.h). */
#ifndef OPTIMIST_BENCH_OPTIMISTIC_H
#define OPTIMIST_BENCH_OPTIMISTIC_H

#include <stdint.h>

#include "optimist.h"

/* Opens a file-backed store at `path` (memory if `path` is NULL or opening fails) holding `n`
 * confirmed logs and a count view "today" over today's key prefix. Sets *file_backed. */
optimist_store *optimistic_open(const char *path, int n, int *file_backed);

/* The tapped log's record as typed fields: what a C app fills from its own struct. The strings
 * must outlive the call that reads the fields. */
void log_fields(optimist_field f[5], const char *day, const char *habit, long long seq);

/* One optimistic tap: format the key, fill the record's fields (or, with `json`, format the
 * record as JSON), put it as a one-op mutation (optimist_put_fields / optimist_put: no batch to
 * build), read the view. Returns today's count; *id gets the mutation's id. */
double optimistic_tap(optimist_store *s, const char *day, const char *habit, int seq, int json, uint64_t *id);

#endif
