/*
 * header_c11.c - optimist.h compiles as strict C11 with -Wall -Wextra -pedantic -Werror
 * (CMake sets the flags for this file), its constants have the fixed values the header documents, and the
 * loaded library reports the version the header was written for.
 */
#include <optimist.h>
#include <optimist.h> /* the include guard works */

#include <stdio.h>
#include <string.h>

_Static_assert(OPTIMIST_OK == 0 && OPTIMIST_ERROR == 1 && OPTIMIST_MISUSE == 2, "codes");
_Static_assert(OPTIMIST_NOTFOUND == 3 && OPTIMIST_STATE == 4 && OPTIMIST_INVALID == 5, "codes");
_Static_assert(OPTIMIST_DUPLICATE == 6 && OPTIMIST_IO == 7 && OPTIMIST_CORRUPT == 8, "codes");
_Static_assert(OPTIMIST_BUSY == 9, "codes");
_Static_assert(OPTIMIST_PENDING == 1 && OPTIMIST_INFLIGHT == 2 && OPTIMIST_FAILED == 3, "status");
_Static_assert(OPTIMIST_COMMITTED == 4 && OPTIMIST_ROLLED_BACK == 5, "status");
_Static_assert(OPTIMIST_POLICY_ROLLBACK == 0 && OPTIMIST_POLICY_KEEP == 1, "policies");
_Static_assert(OPTIMIST_CAUSE_MUTATE == 1 && OPTIMIST_CAUSE_COMMIT == 2, "causes");
_Static_assert(OPTIMIST_CAUSE_ROLLBACK == 3 && OPTIMIST_CAUSE_SERVER == 4, "causes");
_Static_assert(OPTIMIST_CAUSE_FAIL == 5 && OPTIMIST_CAUSE_RETRY == 6, "causes");
_Static_assert(OPTIMIST_CAUSE_SYNC == 7, "causes");
_Static_assert(OPTIMIST_RECORD_CONFIRMED == 0 && OPTIMIST_RECORD_PENDING == 1 && OPTIMIST_RECORD_FAILED == 2,
               "record status");
_Static_assert(OPTIMIST_SYNC_OPTIONS_VERSION == 2, "sync options version");

static void listener(void *ctx, const optimist_change *changes, size_t n) {
    (void)ctx; (void)changes; (void)n;
}

static int transport(void *ctx, const char *endpoint, const char *url, const char *body,
                     const char *const *headers, int64_t timeout_ms, int *out_status,
                     const char **out_body, int64_t *out_retry_after_ms) {
    (void)ctx; (void)endpoint; (void)url; (void)body; (void)headers; (void)timeout_ms;
    (void)out_status; (void)out_body; (void)out_retry_after_ms;
    return 1;
}

static void on_status(void *ctx, const char *status_json) {
    (void)ctx; (void)status_json;
}

int main(void) {
    optimist_listener fn = listener; /* the typedef matches a plain C function */
    (void)fn;
    /* OPTIMIST_SYNC_OPTIONS_INIT initialises every member, and the callbacks' typedefs match */
    optimist_sync_options o = OPTIMIST_SYNC_OPTIONS_INIT;
    o.transport = transport;
    o.on_status = on_status;
    if (o.version != OPTIMIST_SYNC_OPTIONS_VERSION || o.url != NULL || o.pull_interval_ms != 5000 ||
        o.max_batch != 100 || o.timeout_ms != 10000 || o.backoff_base_ms != 500 || o.backoff_max_ms != 30000 ||
        o.events != 1) {
        fprintf(stderr, "OPTIMIST_SYNC_OPTIONS_INIT has the wrong defaults\n");
        return 1;
    }
    /* The open and mutate options' INIT macros are valid C11 initialisers with every default. */
    optimist_open_options oo = OPTIMIST_OPEN_OPTIONS_INIT;
    optimist_mutate_options mo = OPTIMIST_MUTATE_OPTIONS_INIT;
    if (oo.version != OPTIMIST_OPEN_OPTIONS_VERSION || oo.cache_bytes != OPTIMIST_CACHE_BYTES_DEFAULT ||
        oo.max_attempts != 5 || mo.version != OPTIMIST_MUTATE_OPTIONS_VERSION || mo.dedupe_key != NULL ||
        mo.policy != OPTIMIST_POLICY_ROLLBACK) {
        fprintf(stderr, "OPTIMIST_OPEN_OPTIONS_INIT or OPTIMIST_MUTATE_OPTIONS_INIT has the wrong defaults\n");
        return 1;
    }
    const char *loaded = optimist_version();
    if (strcmp(loaded, OPTIMIST_VERSION) != 0) {
        fprintf(stderr, "header %s, library %s\n", OPTIMIST_VERSION, loaded);
        return 1;
    }
    printf("ok %s\n", loaded);
    return 0;
}
