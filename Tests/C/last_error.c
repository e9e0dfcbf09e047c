/*
 * last_error.c - optimist_last_error() describes the last failed call of the calling thread
 * (another thread's failure does not overwrite it), and every result code has a name.
 */
#include "fixtures.h"

#include <pthread.h>

static char other_thread_message[256];

/* Fails a different call on its own thread and records what that thread sees. */
static void *fail_elsewhere(void *arg) {
    optimist_store *s = arg;
    char *out = NULL;
    int rc = optimist_get(s, NULL, "k", &out);
    snprintf(other_thread_message, sizeof other_thread_message, "%d:%s", rc,
             check_last_error());
    return NULL;
}

int main(void) {
    optimist_store *s = open_memory();
    CHECK(optimist_last_error() != NULL);

    CHECK_FAILS(optimist_commit(s, 777, NULL), OPTIMIST_NOTFOUND);
    char mine[256];
    snprintf(mine, sizeof mine, "%s", check_last_error());
    CHECK(mine[0] != '\0');

    pthread_t t;
    CHECK(pthread_create(&t, NULL, fail_elsewhere, s) == 0);
    CHECK(pthread_join(t, NULL) == 0);
    CHECK(other_thread_message[0] == '2' && other_thread_message[2] != '\0');
    CHECK_STR(check_last_error(), mine); /* untouched by the other thread */

    /* Every code has a distinct, non-empty name. */
    for (int a = OPTIMIST_OK; a <= OPTIMIST_BUSY; a++) {
        const char *name = optimist_errstr(a);
        CHECK(name != NULL && name[0] != '\0');
        for (int b = OPTIMIST_OK; b < a; b++)
            CHECK(name && optimist_errstr(b) && strcmp(name, optimist_errstr(b)) != 0);
    }
    const char *version = optimist_version();
    CHECK(version != NULL && version[0] >= '0' && version[0] <= '9');

    char *cid = NULL, *cid2 = NULL;
    CHECK_OK(optimist_client_id(s, &cid));
    CHECK_OK(optimist_client_id(s, &cid2));
    CHECK(cid && strlen(cid) == 36 && cid[8] == '-' && cid[14] == '4'); /* a v4 UUID */
    CHECK_STR(cid2, cid ? cid : "");
    optimist_free(cid);
    optimist_free(cid2);
    CHECK_OK(optimist_close(s));
    return CHECK_DONE();
}
