/*
 * habits.c - the habit tracker story told through the Optimist C API.
 *
 * A user ticks off "read" for today. The app shows the tick at once (an optimistic
 * mutation), the monthly counter follows (a view), the server confirms (commit). Then the
 * user ticks "run" while offline; the write fails for good and is rolled back, so the tick
 * disappears again while everything else stays.
 *
 * Build against an installed prefix:
 *   cc habits.c $(pkg-config --cflags --libs optimist) \
 *      -Wl,-rpath,$(pkg-config --variable=libdir optimist) -o habits
 * (the rpath lets it run without LD_LIBRARY_PATH), or with CMake: find_package(Optimist)
 * and link Optimist::optimist (see CMakeLists.txt beside this file).
 */
#include <optimist.h>

#include <stdio.h>
#include <stdlib.h>

/* Prints the failure and the library's message, then stops: an example has no recovery. */
static void check(int rc, const char *what) {
    if (rc != OPTIMIST_OK) {
        fprintf(stderr, "%s failed: %s (%s)\n", what, optimist_errstr(rc), optimist_last_error());
        exit(1);
    }
}

/* Prints a habit's log entry for a day as the UI would show it: value and a pending badge. */
static void show(optimist_store *s, const char *day) {
    char *json = NULL;
    int pending = 0;
    int rc = optimist_get(s, "logs", day, &json);
    check(optimist_is_pending(s, "logs", day, &pending), "is_pending");
    printf("  logs/%s = %s%s\n", day, rc == OPTIMIST_OK ? json : "(none)",
           pending ? "  [syncing]" : "");
    optimist_free(json);
}

/* Prints the "done this month" counter, read in O(1) from its view. */
static double show_month(optimist_store *s) {
    double done = 0;
    check(optimist_view_get(s, "done-in-june", &done), "view_get");
    printf("  done in June: %.0f\n", done);
    return done;
}

/* Ticks a habit: one atomic mutation, with a dedupe key so a double tap counts once. */
static uint64_t tick(optimist_store *s, const char *day, const char *habit) {
    optimist_batch *b = NULL;
    char json[128];
    uint64_t id = 0;
    snprintf(json, sizeof json, "{\"habit\":\"%s\",\"done\":1}", habit);
    check(optimist_batch_new(&b), "batch_new");
    check(optimist_batch_put(b, "logs", day, json), "batch_put");
    check(optimist_batch_incr(b, "stats", "streak", "days", 1), "batch_incr");
    check(optimist_mutate(s, b, day, &id), "mutate");
    optimist_batch_free(b);
    return id;
}

int main(void) {
    optimist_store *s = NULL;
    check(optimist_open(NULL, &s), "open"); /* NULL path: an in-memory store */
    printf("optimist %s\n", optimist_version());
    check(optimist_view_define(s, "done-in-june", "logs", "2026-06", "sum:done"), "view_define");

    puts("tick 'read' for 2026-06-01 (shown at once, not yet confirmed):");
    uint64_t read_id = tick(s, "2026-06-01", "read");
    show(s, "2026-06-01");
    show_month(s);

    puts("the server accepts it:");
    check(optimist_commit(s, read_id, NULL), "commit");
    show(s, "2026-06-01");

    puts("tick 'run' for 2026-06-02 while offline:");
    uint64_t run_id = tick(s, "2026-06-02", "run");
    show(s, "2026-06-02");
    show_month(s);

    puts("the write fails for good and is rolled back:");
    check(optimist_rollback(s, run_id, "server said no"), "rollback");
    show(s, "2026-06-02");
    double done = show_month(s);

    uint64_t left = 99;
    check(optimist_pending_count(s, &left), "pending_count");
    printf("pending mutations: %llu\n", (unsigned long long)left);
    check(optimist_close(s), "close");
    /* The story ends with one confirmed tick and nothing pending. */
    return (done == 1 && left == 0) ? 0 : 1;
}
