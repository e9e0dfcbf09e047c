/* The write path under contention: what a UI thread's tap waits for while a big pull applies,
 * whether two writers beat one, and what one tap and one commit cost through the C API.
 *
 *   writers STORE [reps]
 *
 * STORE is "mem" (an in-memory store) or a path (a store file, created afresh; its -wal and
 * -shm beside it are removed first). Each phase runs `reps` times (default 3) on a new store and
 * prints one JSON line per run:
 *
 *   tap_beside_batches  a tapping thread (optimist_put of one record, as fast as it can) while
 *                       another applies five 100k-record batches (optimist_server_apply), and a
 *                       third commits each tap once it is made (the sync's part): the longest
 *                       mutate, its p50 and p99.9, taps made; the longest commit and its p50
 *                       (WRITERS_TAP_EVERY_US=N: a tap every N microseconds instead;
 *                       WRITERS_RUSAGE=1: each slow tap's context switches and page faults);
 *   get_beside_batches  a reading thread (optimist_get of the 1k records, round robin) beside the
 *                       same batches: the longest get, p50, and gets/s against the same reader
 *                       alone (first 0.3 s of the run);
 *   writers             threads doing optimist_put + optimist_commit of their own records: one
 *                       thread, then two, each for 0.5 s; total taps/s and two ÷ one;
 *   commit_path         a 1k-record store: 20k taps through a batch (optimist_batch_new,
 *                       optimist_batch_put with JSON, optimist_mutate, optimist_batch_free), then
 *                       their 20k commits one by one; 20k optimist_put taps and their commits; 20k
 *                       gets; each one's p50.
 *
 * Build (here or for another machine: copy the binary with liboptimist and its libraries):
 *   cc -O2 -pthread -IInclude Benchmarks/C/writers.c -Lbuild -loptimist \
 *      -Wl,-rpath,'$ORIGIN' -Wl,-rpath,$PWD/build -o /tmp/writers
 */
#define _GNU_SOURCE  /* RUSAGE_THREAD */
#include "optimist.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#define RECORDS 1000
#define BATCHES 5
#define BATCH_RECORDS 100000
#define TAPS 20000

static const char *store_path;  /* NULL: in memory */

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void die(const char *what) {
    fprintf(stderr, "writers: %s: %s\n", what, optimist_last_error());
    exit(1);
}

static void ok(int rc, const char *what) {
    if (rc != OPTIMIST_OK) die(what);
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Nearest-rank quantile of sorted samples, in microseconds. */
static double q_us(const uint64_t *s, size_t n, double p) {
    size_t rank = (size_t)(p * (double)n + 0.999999999);
    if (rank < 1) rank = 1;
    if (rank > n) rank = n;
    return (double)s[rank - 1] / 1000.0;
}

static void record_json(char *out, size_t cap, const char *key, long n) {
    snprintf(out, cap, "{\"habit\":\"%s\",\"n\":%ld,\"note\":\"checked in from the widget\",\"done\":true}", key, n);
}

static optimist_store *open_store(void) {
    optimist_store *s = NULL;
    if (store_path) {
        char p[4096];
        unlink(store_path);
        snprintf(p, sizeof p, "%s-wal", store_path);
        unlink(p);
        snprintf(p, sizeof p, "%s-shm", store_path);
        unlink(p);
    }
    ok(optimist_open(store_path, &s), "open");
    /* RECORDS confirmed records: what the taps and gets use. */
    optimist_batch *b = NULL;
    ok(optimist_batch_new(&b), "batch_new");
    for (int i = 0; i < RECORDS; i++) {
        char key[32], json[256];
        snprintf(key, sizeof key, "r%04d", i);
        record_json(json, sizeof json, key, i);
        ok(optimist_batch_put(b, "items", key, json), "batch_put");
    }
    ok(optimist_server_apply(s, b), "server_apply");
    optimist_batch_free(b);
    ok(optimist_flush(s), "flush");
    return s;
}

/* The five batches, built before the clock starts: a pull's page arrives as a batch. */
static optimist_batch *batches[BATCHES];

static void build_batches(void) {
    for (int n = 0; n < BATCHES; n++) {
        ok(optimist_batch_new(&batches[n]), "batch_new");
        for (int i = 0; i < BATCH_RECORDS; i++) {
            char key[32], json[256];
            snprintf(key, sizeof key, "p%d-%06d", n, i);
            record_json(json, sizeof json, key, i);
            ok(optimist_batch_put(batches[n], "pulled", key, json), "batch_put");
        }
    }
}

typedef struct {
    optimist_store *s;
    atomic_int done;
    uint64_t batch_ns;
    uint64_t start, ends[BATCHES];  /* each batch's end, for the slow taps' report */
} batcher;

static void *apply_batches(void *arg) {
    batcher *b = arg;
    b->start = now_ns();
    /* WRITERS_NO_BATCHES=1: the same time with no batch (a control for the machine's noise). */
    int none = getenv("WRITERS_NO_BATCHES") != NULL;
    for (int n = 0; n < BATCHES; n++) {
        if (none) {
            struct timespec d = {0, 250000000};
            nanosleep(&d, NULL);
        } else {
            ok(optimist_server_apply(b->s, batches[n]), "server_apply (batch)");
        }
        b->ends[n] = now_ns() - b->start;
    }
    b->batch_ns = now_ns() - b->start;
    atomic_store(&b->done, 1);
    return NULL;
}

/* Samples kept by a timing loop (grown as needed). */
typedef struct {
    uint64_t *ns;
    size_t n, cap;
} samples;

static void add(samples *s, uint64_t v) {
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 1 << 16;
        s->ns = realloc(s->ns, s->cap * sizeof *s->ns);
        if (!s->ns) die("realloc");
    }
    s->ns[s->n++] = v;
}

/* The tapper's mutations, for the committing thread to commit in order as they come. */
#define MAX_TAPS (1 << 22)
static uint64_t tap_ids[MAX_TAPS];
static atomic_size_t taps_made;

typedef struct {
    optimist_store *s;
    atomic_int *stop;
    samples commits;
} committer;

/* The sync's part: commits each tap once the tapper has made it (as a server's answers do). */
static void *commit_loop(void *arg) {
    committer *c = arg;
    size_t next = 0;
    for (;;) {
        size_t made = atomic_load(&taps_made);
        if (next == made) {
            if (atomic_load(c->stop)) break;
            sched_yield();
            continue;
        }
        uint64_t t0 = now_ns();
        ok(optimist_commit(c->s, tap_ids[next], NULL), "commit");
        add(&c->commits, now_ns() - t0);
        next++;
    }
    return NULL;
}

/* A tap over 1 ms: when (ns from the batches' start), how long, and with WRITERS_RUSAGE=1 its
 * context switches and page faults. */
typedef struct {
    uint64_t at, ns;
    long vcsw, ivcsw, faults;
} slow_tap;

static int slow_tap_by_time(const void *a, const void *b) {
    uint64_t x = ((const slow_tap *)a)->at, y = ((const slow_tap *)b)->at;
    return x < y ? -1 : x > y;
}

static void tap_beside_batches(int run) {
    optimist_store *s = open_store();
    batcher b = {.s = s};
    atomic_int stop = 0;
    committer c = {.s = s, .stop = &stop};
    samples mut = {0};
    atomic_store(&taps_made, 0);
    pthread_t t, tc;
    /* WRITERS_NO_COMMIT=1: no committing thread (a control). */
    int committing = getenv("WRITERS_NO_COMMIT") == NULL;
    if (committing) pthread_create(&tc, NULL, commit_loop, &c);
    pthread_create(&t, NULL, apply_batches, &b);
    /* The SLOW longest taps over 1 ms (see slow_tap). */
    enum { SLOW = 8 };
    slow_tap slow_taps[SLOW];
    /* WRITERS_RUSAGE=1: each slow tap's context switches (voluntary: it waited; involuntary:
     * it was preempted) and page faults, from getrusage around every tap (a syscall each). */
    int rusage = getenv("WRITERS_RUSAGE") != NULL;
    int slow = 0;
    size_t over_ms = 0;
    long seq = 0;
    /* WRITERS_TAP_EVERY_US=N: one tap every N microseconds (a UI's pace, well above a
     * person's), instead of as fast as the thread can. */
    const char *pace_env = getenv("WRITERS_TAP_EVERY_US");
    uint64_t pace_ns = pace_env ? (uint64_t)atol(pace_env) * 1000u : 0, next_tap = now_ns();
    while (!atomic_load(&b.done) && seq < MAX_TAPS) {
        if (pace_ns) {
            while (now_ns() < next_tap) {}
            next_tap += pace_ns;
        }
        char key[32], json[256];
        snprintf(key, sizeof key, "r%04ld", seq % RECORDS);
        record_json(json, sizeof json, key, seq);
        struct rusage r0, r1;
        if (rusage) getrusage(RUSAGE_THREAD, &r0);
        uint64_t t0 = now_ns();
        ok(optimist_put(s, "items", key, json, &tap_ids[seq]), "put");
        uint64_t took = now_ns() - t0;
        if (rusage) getrusage(RUSAGE_THREAD, &r1);
        add(&mut, took);
        if (took > 1000000) {
            over_ms++;
            /* Kept: the SLOW longest so far (a new one replaces the shortest kept). */
            int at = slow < SLOW ? slow++ : -1;
            if (at < 0) {
                at = 0;
                for (int i = 1; i < SLOW; i++) if (slow_taps[i].ns < slow_taps[at].ns) at = i;
                if (slow_taps[at].ns >= took) at = -1;
            }
            if (at >= 0) {
                slow_taps[at] = (slow_tap){.at = t0 - b.start, .ns = took};
                if (rusage) {
                    slow_taps[at].vcsw = r1.ru_nvcsw - r0.ru_nvcsw;
                    slow_taps[at].ivcsw = r1.ru_nivcsw - r0.ru_nivcsw;
                    slow_taps[at].faults = (r1.ru_minflt - r0.ru_minflt) + (r1.ru_majflt - r0.ru_majflt);
                }
            }
        }
        atomic_store(&taps_made, (size_t)++seq);
    }
    pthread_join(t, NULL);
    atomic_store(&stop, 1);
    if (committing) pthread_join(tc, NULL);
    qsort(mut.ns, mut.n, sizeof *mut.ns, cmp_u64);
    qsort(c.commits.ns, c.commits.n, sizeof *c.commits.ns, cmp_u64);
    printf("{\"phase\":\"tap_beside_batches\",\"store\":\"%s\",\"run\":%d,\"tap_every_us\":%llu,\"taps\":%zu,"
           "\"mutate_max_us\":%.1f,\"mutate_p50_us\":%.2f,\"mutate_p999_us\":%.1f,"
           "\"commits\":%zu,\"commit_max_us\":%.1f,\"commit_p50_us\":%.2f,\"batches_ms\":%.1f}\n",
           store_path ? "file" : "mem", run, (unsigned long long)(pace_ns / 1000), mut.n, q_us(mut.ns, mut.n, 1.0),
           q_us(mut.ns, mut.n, 0.5), q_us(mut.ns, mut.n, 0.999), c.commits.n, c.commits.n ? q_us(c.commits.ns, c.commits.n, 1.0) : 0,
           c.commits.n ? q_us(c.commits.ns, c.commits.n, 0.5) : 0, b.batch_ns / 1e6);
    if (over_ms) {
        printf("  taps over 1 ms: %zu; the longest (at ms: took ms):", over_ms);
        /* In the order they were made. */
        qsort(slow_taps, (size_t)slow, sizeof *slow_taps, slow_tap_by_time);
        for (int i = 0; i < slow; i++) {
            const slow_tap *t = &slow_taps[i];
            printf(" %.1f:%.1f", t->at / 1e6, t->ns / 1e6);
            if (rusage) printf("(vcsw %ld ivcsw %ld faults %ld)", t->vcsw, t->ivcsw, t->faults);
        }
        printf("; batches ended at ms:");
        for (int n = 0; n < BATCHES; n++) printf(" %.1f", b.ends[n] / 1e6);
        printf("\n");
    }
    fflush(stdout);
    free(mut.ns);
    free(c.commits.ns);
    ok(optimist_close(s), "close");
}

/* Gets in a loop until `stop` (or for `for_ns`), timing each. */
static size_t get_loop(optimist_store *s, atomic_int *stop, uint64_t for_ns, samples *out) {
    size_t count = 0;
    uint64_t start = now_ns();
    while (stop ? !atomic_load(stop) : now_ns() - start < for_ns) {
        char key[32];
        snprintf(key, sizeof key, "r%04zu", count % RECORDS);
        char *json = NULL;
        uint64_t t0 = now_ns();
        ok(optimist_get(s, "items", key, &json), "get");
        uint64_t t1 = now_ns();
        optimist_free(json);
        if (out) add(out, t1 - t0);
        count++;
    }
    return count;
}

static void get_beside_batches(int run) {
    optimist_store *s = open_store();
    uint64_t alone_ns = 300000000ull;
    size_t alone = get_loop(s, NULL, alone_ns, NULL);
    batcher b = {.s = s};
    samples got = {0};
    pthread_t t;
    uint64_t t0 = now_ns();
    pthread_create(&t, NULL, apply_batches, &b);
    size_t beside = get_loop(s, &b.done, 0, &got);
    uint64_t beside_ns = now_ns() - t0;
    pthread_join(t, NULL);
    qsort(got.ns, got.n, sizeof *got.ns, cmp_u64);
    double rate_alone = alone / (alone_ns / 1e9), rate_beside = beside / (beside_ns / 1e9);
    printf("{\"phase\":\"get_beside_batches\",\"store\":\"%s\",\"run\":%d,\"gets\":%zu,"
           "\"get_max_us\":%.1f,\"get_p50_us\":%.2f,\"get_p999_us\":%.1f,\"gets_per_s_alone\":%.0f,"
           "\"gets_per_s_beside\":%.0f,\"beside_over_alone\":%.2f}\n",
           store_path ? "file" : "mem", run, got.n, q_us(got.ns, got.n, 1.0), q_us(got.ns, got.n, 0.5),
           q_us(got.ns, got.n, 0.999), rate_alone, rate_beside, rate_beside / rate_alone);
    fflush(stdout);
    free(got.ns);
    ok(optimist_close(s), "close");
}

typedef struct {
    optimist_store *s;
    int index;
    atomic_int *go, *stop;
    long taps;
} writer;

static void *write_loop(void *arg) {
    writer *w = arg;
    while (!atomic_load(w->go)) {}
    long n = 0;
    while (!atomic_load(w->stop)) {
        char key[32], json[256];
        /* Each writer its own half of the records: no two writers touch one record. */
        snprintf(key, sizeof key, "r%04ld", (n * 2 + w->index) % RECORDS);
        record_json(json, sizeof json, key, n);
        uint64_t id = 0;
        ok(optimist_put(w->s, "items", key, json, &id), "put");
        ok(optimist_commit(w->s, id, NULL), "commit");
        n++;
    }
    w->taps = n;
    return NULL;
}

/* Taps per second of `threads` writers over `for_ns`. */
static double writers_rate(optimist_store *s, int threads, uint64_t for_ns) {
    atomic_int go = 0, stop = 0;
    writer w[2];
    pthread_t t[2];
    for (int i = 0; i < threads; i++) {
        w[i] = (writer){.s = s, .index = i, .go = &go, .stop = &stop};
        pthread_create(&t[i], NULL, write_loop, &w[i]);
    }
    uint64_t t0 = now_ns();
    atomic_store(&go, 1);
    struct timespec d = {.tv_sec = (time_t)(for_ns / 1000000000ull), .tv_nsec = (long)(for_ns % 1000000000ull)};
    nanosleep(&d, NULL);
    atomic_store(&stop, 1);
    long total = 0;
    for (int i = 0; i < threads; i++) {
        pthread_join(t[i], NULL);
        total += w[i].taps;
    }
    return total / ((now_ns() - t0) / 1e9);
}

static void writers_phase(int run) {
    optimist_store *s = open_store();
    uint64_t span = 500000000ull;
    writers_rate(s, 1, span / 5);  /* warm-up */
    double one = writers_rate(s, 1, span);
    double two = writers_rate(s, 2, span);
    printf("{\"phase\":\"writers\",\"store\":\"%s\",\"run\":%d,\"one_per_s\":%.0f,\"two_per_s\":%.0f,"
           "\"two_over_one\":%.2f}\n",
           store_path ? "file" : "mem", run, one, two, two / one);
    fflush(stdout);
    ok(optimist_close(s), "close");
}

static uint64_t ids[TAPS];
static uint64_t lat[TAPS];

static double p50_of(void) {
    qsort(lat, TAPS, sizeof *lat, cmp_u64);
    return q_us(lat, TAPS, 0.5);
}

static void commit_path(int run) {
    optimist_store *s = open_store();
    char key[32], json[256];
    for (int i = 0; i < TAPS; i++) {
        snprintf(key, sizeof key, "r%04d", i % RECORDS);
        record_json(json, sizeof json, key, i);
        uint64_t t0 = now_ns();
        optimist_batch *b = NULL;
        ok(optimist_batch_new(&b), "batch_new");
        ok(optimist_batch_put(b, "items", key, json), "batch_put");
        ok(optimist_mutate(s, b, NULL, &ids[i]), "mutate");
        optimist_batch_free(b);
        lat[i] = now_ns() - t0;
    }
    double batch_tap = p50_of();
    for (int i = 0; i < TAPS; i++) {
        uint64_t t0 = now_ns();
        ok(optimist_commit(s, ids[i], NULL), "commit");
        lat[i] = now_ns() - t0;
    }
    double batch_commit = p50_of();
    for (int i = 0; i < TAPS; i++) {
        snprintf(key, sizeof key, "r%04d", i % RECORDS);
        record_json(json, sizeof json, key, i);
        uint64_t t0 = now_ns();
        ok(optimist_put(s, "items", key, json, &ids[i]), "put");
        lat[i] = now_ns() - t0;
    }
    double put_tap = p50_of();
    for (int i = 0; i < TAPS; i++) {
        uint64_t t0 = now_ns();
        ok(optimist_commit(s, ids[i], NULL), "commit");
        lat[i] = now_ns() - t0;
    }
    double put_commit = p50_of();
    for (int i = 0; i < TAPS; i++) {
        snprintf(key, sizeof key, "r%04d", i % RECORDS);
        char *out = NULL;
        uint64_t t0 = now_ns();
        ok(optimist_get(s, "items", key, &out), "get");
        lat[i] = now_ns() - t0;
        optimist_free(out);
    }
    double get = p50_of();
    printf("{\"phase\":\"commit_path\",\"store\":\"%s\",\"run\":%d,\"batch_tap_p50_us\":%.2f,"
           "\"batch_commit_p50_us\":%.2f,\"put_tap_p50_us\":%.2f,\"put_commit_p50_us\":%.2f,\"get_p50_us\":%.2f}\n",
           store_path ? "file" : "mem", run, batch_tap, batch_commit, put_tap, put_commit, get);
    fflush(stdout);
    ok(optimist_close(s), "close");
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: writers mem|FILE [reps] [phase]\n");
        return 2;
    }
    store_path = strcmp(argv[1], "mem") == 0 ? NULL : argv[1];
#ifdef __linux__
    /* WRITERS_NO_THP=1: no transparent huge pages for this process (a control: a page fault
     * that compacts memory for a huge page stalls the faulting thread for milliseconds). */
    if (getenv("WRITERS_NO_THP")) prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0);
#endif
    int reps = argc > 2 ? atoi(argv[2]) : 3;
    const char *only = argc > 3 ? argv[3] : NULL;
    if (!only || strstr(only, "batches")) build_batches();
    for (int r = 1; r <= reps; r++) {
        if (!only || strcmp(only, "tap_beside_batches") == 0) tap_beside_batches(r);
        if (!only || strcmp(only, "get_beside_batches") == 0) get_beside_batches(r);
        if (!only || strcmp(only, "writers") == 0) writers_phase(r);
        if (!only || strcmp(only, "commit_path") == 0) commit_path(r);
    }
    return 0;
}
