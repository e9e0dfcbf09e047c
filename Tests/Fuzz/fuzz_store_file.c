/*
 * fuzz_store_file - the store file loader on damaged files.
 *
 * Once per process a small valid store is made (confirmed records in two collections, pending,
 * inflight and kept-failed mutations, a dedupe key) and its bytes kept. Each input then writes
 * a file to open: with the first byte's low bit set, the input itself is the whole file;
 * otherwise the valid file with the input's patches written over it (each: a 16-bit offset,
 * scaled over the file, a length and the bytes) and optionally cut short.
 *
 * Promises checked: optimist_open returns OK, CORRUPT or IO (never another code, a crash or a
 * hang: libFuzzer's -timeout catches hangs). A store that opens answers reads with result
 * codes, hands out canonical JSON, takes a mutation and closes.
 */
#define _GNU_SOURCE /* mkdtemp */
#include "fuzz_common.h"

#include <fcntl.h>
#include <unistd.h>

static char dir[256], path[300], wal[310], journal[310];
static uint8_t *valid;
static size_t valid_len;

static void write_file(const char *p, const uint8_t *data, size_t n) {
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) FUZZ_FAIL("cannot write %s", p);
    while (n) {
        ssize_t w = write(fd, data, n);
        if (w <= 0) FUZZ_FAIL("short write to %s", p);
        data += w;
        n -= (size_t)w;
    }
    close(fd);
}

static void remove_files(void) {
    unlink(path);
    unlink(wal);
    unlink(journal);
}

static void put(optimist_batch *b, const char *coll, const char *key, const char *json) {
    if (optimist_batch_put(b, coll, key, json) != OPTIMIST_OK) FUZZ_FAIL("put");
}

/* The valid store every patched input starts from. */
static void make_valid_store(void) {
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/optimist-fuzz-store-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) FUZZ_FAIL("mkdtemp");
    snprintf(path, sizeof path, "%s/s.optimist", dir);
    snprintf(wal, sizeof wal, "%s-wal", path);
    snprintf(journal, sizeof journal, "%s-journal", path);

    optimist_store *s = NULL;
    if (optimist_open(path, &s) != OPTIMIST_OK) FUZZ_FAIL("cannot create the template store");
    optimist_batch *b = NULL;
    optimist_batch_new(&b);
    put(b, "habits", "run", "{\"count\":3,\"name\":\"Run\",\"tags\":[\"a\",\"b\"]}");
    put(b, "habits", "read", "{\"count\":1,\"name\":\"Read\"}");
    put(b, "logs", "2026-11-22/run", "{\"done\":true}");
    put(b, "logs", "2026-11-23/run", "{\"done\":false,\"note\":\"caf\\u00e9\"}");
    if (optimist_server_apply(s, b) != OPTIMIST_OK) FUZZ_FAIL("server_apply");
    optimist_batch_free(b);

    uint64_t id = 0;
    optimist_batch_new(&b);
    if (optimist_batch_incr(b, "habits", "run", "count", 1) != OPTIMIST_OK) FUZZ_FAIL("incr");
    put(b, "logs", "2026-11-24/run", "{\"done\":true}");
    if (optimist_mutate(s, b, "tap-1", &id) != OPTIMIST_OK) FUZZ_FAIL("mutate");
    optimist_batch_free(b);
    char *ops = NULL;
    if (optimist_outbox_next(s, 0, &id, &ops) != OPTIMIST_OK) FUZZ_FAIL("outbox_next"); /* inflight */
    optimist_free(ops);

    optimist_batch_new(&b);
    if (optimist_batch_patch(b, "habits", "read", "{\"name\":null,\"goal\":5}") != OPTIMIST_OK) FUZZ_FAIL("patch");
    if (optimist_mutate_with_policy(s, b, NULL, OPTIMIST_POLICY_KEEP, &id) != OPTIMIST_OK) FUZZ_FAIL("mutate keep");
    if (optimist_fail(s, id, 0, "rejected", 5) != OPTIMIST_OK) FUZZ_FAIL("fail"); /* kept failure */
    optimist_batch_free(b);

    optimist_batch_new(&b);
    if (optimist_batch_delete(b, "logs", "2026-11-22/run") != OPTIMIST_OK) FUZZ_FAIL("delete");
    if (optimist_mutate(s, b, NULL, &id) != OPTIMIST_OK) FUZZ_FAIL("mutate delete"); /* pending */
    optimist_batch_free(b);
    if (optimist_mark_loaded(s, "logs", "2026-11-01", "2026-11-30", 7) != OPTIMIST_OK) FUZZ_FAIL("mark_loaded");
    if (optimist_close(s) != OPTIMIST_OK) FUZZ_FAIL("close of the template store");

    /* Everything is in the main file after a clean close (the WAL is checkpointed). */
    FILE *f = fopen(path, "rb");
    if (!f) FUZZ_FAIL("cannot read the template store");
    fseek(f, 0, SEEK_END);
    valid_len = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    valid = malloc(valid_len);
    if (!valid || fread(valid, 1, valid_len, f) != valid_len) FUZZ_FAIL("cannot read the template store");
    fclose(f);
    if (access(wal, F_OK) == 0) fprintf(stderr, "fuzz_store_file: note: a -wal file is left after close\n");
}

/* The scratch directory goes with the process (a crash leaves it, for a look). */
static void cleanup(void) {
    remove_files();
    rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    make_valid_store();
    atexit(cleanup);
    return 0;
}

static void read_some(optimist_store *s) {
    static const char *const colls[] = {"habits", "logs", "other"};
    static const char *const keys[] = {"run", "read", "2026-11-22/run", "2026-11-24/run"};
    char *json = NULL;
    for (int c = 0; c < 3; c++) {
        for (int k = 0; k < 4; k++) {
            int rc = FUZZ_RC(optimist_get(s, colls[c], keys[k], &json));
            if (rc == OPTIMIST_OK) FUZZ_JSON(json, '{');
            optimist_free(json);
            json = NULL;
            rc = FUZZ_RC(optimist_get_confirmed(s, colls[c], keys[k], &json));
            if (rc == OPTIMIST_OK) FUZZ_JSON(json, '{');
            optimist_free(json);
            json = NULL;
            rc = FUZZ_RC(optimist_explain(s, colls[c], keys[k], &json));
            if (rc == OPTIMIST_OK) FUZZ_JSON(json, '{');
            optimist_free(json);
            json = NULL;
        }
        int rc = FUZZ_RC(optimist_scan(s, colls[c], NULL, 0, &json));
        if (rc == OPTIMIST_OK) FUZZ_JSON(json, '[');
        optimist_free(json);
        json = NULL;
    }
    if (FUZZ_RC(optimist_mutations(s, 0, &json)) == OPTIMIST_OK) FUZZ_JSON(json, '[');
    optimist_free(json);
    json = NULL;
    if (FUZZ_RC(optimist_sync_status(s, &json)) == OPTIMIST_OK) FUZZ_JSON(json, '{');
    optimist_free(json);
    json = NULL;
    if (FUZZ_RC(optimist_client_id(s, &json)) == OPTIMIST_OK && !json) FUZZ_FAIL("client_id OK but NULL");
    optimist_free(json);
    uint64_t n = 0;
    FUZZ_RC(optimist_pending_count(s, &n));
    int needs = 0;
    FUZZ_RC(optimist_needs_reload(s, "logs", "2026-11-05", 10, 100, &needs));

    /* The outbox, drained: each entry's ops are canonical JSON and its id has a status. */
    for (int i = 0; i < 8; i++) {
        uint64_t id = 0;
        char *ops = NULL;
        int rc = FUZZ_RC(optimist_outbox_next(s, INT64_MAX, &id, &ops));
        if (rc != OPTIMIST_OK) break;
        FUZZ_JSON(ops, '[');
        optimist_free(ops);
        int st = 0;
        if (FUZZ_RC(optimist_status(s, id, &st)) != OPTIMIST_OK || st != OPTIMIST_INFLIGHT)
            FUZZ_FAIL("mutation %llu just handed out has status %d", (unsigned long long)id, st);
        FUZZ_RC(i & 1 ? optimist_commit(s, id, NULL) : optimist_rollback(s, id, NULL));
    }

    /* A store that opened takes a mutation (the disk may still say no: IO or CORRUPT). */
    optimist_batch *b = NULL;
    optimist_batch_new(&b);
    optimist_batch_incr(b, "habits", "run", "count", 1);
    FUZZ_RC(optimist_mutate(s, b, NULL, NULL));
    optimist_batch_free(b);
    FUZZ_RC(optimist_flush(s));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_in in = {data, size};
    remove_files();
    uint8_t mode = fz_u8(&in);
    if (mode & 1) {
        write_file(path, in.p, in.n);
    } else {
        uint8_t *file = malloc(valid_len);
        if (!file) abort();
        memcpy(file, valid, valid_len);
        size_t len = valid_len;
        while (!fz_empty(&in)) {
            uint8_t hi = fz_u8(&in), lo = fz_u8(&in);
            size_t off = (size_t)(((hi << 8) | lo) * (uint64_t)valid_len / 65536);
            size_t n = fz_u8(&in) % 16 + 1;
            for (size_t i = 0; i < n && off + i < valid_len; i++) file[off + i] = fz_u8(&in);
        }
        /* Bit 1: cut the file at a point the mode's other bits choose. */
        if (mode & 2) len = (size_t)(mode >> 2) * valid_len / 64;
        write_file(path, file, len);
        free(file);
    }

    optimist_store *s = NULL;
    int rc = FUZZ_RC(optimist_open(path, &s));
    if (rc == OPTIMIST_OK) {
        read_some(s);
        int crc = FUZZ_RC(optimist_close(s));
        if (crc != OPTIMIST_OK && crc != OPTIMIST_IO && crc != OPTIMIST_CORRUPT) FUZZ_FAIL("close returned %d", crc);
    } else if (rc != OPTIMIST_CORRUPT && rc != OPTIMIST_IO) {
        FUZZ_FAIL("optimist_open of a damaged file returned %d (%s)", rc, optimist_errstr(rc));
    }
    return 0;
}
