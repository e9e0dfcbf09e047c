/* Prints N distinct 16-byte member names, one per line as JSON string bodies (escaped), that
 * all shared one hash under the unkeyed key hash Optimist used before its keys were hashed
 * with a per-process secret (a multiply/xor-shift fold of 8-byte words from a fixed start).
 * Under that fold two such names collide whenever the second word is the fold of the first
 * XOR a fixed target, so a try succeeds when that word is 7-bit (about one in 256): a flood of
 * such names made every table they keyed quadratic. Tests feed them to the parsers (the
 * server's push, a client's pull) to show that no chosen names slow them down now.
 *
 *   cc -O2 -o colliding_names colliding_names.c && ./colliding_names 20000
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static uint64_t fold(uint64_t h, uint64_t w) {
    uint64_t x = (h ^ w) * 0x9e3779b97f4a7c15ULL;
    return x ^ (x >> 29);
}

static void put_escaped(unsigned char c) {
    if (c == '"' || c == '\\') printf("\\%c", c);
    else if (c < 0x20 || c == 0x7f) printf("\\u%04x", c);
    else putchar(c);
}

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 0;
    if (n <= 0) { fprintf(stderr, "usage: colliding_names N\n"); return 2; }
    const uint64_t start = 0xcbf29ce484222325ULL, target = 0x2a2a2a2a2a2a2a2aULL;
    uint64_t s = 0x9e3779b97f4a7c15ULL;
    for (long found = 0; found < n;) {
        s ^= s << 13; s ^= s >> 7; s ^= s << 17;  /* xorshift: the first word's bytes */
        uint64_t w0 = 0;
        for (int i = 0; i < 8; i++) w0 |= (uint64_t)(0x21 + ((s >> (8 * i)) & 0xff) % 94) << (8 * i);
        uint64_t w1 = fold(start, w0) ^ target;
        /* 7-bit bytes and no NUL (servers refuse U+0000 in a record key). */
        if ((w1 & 0x8080808080808080ULL) != 0) continue;
        int nul = 0;
        for (int i = 0; i < 8; i++) nul |= ((w1 >> (8 * i)) & 0xff) == 0;
        if (nul) continue;
        for (int i = 0; i < 8; i++) put_escaped((unsigned char)(w0 >> (8 * i)));
        for (int i = 0; i < 8; i++) put_escaped((unsigned char)(w1 >> (8 * i)));
        putchar('\n');
        found++;
    }
    return 0;
}
