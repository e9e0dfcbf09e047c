/*
 * put.c - the one-op mutations optimist_put and optimist_put_fields: each is a mutation of one
 * put (an id from the same sequence, pending, rolled back exactly, heard by listeners, kept
 * across reopen), and each refuses bad arguments with its code, changing nothing.
 */
#define _POSIX_C_SOURCE 200809L /* mkstemp under -std=c11 */
#include "fixtures.h"

#include <math.h>
#include <unistd.h>

/* A put is a pending mutation of its own: the next id, rolled back exactly like a batch's. */
static void a_mutation_of_one_put(void) {
    optimist_store *s = open_memory();
    uint64_t first = mutate_put(s, "logs", "a", "{\"n\":1}"), id = 0, id2 = 0;
    CHECK_OK(optimist_put(s, "logs", "a", "{\"n\":2}", &id));
    CHECK(id == first + 1);
    CHECK_GET(s, "logs", "a", "{\"n\":2}");
    CHECK(status_of(s, id) == OPTIMIST_PENDING);
    CHECK(pending_count(s) == 2);

    optimist_field f[] = {{"n", NULL, 3, OPTIMIST_FIELD_NUMBER}, {"t", "x", 0, OPTIMIST_FIELD_TEXT}};
    CHECK_OK(optimist_put_fields(s, "logs", "b", f, 2, &id2));
    CHECK(id2 == id + 1);
    CHECK_GET(s, "logs", "b", "{\"n\":3,\"t\":\"x\"}");

    CHECK_OK(optimist_rollback(s, id, NULL));
    CHECK_GET(s, "logs", "a", "{\"n\":1}");
    CHECK_OK(optimist_commit(s, id2, NULL));
    char *c = NULL;
    CHECK_OK(optimist_get_confirmed(s, "logs", "b", &c));
    CHECK_JSON(c, "{\"n\":3,\"t\":\"x\"}");
    /* out_id may be NULL; an empty field list is the empty record. */
    CHECK_OK(optimist_put(s, "logs", "c", "{}", NULL));
    CHECK_OK(optimist_put_fields(s, "logs", "d", NULL, 0, NULL));
    CHECK_GET(s, "logs", "d", "{}");
    CHECK(pending_count(s) == 3);
    CHECK_OK(optimist_close(s));
}

static int heard, heard_cause;
static void listener(void *ctx, const optimist_change *changes, size_t n) {
    (void)ctx;
    heard += (int)n;
    if (n) heard_cause = changes[0].cause;
}

static void listeners_hear_it(void) {
    optimist_store *s = open_memory();
    uint64_t sub = 0;
    CHECK_OK(optimist_subscribe(s, "logs", "", listener, NULL, &sub));
    heard = 0;
    CHECK_OK(optimist_put(s, "logs", "k", "{\"v\":1}", NULL));
    CHECK(heard == 1 && heard_cause == OPTIMIST_CAUSE_MUTATE);
    CHECK_OK(optimist_close(s));
}

/* Each bad argument: its code, and the store unchanged (no record, no pending mutation, no id
 * spent: the next mutation gets the next id). */
static void refused(void) {
    static const char bad_utf8[] = {'a', (char)0xE2, (char)0x82, 0};
    optimist_field ok_field[] = {{"a", NULL, 1, OPTIMIST_FIELD_NUMBER}};
    optimist_field nan_field[] = {{"a", NULL, NAN, OPTIMIST_FIELD_NUMBER}};
    optimist_store *s = open_memory();
    uint64_t before = mutate_put(s, "logs", "seed", "{}"), id = 77;
    CHECK_FAILS(optimist_put(NULL, "logs", "k", "{}", &id), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_put(s, NULL, "k", "{}", &id), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_put(s, "logs", NULL, "{}", &id), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_put(s, "logs", "k", NULL, &id), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_put(s, "logs", "k", "{\"a\":", &id), OPTIMIST_INVALID);
    CHECK_FAILS(optimist_put(s, "logs", "k", "[1]", &id), OPTIMIST_INVALID);
    CHECK_FAILS(optimist_put(s, "logs", bad_utf8, "{}", &id), OPTIMIST_INVALID);
    CHECK_FAILS(optimist_put_fields(NULL, "logs", "k", ok_field, 1, &id), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_put_fields(s, "logs", "k", NULL, 1, &id), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_put_fields(s, "logs", NULL, ok_field, 1, &id), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_put_fields(s, "logs", "k", nan_field, 1, &id), OPTIMIST_INVALID);
    CHECK(id == 77);
    char *out = (char *)1;
    CHECK_FAILS(optimist_get(s, "logs", "k", &out), OPTIMIST_NOTFOUND);
    CHECK(pending_count(s) == 1);
    CHECK(mutate_put(s, "logs", "after", "{}") == before + 1);
    CHECK_OK(optimist_close(s));
    CHECK_FAILS(optimist_put(s, "logs", "k", "{}", &id), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_put_fields(s, "logs", "k", ok_field, 1, &id), OPTIMIST_MISUSE);
}

/* On a store file the puts are written like any mutation: pending again after reopen. */
static void kept_across_reopen(void) {
    char path[] = "/tmp/optimist-put-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    close(fd);
    unlink(path);
    optimist_store *s = NULL;
    uint64_t id = 0, id2 = 0;
    CHECK_OK(optimist_open(path, &s));
    CHECK_OK(optimist_put(s, "logs", "a", "{\"n\":1}", &id));
    optimist_field f[] = {{"done", NULL, 1, OPTIMIST_FIELD_BOOL}};
    CHECK_OK(optimist_put_fields(s, "logs", "b", f, 1, &id2));
    CHECK_OK(optimist_close(s));
    CHECK_OK(optimist_open(path, &s));
    CHECK(status_of(s, id) == OPTIMIST_PENDING && status_of(s, id2) == OPTIMIST_PENDING);
    CHECK_GET(s, "logs", "a", "{\"n\":1}");
    CHECK_GET(s, "logs", "b", "{\"done\":true}");
    CHECK_OK(optimist_close(s));
    char buf[64];
    const char *suffixes[] = {"", "-wal", "-shm"};
    for (int i = 0; i < 3; i++) { snprintf(buf, sizeof buf, "%s%s", path, suffixes[i]); unlink(buf); }
}

int main(void) {
    a_mutation_of_one_put();
    listeners_hear_it();
    refused();
    kept_across_reopen();
    CHECK_DONE();
}
