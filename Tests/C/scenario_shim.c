/*
 * scenario_shim.c - runs the scenario corpus (the .scn files of Tests/Scenarios, format in
 * its README) against liboptimist loaded with dlopen, calling every entry point by name
 * through libffi (shim_ffi.c), so the scenarios test exactly the exported C ABI.
 *
 *   scenario_shim [--library PATH] SCENARIO_OR_DIR...
 *
 * The library is --library, else $OPTIMIST_LIBRARY, else the one of the build that made this
 * program. Results are compared exactly: canonical JSON as strings, `viewget` numerically.
 * A scenario stops at its first failing line. Prints PASS/FAIL per scenario (with the line,
 * what was expected and what came back) and a last line "N passed, M failed"; exits 1 when
 * anything failed, 2 on bad usage.
 */
#define _XOPEN_SOURCE 700

#include "shim_ffi.h"
#include "shim_text.h"

#include <optimist.h>

#include <dirent.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Calls an entry point by name with the addresses of its arguments. */
#define CALL(name, ...) shim_call_int(name, (void *[]){__VA_ARGS__})

enum { MAX_NAMES = 256, MAX_SUBS = 32, MAX_SEGMENTS = 32, NAME_LEN = 64 };

typedef struct {
    char name[NAME_LEN];
    uint64_t id;
} binding;

/* A subscription and the flattened changes it received since the last `changes`. */
typedef struct {
    char name[NAME_LEN];
    uint64_t id;
    strbuf got;
} subscription;

typedef struct {
    optimist_store *store;
    char dir[PATH_MAX]; /* the temporary directory of a file-backed scenario, or "" */
    char path[PATH_MAX + 32];
    binding names[MAX_NAMES];
    int n_names;
    subscription subs[MAX_SUBS];
    int n_subs;
    strbuf why; /* what went wrong on the failing line */
} scenario;

/* What one command produced: its result code, and for reads the value as text. */
typedef struct {
    int rc;
    int has_value;
    int numeric;      /* compare value and expectation as numbers */
    uint64_t dup_id;  /* the id written with OPTIMIST_DUPLICATE */
    strbuf value;
} outcome;

static const char *code_names[] = {"OK", "ERROR", "MISUSE", "NOTFOUND", "STATE",
                                   "INVALID", "DUPLICATE", "IO", "CORRUPT", "BUSY"};
static const char *status_names[] = {"?", "pending", "inflight", "failed", "committed", "rolled_back"};
static const char *cause_names[] = {"?", "mutate", "commit", "rollback", "server", "fail", "retry"};

static const char *code_name(int rc) {
    return (rc >= 0 && rc < (int)(sizeof code_names / sizeof *code_names)) ? code_names[rc] : "?";
}

static int code_of(const char *name) {
    for (int i = 0; i < (int)(sizeof code_names / sizeof *code_names); i++)
        if (strcmp(code_names[i], name) == 0) return i;
    return -1;
}

static const char *last_error(void) {
    const char *m = shim_call_str("optimist_last_error", NULL);
    return m ? m : "(null)";
}

/* A syntax error in the scenario itself. */
static int bad_line(scenario *sc, const char *what) {
    sb_put(&sc->why, what);
    return -1;
}

/* ---- names ---------------------------------------------------------------------------- */

static void bind_name(scenario *sc, const char *name, uint64_t id) {
    for (int i = 0; i < sc->n_names; i++)
        if (strcmp(sc->names[i].name, name) == 0) {
            sc->names[i].id = id;
            return;
        }
    if (sc->n_names < MAX_NAMES) {
        snprintf(sc->names[sc->n_names].name, NAME_LEN, "%s", name);
        sc->names[sc->n_names++].id = id;
    }
}

/* A NAME of digits is that literal id; otherwise it must have been bound by `mutate`. */
static int resolve(scenario *sc, const char *name, uint64_t *id) {
    if (all_digits(name)) {
        *id = strtoull(name, NULL, 10);
        return 0;
    }
    for (int i = 0; i < sc->n_names; i++)
        if (strcmp(sc->names[i].name, name) == 0) {
            *id = sc->names[i].id;
            return 0;
        }
    sb_put(&sc->why, "unknown mutation name ");
    sb_put(&sc->why, name);
    return -1;
}

static void name_of(scenario *sc, uint64_t id, strbuf *out) {
    for (int i = 0; i < sc->n_names; i++)
        if (sc->names[i].id == id) {
            sb_put(out, sc->names[i].name);
            return;
        }
    char buf[32];
    snprintf(buf, sizeof buf, "#%llu", (unsigned long long)id);
    sb_put(out, buf);
}

static subscription *find_sub(scenario *sc, const char *name) {
    for (int i = 0; i < sc->n_subs; i++)
        if (strcmp(sc->subs[i].name, name) == 0) return &sc->subs[i];
    return NULL;
}

/* ---- listener ------------------------------------------------------------------------- */

/* Flattens each change into [coll, key, value or null, pending, cause]. */
static void on_changes(void *ctx, const optimist_change *changes, size_t n) {
    subscription *sub = ctx;
    for (size_t i = 0; i < n; i++) {
        const optimist_change *c = &changes[i];
        if (sub->got.len > 0) sb_putc(&sub->got, ',');
        sb_putc(&sub->got, '[');
        sb_put_json_string(&sub->got, c->collection);
        sb_putc(&sub->got, ',');
        sb_put_json_string(&sub->got, c->key);
        sb_putc(&sub->got, ',');
        sb_put(&sub->got, c->value_json ? c->value_json : "null");
        sb_put(&sub->got, c->pending ? ",true," : ",false,");
        sb_put_json_string(&sub->got, (c->cause >= 1 && c->cause <= 6) ? cause_names[c->cause] : "?");
        sb_putc(&sub->got, ']');
    }
}

/* ---- ops ------------------------------------------------------------------------------ */

/* Marks an op segment as malformed; the caller stops building the batch. */
static int bad_op(scenario *sc, int *syntax, const char *what) {
    bad_line(sc, what);
    *syntax = 1;
    return OPTIMIST_OK;
}

/* Adds one op segment ("put COLL KEY JSON" ...) to batch b and returns the library's code;
   a malformed segment sets *syntax instead. */
static int add_op(scenario *sc, optimist_batch *b, char *seg, int *syntax) {
    char *p = seg;
    char *op = next_token(&p), *coll = next_token(&p), *key = NULL;
    if (op == NULL || coll == NULL || (strcmp(op, "put") && strcmp(op, "patch") &&
                                       strcmp(op, "delete") && strcmp(op, "incr")))
        return bad_op(sc, syntax, "bad op");
    if (strcmp(op, "put") == 0 || strcmp(op, "patch") == 0) {
        key = next_token(&p);
        const char *json = p;
        if (key == NULL || *json == '\0') return bad_op(sc, syntax, "op needs KEY JSON");
        return CALL(strcmp(op, "put") == 0 ? "optimist_batch_put" : "optimist_batch_patch",
                    &b, &coll, &key, &json);
    }
    key = next_token(&p);
    if (key == NULL) return bad_op(sc, syntax, "op needs KEY");
    if (strcmp(op, "delete") == 0) return CALL("optimist_batch_delete", &b, &coll, &key);
    char *field = next_token(&p), *delta_text = next_token(&p);
    double delta = 0;
    if (field == NULL || parse_double(delta_text, &delta) != 0)
        return bad_op(sc, syntax, "incr needs FIELD DELTA");
    return CALL("optimist_batch_incr", &b, &coll, &key, &field, &delta);
}

/* Builds a batch from op segments. On a non-OK code the batch is freed and *out is NULL. */
static int build_batch(scenario *sc, char **segs, int n, optimist_batch **out, int *syntax) {
    optimist_batch *b = NULL;
    optimist_batch **bp = &b;
    int rc = CALL("optimist_batch_new", &bp);
    for (int i = 0; rc == OPTIMIST_OK && i < n && !*syntax; i++) rc = add_op(sc, b, segs[i], syntax);
    if (rc != OPTIMIST_OK || *syntax) {
        shim_call_void("optimist_batch_free", (void *[]){&b});
        b = NULL;
    }
    *out = b;
    return rc;
}

static void free_batch(optimist_batch *b) { shim_call_void("optimist_batch_free", (void *[]){&b}); }

/* Takes a library-owned string out-parameter into the outcome and frees it. */
static void take_string(outcome *o, char *s) {
    if (o->rc == OPTIMIST_OK && s) {
        sb_put(&o->value, s);
        o->has_value = 1;
    }
    shim_call_void("optimist_free", (void *[]){&s});
}

static void take_bool(outcome *o, int v) {
    if (o->rc != OPTIMIST_OK) return;
    sb_put(&o->value, v ? "true" : "false");
    o->has_value = 1;
}

/* ---- commands ------------------------------------------------------------------------- */

/* Runs one command; returns -1 on a scenario syntax error (why is filled), else 0. */
static int run_command(scenario *sc, char *head, char **ops, int n_ops, outcome *o) {
    char *p = head;
    char *cmd = next_token(&p);
    optimist_store *s = sc->store;
    int syntax = 0;
    if (cmd == NULL) return bad_line(sc, "empty command");

    if (strcmp(cmd, "mutate") == 0) {
        char *name = next_token(&p), *opt;
        const char *dedupe = NULL;
        int policy = -1;
        if (name == NULL) return bad_line(sc, "mutate needs NAME");
        while ((opt = next_token(&p)) != NULL) {
            if (strncmp(opt, "dedupe=", 7) == 0) dedupe = opt + 7;
            else if (strcmp(opt, "policy=keep") == 0) policy = OPTIMIST_POLICY_KEEP;
            else if (strcmp(opt, "policy=rollback") == 0) policy = OPTIMIST_POLICY_ROLLBACK;
            else return bad_line(sc, "bad mutate option");
        }
        optimist_batch *b = NULL;
        o->rc = build_batch(sc, ops, n_ops, &b, &syntax);
        if (syntax) return -1;
        if (o->rc != OPTIMIST_OK) return 0;
        uint64_t id = 0, *idp = &id;
        /* Without a policy the plain entry point is used, so both are exercised. */
        o->rc = policy < 0 ? CALL("optimist_mutate", &s, &b, &dedupe, &idp)
                           : CALL("optimist_mutate_with_policy", &s, &b, &dedupe, &policy, &idp);
        free_batch(b);
        if (o->rc == OPTIMIST_OK) bind_name(sc, name, id);
        if (o->rc == OPTIMIST_DUPLICATE) o->dup_id = id;
        return 0;
    }
    if (strcmp(cmd, "commit") == 0) {
        char *name = next_token(&p);
        uint64_t id;
        if (name == NULL) return bad_line(sc, "commit needs NAME");
        if (resolve(sc, name, &id)) return -1;
        optimist_batch *b = NULL;
        if (n_ops > 0) {
            o->rc = build_batch(sc, ops, n_ops, &b, &syntax);
            if (syntax) return -1;
            if (o->rc != OPTIMIST_OK) return 0;
        }
        o->rc = CALL("optimist_commit", &s, &id, &b);
        free_batch(b);
        return 0;
    }
    if (strcmp(cmd, "rollback") == 0) {
        char *name = next_token(&p);
        const char *reason = *p ? p : NULL; /* the rest of the line, spaces included */
        uint64_t id;
        if (name == NULL) return bad_line(sc, "rollback needs NAME");
        if (resolve(sc, name, &id)) return -1;
        o->rc = CALL("optimist_rollback", &s, &id, &reason);
        return 0;
    }
    if (strcmp(cmd, "server") == 0) {
        optimist_batch *b = NULL;
        if (n_ops == 0) return bad_line(sc, "server needs ops");
        o->rc = build_batch(sc, ops, n_ops, &b, &syntax);
        if (syntax) return -1;
        if (o->rc != OPTIMIST_OK) return 0;
        o->rc = CALL("optimist_server_apply", &s, &b);
        free_batch(b);
        return 0;
    }
    if (strcmp(cmd, "get") == 0 || strcmp(cmd, "confirmed") == 0) {
        char *coll = next_token(&p), *key = next_token(&p), *json = NULL, **jp = &json;
        if (key == NULL) return bad_line(sc, "needs COLL KEY");
        o->rc = CALL(cmd[0] == 'g' ? "optimist_get" : "optimist_get_confirmed", &s, &coll, &key, &jp);
        take_string(o, json);
        return 0;
    }
    if (strcmp(cmd, "pending") == 0) {
        char *coll = next_token(&p), *key = next_token(&p);
        int v = 0, *vp = &v;
        if (key == NULL) return bad_line(sc, "pending needs COLL KEY");
        o->rc = CALL("optimist_is_pending", &s, &coll, &key, &vp);
        take_bool(o, v);
        return 0;
    }
    if (strcmp(cmd, "scan") == 0) {
        char *coll = next_token(&p), *prefix = next_token(&p), *limit_text = next_token(&p);
        char *json = NULL, **jp = &json;
        long long limit_ll;
        if (coll == NULL || prefix == NULL || parse_i64(limit_text, &limit_ll) || limit_ll < 0)
            return bad_line(sc, "scan needs COLL PREFIX LIMIT");
        size_t limit = (size_t)limit_ll;
        if (strcmp(prefix, "*") == 0) prefix = "";
        o->rc = CALL("optimist_scan", &s, &coll, &prefix, &limit, &jp);
        take_string(o, json);
        return 0;
    }
    if (strcmp(cmd, "status") == 0) {
        char *name = next_token(&p);
        uint64_t id;
        int st = 0, *stp = &st;
        if (name == NULL) return bad_line(sc, "status needs NAME");
        if (resolve(sc, name, &id)) return -1;
        o->rc = CALL("optimist_status", &s, &id, &stp);
        if (o->rc == OPTIMIST_OK) {
            sb_put(&o->value, (st >= 1 && st <= 5) ? status_names[st] : "?");
            o->has_value = 1;
        }
        return 0;
    }
    if (strcmp(cmd, "count") == 0) {
        uint64_t n = 0, *np = &n;
        char buf[32];
        o->rc = CALL("optimist_pending_count", &s, &np);
        if (o->rc == OPTIMIST_OK) {
            snprintf(buf, sizeof buf, "%llu", (unsigned long long)n);
            sb_put(&o->value, buf);
            o->has_value = 1;
        }
        return 0;
    }
    if (strcmp(cmd, "next") == 0) {
        long long now;
        uint64_t id = 0, *idp = &id;
        char *ops_json = NULL, **jp = &ops_json;
        if (parse_i64(next_token(&p), &now)) return bad_line(sc, "next needs NOW");
        int64_t now64 = now;
        o->rc = CALL("optimist_outbox_next", &s, &now64, &idp, &jp);
        if (o->rc == OPTIMIST_OK) {
            name_of(sc, id, &o->value);
            o->has_value = 1;
        }
        shim_call_void("optimist_free", (void *[]){&ops_json});
        return 0;
    }
    if (strcmp(cmd, "fail") == 0) {
        char *name = next_token(&p), *kind = next_token(&p);
        long long now;
        uint64_t id;
        if (name == NULL || kind == NULL || parse_i64(next_token(&p), &now) ||
            (strcmp(kind, "transient") && strcmp(kind, "permanent")))
            return bad_line(sc, "fail needs NAME transient|permanent NOW");
        if (resolve(sc, name, &id)) return -1;
        int transient = strcmp(kind, "transient") == 0;
        const char *reason = kind;
        int64_t now64 = now;
        o->rc = CALL("optimist_fail", &s, &id, &transient, &reason, &now64);
        return 0;
    }
    if (strcmp(cmd, "retry") == 0) {
        char *name = next_token(&p);
        uint64_t id;
        if (name == NULL) return bad_line(sc, "retry needs NAME");
        if (resolve(sc, name, &id)) return -1;
        o->rc = CALL("optimist_retry", &s, &id);
        return 0;
    }
    if (strcmp(cmd, "loaded") == 0) {
        char *coll = next_token(&p), *from = next_token(&p), *to = next_token(&p);
        long long at;
        if (to == NULL || parse_i64(next_token(&p), &at)) return bad_line(sc, "loaded needs COLL FROM TO AT");
        int64_t at64 = at;
        o->rc = CALL("optimist_mark_loaded", &s, &coll, &from, &to, &at64);
        return 0;
    }
    if (strcmp(cmd, "stale") == 0) {
        char *coll = next_token(&p), *key = next_token(&p);
        long long now, max_age;
        int v = 0, *vp = &v;
        if (key == NULL || parse_i64(next_token(&p), &now) || parse_i64(next_token(&p), &max_age))
            return bad_line(sc, "stale needs COLL KEY NOW MAXAGE");
        int64_t now64 = now, age64 = max_age;
        o->rc = CALL("optimist_needs_reload", &s, &coll, &key, &now64, &age64, &vp);
        take_bool(o, v);
        return 0;
    }
    if (strcmp(cmd, "view") == 0) {
        char *name = next_token(&p), *coll = next_token(&p), *prefix = next_token(&p), *kind = next_token(&p);
        if (kind == NULL) return bad_line(sc, "view needs VIEW COLL PREFIX KIND");
        if (strcmp(prefix, "*") == 0) prefix = "";
        o->rc = CALL("optimist_view_define", &s, &name, &coll, &prefix, &kind);
        return 0;
    }
    if (strcmp(cmd, "viewget") == 0) {
        char *name = next_token(&p), buf[64];
        double v = 0, *vp = &v;
        if (name == NULL) return bad_line(sc, "viewget needs VIEW");
        o->rc = CALL("optimist_view_get", &s, &name, &vp);
        if (o->rc == OPTIMIST_OK) {
            snprintf(buf, sizeof buf, "%.17g", v);
            sb_put(&o->value, buf);
            o->has_value = o->numeric = 1;
        }
        return 0;
    }
    if (strcmp(cmd, "subscribe") == 0) {
        char *name = next_token(&p), *coll = next_token(&p), *prefix = next_token(&p);
        if (prefix == NULL) return bad_line(sc, "subscribe needs SUB COLL PREFIX");
        if (sc->n_subs == MAX_SUBS || find_sub(sc, name)) return bad_line(sc, "too many or duplicate SUB");
        subscription *sub = &sc->subs[sc->n_subs];
        const char *c = strcmp(coll, "*") ? coll : NULL, *pre = strcmp(prefix, "*") ? prefix : NULL;
        optimist_listener fn = on_changes;
        uint64_t *idp = &sub->id;
        snprintf(sub->name, NAME_LEN, "%s", name);
        o->rc = CALL("optimist_subscribe", &s, &c, &pre, &fn, &sub, &idp);
        if (o->rc == OPTIMIST_OK) sc->n_subs++;
        return 0;
    }
    if (strcmp(cmd, "unsubscribe") == 0) {
        char *name = next_token(&p);
        subscription *sub = name ? find_sub(sc, name) : NULL;
        if (sub == NULL) return bad_line(sc, "unknown SUB");
        o->rc = CALL("optimist_unsubscribe", &s, &sub->id);
        return 0;
    }
    if (strcmp(cmd, "changes") == 0) {
        char *name = next_token(&p);
        subscription *sub = name ? find_sub(sc, name) : NULL;
        if (sub == NULL) return bad_line(sc, "unknown SUB");
        o->rc = OPTIMIST_OK;
        sb_putc(&o->value, '[');
        sb_put(&o->value, sb_str(&sub->got));
        sb_putc(&o->value, ']');
        o->has_value = 1;
        sb_clear(&sub->got);
        return 0;
    }
    if (strcmp(cmd, "reopen") == 0) {
        if (sc->path[0] == '\0') return bad_line(sc, "reopen on an in-memory store");
        optimist_store **sp = &sc->store;
        o->rc = CALL("optimist_flush", &s);
        if (o->rc == OPTIMIST_OK) o->rc = CALL("optimist_close", &s);
        sc->store = NULL;
        const char *path = sc->path;
        if (o->rc == OPTIMIST_OK) o->rc = CALL("optimist_open", &path, &sp);
        return 0;
    }
    return bad_line(sc, "unknown command");
}

/* ---- judging a line ------------------------------------------------------------------- */

/* Compares an outcome with the line's expectation (NULL: must be OK). Returns 0 if it holds. */
static int judge(scenario *sc, const outcome *o, const char *expected) {
    int ok;
    int want_code = expected ? code_of(expected) : OPTIMIST_OK;
    if (want_code >= 0) {
        ok = o->rc == want_code;
    } else if (strncmp(expected, "DUPLICATE ", 10) == 0) {
        uint64_t other;
        if (resolve(sc, expected + 10, &other)) return -1;
        ok = o->rc == OPTIMIST_DUPLICATE && o->dup_id == other;
    } else if (o->rc != OPTIMIST_OK || !o->has_value) {
        ok = 0;
    } else if (o->numeric) {
        double want, got;
        ok = parse_double(expected, &want) == 0 && parse_double(sb_str(&o->value), &got) == 0 &&
             want == got;
    } else {
        ok = strcmp(sb_str(&o->value), expected) == 0;
    }
    if (ok) return 0;
    char buf[64];
    sb_put(&sc->why, "expected ");
    sb_put(&sc->why, expected ? expected : "OK");
    sb_put(&sc->why, ", got ");
    sb_put(&sc->why, code_name(o->rc));
    if (o->rc == OPTIMIST_DUPLICATE) {
        snprintf(buf, sizeof buf, " (id %llu)", (unsigned long long)o->dup_id);
        sb_put(&sc->why, buf);
    }
    if (o->has_value) {
        sb_put(&sc->why, " ");
        sb_put(&sc->why, sb_str(&o->value));
    }
    if (o->rc != OPTIMIST_OK) {
        sb_put(&sc->why, " (last error: ");
        sb_put(&sc->why, last_error());
        sb_put(&sc->why, ")");
    }
    return -1;
}

/* Splits "HEAD | OP | OP => EXPECTED" in place and runs it. Returns 0 if the line holds. */
static int run_line(scenario *sc, char *line) {
    char *expected = NULL, *arrow = strstr(line, " => ");
    if (arrow) {
        *arrow = '\0';
        expected = arrow + 4;
    }
    char *segs[MAX_SEGMENTS];
    int n = 0;
    segs[n++] = line;
    for (char *bar; n < MAX_SEGMENTS && (bar = strstr(segs[n - 1], " | ")) != NULL;) {
        *bar = '\0';
        segs[n++] = bar + 3;
    }
    outcome o = {0};
    int rc = run_command(sc, segs[0], segs + 1, n - 1, &o);
    if (rc == 0) rc = judge(sc, &o, expected);
    sb_free(&o.value);
    return rc;
}

/* ---- scenarios ------------------------------------------------------------------------ */

/* Whether any line of the file is the command `reopen` (then it runs on a store file). */
static int needs_file(FILE *f) {
    char *line = NULL;
    size_t cap = 0;
    int found = 0;
    while (!found && getline(&line, &cap, f) > 0) {
        line[strcspn(line, "\r\n")] = '\0';
        found = strncmp(line, "reopen", 6) == 0 && (line[6] == '\0' || line[6] == ' ');
    }
    free(line);
    rewind(f);
    return found;
}

/* Removes the scenario's temporary directory and whatever the store left in it. */
static void remove_dir(const char *dir) {
    DIR *d = opendir(dir);
    if (d == NULL) return;
    struct dirent *e;
    char path[PATH_MAX];
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        unlink(path);
    }
    closedir(d);
    rmdir(dir);
}

/* Runs one scenario file; prints PASS or FAIL (with the failing line). Returns 0 on PASS. */
static int run_scenario(const char *file) {
    FILE *f = fopen(file, "r");
    if (f == NULL) {
        printf("FAIL %s\n  cannot open the file\n", file);
        return -1;
    }
    scenario *sc = calloc(1, sizeof *sc);
    int failed = 0, lineno = 0;
    char *line = NULL, *copy = NULL;
    size_t cap = 0;

    if (needs_file(f)) {
        const char *tmp = getenv("TMPDIR");
        snprintf(sc->dir, sizeof sc->dir, "%s/optimist-scn-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (mkdtemp(sc->dir) == NULL) {
            printf("FAIL %s\n  mkdtemp failed\n", file);
            fclose(f);
            free(sc);
            return -1;
        }
        snprintf(sc->path, sizeof sc->path, "%s/store.optimist", sc->dir);
    }
    const char *path = sc->path[0] ? sc->path : NULL;
    optimist_store **sp = &sc->store;
    int rc = CALL("optimist_open", &path, &sp);
    if (rc != OPTIMIST_OK) {
        failed = 1;
        printf("FAIL %s\n  open(%s) returned %s (last error: %s)\n", file, path ? path : "NULL",
               code_name(rc), last_error());
    }
    while (!failed && getline(&line, &cap, f) > 0) {
        lineno++;
        line[strcspn(line, "\r\n")] = '\0';
        if (line[0] == '\0' || line[0] == '#') continue;
        free(copy);
        copy = strdup(line); /* run_line cuts the line up; keep it for the report */
        if (run_line(sc, line) != 0) {
            failed = 1;
            printf("FAIL %s\n  line %d: %s\n    %s\n", file, lineno, copy, sb_str(&sc->why));
        }
    }
    if (!failed) printf("PASS %s\n", file);

    optimist_store *s = sc->store;
    CALL("optimist_close", &s);
    for (int i = 0; i < sc->n_subs; i++) sb_free(&sc->subs[i].got);
    sb_free(&sc->why);
    if (sc->dir[0]) remove_dir(sc->dir);
    free(copy);
    free(line);
    free(sc);
    fclose(f);
    return failed ? -1 : 0;
}

static int by_name(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Runs every *.scn file of a directory, in name order. */
static void run_dir(const char *dir, int *passed, int *failed) {
    DIR *d = opendir(dir);
    char **files = NULL;
    size_t n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 4, ".scn") != 0) continue;
        files = realloc(files, (n + 1) * sizeof *files);
        files[n] = malloc(strlen(dir) + len + 2);
        sprintf(files[n++], "%s/%s", dir, e->d_name);
    }
    if (d) closedir(d);
    qsort(files, n, sizeof *files, by_name);
    for (size_t i = 0; i < n; i++) {
        if (run_scenario(files[i]) == 0) (*passed)++;
        else (*failed)++;
        free(files[i]);
    }
    free(files);
}

int main(int argc, char **argv) {
    const char *library = getenv("OPTIMIST_LIBRARY");
#ifdef OPTIMIST_SHIM_DEFAULT_LIBRARY
    if (library == NULL || *library == '\0') library = OPTIMIST_SHIM_DEFAULT_LIBRARY;
#endif
    int first = 1;
    if (argc > 2 && strcmp(argv[1], "--library") == 0) {
        library = argv[2];
        first = 3;
    }
    if (first >= argc || library == NULL) {
        fprintf(stderr, "usage: %s [--library PATH] SCENARIO_OR_DIR...\n", argv[0]);
        return 2;
    }
    char err[PATH_MAX + 256];
    if (shim_load(library, err, sizeof err) != 0) {
        fprintf(stderr, "scenario_shim: %s\n", err);
        printf("0 passed, %d failed\n", argc - first);
        return 1;
    }
    int passed = 0, failed = 0;
    for (int i = first; i < argc; i++) {
        DIR *d = opendir(argv[i]);
        if (d) {
            closedir(d);
            run_dir(argv[i], &passed, &failed);
        } else if (run_scenario(argv[i]) == 0) {
            passed++;
        } else {
            failed++;
        }
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
