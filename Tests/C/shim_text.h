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

/* Cuts the next space-separated token off *p (NULL when none is left). */
char *next_token(char **p);

/* Parses all of s as a signed 64-bit decimal; returns 0 on success. */
int parse_i64(const char *s, long long *out);
/* Parses all of s as a number (strtod syntax); returns 0 on success. */
int parse_double(const char *s, double *out);
/* Whether s is non-empty and made only of digits. */
int all_digits(const char *s);

#endif
