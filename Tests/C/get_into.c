/*
 * get_into.c - optimist_get_into and optimist_get_confirmed_into: the record's JSON in the
 * caller's buffer (the same text optimist_get hands out), its length always, a NUL only when
 * it fits, a length query with no buffer, and bad arguments refused with their codes.
 */
#include "fixtures.h"

#include <string.h>

static void the_same_text_as_get(void) {
    optimist_store *s = open_memory();
    mutate_put(s, "logs", "a", "{\"n\":1,\"t\":\"\\u00e9x\",\"z\":[1,2.5,null]}");
    char *whole = NULL;
    CHECK_OK(optimist_get(s, "logs", "a", &whole));
    size_t want = strlen(whole), len = 0;

    char buf[256];
    memset(buf, 'x', sizeof buf);
    CHECK_OK(optimist_get_into(s, "logs", "a", buf, sizeof buf, &len));
    CHECK(len == want);
    CHECK(buf[len] == '\0' && strcmp(buf, whole) == 0);

    /* Exactly room for the text and its NUL; one byte less does not fit. */
    memset(buf, 'x', sizeof buf);
    CHECK_OK(optimist_get_into(s, "logs", "a", buf, want + 1, &len));
    CHECK(len == want && strcmp(buf, whole) == 0);
    memset(buf, 'x', sizeof buf);
    CHECK_OK(optimist_get_into(s, "logs", "a", buf, want, &len));
    CHECK(len == want);
    CHECK(buf[want] == 'x'); /* nothing written past cap */

    /* The length alone. */
    len = 0;
    CHECK_OK(optimist_get_into(s, "logs", "a", NULL, 0, &len));
    CHECK(len == want);
    optimist_free(whole);

    /* The confirmed state: absent until committed. */
    CHECK_FAILS(optimist_get_confirmed_into(s, "logs", "a", buf, sizeof buf, &len), OPTIMIST_NOTFOUND);
    CHECK_OK(optimist_commit(s, 1, NULL));
    CHECK_OK(optimist_get_confirmed_into(s, "logs", "a", buf, sizeof buf, &len));
    CHECK(len == strlen(buf));
    char *confirmed = NULL;
    CHECK_OK(optimist_get_confirmed(s, "logs", "a", &confirmed));
    CHECK_STR(buf, confirmed);
    optimist_free(confirmed);
    CHECK_OK(optimist_close(s));
}

static void refused(void) {
    optimist_store *s = open_memory();
    mutate_put(s, "logs", "a", "{}");
    char buf[16];
    size_t len = 0;
    CHECK_FAILS(optimist_get_into(NULL, "logs", "a", buf, sizeof buf, &len), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_get_into(s, NULL, "a", buf, sizeof buf, &len), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_get_into(s, "logs", NULL, buf, sizeof buf, &len), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_get_into(s, "logs", "a", buf, sizeof buf, NULL), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_get_into(s, "logs", "a", NULL, 8, &len), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_get_into(s, "logs", "\xff", buf, sizeof buf, &len), OPTIMIST_INVALID);
    CHECK_FAILS(optimist_get_into(s, "logs", "nope", buf, sizeof buf, &len), OPTIMIST_NOTFOUND);
    CHECK_OK(optimist_get_into(s, "logs", "a", buf, sizeof buf, &len));
    CHECK(len == 2 && strcmp(buf, "{}") == 0);
    CHECK_OK(optimist_close(s));
    CHECK_FAILS(optimist_get_into(s, "logs", "a", buf, sizeof buf, &len), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_get_confirmed_into(s, "logs", "a", buf, sizeof buf, &len), OPTIMIST_MISUSE);
}

int main(void) {
    the_same_text_as_get();
    refused();
    CHECK_DONE();
}
