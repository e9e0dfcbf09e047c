/*
 * query_threads.c - live queries used from several threads at once: two writers mutate,
 * commit and roll back records of one collection (and the server applies batches) while a
 * reader reads a query's rows and count and another opens and closes queries, and a listener
 * keeps a count of the deltas it receives. Afterwards the query's rows must be exactly the
 * committed records that match it. A numbered listener keeps a mirror of the rows from the
 * deltas alone, putting deliveries that come early (from the other writer's thread) back in
 * order by their numbers; afterwards the mirror must equal the rows. The sanitizer build runs
 * this under ThreadSanitizer.
 */
#include "expect.h"
#include "fixtures.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

enum { WRITERS = 2, ROUNDS = 400 };

static optimist_store *store;
static atomic_int writers_left = WRITERS;
static atomic_long delivered;

static const char *SPEC = "{\"collection\": \"logs\", \"where\": {\"field\": \"w\", \"ge\": 0}, "
                          "\"order\": [{\"field\": \"i\", \"desc\": true}], \"limit\": 10}";

static void on_deltas(void *ctx, const char *json, size_t n) {
    (void)ctx;
    if (json == NULL || json[0] != '[' || n == 0) atomic_fetch_add(&errors, 1);
    atomic_fetch_add(&delivered, (long)n);
}

/* The numbered mirror: the rows' keys, built from the deltas of deliveries start + 1, start + 2,
   ... in that order; a delivery that comes before its turn waits in held[] (a copy of its text,
   since the text ends with the call). */
enum { MAX_ROWS = 64, MAX_DELIVERIES = 16384 };
static pthread_mutex_t mirror_lock = PTHREAD_MUTEX_INITIALIZER;
static char mirror[MAX_ROWS][16];
static size_t mirror_n;
static uint64_t mirror_next;  /* the number of the next delivery to apply */
static char *held[MAX_DELIVERIES];
static long early;             /* deliveries that came before their turn */

/* Applies one delivery's deltas (canonical JSON: members sorted, so a delta reads
   {"index":I,"op":"OP"[,"row":{"key":"K",...}]}) to the mirror. */
static void mirror_apply(const char *json) {
    const char *p = json;
    while ((p = strstr(p, "{\"index\":")) != NULL) {
        char *end = NULL;
        long i = strtol(p + 9, &end, 10);
        const char *op = strstr(end, "\"op\":\"");
        if (op == NULL || i < 0) { atomic_fetch_add(&errors, 1); return; }
        op += 6;
        char key[16] = "";
        const char *k = strstr(op, "\"key\":\"");
        if (strncmp(op, "delete", 6) != 0) {
            if (k == NULL || sscanf(k + 7, "%15[^\"]", key) != 1) { atomic_fetch_add(&errors, 1); return; }
        }
        if (strncmp(op, "insert", 6) == 0) {
            if ((size_t)i > mirror_n || mirror_n == MAX_ROWS) { atomic_fetch_add(&errors, 1); return; }
            memmove(mirror[i + 1], mirror[i], (mirror_n - (size_t)i) * sizeof mirror[0]);
            memcpy(mirror[i], key, sizeof key);
            mirror_n++;
        } else if (strncmp(op, "delete", 6) == 0) {
            if ((size_t)i >= mirror_n) { atomic_fetch_add(&errors, 1); return; }
            memmove(mirror[i], mirror[i + 1], (mirror_n - (size_t)i - 1) * sizeof mirror[0]);
            mirror_n--;
        } else if (strncmp(op, "update", 6) == 0) {
            if ((size_t)i >= mirror_n || strcmp(mirror[i], key) != 0) { atomic_fetch_add(&errors, 1); return; }
        } else {
            atomic_fetch_add(&errors, 1);
            return;
        }
        p = op;
    }
}

static void on_numbered(void *ctx, uint64_t number, const char *json, size_t n) {
    (void)ctx;
    if (json == NULL || n == 0) { atomic_fetch_add(&errors, 1); return; }
    pthread_mutex_lock(&mirror_lock);
    if (number < mirror_next || number - mirror_next >= MAX_DELIVERIES || held[number % MAX_DELIVERIES] != NULL) {
        atomic_fetch_add(&errors, 1);  /* a number seen twice, or one far ahead */
    } else {
        if (number != mirror_next) early++;
        size_t len = strlen(json) + 1;
        char *copy = malloc(len);
        if (copy == NULL) abort();
        memcpy(copy, json, len);
        held[number % MAX_DELIVERIES] = copy;
        char *next;
        while ((next = held[mirror_next % MAX_DELIVERIES]) != NULL) {
            held[mirror_next % MAX_DELIVERIES] = NULL;
            mirror_apply(next);
            free(next);
            mirror_next++;
        }
    }
    pthread_mutex_unlock(&mirror_lock);
}

/* Round i of writer w: commit when i is even, roll back when odd. */
static void *writer(void *arg) {
    int w = (int)(intptr_t)arg;
    char key[32], json[64];
    for (int i = 0; i < ROUNDS; i++) {
        uint64_t id = 0;
        snprintf(key, sizeof key, "w%d-%04d", w, i);
        snprintf(json, sizeof json, "{\"w\":%d,\"i\":%d}", w, i);
        optimist_batch *b = batch_of_put("logs", key, json);
        EXPECT(optimist_mutate(store, b, NULL, &id) == OPTIMIST_OK);
        optimist_batch_free(b);
        if (i % 2 == 0) EXPECT(optimist_commit(store, id, NULL) == OPTIMIST_OK);
        else EXPECT(optimist_rollback(store, id, "test") == OPTIMIST_OK);
        if (i % 100 == 0) {
            optimist_batch *srv = batch_of_put("logs", "server", "{\"w\":-1,\"i\":0}");
            EXPECT(optimist_server_apply(store, srv) == OPTIMIST_OK);
            optimist_batch_free(srv);
        }
    }
    atomic_fetch_sub(&writers_left, 1);
    return NULL;
}

static void *reader(void *arg) {
    optimist_query *q = arg;
    while (atomic_load(&writers_left) > 0) {
        char *rows = NULL;
        size_t n = 0;
        EXPECT(optimist_query_rows(q, 0, 0, &rows) == OPTIMIST_OK);
        EXPECT(rows != NULL && rows[0] == '[');
        optimist_free(rows);
        EXPECT(optimist_query_count(q, &n) == OPTIMIST_OK);
        EXPECT(n <= 10);
    }
    return NULL;
}

/* Opens a query, reads it, closes it, over and over: first evaluations beside the writers. */
static void *opener(void *arg) {
    (void)arg;
    while (atomic_load(&writers_left) > 0) {
        optimist_query *q = NULL;
        size_t n = 0;
        EXPECT(optimist_query_open(store, SPEC, &q) == OPTIMIST_OK);
        EXPECT(optimist_query_count(q, &n) == OPTIMIST_OK);
        EXPECT(optimist_query_close(q) == OPTIMIST_OK);
    }
    return NULL;
}

int main(void) {
    store = open_memory();
    optimist_query *q = NULL;
    uint64_t sub = 0;
    CHECK_OK(optimist_query_open(store, SPEC, &q));
    CHECK_OK(optimist_query_subscribe(q, on_deltas, NULL, &sub));
    /* The numbered mirror starts from the rows and the number read with its subscription. */
    {
        uint64_t numbered = 0, last = 99;
        char *first = NULL;
        CHECK_OK(optimist_query_subscribe_numbered(q, on_numbered, NULL, &numbered, &first, &last));
        CHECK(numbered != sub);
        CHECK_JSON(first, "[]");
        CHECK(last == 0);
        mirror_next = last + 1;
    }

    pthread_t threads[WRITERS + 2];
    for (int w = 0; w < WRITERS; w++) pthread_create(&threads[w], NULL, writer, (void *)(intptr_t)w);
    pthread_create(&threads[WRITERS], NULL, reader, q);
    pthread_create(&threads[WRITERS + 1], NULL, opener, NULL);
    for (int i = 0; i < WRITERS + 2; i++) pthread_join(threads[i], NULL);

    CHECK(atomic_load(&errors) == 0);
    CHECK(atomic_load(&delivered) > 0);
    /* The top 10 by i descending, then key: i = 398, 396, ... of both writers (odd ones were
       rolled back), w0 before w1 at each i. */
    char want[2048] = "[";
    size_t len = 1;
    int shown = 0;
    for (int i = ROUNDS - 2; shown < 10; i -= 2)
        for (int w = 0; w < WRITERS && shown < 10; w++, shown++)
            len += (size_t)snprintf(want + len, sizeof want - len, "%s{\"key\":\"w%d-%04d\",\"status\":\"confirmed\","
                                    "\"value\":{\"i\":%d,\"w\":%d}}", shown ? "," : "", w, i, i, w);
    snprintf(want + len, sizeof want - len, "]");
    char *rows = NULL;
    CHECK_OK(optimist_query_rows(q, 0, 0, &rows));
    CHECK_JSON(rows, want);
    /* The mirror made from the numbered deltas alone holds the same keys, in the same order,
       and no delivery is still waiting for an earlier one. */
    pthread_mutex_lock(&mirror_lock);
    CHECK(mirror_n == 10);
    shown = 0;
    for (int i = ROUNDS - 2; shown < 10; i -= 2)
        for (int w = 0; w < WRITERS && shown < 10; w++, shown++) {
            char key[32];
            snprintf(key, sizeof key, "w%d-%04d", w, i);
            CHECK(strcmp(mirror[shown], key) == 0);
        }
    for (size_t i = 0; i < MAX_DELIVERIES; i++) CHECK(held[i] == NULL);
    printf("numbered mirror: %llu deliveries, %ld came before their turn\n",
           (unsigned long long)(mirror_next - 1), early);
    pthread_mutex_unlock(&mirror_lock);
    CHECK_OK(optimist_query_close(q));
    CHECK_OK(optimist_close(store));
    CHECK_DONE();
}
