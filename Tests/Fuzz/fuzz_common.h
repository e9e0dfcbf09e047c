/*
 * fuzz_common.h - what the libFuzzer targets share: a reader over the fuzzer's bytes, a strict
 * checker of the canonical JSON the library hands out, and a way to stop loudly.
 *
 * A target reports a broken promise with FUZZ_FAIL, which prints why and aborts: libFuzzer
 * treats the abort as a finding and writes the input that caused it.
 */
#ifndef OPTIMIST_FUZZ_COMMON_H
#define OPTIMIST_FUZZ_COMMON_H

#include <optimist.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_FAIL(...)                                                                   \
    do {                                                                                 \
        fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                                  \
        fprintf(stderr, __VA_ARGS__);                                                    \
        fprintf(stderr, " (last error: %s)\n", optimist_last_error());                   \
        abort();                                                                         \
    } while (0)

/* Every call of the C ABI must return one of the documented codes. */
#define FUZZ_RC(call)                                                                    \
    ({                                                                                   \
        int fuzz_rc_ = (call);                                                           \
        if (fuzz_rc_ < OPTIMIST_OK || fuzz_rc_ > OPTIMIST_BUSY)                          \
            FUZZ_FAIL("%s returned %d, not a result code", #call, fuzz_rc_);             \
        fuzz_rc_;                                                                        \
    })

/* ---- one store for many inputs ----------------------------------------------------------------
 *
 * Every store opened leaves a tombstone of a few hundred bytes for the life of the process
 * (optimist.h, HANDLES), so a target that opened one per input grew by that much per input, to
 * gigabytes over an hour's run. Targets on an in-memory store therefore keep one and bring it
 * back to empty after each input (and check that it is: the next input starts from the state a
 * new store has, but for mutation ids, which only grow). A new store is opened every
 * FUZZ_STORE_INPUTS inputs all the same, so nothing the store keeps per mutation ever ended
 * (two bits each) grows without bound either.
 *
 * The reset is checked, so a finding depends on its own input alone, up to the ids its
 * mutations get; one that still replays alone as a pass needs the inputs run before it: a target
 * runs every file named on its command line in one process, in order.
 */
#define FUZZ_STORE_INPUTS 100000

/* The store for this input; *fresh is set to 1 when it was just opened (else left alone). */
static inline optimist_store *fuzz_store(int *fresh) {
    static optimist_store *s;
    static unsigned long inputs;
    if (!s || ++inputs % FUZZ_STORE_INPUTS == 0) {
        if (s && optimist_close(s) != OPTIMIST_OK) FUZZ_FAIL("close");
        s = NULL;
        if (optimist_open(NULL, &s) != OPTIMIST_OK) FUZZ_FAIL("cannot open an in-memory store");
        *fresh = 1;
    }
    return s;
}

/* ---- the fuzzer's bytes, consumed front to back ------------------------------------------ */

typedef struct {
    const uint8_t *p;
    size_t n;
} fuzz_in;

static inline int fz_empty(const fuzz_in *in) { return in->n == 0; }

/* One byte; 0 once the input is used up (so decoding never needs a length check). */
static inline uint8_t fz_u8(fuzz_in *in) {
    if (!in->n) return 0;
    in->n--;
    return *in->p++;
}

static inline uint64_t fz_u64(fuzz_in *in) {
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v = (v << 8) | fz_u8(in);
    return v;
}

static inline double fz_double(fuzz_in *in) {
    uint64_t bits = fz_u64(in);
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}

/* Up to max bytes as a fresh NUL-terminated string (the length is the next byte, mod max+1).
 * Embedded NULs simply end the C string early, as they would for a caller. */
static inline char *fz_str(fuzz_in *in, size_t max) {
    size_t len = fz_u8(in) % (max + 1);
    if (len > in->n) len = in->n;
    char *s = malloc(len + 1);
    if (!s) abort();
    memcpy(s, in->p, len);
    s[len] = '\0';
    in->p += len;
    in->n -= len;
    return s;
}

/* The rest of the input as a NUL-terminated string. */
static inline char *fz_rest(fuzz_in *in) {
    char *s = malloc(in->n + 1);
    if (!s) abort();
    memcpy(s, in->p, in->n);
    s[in->n] = '\0';
    in->p += in->n;
    in->n = 0;
    return s;
}

/* ---- a strict checker of canonical JSON (RFC 8259, compact, members sorted) --------------- */

typedef struct {
    const char *p;
    int depth;
} jcheck;

static int jc_value(jcheck *j);

static int jc_utf8(const unsigned char *s, size_t *adv) {
    unsigned c = s[0];
    size_t n;
    unsigned cp;
    if (c < 0x80) { *adv = 1; return 1; }
    if (c >= 0xC2 && c <= 0xDF) { n = 2; cp = c & 0x1F; }
    else if (c >= 0xE0 && c <= 0xEF) { n = 3; cp = c & 0x0F; }
    else if (c >= 0xF0 && c <= 0xF4) { n = 4; cp = c & 0x07; }
    else return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF))) return 0;
    if (cp >= 0xD800 && cp <= 0xDFFF) return 0;
    *adv = n;
    return 1;
}

static int jc_hex4(const char *p, unsigned *out) {
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        v <<= 4;
        if (c >= '0' && c <= '9') v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f') v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') v |= (unsigned)(c - 'A' + 10);
        else return 0;
    }
    *out = v;
    return 1;
}

/* Appends code point cp as UTF-8 to buf (when buf is given and has room). */
static void jc_put(char *buf, size_t cap, size_t *len, unsigned cp) {
    char tmp[4];
    size_t n;
    if (cp < 0x80) { tmp[0] = (char)cp; n = 1; }
    else if (cp < 0x800) { tmp[0] = (char)(0xC0 | (cp >> 6)); tmp[1] = (char)(0x80 | (cp & 0x3F)); n = 2; }
    else if (cp < 0x10000) {
        tmp[0] = (char)(0xE0 | (cp >> 12)); tmp[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        tmp[2] = (char)(0x80 | (cp & 0x3F)); n = 3;
    } else {
        tmp[0] = (char)(0xF0 | (cp >> 18)); tmp[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        tmp[2] = (char)(0x80 | ((cp >> 6) & 0x3F)); tmp[3] = (char)(0x80 | (cp & 0x3F)); n = 4;
    }
    for (size_t i = 0; i < n; i++) {
        if (buf && *len < cap) buf[*len] = tmp[i];
        (*len)++;
    }
}

/* A string; its decoded bytes go to buf (up to cap; *len gets the full decoded length) so
 * object members can be checked for bytewise order. */
static int jc_string(jcheck *j, char *buf, size_t cap, size_t *len) {
    size_t l = 0;
    if (*j->p != '"') return 0;
    j->p++;
    for (;;) {
        unsigned char c = (unsigned char)*j->p;
        if (c == '"') { j->p++; break; }
        if (c < 0x20) return 0; /* also the terminating NUL */
        if (c == '\\') {
            char e = j->p[1];
            unsigned cp;
            switch (e) {
            case '"': cp = '"'; break;
            case '\\': cp = '\\'; break;
            case '/': cp = '/'; break;
            case 'b': cp = '\b'; break;
            case 'f': cp = '\f'; break;
            case 'n': cp = '\n'; break;
            case 'r': cp = '\r'; break;
            case 't': cp = '\t'; break;
            case 'u':
                if (!jc_hex4(j->p + 2, &cp)) return 0;
                j->p += 4;
                if (cp >= 0xD800 && cp <= 0xDBFF) {
                    unsigned lo;
                    if (j->p[2] != '\\' || j->p[3] != 'u' || !jc_hex4(j->p + 4, &lo) || lo < 0xDC00 || lo > 0xDFFF)
                        return 0;
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    j->p += 6;
                } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                    return 0;
                }
                break;
            default:
                return 0;
            }
            j->p += 2;
            jc_put(buf, cap, &l, cp);
            continue;
        }
        size_t adv;
        if (!jc_utf8((const unsigned char *)j->p, &adv)) return 0;
        for (size_t i = 0; i < adv; i++) {
            if (buf && l < cap) buf[l] = j->p[i];
            l++;
        }
        j->p += adv;
    }
    if (len) *len = l;
    return 1;
}

static int jc_number(jcheck *j) {
    const char *p = j->p;
    if (*p == '-') p++;
    if (*p == '0') p++;
    else if (*p >= '1' && *p <= '9') while (*p >= '0' && *p <= '9') p++;
    else return 0;
    if (*p == '.') {
        p++;
        if (!(*p >= '0' && *p <= '9')) return 0;
        while (*p >= '0' && *p <= '9') p++;
    }
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-') p++;
        if (!(*p >= '0' && *p <= '9')) return 0;
        while (*p >= '0' && *p <= '9') p++;
    }
    j->p = p;
    return 1;
}

#define JC_KEY_CAP 256

/* Compares two decoded member names bytewise; names longer than the buffer compare by their
 * first JC_KEY_CAP bytes and then by length (good enough: equal prefixes that long are rare). */
static int jc_cmp(const char *a, size_t la, const char *b, size_t lb) {
    size_t ca = la < JC_KEY_CAP ? la : JC_KEY_CAP, cb = lb < JC_KEY_CAP ? lb : JC_KEY_CAP;
    int c = memcmp(a, b, ca < cb ? ca : cb);
    if (c) return c;
    return la < lb ? -1 : la > lb ? 1 : 0;
}

static int jc_value(jcheck *j) {
    if (++j->depth > 300) return 0;
    int ok = 1;
    switch (*j->p) {
    case '{': {
        j->p++;
        char prev[JC_KEY_CAP], cur[JC_KEY_CAP];
        size_t lprev = 0, lcur = 0;
        int first = 1;
        if (*j->p == '}') { j->p++; break; }
        for (;;) {
            if (!jc_string(j, cur, sizeof cur, &lcur) || *j->p != ':') { ok = 0; break; }
            /* Canonical: strictly increasing names (sorted, no duplicates). */
            if (!first && jc_cmp(prev, lprev, cur, lcur) >= 0) { ok = 0; break; }
            memcpy(prev, cur, lcur < JC_KEY_CAP ? lcur : JC_KEY_CAP);
            lprev = lcur;
            first = 0;
            j->p++;
            if (!jc_value(j)) { ok = 0; break; }
            if (*j->p == ',') { j->p++; continue; }
            if (*j->p == '}') { j->p++; break; }
            ok = 0;
            break;
        }
        break;
    }
    case '[':
        j->p++;
        if (*j->p == ']') { j->p++; break; }
        for (;;) {
            if (!jc_value(j)) { ok = 0; break; }
            if (*j->p == ',') { j->p++; continue; }
            if (*j->p == ']') { j->p++; break; }
            ok = 0;
            break;
        }
        break;
    case '"':
        ok = jc_string(j, NULL, 0, NULL);
        break;
    case 't':
        ok = strncmp(j->p, "true", 4) == 0;
        if (ok) j->p += 4;
        break;
    case 'f':
        ok = strncmp(j->p, "false", 5) == 0;
        if (ok) j->p += 5;
        break;
    case 'n':
        ok = strncmp(j->p, "null", 4) == 0;
        if (ok) j->p += 4;
        break;
    default:
        ok = jc_number(j);
    }
    j->depth--;
    return ok;
}

/* 1 when s is one canonical JSON value (compact: no whitespace outside strings), starting with
 * `first` ('{', '[' or 0 for any). */
static inline int json_canonical(const char *s, char first) {
    if (!s) return 0;
    if (first && *s != first) return 0;
    jcheck j = {s, 0};
    return jc_value(&j) && *j.p == '\0';
}

/* Aborts unless json is a canonical JSON value of the given kind. */
#define FUZZ_JSON(json, first)                                                           \
    do {                                                                                 \
        const char *fuzz_j_ = (json);                                                    \
        if (!json_canonical(fuzz_j_, (first)))                                           \
            FUZZ_FAIL("not canonical JSON: %.400s", fuzz_j_ ? fuzz_j_ : "(null)");       \
    } while (0)

#endif
