/*
 * crash_sweep.c - kill -9 at random instants while a store takes large batches from every side:
 * the app's mutations (pushed and committed by the sync), the server's changes applied
 * directly, and pages the sync pulls. After each kill the store file must reopen, hold
 * everything the child had flushed, and hold no batch in part.
 *
 * The child (this program run again with "child PATH") opens a new store file and starts a sync
 * whose transport (in the child) plays the server: it answers every push "ok" and serves pull
 * pages of records without end. Then, round after round, it makes
 *   - one mutation: PAIRS pairs of records (collection "m", keys r<round>-<i>-a and -b, the same
 *     value) and an incr of m/count by 1;
 *   - one server_apply of PAIRS pairs (collection "s", the same keys and values);
 * and every third round it flushes. Each pull page k is PAIRS pairs too (collection "p", keys
 * k<page>-<i>-a and -b). Every fifth round and page has BIG_PAIRS pairs instead. The child
 * reports on stdout, each line written whole before the next step: "R r" before round r
 * starts, "P k" before page k is handed to the sync, and "F r c" after a flush returned OK that
 * was called after round r, when the sync's cursor was c (so every page up to c is durable).
 *
 * The parent kills it at a random instant, 0-300 ms after its first round began (the first
 * pulls, the writer's big transactions, a flush), and reopens the file. One sweep in ten kills
 * the child 0-100 ms after it started instead (while it loads, creates and opens the file),
 * and three times in four that child is a second one, started on the file of a first child
 * killed at work: it dies while it recovers a killed store (its rounds are numbered from 100001,
 * its pulls go on from the persisted cursor). Then:
 *   - the reopen succeeds;
 *   - lost: a round up to the last "F r" whose mutation or server batch is missing, or the
 *     cursor below the flushed c;
 *   - torn: a round or page present in part, rounds present that are not a prefix 1..n, the
 *     counter not equal to the rounds present, a pulled page beyond the persisted cursor or one
 *     missing below it, a round's records pending and committed at once.
 *
 *   crash_sweep [--kills N] [--seed S]   N sweeps, each ending in a kill and a reopen (default
 *                                        200; OPTIMIST_CRASH_KILLS in CI)
 */
#define _GNU_SOURCE /* mkdtemp, clock_gettime */
#include "../check.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PAIRS 50
/* Every fifth round and page is bigger: 1200 records, past the size at which a store builds a
 * server change apart and moves it in by parts. */
#define BIG_PAIRS 600

static int pairs_of(int n) { return n % 5 == 0 ? BIG_PAIRS : PAIRS; }
#define MAX_DELAY_MS 300  /* after the first round began */
#define OPEN_DELAY_MS 100 /* after the start, for kills during the open */

/* ---- what the records hold ------------------------------------------------------------------ */

/* The key of pair member i of batch n ('a' or 'b'); tag 'r' for rounds, 'k' for pages. */
static void key_of(char *out, size_t cap, char tag, int n, int i, char side) {
    snprintf(out, cap, "%c%06d-%03d-%c", tag, n, i, side);
}

/* The canonical value of pair i of batch n: both members hold it. */
static void value_of(char *out, size_t cap, int n, int i) {
    snprintf(out, cap, "{\"i\":%d,\"n\":%d,\"pad\":\"%s\"}", i, n, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
}

/* optimist_scan's answer for batch n when it is all there: [[key, value], ...] in key order. */
static char *scan_of(char tag, int n) {
    int pairs = pairs_of(n);
    size_t cap = (size_t)pairs * 2 * 128 + 8, len = 1;
    char *out = malloc(cap), key[32], value[96];
    out[0] = '[';
    for (int i = 0; i < pairs; i++)
        for (char side = 'a'; side <= 'b'; side++) {
            key_of(key, sizeof key, tag, n, i, side);
            value_of(value, sizeof value, n, i);
            len += (size_t)snprintf(out + len, cap - len, "%s[\"%s\",%s]", len > 1 ? "," : "", key, value);
        }
    snprintf(out + len, cap - len, "]");
    return out;
}

/* A batch of puts of batch n's pairs into coll. */
static optimist_batch *batch_of(const char *coll, char tag, int n) {
    optimist_batch *b = NULL;
    char key[32], value[96];
    if (optimist_batch_new(&b) != OPTIMIST_OK) abort();
    for (int i = 0; i < pairs_of(n); i++)
        for (char side = 'a'; side <= 'b'; side++) {
            key_of(key, sizeof key, tag, n, i, side);
            value_of(value, sizeof value, n, i);
            if (optimist_batch_put(b, coll, key, value) != OPTIMIST_OK) abort();
        }
    return b;
}

/* ---- the child -------------------------------------------------------------------------------- */

/* One line to stdout in one write: whole before the child can die. */
static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...) {
    char line[64];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line - 1, fmt, ap);
    va_end(ap);
    line[n++] = '\n';
    if (write(1, line, (size_t)n) != n) _exit(4);
}

static void die(const char *what, int rc) {
    fprintf(stderr, "crash child: %s returned %d: %s\n", what, rc, check_last_error());
    _exit(3);
}

/* The server, on the sync's thread: every push "ok" (the client folds its own ops); pull pages
 * without end, each announced before it is handed over. */
static char *reply;

static int serve(void *ctx, const char *endpoint, const char *url, const char *body, const char *const *headers,
                 int64_t timeout_ms, int *out_status, const char **out_body, int64_t *out_retry_after_ms) {
    (void)ctx, (void)url, (void)headers, (void)timeout_ms, (void)out_retry_after_ms;
    free(reply);
    size_t cap = BIG_PAIRS * 2 * 160 + 256, len = 0;
    reply = malloc(cap);
    if (strcmp(endpoint, "push") == 0) {
        len += (size_t)snprintf(reply, cap, "{\"results\":[");
        for (const char *p = strstr(body, "\"id\":"); p; p = strstr(p + 5, "\"id\":")) {
            if (len + 64 > cap) reply = realloc(reply, cap *= 2);
            len += (size_t)snprintf(reply + len, cap - len, "%s{\"id\":%llu,\"status\":\"ok\"}",
                                    reply[len - 1] == '[' ? "" : ",", strtoull(p + 5, NULL, 10));
        }
        snprintf(reply + len, cap - len, "]}");
    } else {
        const char *c = strstr(body, "\"cursor\":\"");
        int page = (c ? atoi(c + 10) : 0) + 1;
        say("P %d", page);
        char key[32], value[96];
        len += (size_t)snprintf(reply, cap, "{\"changes\":[");
        for (int i = 0; i < pairs_of(page); i++)
            for (char side = 'a'; side <= 'b'; side++) {
                key_of(key, sizeof key, 'k', page, i, side);
                value_of(value, sizeof value, page, i);
                len += (size_t)snprintf(reply + len, cap - len, "%s{\"op\":\"put\",\"coll\":\"p\",\"key\":\"%s\",\"value\":%s}",
                                        i || side == 'b' ? "," : "", key, value);
            }
        /* Bursts of four pages, then the sync waits for the next pull (1 ms). */
        snprintf(reply + len, cap - len, "],\"cursor\":\"%d\",\"more\":%s,\"outcomes\":[]}", page, page % 4 ? "true" : "false");
    }
    *out_status = 200;
    *out_body = reply;
    return 0;
}

/* The pull cursor the store holds now (0: none). */
static int cursor_of(optimist_store *s) {
    char *json = NULL;
    if (optimist_sync_status(s, &json) != OPTIMIST_OK) return -1;
    const char *c = strstr(json, "\"cursor\":\"");
    int cursor = c ? atoi(c + 10) : 0;
    optimist_free(json);
    return cursor;
}

/* Rounds are numbered from base + 1: a second child on a file keeps clear of the first's keys. */
static int child(const char *path, int base) {
    optimist_store *s = NULL;
    int rc = optimist_open(path, &s);
    if (rc != OPTIMIST_OK) die("open", rc);
    optimist_sync_options o = OPTIMIST_SYNC_OPTIONS_INIT;
    o.transport = serve;
    o.pull_interval_ms = 1;
    o.backoff_base_ms = 1;
    o.backoff_max_ms = 10;
    if ((rc = optimist_sync_start(s, &o)) != OPTIMIST_OK) die("sync_start", rc);
    for (int r = base + 1;; r++) {
        say("R %d", r);
        optimist_batch *b = batch_of("m", 'r', r);
        if (optimist_batch_incr(b, "m", "count", "n", 1) != OPTIMIST_OK) abort();
        uint64_t id;
        if ((rc = optimist_mutate(s, b, NULL, &id)) != OPTIMIST_OK) die("mutate", rc);
        optimist_batch_free(b);
        b = batch_of("s", 'r', r);
        if ((rc = optimist_server_apply(s, b)) != OPTIMIST_OK) die("server_apply", rc);
        optimist_batch_free(b);
        if ((r - base) % 3 == 0) {
            int cursor = cursor_of(s);
            if ((rc = optimist_flush(s)) != OPTIMIST_OK) die("flush", rc);
            say("F %d %d", r, cursor);
        }
    }
}

/* ---- the parent ----------------------------------------------------------------------------- */

static unsigned long long kills, reopened, lost, torn;
static unsigned long long sum_rounds, sum_flushed, sum_pages, early; /* early: killed before a round */
static unsigned long long reopen_kills; /* kills of a child reopening a file a child was killed on */

static long long now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* splitmix64 */
static uint64_t rng;
static uint64_t next_random(void) {
    uint64_t z = (rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* What a child said before it died: rounds are numbered from base + 1 (base: none yet). */
typedef struct {
    int base, rounds, pages, flushed_round, flushed_cursor;
} report;

static void note(report *r, const char *line) {
    int a, b;
    if (sscanf(line, "R %d", &a) == 1) r->rounds = a;
    else if (sscanf(line, "P %d", &a) == 1) r->pages = a > r->pages ? a : r->pages;
    else if (sscanf(line, "F %d %d", &a, &b) == 2) r->flushed_round = a, r->flushed_cursor = b;
}

/* Reads the child's lines until deadline (or its end, deadline 0 meaning: until EOF). */
static void read_lines(int fd, report *r, long long deadline, char *buf, size_t *len) {
    for (;;) {
        int wait = -1;
        if (deadline) {
            long long left = deadline - now_ms();
            if (left <= 0) return;
            wait = (int)left;
        }
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, wait) <= 0) {
            if (errno == EINTR) continue;
            if (deadline) return;
        }
        ssize_t n = read(fd, buf + *len, 4095 - *len);
        if (n <= 0) return;
        *len += (size_t)n;
        buf[*len] = '\0';
        char *nl;
        while ((nl = strchr(buf, '\n'))) {
            *nl = '\0';
            note(r, buf);
            *len -= (size_t)(nl + 1 - buf);
            memmove(buf, nl + 1, *len + 1);
        }
    }
}

/* 1: batch n of coll is all there, 0: none of it, -1: part of it (printed). */
static int batch_state(optimist_store *s, const char *coll, char tag, int n, const char *what) {
    char prefix[16], *got = NULL;
    snprintf(prefix, sizeof prefix, "%c%06d-", tag, n);
    if (optimist_scan(s, coll, prefix, 0, &got) != OPTIMIST_OK) {
        fprintf(stderr, "%s: scan of %s/%s failed: %s\n", what, coll, prefix, check_last_error());
        return -1;
    }
    char *want = scan_of(tag, n);
    int state = strcmp(got, "[]") == 0 ? 0 : strcmp(got, want) == 0 ? 1 : -1;
    if (state < 0) fprintf(stderr, "%s: %s/%s* is there in part: %.200s...\n", what, coll, prefix, got);
    free(want);
    optimist_free(got);
    return state;
}

/* A round's mutation is pending or committed as a whole: both ends of it agree. */
static int round_settled_whole(optimist_store *s, int n, const char *what) {
    char first[32], last[32], *json = NULL;
    key_of(first, sizeof first, 'r', n, 0, 'a');
    key_of(last, sizeof last, 'r', n, pairs_of(n) - 1, 'b');
    int p1 = -1, p2 = -1;
    optimist_is_pending(s, "m", first, &p1);
    optimist_is_pending(s, "m", last, &p2);
    int c1 = optimist_get_confirmed(s, "m", first, &json) == OPTIMIST_OK;
    optimist_free(json);
    json = NULL;
    int c2 = optimist_get_confirmed(s, "m", last, &json) == OPTIMIST_OK;
    optimist_free(json);
    if (p1 != p2 || c1 != c2 || p1 == c1) {
        fprintf(stderr, "%s: round %d's mutation is half committed (pending %d/%d, confirmed %d/%d)\n", what, n, p1, p2, c1, c2);
        return 0;
    }
    return 1;
}

/* Checks the reopened file against what the children said (one, or two when a second was
 * killed while it reopened the first one's file). */
static void verify(const char *path, const report *r, int nr, const char *what) {
    optimist_store *s = NULL;
    int rc = optimist_open(path, &s);
    if (rc != OPTIMIST_OK) {
        fprintf(stderr, "%s: reopen returned %d: %s\n", what, rc, check_last_error());
        check_failures++;
        return;
    }
    reopened++;
    unsigned long long lost0 = lost, torn0 = torn;
    /* Rounds: each child's a prefix of whole ones, at least up to its flushed one, in both
     * collections. */
    int counted = 0;
    for (int c = 0; c < 2; c++) {
        const char *coll = c ? "s" : "m";
        for (int k = 0; k < nr; k++) {
            int gap = 0;
            for (int n = r[k].base + 1; n <= r[k].rounds; n++) {
                int st = batch_state(s, coll, 'r', n, what);
                if (st < 0) torn++;
                if (st == 1 && gap) {
                    fprintf(stderr, "%s: %s round %d is there after a missing round\n", what, coll, n);
                    torn++;
                }
                if (st == 1 && !gap && c == 0) counted++;
                if (st != 1) gap = 1;
                if (st != 1 && n <= r[k].flushed_round) {
                    fprintf(stderr, "%s: %s round %d was flushed and is missing\n", what, coll, n);
                    lost++;
                }
                if (c == 0 && st == 1 && !round_settled_whole(s, n, what)) torn++;
            }
        }
    }
    /* The counter moved with each round's mutation, never apart from it. */
    char *json = NULL, want[32];
    snprintf(want, sizeof want, "{\"n\":%d}", counted);
    rc = optimist_get(s, "m", "count", &json);
    if (counted ? rc != OPTIMIST_OK || strcmp(json, want) != 0 : rc != OPTIMIST_NOTFOUND) {
        fprintf(stderr, "%s: m/count is %s with %d rounds there\n", what, rc == OPTIMIST_OK ? json : "absent", counted);
        torn++;
    }
    optimist_free(json);
    /* Pages: whole, exactly those up to the persisted cursor, which is at least the flushed one. */
    int cursor = cursor_of(s), pages = 0, flushed_cursor = 0;
    for (int k = 0; k < nr; k++) {
        if (r[k].pages > pages) pages = r[k].pages;
        if (r[k].flushed_cursor > flushed_cursor) flushed_cursor = r[k].flushed_cursor;
    }
    if (cursor < flushed_cursor) {
        fprintf(stderr, "%s: the cursor is %d, %d was flushed\n", what, cursor, flushed_cursor);
        lost++;
    }
    for (int k = 1; k <= pages || k <= cursor; k++) {
        int st = batch_state(s, "p", 'k', k, what);
        if (st < 0) torn++;
        if ((st == 1) != (k <= cursor)) {
            fprintf(stderr, "%s: page %d is %s, the cursor is %d\n", what, k, st == 1 ? "there" : "missing", cursor);
            if (k <= flushed_cursor) lost++;
            else torn++;
        }
    }
    /* And the file takes new work. */
    optimist_batch *b = batch_of("z", 'r', 1);
    uint64_t id;
    CHECK_OK(optimist_mutate(s, b, NULL, &id));
    optimist_batch_free(b);
    CHECK_OK(optimist_close(s));
    if (lost != lost0 || torn != torn0) check_failures++;
}

/* Runs a child on path and kills it kill_ms after it started (during_open) or after its first
 * round began; fills in what it said. */
static void run_child(const char *path, int base, int kill_ms, int during_open, report *r) {
    int fds[2];
    if (pipe(fds) != 0) abort();
    long long start = now_ms();
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], 1);
        close(fds[0]);
        close(fds[1]);
        char arg[16];
        snprintf(arg, sizeof arg, "%d", base);
        execl("/proc/self/exe", "crash_sweep", "child", path, arg, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    *r = (report){base, base, 0, base, 0};
    char buf[4096];
    size_t len = 0;
    if (during_open) {
        read_lines(fds[0], r, start + kill_ms, buf, &len);
    } else {
        /* From the first round on (the child is open and syncing). */
        while (r->rounds == base && now_ms() < start + 10000) read_lines(fds[0], r, now_ms() + 5, buf, &len);
        read_lines(fds[0], r, now_ms() + kill_ms, buf, &len);
    }
    kill(pid, SIGKILL);
    read_lines(fds[0], r, 0, buf, &len); /* what it wrote before it died counts */
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    kills++;
    if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL) {
        fprintf(stderr, "kill %llu: the child ended by itself (status %d) before the kill at %d ms\n", kills, status, kill_ms);
        check_failures++;
    }
    sum_rounds += (unsigned long long)(r->rounds - base);
    sum_flushed += (unsigned long long)(r->flushed_round - base);
    early += r->rounds == base;
}

/* One sweep: a child on a new file killed at a random instant, then the file reopened and
 * checked. One sweep in ten kills the child while it starts, and then mostly after a first
 * child was killed at work on the same file: the second one dies while it recovers that file. */
static void one_sweep(const char *dir) {
    char path[300], wal[310], what[160];
    snprintf(path, sizeof path, "%s/crash.db", dir);
    snprintf(wal, sizeof wal, "%s-wal", path);
    unlink(path);
    unlink(wal);
    report r[2];
    int nr = 0;
    if (next_random() % 10 == 0) {
        int twice = next_random() % 4 != 0;
        if (twice) run_child(path, 0, (int)(next_random() % MAX_DELAY_MS), 0, &r[nr++]);
        int kill_ms = (int)(next_random() % OPEN_DELAY_MS);
        run_child(path, twice ? 100000 : 0, kill_ms, 1, &r[nr++]);
        reopen_kills += twice;
        snprintf(what, sizeof what, "sweep %llu (%s, killed +%d ms after the start; rounds to %d, flushed %d)",
                 reopened + 1, twice ? "second child" : "one child", kill_ms, r[nr - 1].rounds, r[nr - 1].flushed_round);
    } else {
        int kill_ms = (int)(next_random() % MAX_DELAY_MS);
        run_child(path, 0, kill_ms, 0, &r[nr++]);
        snprintf(what, sizeof what, "sweep %llu (killed +%d ms after round 1; rounds to %d, flushed %d, page %d)",
                 reopened + 1, kill_ms, r[0].rounds, r[0].flushed_round, r[0].pages);
    }
    verify(path, r, nr, what);
    int pages = 0;
    for (int k = 0; k < nr; k++) pages = r[k].pages > pages ? r[k].pages : pages;
    sum_pages += (unsigned long long)pages;
    if (getenv("OPTIMIST_CRASH_VERBOSE")) fprintf(stderr, "%s\n", what);
}

int main(int argc, char **argv) {
    if (argc == 4 && strcmp(argv[1], "child") == 0) return child(argv[2], atoi(argv[3]));
    int n = 200;
    uint64_t seed = 1;
    const char *env = getenv("OPTIMIST_CRASH_KILLS");
    if (env) n = atoi(env);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--kills") == 0 && i + 1 < argc) n = atoi(argv[++i]);
        else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc) seed = strtoull(argv[++i], NULL, 10);
        else { fprintf(stderr, "usage: crash_sweep [--kills N] [--seed S]\n"); return 2; }
    }
    rng = seed;
    /* In /dev/shm when there is one: a killed process leaves its writes in the page cache on
     * any file system, so what survives a kill is the same, and flushes cost no disk sync. */
    char dir[64];
    snprintf(dir, sizeof dir, "%s/optimist-crash-XXXXXX", access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
    if (!mkdtemp(dir)) return 2;
    long long t0 = now_ms();
    for (int i = 0; i < n; i++) one_sweep(dir);
    char path[300];
    snprintf(path, sizeof path, "%s/crash.db", dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/crash.db-wal", dir);
    unlink(path);
    rmdir(dir);
    printf("crash_sweep: %d sweeps (seed %" PRIu64 "), %llu kills (%llu before a first round, %llu of a child reopening "
           "a killed one's file), %llu reopened, %llu lost, %llu torn; %llu rounds begun, %llu flushed, "
           "%llu pages served (%d pairs each, %d every fifth round and page); %lld s\n",
           n, seed, kills, early, reopen_kills, reopened, lost, torn, sum_rounds, sum_flushed, sum_pages, PAIRS, BIG_PAIRS,
           (now_ms() - t0) / 1000);
    return CHECK_DONE();
}
