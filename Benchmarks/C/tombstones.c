/* What a closed store keeps: optimist_close leaves the handle as a tombstone for the life of
 * the process (see "HANDLES" in Include/optimist.h), so every store opened costs that much for
 * good. Opens N stores (in memory, or on FILE, recreated each time), puts one record in each
 * and closes it, twice over, and prints the growth of the process's RSS per closed store.
 *
 * Build and run (from the repository's root, after cmake --build build):
 *   cc -O2 -IInclude Benchmarks/C/tombstones.c -Lbuild -loptimist -Wl,-rpath,$PWD/build \
 *      -o /tmp/tombstones
 *   /tmp/tombstones 5000            # in memory
 *   /tmp/tombstones 2000 /tmp/t.db  # on a store file
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "optimist.h"

static long rss_kib(void) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    if (!f) return -1;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, "VmRSS:", 6)) kib = atol(line + 6);
    fclose(f);
    return kib;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: tombstones N [FILE]\n");
        return 2;
    }
    int n = atoi(argv[1]);
    const char *path = argc > 2 ? argv[2] : NULL;
    for (int round = 0; round < 2; round++) {
        long before = rss_kib();
        for (int i = 0; i < n; i++) {
            optimist_store *s = NULL;
            uint64_t id;
            if (path) unlink(path);
            if (optimist_open(path, &s) != OPTIMIST_OK || optimist_put(s, "c", "k", "{\"a\":1}", &id) != OPTIMIST_OK) {
                fprintf(stderr, "tombstones: open or put failed\n");
                return 1;
            }
            if (optimist_close(s) != OPTIMIST_OK) {
                fprintf(stderr, "tombstones: close failed\n");
                return 1;
            }
        }
        long after = rss_kib();
        printf("%s, round %d: %d stores opened and closed, RSS %ld -> %ld KiB: %.1f KiB a closed store\n",
               path ? "store file" : "memory", round + 1, n, before, after, (double)(after - before) / n);
    }
    return 0;
}
