/*
 * busy_process.c - a store file is held by one process at a time: a second process opening it
 * gets OPTIMIST_BUSY at once (no waiting on a lock timeout), with an optimist_last_error()
 * message that names the file, so an app can tell the user which store is in use. Once the
 * holder closes it, the second process opens it.
 *
 * The second process is this program run again (fork + exec of /proc/self/exe with "child"),
 * not a bare fork: a forked copy of a process whose library threads are running may inherit
 * locks those threads held.
 */
#define _GNU_SOURCE /* mkdtemp, clock_gettime */
#include "fixtures.h"

#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* The child: opens path once and reports "rc elapsed_ms message" on stdout. */
static int child(const char *path) {
    optimist_store *s = NULL;
    long long t0 = now_ms();
    int rc = optimist_open(path, &s);
    long long dt = now_ms() - t0;
    printf("%d %lld %s\n", rc, dt, rc == OPTIMIST_OK ? "" : optimist_last_error());
    fflush(stdout);
    if (rc == OPTIMIST_OK) optimist_close(s);
    return 0;
}

/* Runs the child on path; fills rc, ms and msg from its report. */
static void run_child(const char *path, int *rc, long long *ms, char *msg, size_t cap) {
    int fds[2];
    *rc = -1;
    *ms = -1;
    msg[0] = '\0';
    if (pipe(fds) != 0) { CHECK(!"pipe"); return; }
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], 1);
        close(fds[0]);
        close(fds[1]);
        execl("/proc/self/exe", "busy_process", "child", path, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    char buf[2048];
    size_t len = 0;
    ssize_t n;
    while (len + 1 < sizeof buf && (n = read(fds[0], buf + len, sizeof buf - 1 - len)) > 0) len += (size_t)n;
    buf[len] = '\0';
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    int used = 0;
    if (sscanf(buf, "%d %lld %n", rc, ms, &used) < 2) {
        fprintf(stderr, "the child said: %s\n", buf);
        CHECK(!"a child report");
        return;
    }
    snprintf(msg, cap, "%s", buf + used);
    size_t l = strlen(msg);
    if (l && msg[l - 1] == '\n') msg[l - 1] = '\0';
}

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "child") == 0) return child(argv[2]);

    char dir[] = "/tmp/optimist-busy-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char path[256];
    snprintf(path, sizeof path, "%s/held.optimist", dir);

    optimist_store *s = NULL;
    CHECK_OK(optimist_open(path, &s));
    mutate_put(s, "c", "k", "{\"n\":1}");
    CHECK_OK(optimist_flush(s));

    /* Another process while this one holds the file: BUSY at once, naming the file. */
    int rc;
    long long ms;
    char msg[1024];
    run_child(path, &rc, &ms, msg, sizeof msg);
    CHECK(rc == OPTIMIST_BUSY);
    CHECK(ms >= 0 && ms < 1000);
    if (!strstr(msg, path)) {
        fprintf(stderr, "the BUSY message does not name %s: \"%s\"\n", path, msg);
        CHECK(!"the message names the file");
    }

    /* The same process opening it again: the same answer. */
    optimist_store *again = NULL;
    CHECK_FAILS(optimist_open(path, &again), OPTIMIST_BUSY);
    CHECK(strstr(check_last_error(), path) != NULL);

    /* Closed here, the other process gets it. */
    CHECK_OK(optimist_close(s));
    run_child(path, &rc, &ms, msg, sizeof msg);
    CHECK(rc == OPTIMIST_OK);

    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
    return CHECK_DONE();
}
