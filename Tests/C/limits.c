/*
 * limits.c - the limits on one mutation (optimist.h, "LIMITS"): a collection or key of at most
 * 1024 UTF-8 bytes, a value nested at most 64 levels deep (the record is level 1), at most
 * 10,000 ops, at most 4 MiB (4,194,304 bytes) of ops as JSON text. At each limit a mutation is
 * accepted; one over, every entry point that makes a mutation refuses it with
 * OPTIMIST_INVALID, a message naming the limit, and nothing changed.
 */
#include "fixtures.h"

#define MAX_NAME 1024
#define MAX_DEPTH 64
#define MAX_OPS 10000
#define MAX_BYTES (4 << 20)
/* Op.encode of one put {"s": ""} on collection "c", key "k":
 * [{"coll":"c","key":"k","op":"put","value":{"s":""}}] */
#define PUT_OVERHEAD 52

static uint64_t pending(optimist_store *s) {
    uint64_t n = 0;
    CHECK_OK(optimist_pending_count(s, &n));
    return n;
}

/* A malloc'd string of n copies of c. */
static char *repeat(char c, size_t n) {
    char *p = malloc(n + 1);
    if (!p) exit(2);
    memset(p, c, n);
    p[n] = 0;
    return p;
}

/* The message of the last failure must name the figure. */
static void check_names(const char *figure) {
    const char *m = optimist_last_error();
    if (!m || !strstr(m, figure)) {
        fprintf(stderr, "last error \"%.200s\" does not name %s\n", m ? m : "(null)", figure);
        check_failures++;
    }
}

/* Refused with INVALID naming figure, and nothing changed (the pending count, the record). */
#define CHECK_REFUSED(s, call, figure, coll, key)                                        \
    do {                                                                                 \
        uint64_t before_ = pending(s);                                                   \
        CHECK_FAILS(call, OPTIMIST_INVALID);                                             \
        check_names(figure);                                                             \
        CHECK(pending(s) == before_);                                                    \
        char *got_ = NULL;                                                               \
        CHECK_RC(optimist_get(s, coll, key, &got_), OPTIMIST_NOTFOUND);                  \
    } while (0)

static int mutate_batch(optimist_store *s, optimist_batch *b) {
    uint64_t id = 0;
    return optimist_mutate(s, b, NULL, &id);
}

static void names(optimist_store *s) {
    char *at = repeat('n', MAX_NAME), *over = repeat('n', MAX_NAME + 1);
    /* UTF-8 bytes, not characters: 512 two-byte characters are at the limit. */
    char accented[2 * 512 + 2];
    for (int i = 0; i < 512; i++) { accented[2 * i] = (char)0xC3; accented[2 * i + 1] = (char)0xA9; }
    accented[1024] = 0;
    uint64_t id = 0;
    optimist_field f = {"a", NULL, 1, OPTIMIST_FIELD_NUMBER};

    CHECK_OK(optimist_put(s, at, "k", "{}", &id));
    CHECK_OK(optimist_put(s, "c", at, "{}", &id));
    CHECK_OK(optimist_put(s, "c", accented, "{}", &id));
    CHECK_OK(optimist_put_fields(s, at, at, &f, 1, &id));
    CHECK_REFUSED(s, optimist_put(s, over, "k", "{}", &id), "1024", over, "k");
    CHECK_REFUSED(s, optimist_put(s, "c", over, "{}", &id), "1024", "c", over);
    accented[1024] = 'x';
    accented[1025] = 0;
    CHECK_REFUSED(s, optimist_put(s, "c", accented, "{}", &id), "1024", "c", accented);
    CHECK_REFUSED(s, optimist_put_fields(s, "c", over, &f, 1, &id), "1024", "c", over);
    CHECK_REFUSED(s, optimist_put_fields(s, over, "k", &f, 1, &id), "1024", over, "k");

    /* Batches: each adder takes the name (a batch may also carry a server's ops, which the
     * limits do not bind); the mutate refuses it. */
    optimist_batch *b = NULL;
    CHECK_OK(optimist_batch_new(&b));
    CHECK_OK(optimist_batch_put(b, "c", "ok", "{}"));
    CHECK_OK(optimist_batch_patch(b, "c", over, "{}"));
    CHECK_REFUSED(s, mutate_batch(s, b), "1024", "c", "ok");
    optimist_batch_free(b);
    CHECK_OK(optimist_batch_new(&b));
    CHECK_OK(optimist_batch_delete(b, over, "k"));
    CHECK_REFUSED(s, mutate_batch(s, b), "1024", over, "k");
    optimist_batch_free(b);
    CHECK_OK(optimist_batch_new(&b));
    CHECK_OK(optimist_batch_incr(b, "c", over, "n", 1));
    CHECK_REFUSED(s, mutate_batch(s, b), "1024", "c", over);
    optimist_batch_free(b);
    CHECK_OK(optimist_batch_new(&b));
    CHECK_OK(optimist_batch_put_fields(b, over, "k", &f, 1));
    CHECK_REFUSED(s, mutate_batch(s, b), "1024", over, "k");
    optimist_batch_free(b);
    CHECK_OK(optimist_batch_new(&b));
    CHECK_OK(optimist_batch_incr(b, at, at, "n", 1));
    CHECK_OK(mutate_batch(s, b));
    optimist_batch_free(b);
    free(at);
    free(over);
}

/* {"v":[[...[]...]]}: the record is level 1, each array one more. */
static char *nested(int levels) {
    size_t n = (size_t)(levels - 1);
    char *p = malloc(2 * n + 8);
    if (!p) exit(2);
    char *q = p;
    q += sprintf(q, "{\"v\":");
    for (size_t i = 0; i < n; i++) *q++ = '[';
    for (size_t i = 0; i < n; i++) *q++ = ']';
    *q++ = '}';
    *q = 0;
    if (levels == 1) strcpy(p, "{}");
    return p;
}

static void depth(optimist_store *s) {
    char *at = nested(MAX_DEPTH), *over = nested(MAX_DEPTH + 1);
    uint64_t id = 0;
    CHECK_OK(optimist_put(s, "deep", "at", at, &id));
    CHECK_REFUSED(s, optimist_put(s, "deep", "over", over, &id), "64", "deep", "over");
    optimist_batch *b = NULL;
    CHECK_OK(optimist_batch_new(&b));
    CHECK_OK(optimist_batch_patch(b, "deep", "over", over));
    CHECK_REFUSED(s, mutate_batch(s, b), "64", "deep", "over");
    optimist_batch_free(b);
    CHECK_OK(optimist_batch_new(&b));
    CHECK_OK(optimist_batch_patch(b, "deep", "at2", at));
    CHECK_OK(mutate_batch(s, b));
    optimist_batch_free(b);
    /* A server's ops are not bound by it: optimist_server_apply takes the deep record. */
    CHECK_OK(optimist_batch_new(&b));
    CHECK_OK(optimist_batch_put(b, "deep", "server", over));
    CHECK_OK(optimist_server_apply(s, b));
    optimist_batch_free(b);
    free(at);
    free(over);
}

/* A put of {"s": text} whose ops text is exactly `total` bytes. */
static char *json_of_size(size_t total) {
    size_t n = total - PUT_OVERHEAD;
    char *p = malloc(n + 16);
    if (!p) exit(2);
    memcpy(p, "{\"s\":\"", 6);
    memset(p + 6, 'x', n);
    memcpy(p + 6 + n, "\"}", 3);
    return p;
}

static void bytes(optimist_store *s) {
    uint64_t id = 0;
    char *at = json_of_size(MAX_BYTES), *over = json_of_size(MAX_BYTES + 1);
    CHECK_OK(optimist_put(s, "c", "k", at, &id));
    CHECK_REFUSED(s, optimist_put(s, "c", "big", over, &id), "4194304", "c", "big");

    /* Fields: a text's control characters take 6 bytes each as JSON text (\u0001), so
     * 699,000 of them are within the limit and 700,000 over. */
    char *ctl = repeat('\x01', 700000);
    optimist_field f = {"s", ctl, 0, OPTIMIST_FIELD_TEXT};
    CHECK_REFUSED(s, optimist_put_fields(s, "c", "ctl", &f, 1, &id), "4194304", "c", "ctl");
    ctl[699000] = 0;
    CHECK_OK(optimist_put_fields(s, "c", "ctl2", &f, 1, &id));
    ctl[699000] = '\x01';

    /* A batch of two ops, each half the limit: together one byte over. */
    size_t half = MAX_BYTES / 2;
    char *a = json_of_size(half), *b2 = json_of_size(half);  /* each op text is half - 2 + 1 */
    optimist_batch *b = NULL;
    CHECK_OK(optimist_batch_new(&b));
    CHECK_OK(optimist_batch_put(b, "c", "k", a));
    CHECK_OK(optimist_batch_put(b, "c", "t", b2));
    /* [op1,op2]: (half - 2) + (half - 2) + 3 = MAX_BYTES - 1: within. */
    CHECK_OK(mutate_batch(s, b));
    CHECK_OK(optimist_batch_put_fields(b, "c", "t", &(optimist_field){"t", "xx", 0, OPTIMIST_FIELD_TEXT}, 1));
    /* One more op: over. */
    CHECK_REFUSED(s, mutate_batch(s, b), "4194304", "c", "nothing");
    optimist_batch_free(b);
    free(a);
    free(b2);
    free(ctl);
    free(at);
    free(over);
}

static void op_count(optimist_store *s) {
    optimist_batch *b = NULL;
    CHECK_OK(optimist_batch_new(&b));
    char key[32];
    for (int i = 0; i < MAX_OPS; i++) {
        snprintf(key, sizeof key, "k%d", i);
        CHECK_OK(optimist_batch_delete(b, "many", key));
    }
    CHECK_OK(mutate_batch(s, b));
    CHECK_OK(optimist_batch_put(b, "many", "one-more", "{}"));
    CHECK_REFUSED(s, mutate_batch(s, b), "10000", "many", "one-more");
    optimist_batch_free(b);
}

int main(void) {
    optimist_store *s = open_memory();
    names(s);
    depth(s);
    bytes(s);
    op_count(s);
    CHECK_OK(optimist_close(s));
    return CHECK_DONE();
}
