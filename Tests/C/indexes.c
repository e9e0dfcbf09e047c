/*
 * indexes.c - optimist_index_define through the C ABI: a query whose "where" an index fits
 * gets the same rows as without one, on a store file the index is kept across a reopen (and
 * defining it again changes nothing), changes after the definition reach it, and bad input
 * (NULL, "$key", empty names, malformed arrays, a closed store) is refused with a clear code.
 */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, rmdir under -std=c11 */
#include "fixtures.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *rows_of(optimist_store *s, const char *spec) {
    optimist_query *q = NULL;
    char *rows = NULL;
    CHECK_OK(optimist_query_open(s, spec, &q));
    CHECK_OK(optimist_query_rows(q, 0, 0, &rows));
    CHECK_OK(optimist_query_close(q));
    return rows;
}

static const char *run_spec = "{\"collection\":\"logs\",\"where\":{\"field\":\"habit\",\"eq\":\"run\"},"
                              "\"order\":[{\"field\":\"minutes\",\"desc\":true}]}";

static void fill(optimist_store *s) {
    char key[32], json[96];
    static const char *habits[] = {"run", "read", "nap"};
    for (int i = 0; i < 30; i++) {
        snprintf(key, sizeof key, "d%02d", i);
        snprintf(json, sizeof json, "{\"habit\":\"%s\",\"minutes\":%d,\"meta\":{\"day\":%d}}", habits[i % 3], i, i % 7);
        optimist_batch *b = batch_of_put("logs", key, json);
        uint64_t id = 0;
        CHECK_OK(optimist_mutate(s, b, NULL, &id));
        optimist_batch_free(b);
        if (i % 2 == 0) CHECK_OK(optimist_commit(s, id, NULL));  /* half confirmed, half pending */
    }
}

int main(void) {
    char dir[] = "/tmp/optimist-indexes-XXXXXX";
    if (mkdtemp(dir) == NULL) {
        CHECK(!"mkdtemp");
        CHECK_DONE();
    }
    char path[64];
    snprintf(path, sizeof path, "%s/store.optimist", dir);

    /* In memory: the same rows with and without the index. */
    optimist_store *m = open_memory();
    fill(m);
    char *before = rows_of(m, run_spec);
    CHECK_OK(optimist_index_define(m, "logs", "habit"));
    CHECK_OK(optimist_index_define(m, "logs", "habit")); /* idempotent */
    CHECK_OK(optimist_index_define(m, "logs", "[\"meta\",\"day\"]"));
    CHECK_OK(optimist_index_define(m, "logs", "meta.day")); /* the same path, dotted */
    char *after = rows_of(m, run_spec);
    CHECK_STR(after, before);
    optimist_free(after);
    optimist_free(before);
    char *days = rows_of(m, "{\"collection\":\"logs\",\"where\":{\"field\":\"meta.day\",\"in\":[0,6]}}");
    CHECK(days && strstr(days, "\"d00\"") && strstr(days, "\"d06\"") && strstr(days, "\"d07\"") && !strstr(days, "\"d01\""));
    optimist_free(days);

    /* Bad input. */
    CHECK_FAILS(optimist_index_define(m, "logs", "$key"), OPTIMIST_INVALID);
    CHECK_FAILS(optimist_index_define(m, "logs", ""), OPTIMIST_INVALID);
    CHECK_FAILS(optimist_index_define(m, "logs", "a..b"), OPTIMIST_INVALID);
    CHECK_FAILS(optimist_index_define(m, "logs", "[\"a\", 3]"), OPTIMIST_INVALID);
    CHECK_FAILS(optimist_index_define(m, "logs", "[\"a\""), OPTIMIST_INVALID);
    CHECK_FAILS(optimist_index_define(m, "logs", "\xff"), OPTIMIST_INVALID);
    CHECK_FAILS(optimist_index_define(NULL, "logs", "habit"), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_index_define(m, NULL, "habit"), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_index_define(m, "logs", NULL), OPTIMIST_MISUSE);
    CHECK_OK(optimist_close(m));
    CHECK_FAILS(optimist_index_define(m, "logs", "habit"), OPTIMIST_MISUSE);

    /* A store file: defined over records already there, kept across a reopen. */
    optimist_store *s = NULL;
    CHECK_OK(optimist_open(path, &s));
    fill(s);
    char *want = rows_of(s, run_spec);
    CHECK_OK(optimist_index_define(s, "logs", "habit"));
    char *got = rows_of(s, run_spec);
    CHECK_STR(got, want);
    optimist_free(got);
    CHECK_OK(optimist_flush(s));
    CHECK_OK(optimist_close(s));

    CHECK_OK(optimist_open(path, &s));
    got = rows_of(s, run_spec);
    CHECK_STR(got, want);
    optimist_free(got);
    optimist_free(want);
    CHECK_OK(optimist_index_define(s, "logs", "habit")); /* there already */
    /* A change after the reopen reaches the index: d01 becomes a run, d00 stops being one. */
    optimist_batch *b = batch_of_put("logs", "d01", "{\"habit\":\"run\",\"minutes\":99}");
    uint64_t id = 0;
    CHECK_OK(optimist_mutate(s, b, NULL, &id));
    optimist_batch_free(b);
    CHECK_OK(optimist_commit(s, id, NULL));
    b = batch_of_put("logs", "d00", "{\"habit\":\"walk\",\"minutes\":1}");
    CHECK_OK(optimist_mutate(s, b, NULL, &id));
    optimist_batch_free(b);
    CHECK_OK(optimist_commit(s, id, NULL));
    CHECK_OK(optimist_flush(s));
    CHECK_OK(optimist_close(s));
    CHECK_OK(optimist_open(path, &s));
    got = rows_of(s, "{\"collection\":\"logs\",\"where\":{\"field\":\"habit\",\"eq\":\"run\"},\"limit\":1,"
                     "\"order\":[{\"field\":\"minutes\",\"desc\":true}]}");
    CHECK(got && strstr(got, "\"d01\"") && strstr(got, "99"));
    optimist_free(got);
    got = rows_of(s, "{\"collection\":\"logs\",\"where\":{\"field\":\"habit\",\"in\":[\"run\",\"walk\"]},"
                     "\"order\":[{\"field\":\"minutes\"}],\"limit\":1}");
    CHECK(got && strstr(got, "\"d00\"") && strstr(got, "walk"));
    optimist_free(got);
    CHECK_OK(optimist_close(s));

    unlink(path);
    char wal[80];
    snprintf(wal, sizeof wal, "%s-wal", path);
    unlink(wal);
    rmdir(dir);
    CHECK_DONE();
}
