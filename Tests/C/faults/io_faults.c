/*
 * io_faults.c - a store file on a disk that fails: the workload below runs once for every I/O
 * call it makes, with that call failing (faultvfs.h), and then once more for each with every
 * write from that call on failing until the disk "comes back".
 *
 * What must hold, each time:
 *   - every call returns OK or OPTIMIST_IO (with a message); the one that meets the failure,
 *     or the store's next call (a background write failed), says IO; nothing crashes or hangs;
 *   - a call that returned IO changed nothing: done again, it goes through;
 *   - reads keep answering with the visible state while writes fail;
 *   - once the disk is back, a flush succeeds;
 *   - after a reopen (with a healthy disk) every record reads as what the last successful
 *     flush made durable, or something later; exactly the latest when the run's last flush
 *     succeeded; a mutation's two records always agree (no mutation half applied).
 *
 *   io_faults                   the CI sweep: every I/O call, stride OPTIMIST_IO_FAULTS_STRIDE
 *                               (default 1), sticky faults at every 4th
 *   io_faults --full            every I/O call, both kinds of fault
 *   io_faults --only N [--sticky]   one run, failing call N (for a finding)
 *
 * The store files live in /dev/shm when it exists: fsync there is free, and the failures are
 * the VFS's anyway.
 */
#define _GNU_SOURCE /* mkdtemp */
#include "../check.h"
#include "faultvfs.h"
#include "io_model.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[256], path[300];
static io_model M;
static int sticky_run, healed_in_phase, reported_io, close_failed;
static int view_defined, view_durable; /* the view "count": taken by the store, made durable */
static unsigned long long runs, errors, lost_total, torn_total;
/* Runs whose failing call no store call reported. Never one of optimist_open's own calls (it
 * waits for all of them, its restore thread's reads of the mutations too, and must say IO);
 * elsewhere it can be right: a close's own bookkeeping (marking the file closed, the final
 * checkpoint) is best effort and costs nothing when it fails, and a background write that
 * failed may be retried and go through before any call asked (close's flush does that), with
 * nothing lost. The I/O calls of each open are noted to tell. */
static unsigned long long silent;
static unsigned long long open_from[4], open_to[4];
static int nopens;
/* IO errors by the call that returned them. */
static struct { const char *prefix; unsigned long long n; } by_call[5] = {
    {"optimist_open", 0}, {"optimist_get", 0}, {"optimist_flush", 0}, {"optimist_close", 0}, {"optimist_", 0}};

/* ---- calls ----------------------------------------------------------------------------------- */

/* A call returned IO: it must say so in words. */
static void saw_io(const char *what) {
    const char *msg = optimist_last_error();
    if (!msg || !msg[0]) {
        fprintf(stderr, "%s returned IO with no message\n", what);
        check_failures++;
    }
    if (getenv("OPTIMIST_IO_FAULTS_VERBOSE")) fprintf(stderr, "  IO from %s: %s\n", what, msg ? msg : "");
    errors++;
    for (int i = 0; i < 5; i++)
        if (strncmp(what, by_call[i].prefix, strlen(by_call[i].prefix)) == 0) {
            by_call[i].n++;
            break;
        }
    reported_io = 1;
}

/* A call that changes the store: on IO (this call met the failure, or reports an earlier
 * background one) it changed nothing, so it is made again and must go through: the error is
 * reported once, and the store keeps taking changes in memory while the disk is down. */
#define CHANGE(call)                                                                           \
    do {                                                                                       \
        int rc_ = (call);                                                                      \
        if (rc_ == OPTIMIST_IO) {                                                              \
            saw_io(#call);                                                                     \
            rc_ = (call);                                                                      \
        }                                                                                      \
        if (rc_ != OPTIMIST_OK) {                                                              \
            fprintf(stderr, "%s:%d: %s returned %d (%s): %s\n", __FILE__, __LINE__, #call,     \
                    rc_, optimist_errstr(rc_), check_last_error());                            \
            check_failures++;                                                                  \
        }                                                                                      \
    } while (0)

/* A flush: OK makes everything durable; IO is expected while the disk is down. A flush after a
 * one-off failure reports it, and the next one retries and must succeed. */
static int flush(optimist_store *s) {
    int rc = optimist_flush(s);
    if (rc == OPTIMIST_IO) {
        saw_io("optimist_flush");
        if (!sticky_run || healed_in_phase) rc = optimist_flush(s);
        if (rc == OPTIMIST_IO) saw_io("optimist_flush (again)");
    }
    if (rc == OPTIMIST_OK) {
        model_durable(&M);
        view_durable |= view_defined;
    } else if (rc != OPTIMIST_IO || !sticky_run || healed_in_phase) {
        fprintf(stderr, "flush returned %d (%s): %s\n", rc, optimist_errstr(rc), check_last_error());
        check_failures++;
    }
    return rc;
}

/* The version of k the store shows; a read that met the failing call says IO, and reading
 * again works (only the first failing call can be a read). */
static int read_version(optimist_store *s, const model_key *k) {
    int got = model_read(s, k);
    if (got == MODEL_ERROR && model_read_rc == OPTIMIST_IO) {
        saw_io("optimist_get");
        got = model_read(s, k);
    }
    return got;
}

/* Reads keep answering: every record the model knows reads as its latest version. */
static void reads_answer(optimist_store *s, const char *when) {
    for (int i = 0; i < M.nkeys; i++) {
        model_key *k = &M.keys[i];
        int got = read_version(s, k);
        if (got != model_latest(k)) {
            fprintf(stderr, "%s: f/%s reads as version %d (rc %d), latest is %d (%s)\n", when, k->key, got,
                    model_read_rc, model_latest(k), check_last_error());
            check_failures++;
        }
    }
}

static optimist_store *open_store(void) {
    optimist_open_options o = OPTIMIST_OPEN_OPTIONS_INIT;
    o.cache_bytes = 1; /* no cache: reads go to the file */
    optimist_store *s = NULL;
    open_from[nopens] = faultvfs_total() + 1;
    int rc = optimist_open_ext(path, &o, &s);
    open_to[nopens++] = faultvfs_total();
    if (rc == OPTIMIST_IO) {
        saw_io("optimist_open");
        /* A failed open leaves nothing held; opening again works once the disk does. */
        if (sticky_run) faultvfs_heal();
        rc = optimist_open_ext(path, &o, &s);
    }
    if (rc != OPTIMIST_OK) {
        fprintf(stderr, "open returned %d (%s): %s\n", rc, optimist_errstr(rc), check_last_error());
        check_failures++;
        return NULL;
    }
    return s;
}

/* ---- the workload ---------------------------------------------------------------------------- */

/* A batch of puts (version v; 0: deletes) of keys named fmt % i for i in [from, to). */
static optimist_batch *put_batch(const char *fmt, int from, int to, int v) {
    optimist_batch *b = NULL;
    optimist_batch_new(&b);
    char key[16], json[MODEL_BIG_PAD + 64];
    for (int i = from; i < to; i++) {
        snprintf(key, sizeof key, fmt, i);
        model_key *k = model_find(&M, key);
        if (v) {
            model_json(k, v, json, sizeof json);
            CHECK_OK(optimist_batch_put(b, "f", key, json));
        } else {
            CHECK_OK(optimist_batch_delete(b, "f", key));
        }
    }
    return b;
}

static void model_puts(const char *fmt, int from, int to, int v) {
    char key[16];
    for (int i = from; i < to; i++) {
        snprintf(key, sizeof key, fmt, i);
        model_set(&M, key, v);
    }
}

/* Lets the writer write what the last call queued on its own (it gathers calls for 2 ms), so
 * a failure there is one no flush waits for: the store's next call must report it. */
static void background_write(void) { usleep(6000); }

/* One mutation of a pair of records (NAME-a, NAME-b), which must always agree. */
static uint64_t mutate_pair(optimist_store *s, const char *name, int v) {
    char fmt[16];
    snprintf(fmt, sizeof fmt, "%s-%%c", name);
    optimist_batch *b = NULL;
    optimist_batch_new(&b);
    char key[16], json[MODEL_BIG_PAD + 64];
    for (char c = 'a'; c <= 'b'; c++) {
        snprintf(key, sizeof key, "%s-%c", name, c);
        model_json(model_find(&M, key), v, json, sizeof json);
        CHECK_OK(optimist_batch_put(b, "f", key, json));
    }
    uint64_t id = 0;
    CHANGE(optimist_mutate(s, b, NULL, &id));
    optimist_batch_free(b);
    for (char c = 'a'; c <= 'b'; c++) {
        snprintf(key, sizeof key, "%s-%c", name, c);
        model_set(&M, key, v);
    }
    return id;
}

static void server_apply(optimist_store *s, optimist_batch *b) {
    CHANGE(optimist_server_apply(s, b));
    optimist_batch_free(b);
}

/* The disk comes back at the end of the phase it broke in: before close when the fault was an
 * even-numbered call (the flush must then succeed), after close when odd (close says IO and
 * what was never flushed may be lost). */
static void end_phase(optimist_store *s, unsigned long long n) {
    int broken = sticky_run && faultvfs_failed() > 0 && !healed_in_phase;
    if (broken && n % 2 == 0) {
        faultvfs_heal();
        healed_in_phase = 1;
        if (flush(s) != OPTIMIST_OK) fprintf(stderr, "the flush after the disk came back failed\n");
    }
    int rc = optimist_close(s);
    if (rc == OPTIMIST_OK) {
        model_durable(&M);
        view_durable |= view_defined;
    } else if (rc == OPTIMIST_IO) {
        saw_io("optimist_close");
        close_failed = 1;
    } else {
        fprintf(stderr, "close returned %d: %s\n", rc, check_last_error());
        check_failures++;
    }
    if (broken) {
        faultvfs_heal();
        healed_in_phase = 1;
    }
}

/* After a close that said IO, what it had not written is gone (optimist_close): every record
 * must read as its durable version or a later one, and from here on the model expects what the
 * file holds. */
static void settle(optimist_store *s) {
    close_failed = 0;
    for (int i = 0; i < M.nkeys; i++) {
        model_key *k = &M.keys[i];
        int got = read_version(s, k), ok = k->durable < 0 && got == 0;
        for (int j = k->durable < 0 ? 0 : k->durable; j < k->n; j++) ok |= k->history[j] == got;
        if (!ok) {
            fprintf(stderr, "after a failed close: f/%s reads as version %d; durable %d, latest %d\n", k->key, got,
                    k->durable < 0 ? -1 : k->history[k->durable], model_latest(k));
            lost_total++;
            check_failures++;
        }
        k->history[0] = got;
        k->n = 1;
        k->durable = 0;
    }
    double count;
    if (optimist_view_get(s, "count", &count) == OPTIMIST_NOTFOUND) {
        if (view_durable) {
            fprintf(stderr, "after a failed close: the view, defined and flushed, is gone\n");
            check_failures++;
        }
        view_defined = 0;
    }
}

/* The workload: two sessions on one file. Returns 0 when it could not run to the end. */
static int workload(unsigned long long n) {
    healed_in_phase = 0;
    optimist_store *s = open_store();
    if (!s) return 0;
    uint64_t a, b, c, d;
    server_apply(s, put_batch("s%02d", 0, 30, 1));
    model_puts("s%02d", 0, 30, 1);
    flush(s);

    a = mutate_pair(s, "mA", 1);
    background_write();
    b = mutate_pair(s, "mB", 1);
    optimist_batch *over = put_batch("s%02d", 5, 6, 2);
    CHANGE(optimist_mutate(s, over, NULL, &c));
    optimist_batch_free(over);
    model_set(&M, "s05", 2);
    reads_answer(s, "after three mutations");
    flush(s);

    CHANGE(optimist_commit(s, a, NULL));
    CHANGE(optimist_rollback(s, b, "refused"));
    model_set(&M, "mB-a", 0);
    model_set(&M, "mB-b", 0);
    flush(s);

    /* 40 records of 3 KB in one mutation: a transaction of many pages. */
    optimist_batch *big = put_batch("b%02d", 0, 40, 1);
    CHANGE(optimist_mutate(s, big, NULL, &d));
    optimist_batch_free(big);
    model_puts("b%02d", 0, 40, 1);
    background_write();
    CHANGE(optimist_view_define(s, "count", "f", NULL, "count"));
    view_defined = 1;
    reads_answer(s, "after the big mutation");
    flush(s);

    optimist_batch *srv = put_batch("s%02d", 10, 20, 0);
    server_apply(s, srv);
    model_puts("s%02d", 10, 20, 0);
    server_apply(s, put_batch("s%02d", 20, 30, 2));
    model_puts("s%02d", 20, 30, 2);
    CHANGE(optimist_commit(s, d, NULL));
    reads_answer(s, "after the server's changes");
    flush(s);

    mutate_pair(s, "mE", 1); /* only close flushes it */
    reads_answer(s, "before close");
    end_phase(s, n);

    /* The second session: reads from the file, a commit of a mutation from the first. */
    healed_in_phase = 0;
    s = open_store();
    if (!s) return 0;
    if (close_failed) settle(s);
    reads_answer(s, "after reopen");
    int st = -1;
    if (optimist_status(s, c, &st) == OPTIMIST_OK && st == OPTIMIST_PENDING) {
        CHANGE(optimist_commit(s, c, NULL));
    }
    mutate_pair(s, "mF", 2);
    mutate_pair(s, "mA", 2);
    reads_answer(s, "in the second session");
    flush(s);
    end_phase(s, n);
    return 1;
}

/* After the run, on a healthy disk: nothing flushed lost, no pair torn, the view right. */
static void verify(unsigned long long n) {
    faultvfs_heal();
    optimist_store *s = NULL;
    int rc = optimist_open(path, &s);
    if (rc != OPTIMIST_OK) {
        fprintf(stderr, "call %llu: reopening on a healthy disk returned %d: %s\n", n, rc, check_last_error());
        check_failures++;
        return;
    }
    char what[64];
    snprintf(what, sizeof what, "call %llu%s", n, sticky_run ? " sticky" : "");
    if (close_failed) settle(s);
    int lost = model_lost(s, &M, !reported_io, what), torn = 0;
    lost_total += (unsigned long long)lost;
    /* Pairs: "mX-a" and "mX-b" are written by one mutation each time. */
    for (int i = 0; i < M.nkeys; i++) {
        model_key *k = &M.keys[i];
        size_t len = strlen(k->key);
        if (k->key[0] != 'm' || k->key[len - 1] != 'a') continue;
        char other[16];
        snprintf(other, sizeof other, "%.*sb", (int)len - 1, k->key);
        int va = model_read(s, k), vb = model_read(s, model_find(&M, other));
        if (va != vb) {
            fprintf(stderr, "%s: %s is version %d, %s is %d: a mutation half applied\n", what, k->key, va, other, vb);
            torn++;
        }
    }
    torn_total += (unsigned long long)torn;
    if (lost || torn) check_failures++;
    /* The view counts the visible records, whatever survived. */
    int visible = 0;
    for (int i = 0; i < M.nkeys; i++) visible += model_read(s, &M.keys[i]) > 0;
    double count = -1;
    rc = optimist_view_get(s, "count", &count);
    if (rc == OPTIMIST_NOTFOUND && !view_durable) {
        /* Defined, never flushed, and lost with a failed close: allowed. */
    } else if (rc != OPTIMIST_OK || count != visible) {
        fprintf(stderr, "%s: view count is %g, %d records are visible\n", what, count, visible);
        check_failures++;
    }
    CHECK_OK(optimist_close(s));
}

static void one_run(unsigned long long n, int sticky) {
    unlink(path);
    char side[320];
    snprintf(side, sizeof side, "%s-wal", path);
    unlink(side);
    memset(&M, 0, sizeof M);
    sticky_run = sticky;
    reported_io = close_failed = view_defined = view_durable = 0;
    int before = check_failures;
    faultvfs_reset();
    if (n) faultvfs_arm(n, sticky);
    nopens = 0;
    workload(n);
    if (n && faultvfs_failed() > 0 && !reported_io) {
        silent++;
        for (int i = 0; i < nopens; i++)
            if (n >= open_from[i] && n <= open_to[i]) {
                fprintf(stderr, "call %llu%s failed in optimist_open, which said OK\n", n, sticky ? " sticky" : "");
                check_failures++;
            }
    }
    verify(n);
    runs++;
    if (check_failures != before) fprintf(stderr, "  ^ call %llu%s (replay: io_faults --only %llu%s)\n", n,
                                          sticky ? " sticky" : "", n, sticky ? " --sticky" : "");
}

int main(int argc, char **argv) {
    unsigned long long only = 0, stride = 1;
    int full = 0, sticky_only = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--full") == 0) full = 1;
        else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) only = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--sticky") == 0) sticky_only = 1;
        else { fprintf(stderr, "usage: io_faults [--full | --only N [--sticky]]\n"); return 2; }
    }
    const char *env = getenv("OPTIMIST_IO_FAULTS_STRIDE");
    if (env && !full) stride = strtoull(env, NULL, 10) ? strtoull(env, NULL, 10) : 1;
    snprintf(dir, sizeof dir, "%s/optimist-io-XXXXXX", access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
    if (!mkdtemp(dir) || faultvfs_install() != 0) { fprintf(stderr, "setup failed\n"); return 2; }
    snprintf(path, sizeof path, "%s/store.db", dir);

    /* A clean run counts the workload's I/O calls, and proves the VFS sees the store's files. */
    one_run(0, 0);
    unsigned long long total = faultvfs_total();
    printf("clean run: %llu I/O calls (%llu reads, %llu writes, %llu syncs, %llu truncates)\n", total,
           faultvfs_count(FAULT_READ), faultvfs_count(FAULT_WRITE), faultvfs_count(FAULT_SYNC),
           faultvfs_count(FAULT_TRUNCATE));
    CHECK(faultvfs_count(FAULT_WRITE) > 0 && faultvfs_count(FAULT_SYNC) > 0 && faultvfs_count(FAULT_READ) > 0);

    if (only) {
        one_run(only, sticky_only);
    } else {
        errors = 0;
        runs = 0;
        for (unsigned long long n = 1; n <= total; n += stride) one_run(n, 0);
        unsigned long long once = runs;
        for (unsigned long long n = 1; n <= total; n += full ? stride : 4 * stride) one_run(n, 1);
        printf("io_faults: %llu runs (%llu failing one call, %llu with the disk down from a call on), "
               "stride %llu of %llu calls; %llu IO errors returned (open %llu, get %llu, flush %llu, close %llu, "
               "changes %llu; %llu failures unreported, none in open); %llu records lost; %llu mutations torn\n",
               runs, once, runs - once, stride, total, errors, by_call[0].n, by_call[1].n, by_call[2].n, by_call[3].n,
               by_call[4].n, silent, lost_total, torn_total);
    }
    unlink(path);
    char side[320];
    snprintf(side, sizeof side, "%s-wal", path);
    unlink(side);
    rmdir(dir);
    return CHECK_DONE();
}
