/* The C side of Bindings/python/bench_mutate.py: the same record, one mutate per call, on an
 * in-memory store. Build and run:
 *   cc -O2 -IInclude Benchmarks/C/mutate_call.c -Lbuild -loptimist -Wl,-rpath,$PWD/build -o /tmp/mutate_call && /tmp/mutate_call */
#include <optimist.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static long long ns(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1000000000LL+t.tv_nsec;}
static int cmp(const void*a,const void*b){long long x=*(long long*)a,y=*(long long*)b;return x<y?-1:x>y;}
int main(void) {
    optimist_store *s; optimist_open(NULL, &s);
    enum { N = 100000 };
    static long long t[N]; char key[32]; uint64_t id;
    const char *json = "{\"title\":\"Read twenty pages\",\"done\":false,\"streak\":12,\"tags\":[\"books\",\"evening\"],\"updated\":\"2026-11-22T01:00\"}";
    for (int i = 0; i < N; i++) {
        snprintf(key, sizeof key, "h%07d", i);
        long long t0 = ns();
        optimist_batch *b; optimist_batch_new(&b);
        optimist_batch_put(b, "habits", key, json);
        optimist_mutate(s, b, NULL, &id);
        optimist_batch_free(b);
        t[i] = ns() - t0;
    }
    qsort(t, N, sizeof t[0], cmp);
    printf("C batch_new+batch_put+mutate+batch_free: median %.2f us (p10 %.2f, p90 %.2f)\n", t[N/2]/1000.0, t[N/10]/1000.0, t[N*9/10]/1000.0);
    optimist_close(s);
}
