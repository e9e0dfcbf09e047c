/*
 * shim_text.h - the text helpers of the scenario shim: a growable string, a tokenizer for
 * space-separated scenario lines, and JSON string quoting the way the library writes it.
 */
#ifndef OPTIMIST_SHIM_TEXT_H
#define OPTIMIST_SHIM_TEXT_H

#include <stddef.h>

typedef struct {
    char *p;   /* NUL-terminated, or NULL while empty */
    size_t len;
    size_t cap;
} strbuf;

void sb_put(strbuf *b, const char *s);
void sb_putc(strbuf *b, char c);
/* Appends s as a canonical JSON string (quotes, \" \\ \n \r \t, other controls as \u00xx). */
void sb_put_json_string(strbuf *b, const char *s);
/* The contents ("" while empty). */
const char *sb_str(const strbuf *b);
void sb_clear(strbuf *b);
void sb_free(strbuf *b);

/* Reading JSON the library wrote (request bodies, statuses): no allocation, pointers into the
   text. Each returns NULL on malformed input. */
/* The end of the JSON value that starts at p (after optional whitespace). */
const char *json_skip(const char *p);
/* The start of member `name`'s value in the JSON object at p, or NULL (absent, or not an
   object). Names are compared as written, without unescaping. */
const char *json_member(const char *obj, const char *name);
/* Iterates the JSON array whose '[' is at *it: each call returns the start of the next element
   (and moves *it past it), or NULL after the last one. */
const char *json_next(const char **it);
/* The JSON string at p, unescaped into out (replacing its contents; \uXXXX as UTF-8).
   Returns 0, or -1 when p is not a string. */
int json_string(const char *p, strbuf *out);

/* Cuts the next space-separated token off *p (NULL when none is left). */
char *next_token(char **p);

/* Parses all of s as a signed 64-bit decimal; returns 0 on success. */
int parse_i64(const char *s, long long *out);
/* Parses all of s as a number (strtod syntax); returns 0 on success. */
int parse_double(const char *s, double *out);
/* Whether s is non-empty and made only of digits. */
int all_digits(const char *s);

#endif
