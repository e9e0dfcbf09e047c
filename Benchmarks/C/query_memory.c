/* Memory a live query holds per record it follows: n logs in an in-memory store, then five
 * identical queries opened; the bytes they keep allocated (glibc's mallinfo2), over 5 n, and
 * the RSS they add. One spec per process.
 *
 *   cc -O2 -IInclude Benchmarks/C/query_memory.c -Lbuild -loptimist -Wl,-rpath,$PWD/build -o /tmp/query_memory
 *   for k in 0 1 2; do /tmp/query_memory 100000 $k; done
 * Specs: 0 ordered by a field with a limit, 1 key order, 2 grouped with sum and max. */
#define _POSIX_C_SOURCE 200809L
#include <malloc.h>
#include <optimist.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* Bytes the allocator has handed out and not got back (glibc): exact where RSS is not, since a
   freed block is reused without the RSS moving. */
static size_t in_use(void) { return mallinfo2().uordblks; }
static long rss_kb(void) {
    FILE *f = fopen("/proc/self/status", "r"); char line[256]; long v = 0;
    while (fgets(line, sizeof line, f)) if (strncmp(line, "VmRSS:", 6) == 0) v = atol(line + 6);
    fclose(f); return v;
}
int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 100000;
    int which = argc > 2 ? atoi(argv[2]) : 0;
    optimist_store *s; optimist_batch *b;
    optimist_open(NULL, &s); optimist_batch_new(&b);
    for (int i = 0; i < n; i++) {
        char key[32], json[96];
        snprintf(key, sizeof key, "d%05d/%06d", i / 20, i);
        snprintf(json, sizeof json, "{\"habit\":\"h%d\",\"day\":%d,\"minutes\":%d}", i % 8, i / 20, 10 + i % 50);
        optimist_batch_put(b, "logs", key, json);
    }
    optimist_server_apply(s, b); optimist_batch_free(b);
    const char *specs[] = {
        "{\"collection\":\"logs\",\"order\":[{\"field\":\"minutes\",\"desc\":true}],\"limit\":50}",
        "{\"collection\":\"logs\"}",
        "{\"collection\":\"logs\",\"group\":{\"by\":[\"habit\"],\"aggregates\":{\"m\":\"sum:minutes\",\"top\":\"max:day\"}}}",
    };
    for (int k = which; k <= which && k < 3; k++) {
        for (int warm = 0; warm < 2; warm++) { optimist_query *w; optimist_query_open(s, specs[k], &w); optimist_query_close(w); }
        long before = rss_kb();
        size_t used = in_use();
        optimist_query *qs[5];
        for (int j = 0; j < 5; j++) optimist_query_open(s, specs[k], &qs[j]);
        long after = rss_kb();
        printf("%s: %.1f bytes per followed record (allocated by 5 queries; RSS +%ld KB)\n", specs[k],
               (double)(in_use() - used) / (5.0 * n), after - before);
        for (int j = 0; j < 5; j++) optimist_query_close(qs[j]);
    }
    optimist_close(s);
    return 0;
}
