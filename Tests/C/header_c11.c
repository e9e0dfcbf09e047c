/*
 * header_c11.c - optimist.h compiles as strict C11 with -Wall -Wextra -pedantic -Werror
 * (CMake sets the flags for this file), its constants have the contract's fixed values, and the
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

static void listener(void *ctx, const optimist_change *changes, size_t n) {
    (void)ctx; (void)changes; (void)n;
}

int main(void) {
    optimist_listener fn = listener; /* the typedef matches a plain C function */
    (void)fn;
    const char *loaded = optimist_version();
    if (strcmp(loaded, OPTIMIST_VERSION) != 0) {
        fprintf(stderr, "header %s, library %s\n", OPTIMIST_VERSION, loaded);
        return 1;
    }
    printf("ok %s\n", loaded);
    return 0;
}
