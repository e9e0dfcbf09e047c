/* shim_text.c - see shim_text.h. */
#include "shim_text.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void reserve(strbuf *b, size_t extra) {
    if (b->len + extra + 1 <= b->cap) return;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < b->len + extra + 1) cap *= 2;
    char *p = realloc(b->p, cap);
    if (p == NULL) {
        fputs("scenario_shim: out of memory\n", stderr);
        exit(2);
    }
    b->p = p;
    b->cap = cap;
}

void sb_put(strbuf *b, const char *s) {
    size_t n = strlen(s);
    reserve(b, n);
    memcpy(b->p + b->len, s, n + 1);
    b->len += n;
}

void sb_putc(strbuf *b, char c) {
    char s[2] = {c, 0};
    sb_put(b, s);
}

void sb_put_json_string(strbuf *b, const char *s) {
    sb_putc(b, '"');
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        char esc[8];
        switch (*c) {
        case '"': sb_put(b, "\\\""); break;
        case '\\': sb_put(b, "\\\\"); break;
        case '\n': sb_put(b, "\\n"); break;
        case '\r': sb_put(b, "\\r"); break;
        case '\t': sb_put(b, "\\t"); break;
        default:
            if (*c < 0x20) {
                snprintf(esc, sizeof esc, "\\u%04x", *c);
                sb_put(b, esc);
            } else {
                sb_putc(b, (char)*c);
            }
        }
    }
    sb_putc(b, '"');
}

const char *sb_str(const strbuf *b) { return b->p ? b->p : ""; }

void sb_clear(strbuf *b) {
    b->len = 0;
    if (b->p) b->p[0] = '\0';
}

void sb_free(strbuf *b) {
    free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
}

char *next_token(char **p) {
    if (*p == NULL || **p == '\0') return NULL;
    char *start = *p, *space = strchr(start, ' ');
    if (space) {
        *space = '\0';
        *p = space + 1;
    } else {
        *p = start + strlen(start);
    }
    return start;
}

int parse_i64(const char *s, long long *out) {
    char *end = NULL;
    if (s == NULL || *s == '\0') return -1;
    errno = 0;
    *out = strtoll(s, &end, 10);
    return (errno != 0 || *end != '\0') ? -1 : 0;
}

int parse_double(const char *s, double *out) {
    char *end = NULL;
    if (s == NULL || *s == '\0') return -1;
    *out = strtod(s, &end);
    return *end != '\0' ? -1 : 0;
}

int all_digits(const char *s) {
    if (s == NULL || *s == '\0') return 0;
    for (; *s; s++)
        if (*s < '0' || *s > '9') return 0;
    return 1;
}
