/*
 * waits.c - the app developer's path in C: optimist_wait_settled returns a mutation's final
 * status once another thread ends it (or its status then, on timeout); optimist_outbox_wait
 * wakes for a pending mutation and not for an inflight one; optimist_mutation still gives an
 * ended mutation with its last_error; optimist_commit_with_renames moves a record and its
 * later edits to the server's key, and refuses malformed renames with INVALID, changing
 * nothing. A close ends a wait with MISUSE.
 */
#define _POSIX_C_SOURCE 200809L /* nanosleep under -std=c11 */
#include "fixtures.h"

#include <pthread.h>
#include <string.h>
#include <time.h>

static void sleep_ms(long ms) {
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

typedef struct {
    optimist_store *s;
    uint64_t commit_id, rollback_id;
    int made; /* the outbox test: mutate once, after a while */
    int close_it;
} job;

static void *later(void *arg) {
    job *j = arg;
    sleep_ms(30);
    if (j->commit_id) CHECK_OK(optimist_commit(j->s, j->commit_id, NULL));
    if (j->rollback_id) CHECK_OK(optimist_rollback(j->s, j->rollback_id, "the title is taken"));
    if (j->made) (void)mutate_put(j->s, "todos", "later", "{}");
    if (j->close_it) CHECK_OK(optimist_close(j->s));
    return NULL;
}

static void waits_for_the_end(void) {
    optimist_store *s = open_memory();
    uint64_t a = mutate_put(s, "todos", "a", "{\"t\":\"milk\"}");
    uint64_t b = mutate_put(s, "todos", "b", "{\"t\":\"eggs\"}");
    int st = 0;
    CHECK_OK(optimist_wait_settled(s, a, 0, &st));
    CHECK(st == OPTIMIST_PENDING);
    CHECK_OK(optimist_wait_settled(s, a, 20, &st));
    CHECK(st == OPTIMIST_PENDING);

    job j = {s, a, b, 0, 0};
    pthread_t t;
    CHECK(pthread_create(&t, NULL, later, &j) == 0);
    CHECK_OK(optimist_wait_settled(s, a, 10000, &st));
    CHECK(st == OPTIMIST_COMMITTED);
    CHECK_OK(optimist_wait_settled(s, b, 10000, &st));
    CHECK(st == OPTIMIST_ROLLED_BACK);
    pthread_join(t, NULL);

    /* Ended, and still there with its reason. */
    char *json = NULL;
    CHECK_OK(optimist_mutation(s, b, &json));
    CHECK(strstr(json, "\"status\":\"rolled_back\"") != NULL);
    CHECK(strstr(json, "\"last_error\":\"the title is taken\"") != NULL);
    optimist_free(json);
    json = NULL;
    CHECK_FAILS(optimist_mutation(s, 999, &json), OPTIMIST_NOTFOUND);
    CHECK(json == NULL);
    CHECK_FAILS(optimist_wait_settled(s, 999, 0, &st), OPTIMIST_NOTFOUND);
    CHECK_OK(optimist_close(s));
}

static void waits_for_the_outbox(void) {
    optimist_store *s = open_memory();
    int ready = -1;
    CHECK_OK(optimist_outbox_wait(s, 0, &ready));
    CHECK(ready == 0);
    CHECK_OK(optimist_outbox_wait(s, 20, &ready));
    CHECK(ready == 0);

    job j = {s, 0, 0, 1, 0};
    pthread_t t;
    CHECK(pthread_create(&t, NULL, later, &j) == 0);
    CHECK_OK(optimist_outbox_wait(s, 10000, &ready));
    CHECK(ready == 1);
    pthread_join(t, NULL);

    uint64_t id = 0;
    char *ops = NULL;
    CHECK_OK(optimist_outbox_next(s, 0, &id, &ops));
    optimist_free(ops);
    CHECK_OK(optimist_outbox_wait(s, 0, &ready));
    CHECK(ready == 0); /* inflight is not pending */
    CHECK_OK(optimist_fail(s, id, 1, "offline", 0));
    CHECK_OK(optimist_outbox_wait(s, 0, &ready));
    CHECK(ready == 1); /* backing off is pending */

    /* A close ends a wait with MISUSE. */
    uint64_t other = mutate_put(s, "todos", "x", "{}");
    job c = {s, 0, 0, 0, 1};
    CHECK(pthread_create(&t, NULL, later, &c) == 0);
    int st = 0;
    CHECK_FAILS(optimist_wait_settled(s, other, 10000, &st), OPTIMIST_MISUSE);
    pthread_join(t, NULL);
}

static void commits_with_renames(void) {
    optimist_store *s = open_memory();
    uint64_t create = mutate_put(s, "todos", "tmp-1", "{\"title\":\"Milk\"}");
    optimist_batch *edit_b = NULL;
    CHECK_OK(optimist_batch_new(&edit_b));
    CHECK_OK(optimist_batch_patch(edit_b, "todos", "tmp-1", "{\"done\":true}"));
    uint64_t edit = 0;
    CHECK_OK(optimist_mutate(s, edit_b, NULL, &edit));
    optimist_batch_free(edit_b);

    /* Malformed renames: INVALID, nothing changes. */
    CHECK_FAILS(optimist_commit_with_renames(s, create, NULL, "{\"coll\":\"todos\"}"), OPTIMIST_INVALID);
    CHECK_FAILS(optimist_commit_with_renames(s, create, NULL, "[{\"coll\":\"todos\",\"from\":\"tmp-1\"}]"), OPTIMIST_INVALID);
    CHECK_FAILS(optimist_commit_with_renames(s, create, NULL, "[not json"), OPTIMIST_INVALID);
    CHECK_FAILS(optimist_commit_with_renames(s, create, NULL, "[{\"coll\":\"todos\",\"from\":\"tmp-1\",\"to\":\"\"}]"),
                OPTIMIST_INVALID);
    CHECK(status_of(s, create) == OPTIMIST_PENDING);
    CHECK_GET(s, "todos", "tmp-1", "{\"done\":true,\"title\":\"Milk\"}");

    CHECK_OK(optimist_commit_with_renames(s, create, NULL, "[{\"coll\":\"todos\",\"from\":\"tmp-1\",\"to\":\"812\"}]"));
    CHECK(status_of(s, create) == OPTIMIST_COMMITTED);
    char *out = NULL;
    CHECK_FAILS(optimist_get(s, "todos", "tmp-1", &out), OPTIMIST_NOTFOUND);
    CHECK_GET(s, "todos", "812", "{\"done\":true,\"title\":\"Milk\"}");
    CHECK_OK(optimist_get_confirmed(s, "todos", "812", &out));
    CHECK_JSON(out, "{\"title\":\"Milk\"}");
    /* The later edit now names the server's key. */
    char *json = NULL;
    CHECK_OK(optimist_mutation(s, edit, &json));
    CHECK(strstr(json, "\"key\":\"812\"") != NULL && strstr(json, "tmp-1") == NULL);
    optimist_free(json);
    /* NULL renames: a plain commit. */
    CHECK_OK(optimist_commit_with_renames(s, edit, NULL, NULL));
    CHECK(status_of(s, edit) == OPTIMIST_COMMITTED);
    CHECK_OK(optimist_close(s));
}

int main(void) {
    waits_for_the_end();
    waits_for_the_outbox();
    commits_with_renames();
    return CHECK_DONE();
}
