/*
 * habits.c - a habit tracker told through the Optimist C API, and synced with a server.
 *
 * The user ticks off "read" and "run". Each tick shows at once (an optimistic mutation) with a
 * "syncing" badge, and the monthly counter follows (a view). Given a server URL, the library's
 * own background sync sends the ticks to that server (optimist-server, see Server/README.md)
 * and pulls what other devices wrote; the program only waits for it and shows the result.
 * Without a URL it stays local: the ticks show and wait in the outbox.
 *
 *   habits                          local only
 *   habits http://127.0.0.1:8080    sync with the server at that URL
 *
 * Build against an installed prefix:
 *   cc habits.c $(pkg-config --cflags --libs optimist) \
 *      -Wl,-rpath,$(pkg-config --variable=libdir optimist) -o habits
 * (the rpath lets it run without LD_LIBRARY_PATH), or with CMake: find_package(Optimist)
 * and link Optimist::optimist (see CMakeLists.txt beside this file). The library brings its own
 * HTTP client (libcurl): nothing else to link.
 */
#include <optimist.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Prints the failure and the library's message, then stops: an example has no recovery. */
static void check(int rc, const char *what) {
    if (rc != OPTIMIST_OK) {
        fprintf(stderr, "%s failed: %s (%s)\n", what, optimist_errstr(rc), optimist_last_error());
        exit(1);
    }
}

/* Prints a record as the UI would show it: its value, and a badge while not confirmed. */
static void show(optimist_store *s, const char *coll, const char *key) {
    char *json = NULL;
    int pending = 0;
    int rc = optimist_get(s, coll, key, &json);
    check(optimist_is_pending(s, coll, key, &pending), "is_pending");
    printf("  %s/%s = %s%s\n", coll, key, rc == OPTIMIST_OK ? json : "(none)", pending ? "  [syncing]" : "");
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

static void print_sync_status(optimist_store *s) {
    char *json = NULL;
    check(optimist_sync_status(s, &json), "sync_status");
    printf("sync status: %s\n", json);
    optimist_free(json);
}

int main(int argc, char **argv) {
    if (argc > 2 || (argc == 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0))) {
        fprintf(argc == 2 ? stdout : stderr,
                "usage: %s [SERVER_URL]\n"
                "  Ticks two habits in an in-memory store. With SERVER_URL (e.g. http://127.0.0.1:8080,\n"
                "  an optimist-server) the library's background sync sends them there.\n",
                argv[0]);
        return argc == 2 ? 0 : 2;
    }
    const char *url = argc == 2 ? argv[1] : NULL;

    optimist_store *s = NULL;
    check(optimist_open(NULL, &s), "open"); /* NULL path: in memory; a file path persists the outbox */
    printf("optimist %s\n", optimist_version());
    check(optimist_view_define(s, "done-in-june", "logs", "2026-06", "sum:done"), "view_define");

    if (url) {
        /* The library's sync: a thread of its own pushes the outbox to url/push and pulls
         * url/pull, until optimist_sync_stop or optimist_close. */
        optimist_sync_options o = OPTIMIST_SYNC_OPTIONS_INIT;
        o.url = url;
        check(optimist_sync_start(s, &o), "sync_start");
        printf("syncing with %s\n", url);
    }

    puts("tick 'read' for 2026-06-01 and 'run' for 2026-06-02 (shown at once):");
    uint64_t read_id = tick(s, "2026-06-01", "read");
    uint64_t run_id = tick(s, "2026-06-02", "run");
    show(s, "logs", "2026-06-01");
    show(s, "logs", "2026-06-02");
    show(s, "stats", "streak");
    show_month(s);

    int ok = 1;
    if (!url) {
        uint64_t left = 0;
        check(optimist_pending_count(s, &left), "pending_count");
        printf("no server URL given: %llu mutations wait in the outbox (run `habits http://HOST:PORT`\n"
               "with optimist-server running to sync them)\n",
               (unsigned long long)left);
        ok = left == 2;
    } else {
        /* Wait (at most 10 s) until both are sent, answered and a pull has followed. */
        int idle = 0;
        check(optimist_sync_wait_idle(s, 10000, &idle), "sync_wait_idle");
        int st_read = 0, st_run = 0;
        check(optimist_status(s, read_id, &st_read), "status");
        check(optimist_status(s, run_id, &st_run), "status");
        puts(idle ? "the server has them:" : "the sync did not finish within 10 s:");
        show(s, "logs", "2026-06-01");
        show(s, "logs", "2026-06-02");
        show(s, "stats", "streak"); /* the server's count: every device's ticks add up */
        show_month(s);
        print_sync_status(s);
        ok = idle && st_read == OPTIMIST_COMMITTED && st_run == OPTIMIST_COMMITTED;
        printf("%s\n", ok ? "both ticks are committed" : "not everything is committed");
    }
    check(optimist_close(s), "close"); /* stops the sync first */
    return ok ? 0 : 1;
}
