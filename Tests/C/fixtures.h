/*
 * fixtures.h - short ways to build the mutations the C tests need, so each test reads as
 * the behaviour it checks rather than as batch bookkeeping.
 */
#ifndef OPTIMIST_TEST_FIXTURES_H
#define OPTIMIST_TEST_FIXTURES_H

#include "check.h"

#include <stdlib.h>

/* A string handed out that must equal want; freed. */
#define CHECK_JSON(got, want)                                                            \
    do {                                                                                 \
        char *check_json_got_ = (got);                                                   \
        CHECK_STR(check_json_got_, (want));                                              \
        optimist_free(check_json_got_);                                                  \
    } while (0)

/* An in-memory store; aborts the test when even that fails. */
static inline optimist_store *open_memory(void) {
    optimist_store *s = NULL;
    int rc = optimist_open(NULL, &s);
    if (rc != OPTIMIST_OK || s == NULL) {
        fprintf(stderr, "optimist_open(NULL) failed: %d %s\n", rc, check_last_error());
        exit(2);
    }
    return s;
}

/* A batch holding one put; aborts when the batch cannot be built. */
static inline optimist_batch *batch_of_put(const char *coll, const char *key, const char *json) {
    optimist_batch *b = NULL;
    if (optimist_batch_new(&b) != OPTIMIST_OK || optimist_batch_put(b, coll, key, json) != OPTIMIST_OK) {
        fprintf(stderr, "cannot build a put batch: %s\n", check_last_error());
        exit(2);
    }
    return b;
}

/* A batch holding one incr; aborts when the batch cannot be built. */
static inline optimist_batch *batch_of_incr(const char *coll, const char *key, const char *field,
                                            double delta) {
    optimist_batch *b = NULL;
    if (optimist_batch_new(&b) != OPTIMIST_OK ||
        optimist_batch_incr(b, coll, key, field, delta) != OPTIMIST_OK) {
        fprintf(stderr, "cannot build an incr batch: %s\n", check_last_error());
        exit(2);
    }
    return b;
}

/* Mutates with one put and returns the id (0 after a failed check). */
static inline uint64_t mutate_put(optimist_store *s, const char *coll, const char *key,
                                  const char *json) {
    optimist_batch *b = batch_of_put(coll, key, json);
    uint64_t id = 0;
    CHECK_OK(optimist_mutate(s, b, NULL, &id));
    optimist_batch_free(b);
    return id;
}

/* Mutates with one incr and returns the id (0 after a failed check). */
static inline uint64_t mutate_incr(optimist_store *s, const char *coll, const char *key,
                                   const char *field, double delta) {
    optimist_batch *b = batch_of_incr(coll, key, field, delta);
    uint64_t id = 0;
    CHECK_OK(optimist_mutate(s, b, NULL, &id));
    optimist_batch_free(b);
    return id;
}

/* A mutation's status (-1 after a failed check). */
static inline int status_of(optimist_store *s, uint64_t id) {
    int st = -1;
    CHECK_OK(optimist_status(s, id, &st));
    return st;
}

/* How many mutations have not yet ended. */
static inline uint64_t pending_count(optimist_store *s) {
    uint64_t n = 0;
    CHECK_OK(optimist_pending_count(s, &n));
    return n;
}

/* Checks that the visible record at coll/key is exactly `want` (canonical JSON). */
#define CHECK_GET(s, coll, key, want)                                                    \
    do {                                                                                 \
        char *check_json_ = NULL;                                                        \
        CHECK_OK(optimist_get((s), (coll), (key), &check_json_));                        \
        CHECK_STR(check_json_, (want));                                                  \
        optimist_free(check_json_);                                                      \
    } while (0)

#endif
