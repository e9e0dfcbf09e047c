/*
 * expect.h - the check the multi-threaded C tests make on their worker threads: a failure
 * prints where, what and the library's last error, and counts in an atomic, so every thread
 * goes on and main reads the count at the end (CHECK(atomic_load(&errors) == 0)).
 */
#ifndef OPTIMIST_TEST_EXPECT_H
#define OPTIMIST_TEST_EXPECT_H

#include "check.h"

#include <stdatomic.h>
#include <stdio.h>

static atomic_int errors;

#define EXPECT(cond)                                                                     \
    do {                                                                                 \
        if (!(cond)) {                                                                   \
            fprintf(stderr, "%s:%d: %s failed (%s)\n", __FILE__, __LINE__, #cond,        \
                    check_last_error());                                                 \
            atomic_fetch_add(&errors, 1);                                                \
        }                                                                                \
    } while (0)

#endif
