/*
 * check.h - the tiny assertion helper the C tests share.
 *
 * Checks do not stop a test: each failure prints where, what and the library's last error,
 * and CHECK_DONE() turns the count into the exit status, so one run shows every broken case.
 */
#ifndef OPTIMIST_TEST_CHECK_H
#define OPTIMIST_TEST_CHECK_H

#include <optimist.h>

#include <stdio.h>
#include <string.h>

static int check_failures = 0;

/* A condition that must hold. */
#define CHECK(cond)                                                                      \
    do {                                                                                 \
        if (!(cond)) {                                                                   \
            fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond);     \
            check_failures++;                                                            \
        }                                                                                \
    } while (0)

/* A call that must return result code `want`. */
#define CHECK_RC(call, want)                                                             \
    do {                                                                                 \
        int check_rc_ = (call);                                                          \
        if (check_rc_ != (want)) {                                                       \
            fprintf(stderr, "%s:%d: %s returned %d (%s), expected %s; last error: %s\n", \
                    __FILE__, __LINE__, #call, check_rc_, optimist_errstr(check_rc_),    \
                    #want, check_last_error());                                          \
            check_failures++;                                                            \
        }                                                                                \
    } while (0)

#define CHECK_OK(call) CHECK_RC(call, OPTIMIST_OK)

/* A call that must fail with `want` and leave a non-empty message for this thread. */
#define CHECK_FAILS(call, want)                                                          \
    do {                                                                                 \
        CHECK_RC(call, want);                                                            \
        const char *check_msg_ = optimist_last_error();                                  \
        if (check_msg_ == NULL || check_msg_[0] == '\0') {                               \
            fprintf(stderr, "%s:%d: %s left no last error message\n", __FILE__,          \
                    __LINE__, #call);                                                    \
            check_failures++;                                                            \
        }                                                                                \
    } while (0)

/* Two NUL-terminated strings that must be equal (NULL counts as a mismatch). */
#define CHECK_STR(got, want)                                                             \
    do {                                                                                 \
        const char *check_got_ = (got), *check_want_ = (want);                           \
        if (check_got_ == NULL || strcmp(check_got_, check_want_) != 0) {                \
            fprintf(stderr, "%s:%d: %s is \"%s\", expected \"%s\"\n", __FILE__,          \
                    __LINE__, #got, check_got_ ? check_got_ : "(null)", check_want_);    \
            check_failures++;                                                            \
        }                                                                                \
    } while (0)

/* The exit status of a test: 0 when every check held. */
#define CHECK_DONE()                                                                     \
    (check_failures == 0 ? (printf("ok\n"), 0)                                           \
                         : (fprintf(stderr, "%d check(s) failed\n", check_failures), 1))

static inline const char *check_last_error(void) {
    const char *m = optimist_last_error();
    return m ? m : "(null)";
}

#endif
