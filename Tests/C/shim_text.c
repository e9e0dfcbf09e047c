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

/* ---- reading JSON ---------------------------------------------------------------------- */

static const char *ws(const char *p) {
    while (p && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++;
    return p;
}

/* The end of the string whose opening quote is at p. */
static const char *skip_string(const char *p) {
    for (p++; *p; p++) {
        if (*p == '\\') {
            if (*++p == '\0') return NULL;
        } else if (*p == '"') {
            return p + 1;
        }
    }
    return NULL;
}

const char *json_skip(const char *p) {
    p = ws(p);
    if (p == NULL) return NULL;
    if (*p == '"') return skip_string(p);
    if (*p == '{' || *p == '[') {
        char close = *p == '{' ? '}' : ']';
        p = ws(p + 1);
        if (*p == close) return p + 1;
        for (;;) {
            if (close == '}') {
                if (*p != '"' || (p = skip_string(p)) == NULL) return NULL;
                p = ws(p);
                if (*p++ != ':') return NULL;
            }
            if ((p = ws(json_skip(p))) == NULL) return NULL;
            if (*p == close) return p + 1;
            if (*p++ != ',') return NULL;
            p = ws(p);
        }
    }
    const char *start = p;
    while (*p && strchr(",]} \t\r\n", *p) == NULL) p++;
    return p > start ? p : NULL;
}

const char *json_member(const char *obj, const char *name) {
    const char *p = ws(obj);
    size_t n = strlen(name);
    if (p == NULL || *p != '{') return NULL;
    p = ws(p + 1);
    while (*p == '"') {
        const char *end = skip_string(p);
        if (end == NULL) return NULL;
        int hit = (size_t)(end - p) == n + 2 && strncmp(p + 1, name, n) == 0;
        p = ws(end);
        if (*p++ != ':') return NULL;
        p = ws(p);
        if (hit) return p;
        if ((p = ws(json_skip(p))) == NULL) return NULL;
        if (*p != ',') return NULL;
        p = ws(p + 1);
    }
    return NULL;
}

const char *json_next(const char **it) {
    const char *p = ws(*it);
    if (p == NULL) return NULL;
    if (*p == '[' || *p == ',') p = ws(p + 1);
    if (*p == ']' || *p == '\0') return NULL;
    const char *end = json_skip(p);
    if (end == NULL) return NULL;
    *it = end;
    return p;
}

static void put_utf8(strbuf *out, unsigned long c) {
    char b[5] = {0};
    if (c < 0x80) {
        b[0] = (char)c;
    } else if (c < 0x800) {
        b[0] = (char)(0xC0 | (c >> 6));
        b[1] = (char)(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
        b[0] = (char)(0xE0 | (c >> 12));
        b[1] = (char)(0x80 | ((c >> 6) & 0x3F));
        b[2] = (char)(0x80 | (c & 0x3F));
    } else {
        b[0] = (char)(0xF0 | (c >> 18));
        b[1] = (char)(0x80 | ((c >> 12) & 0x3F));
        b[2] = (char)(0x80 | ((c >> 6) & 0x3F));
        b[3] = (char)(0x80 | (c & 0x3F));
    }
    sb_put(out, b);
}

int json_string(const char *p, strbuf *out) {
    p = ws(p);
    sb_clear(out);
    if (p == NULL || *p != '"') return -1;
    for (p++; *p && *p != '"'; p++) {
        if (*p != '\\') {
            sb_putc(out, *p);
            continue;
        }
        switch (*++p) {
        case 'n': sb_putc(out, '\n'); break;
        case 't': sb_putc(out, '\t'); break;
        case 'r': sb_putc(out, '\r'); break;
        case 'b': sb_putc(out, '\b'); break;
        case 'f': sb_putc(out, '\f'); break;
        case 'u': {
            char hex[5] = {0};
            unsigned long c;
            if (strlen(p + 1) < 4) return -1;
            memcpy(hex, p + 1, 4);
            c = strtoul(hex, NULL, 16);
            p += 4;
            if (c >= 0xD800 && c < 0xDC00 && p[1] == '\\' && p[2] == 'u' && strlen(p + 3) >= 4) {
                memcpy(hex, p + 3, 4);
                c = 0x10000 + ((c - 0xD800) << 10) + (strtoul(hex, NULL, 16) - 0xDC00);
                p += 6;
            }
            put_utf8(out, c);
            break;
        }
        case '\0': return -1;
        default: sb_putc(out, *p); /* \" \\ \/ */
        }
    }
    return *p == '"' ? 0 : -1;
}
