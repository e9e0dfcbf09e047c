/*
 * close_race.c - closing a store while other threads use it: every call on it returns OK or
 * MISUSE, nothing else, and closing again is OK.
 */
#include "fixtures.h"

#include <pthread.h>

#define THREADS 4

/* Closing a store while other threads use it: every call returns OK or MISUSE, nothing else. */
struct racer {
    optimist_store *s;
    int ok, misuse, other;
};

static void *race(void *varg) {
    struct racer *r = varg;
    optimist_batch *b = batch_of_incr("race", "k", "n", 1);
    /* Runs until it sees the store closed, so the race always happens. */
    for (;;) {
        char *json = NULL;
        int rc = optimist_mutate(r->s, b, NULL, NULL);
        int rc2 = optimist_get(r->s, "race", "k", &json);
        optimist_free(json);
        if (rc == OPTIMIST_OK) r->ok++;
        else if (rc == OPTIMIST_MISUSE) r->misuse++;
        else r->other++;
        if (rc2 != OPTIMIST_OK && rc2 != OPTIMIST_MISUSE) r->other++;
        if (rc != OPTIMIST_OK && rc2 != OPTIMIST_OK) break;
    }
    optimist_batch_free(b);
    return NULL;
}

static void test_close_race(void) {
    optimist_store *s = NULL;
    CHECK_RC(optimist_open(NULL, &s), OPTIMIST_OK);
    pthread_t t[THREADS];
    struct racer r[THREADS];
    for (int i = 0; i < THREADS; i++) {
        r[i] = (struct racer){s, 0, 0, 0};
        CHECK(pthread_create(&t[i], NULL, race, &r[i]) == 0);
    }
    /* Let the racers get going, then close under them. */
    for (;;) {
        uint64_t count = 0;
        if (optimist_pending_count(s, &count) != OPTIMIST_OK || count >= 100) break;
    }
    CHECK_RC(optimist_close(s), OPTIMIST_OK);
    int misuse = 0;
    for (int i = 0; i < THREADS; i++) {
        pthread_join(t[i], NULL);
        CHECK(r[i].other == 0);
        misuse += r[i].misuse;
    }
    CHECK(misuse > 0);
    CHECK_RC(optimist_close(s), OPTIMIST_OK);
}

int main(void) {
    test_close_race();
    return CHECK_DONE();
}
