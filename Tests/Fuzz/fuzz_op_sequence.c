/*
 * fuzz_op_sequence - the fuzzer's bytes as a sequence of calls through the C ABI on an
 * in-memory store, each checked against a tiny model kept here.
 *
 * The model is the header's contract, written out: a confirmed map C, the not-yet-ended
 * mutations P with their ops, status, policy, dedupe key and queue position, and V = fold(P, C)
 * where an op that no longer applies is skipped. Records live in one collection, on four keys,
 * and hold at most two fields: "n" (a number, or a string that makes incr fail) and "m" (a
 * number). After every call the target compares, for every key, get with V, get_confirmed with
 * C and is_pending with P; every mutation's status; every defined view's value; and what each
 * subscription heard during the call (every record whose value or status changed, with its
 * new value, status and the call's cause). Any difference aborts.
 *
 * One store serves many inputs, brought back to empty after each (fuzz_common.h, fuzz_store):
 * each input starts with no record, no mutation pending, no subscription and the four views
 * defined alike.
 *
 * The retry policy is set to no backoff and effectively unlimited attempts, so outbox_next at
 * a fixed now_ms is deterministic: the due mutation with the smallest (queue position, fresh,
 * id), as the engine orders them.
 */
#include "fuzz_common.h"

#include <math.h>

#define NKEYS 4
#define MAXMUT 64
#define MAXOPS 4
#define MAXSUBS 4
#define MAXVIEWS 4
#define NOW 1000

static const char *const COLL = "c";
static const char *const KEYS[NKEYS] = {"a0", "a1", "b0", "b1"};

/* ---- records and ops of the model ---------------------------------------------------------- */

typedef struct {
    int present;
    int has_n, n_is_str; /* "n": a number, or the string "x" */
    double n;
    int has_m;
    double m;
} rec;

enum { OP_PUT_N, OP_PUT_STR, OP_PUT_EMPTY, OP_DELETE, OP_INCR_N, OP_PATCH_M, OP_PATCH_NULL_N, OP_INCR_M, OP_KINDS };

typedef struct {
    int kind, key;
    double v;
} mop;

/* Applies op to r; 0 when it cannot apply (incr of a string). */
static int apply(const mop *o, rec *r) {
    switch (o->kind) {
    case OP_PUT_N: *r = (rec){1, 1, 0, o->v, 0, 0}; return 1;
    case OP_PUT_STR: *r = (rec){1, 1, 1, 0, 0, 0}; return 1;
    case OP_PUT_EMPTY: *r = (rec){1, 0, 0, 0, 0, 0}; return 1;
    case OP_DELETE: *r = (rec){0}; return 1;
    case OP_INCR_N:
        if (r->present && r->has_n && r->n_is_str) return 0;
        if (!r->present) *r = (rec){1, 0, 0, 0, 0, 0};
        r->n = (r->has_n ? r->n : 0) + o->v;
        r->has_n = 1;
        return 1;
    case OP_INCR_M:
        if (!r->present) *r = (rec){1, 0, 0, 0, 0, 0};
        r->m = (r->has_m ? r->m : 0) + o->v;
        r->has_m = 1;
        return 1;
    case OP_PATCH_M:
        if (!r->present) *r = (rec){1, 0, 0, 0, 0, 0};
        r->has_m = 1;
        r->m = o->v;
        return 1;
    case OP_PATCH_NULL_N:
        if (!r->present) *r = (rec){1, 0, 0, 0, 0, 0};
        r->has_n = 0;
        r->n_is_str = 0;
        return 1;
    }
    abort();
}

/* The canonical JSON of r (members sorted: "m" before "n"); "" when absent. */
static void canon(const rec *r, char *buf, size_t cap) {
    if (!r->present) { buf[0] = '\0'; return; }
    char m[64] = "", n[64] = "";
    if (r->has_m) snprintf(m, sizeof m, "\"m\":%.0f", r->m);
    if (r->has_n) {
        if (r->n_is_str) snprintf(n, sizeof n, "\"n\":\"x\"");
        else snprintf(n, sizeof n, "\"n\":%.0f", r->n);
    }
    snprintf(buf, cap, "{%s%s%s}", m, (r->has_m && r->has_n) ? "," : "", n);
}

static void add_op(optimist_batch *b, const mop *o) {
    const char *k = KEYS[o->key];
    int rc = OPTIMIST_OK;
    char json[64];
    switch (o->kind) {
    case OP_PUT_N:
        snprintf(json, sizeof json, "{\"n\":%.0f}", o->v);
        rc = optimist_batch_put(b, COLL, k, json);
        break;
    case OP_PUT_STR: rc = optimist_batch_put(b, COLL, k, "{\"n\":\"x\"}"); break;
    case OP_PUT_EMPTY: rc = optimist_batch_put(b, COLL, k, "{}"); break;
    case OP_DELETE: rc = optimist_batch_delete(b, COLL, k); break;
    case OP_INCR_N: rc = optimist_batch_incr(b, COLL, k, "n", o->v); break;
    case OP_INCR_M: rc = optimist_batch_incr(b, COLL, k, "m", o->v); break;
    case OP_PATCH_M:
        snprintf(json, sizeof json, "{\"m\":%.0f}", o->v);
        rc = optimist_batch_patch(b, COLL, k, json);
        break;
    case OP_PATCH_NULL_N: rc = optimist_batch_patch(b, COLL, k, "{\"n\":null}"); break;
    }
    if (rc != OPTIMIST_OK) FUZZ_FAIL("adding a well-formed op (kind %d) returned %d", o->kind, rc);
}

/* ---- the model's state ----------------------------------------------------------------------- */

enum { ST_PENDING = OPTIMIST_PENDING, ST_INFLIGHT, ST_FAILED, ST_COMMITTED, ST_ROLLED_BACK };

typedef struct {
    uint64_t id;
    int status, keep, dedupe; /* dedupe: -1 none, else the key's number */
    uint64_t qpos;            /* queue position: its id, or the next id when a failure was retried */
    int nops;
    mop ops[MAXOPS];
} mmut;

typedef struct {
    int defined;
    int prefix; /* 0: every key, 1: "a", 2: "b0" */
    int sum;    /* 0: count, 1: sum:n, 2: sum:m */
} mview;

typedef struct {
    int active;
    uint64_t id;
    int prefix; /* as views */
    /* What it heard during the current call, per key. */
    int heard[NKEYS], heard_status[NKEYS], heard_cause[NKEYS], heard_bad;
    char heard_value[NKEYS][64];
} msub;

static struct {
    rec confirmed[NKEYS];
    mmut muts[MAXMUT];
    int nmuts;
    uint64_t next_id; /* 0 until the first mutation tells the store's first id */
    mview views[MAXVIEWS];
    msub subs[MAXSUBS];
} M;

static const char *prefix_str(int p) { return p == 0 ? NULL : p == 1 ? "a" : "b0"; }

static int matches(int prefix, int key) {
    const char *p = prefix_str(prefix);
    return !p || strncmp(KEYS[key], p, strlen(p)) == 0;
}

static int live(const mmut *m) { return m->status == ST_PENDING || m->status == ST_INFLIGHT || m->status == ST_FAILED; }

static int touches(const mmut *m, int key) {
    for (int i = 0; i < m->nops; i++)
        if (m->ops[i].key == key) return 1;
    return 0;
}

/* V[key] = fold of the live mutations (id order) over C, skipping ops that cannot apply. */
static rec visible(int key) {
    rec r = M.confirmed[key];
    for (int i = 0; i < M.nmuts; i++) {
        if (!live(&M.muts[i])) continue;
        for (int j = 0; j < M.muts[i].nops; j++) {
            if (M.muts[i].ops[j].key != key) continue;
            rec t = r;
            if (apply(&M.muts[i].ops[j], &t)) r = t;
        }
    }
    return r;
}

/* OPTIMIST_RECORD_*: failed if a kept failure touches it, pending if any live mutation does. */
static int record_status(int key) {
    int st = OPTIMIST_RECORD_CONFIRMED;
    for (int i = 0; i < M.nmuts; i++) {
        if (!live(&M.muts[i]) || !touches(&M.muts[i], key)) continue;
        if (M.muts[i].status == ST_FAILED) return OPTIMIST_RECORD_FAILED;
        st = OPTIMIST_RECORD_PENDING;
    }
    return st;
}

static mmut *find(uint64_t id) {
    for (int i = 0; i < M.nmuts; i++)
        if (M.muts[i].id == id) return &M.muts[i];
    return NULL;
}

/* ---- listeners ------------------------------------------------------------------------------ */

static void listener(void *ctx, const optimist_change *c, size_t n) {
    msub *s = ctx;
    if (n == 0) s->heard_bad = 1;
    for (size_t i = 0; i < n; i++) {
        int k = -1;
        for (int j = 0; j < NKEYS; j++)
            if (c[i].key && strcmp(c[i].key, KEYS[j]) == 0) k = j;
        if (k < 0 || !c[i].collection || strcmp(c[i].collection, COLL) != 0 || !matches(s->prefix, k)) {
            s->heard_bad = 2;
            continue;
        }
        s->heard[k]++;
        s->heard_status[k] = c[i].pending;
        s->heard_cause[k] = c[i].cause;
        snprintf(s->heard_value[k], sizeof s->heard_value[k], "%s", c[i].value_json ? c[i].value_json : "");
    }
}

/* ---- checks ----------------------------------------------------------------------------------- */

static void check_get(optimist_store *s, int key, int confirmed, const rec *want) {
    char *json = NULL, w[64];
    canon(want, w, sizeof w);
    int rc = FUZZ_RC(confirmed ? optimist_get_confirmed(s, COLL, KEYS[key], &json)
                               : optimist_get(s, COLL, KEYS[key], &json));
    if (!want->present) {
        if (rc != OPTIMIST_NOTFOUND) FUZZ_FAIL("%s %s: got %d %s, the model has no record", confirmed ? "confirmed" : "visible", KEYS[key], rc, json ? json : "");
    } else if (rc != OPTIMIST_OK || strcmp(json, w) != 0) {
        FUZZ_FAIL("%s %s: got %d %s, the model says %s", confirmed ? "confirmed" : "visible", KEYS[key], rc, json ? json : "(none)", w);
    }
    optimist_free(json);
}

static double view_value(const mview *v) {
    double total = 0;
    for (int k = 0; k < NKEYS; k++) {
        if (!matches(v->prefix, k)) continue;
        rec r = visible(k);
        if (!r.present) continue;
        if (v->sum == 0) total += 1;
        else if (v->sum == 1 && r.has_n && !r.n_is_str) total += r.n;
        else if (v->sum == 2 && r.has_m) total += r.m;
    }
    return total;
}

static const char *VIEW_NAMES[MAXVIEWS] = {"v0", "v1", "v2", "v3"};

static void check_all(optimist_store *s, const rec before[NKEYS], const int before_status[NKEYS], int cause,
                      const char *what) {
    for (int k = 0; k < NKEYS; k++) {
        rec v = visible(k);
        check_get(s, k, 0, &v);
        check_get(s, k, 1, &M.confirmed[k]);
        int p = -1;
        if (FUZZ_RC(optimist_is_pending(s, COLL, KEYS[k], &p)) != OPTIMIST_OK) FUZZ_FAIL("is_pending");
        if (p != (record_status(k) != OPTIMIST_RECORD_CONFIRMED)) FUZZ_FAIL("is_pending %s is %d after %s", KEYS[k], p, what);
    }
    uint64_t count = 0, want = 0;
    for (int i = 0; i < M.nmuts; i++) {
        int st = 0;
        if (FUZZ_RC(optimist_status(s, M.muts[i].id, &st)) != OPTIMIST_OK || st != M.muts[i].status)
            FUZZ_FAIL("mutation %llu has status %d, the model says %d (after %s)",
                      (unsigned long long)M.muts[i].id, st, M.muts[i].status, what);
        want += live(&M.muts[i]);
    }
    if (FUZZ_RC(optimist_pending_count(s, &count)) != OPTIMIST_OK || count != want)
        FUZZ_FAIL("pending_count %llu, the model says %llu", (unsigned long long)count, (unsigned long long)want);
    for (int i = 0; i < MAXVIEWS; i++) {
        double got = -1;
        int rc = FUZZ_RC(optimist_view_get(s, VIEW_NAMES[i], &got));
        if (!M.views[i].defined) {
            if (rc != OPTIMIST_NOTFOUND) FUZZ_FAIL("view %s is not defined but get returned %d", VIEW_NAMES[i], rc);
            continue;
        }
        double w = view_value(&M.views[i]);
        if (rc != OPTIMIST_OK || got != w)
            FUZZ_FAIL("view %s (prefix %d, kind %d) is %g, the model says %g (after %s)", VIEW_NAMES[i],
                      M.views[i].prefix, M.views[i].sum, got, w, what);
    }
    /* Subscriptions: every record whose value or status changed was heard, with what it is now. */
    for (int i = 0; i < MAXSUBS; i++) {
        msub *sub = &M.subs[i];
        if (!sub->active) continue;
        if (sub->heard_bad) FUZZ_FAIL("subscription %d heard a record outside its filter or an empty call (%d)", i, sub->heard_bad);
        for (int k = 0; k < NKEYS; k++) {
            if (!matches(sub->prefix, k)) continue;
            rec now = visible(k);
            char wnow[64], wbefore[64];
            canon(&now, wnow, sizeof wnow);
            canon(&before[k], wbefore, sizeof wbefore);
            int st = record_status(k);
            int changed = strcmp(wnow, wbefore) != 0 || st != before_status[k];
            if (changed && !sub->heard[k])
                FUZZ_FAIL("subscription %d did not hear %s change (%s -> %s, status %d -> %d) in %s", i, KEYS[k],
                          wbefore, wnow, before_status[k], st, what);
            if (sub->heard[k] > 1) FUZZ_FAIL("subscription %d heard %s %d times in one call", i, KEYS[k], sub->heard[k]);
            if (sub->heard[k]) {
                if (strcmp(sub->heard_value[k], wnow) != 0 || sub->heard_status[k] != st)
                    FUZZ_FAIL("subscription %d heard %s as %s (status %d), it is %s (status %d) after %s", i, KEYS[k],
                              sub->heard_value[k], sub->heard_status[k], wnow, st, what);
                if (cause && sub->heard_cause[k] != cause)
                    FUZZ_FAIL("subscription %d heard %s with cause %d after %s", i, KEYS[k], sub->heard_cause[k], what);
            }
        }
    }
}

/* ---- the calls ----------------------------------------------------------------------------------- */

static mop decode_op(fuzz_in *in) {
    mop o;
    uint8_t b = fz_u8(in);
    o.kind = b % OP_KINDS;
    o.key = (b >> 4) % NKEYS;
    o.v = (double)((int8_t)fz_u8(in) % 50);
    return o;
}

/* A mutation id the input names: mostly a known one, sometimes one that never existed. */
static uint64_t pick_id(fuzz_in *in) {
    uint8_t b = fz_u8(in);
    if (M.nmuts == 0 || b >= 240) return b >= 250 ? 0 : UINT64_MAX - b;
    return M.muts[b % M.nmuts].id;
}

static void do_mutate(optimist_store *s, fuzz_in *in) {
    uint8_t flags = fz_u8(in);
    int nops = 1 + flags % MAXOPS;
    int keep = (flags >> 2) & 1;
    int dedupe = (flags >> 3) & 1 ? (flags >> 4) % 2 : -1;
    mop ops[MAXOPS];
    optimist_batch *b = NULL;
    optimist_batch_new(&b);
    for (int i = 0; i < nops; i++) {
        ops[i] = decode_op(in);
        add_op(b, &ops[i]);
    }
    /* The model's prediction: every op applies in turn on V, or nothing changes. */
    rec v[NKEYS];
    int ok = 1;
    for (int k = 0; k < NKEYS; k++) v[k] = visible(k);
    for (int i = 0; i < nops && ok; i++) ok = apply(&ops[i], &v[ops[i].key]);
    mmut *holder = NULL;
    for (int i = 0; i < M.nmuts && dedupe >= 0; i++)
        if (live(&M.muts[i]) && M.muts[i].dedupe == dedupe) holder = &M.muts[i];

    char dk[8];
    snprintf(dk, sizeof dk, "d%d", dedupe);
    uint64_t id = 0;
    int rc = FUZZ_RC(optimist_mutate_with_policy(s, b, dedupe >= 0 ? dk : NULL,
                                                 keep ? OPTIMIST_POLICY_KEEP : OPTIMIST_POLICY_ROLLBACK, &id));
    optimist_batch_free(b);
    if (holder) {
        if (rc != OPTIMIST_DUPLICATE || id != holder->id)
            FUZZ_FAIL("mutate with dedupe key %s held by %llu returned %d (id %llu)", dk,
                      (unsigned long long)holder->id, rc, (unsigned long long)id);
        return;
    }
    if (!ok) {
        if (rc != OPTIMIST_INVALID) FUZZ_FAIL("mutate whose op cannot apply returned %d", rc);
        return;
    }
    if (rc != OPTIMIST_OK) FUZZ_FAIL("mutate returned %d, the model says it applies", rc);
    if (M.next_id && id != M.next_id) FUZZ_FAIL("mutation id %llu, expected %llu", (unsigned long long)id, (unsigned long long)M.next_id);
    if (M.nmuts == MAXMUT) FUZZ_FAIL("model full"); /* the decoder stops before this */
    mmut *m = &M.muts[M.nmuts++];
    *m = (mmut){.id = id, .status = ST_PENDING, .keep = keep, .dedupe = dedupe, .qpos = id, .nops = nops};
    memcpy(m->ops, ops, sizeof ops);
    M.next_id = id + 1;
}

/* Confirmed := fold of ops over C; own ops skip what cannot apply, server ops must all apply. */
static int fold_confirmed(const mop *ops, int n, int skip) {
    rec c[NKEYS];
    memcpy(c, M.confirmed, sizeof c);
    for (int i = 0; i < n; i++) {
        rec t = c[ops[i].key];
        if (apply(&ops[i], &t)) c[ops[i].key] = t;
        else if (!skip) return 0;
    }
    memcpy(M.confirmed, c, sizeof c);
    return 1;
}

static void do_commit(optimist_store *s, fuzz_in *in, int with_server_ops) {
    uint64_t id = pick_id(in);
    mop sops[MAXOPS];
    int nsops = 0;
    optimist_batch *b = NULL;
    if (with_server_ops) {
        optimist_batch_new(&b);
        nsops = fz_u8(in) % (MAXOPS + 1); /* 0: the server changed nothing */
        for (int i = 0; i < nsops; i++) {
            sops[i] = decode_op(in);
            add_op(b, &sops[i]);
        }
    }
    int rc = FUZZ_RC(optimist_commit(s, id, b));
    optimist_batch_free(b);
    mmut *m = find(id);
    if (!m) {
        if (rc != OPTIMIST_NOTFOUND) FUZZ_FAIL("commit of unknown %llu returned %d", (unsigned long long)id, rc);
        return;
    }
    if (!live(m)) {
        if (rc != OPTIMIST_STATE) FUZZ_FAIL("commit of ended %llu returned %d", (unsigned long long)id, rc);
        return;
    }
    rec saved[NKEYS];
    memcpy(saved, M.confirmed, sizeof saved);
    int ok = with_server_ops ? fold_confirmed(sops, nsops, 0) : fold_confirmed(m->ops, m->nops, 1);
    if (!ok) {
        memcpy(M.confirmed, saved, sizeof saved);
        if (rc != OPTIMIST_INVALID) FUZZ_FAIL("commit with server ops that cannot apply returned %d", rc);
        return;
    }
    if (rc != OPTIMIST_OK) FUZZ_FAIL("commit of live %llu returned %d", (unsigned long long)id, rc);
    m->status = ST_COMMITTED;
}

static void do_rollback(optimist_store *s, fuzz_in *in) {
    uint64_t id = pick_id(in);
    int rc = FUZZ_RC(optimist_rollback(s, id, (fz_u8(in) & 1) ? "fuzz" : NULL));
    mmut *m = find(id);
    int want = !m ? OPTIMIST_NOTFOUND : !live(m) ? OPTIMIST_STATE : OPTIMIST_OK;
    if (rc != want) FUZZ_FAIL("rollback of %llu returned %d, expected %d", (unsigned long long)id, rc, want);
    if (m && rc == OPTIMIST_OK) m->status = ST_ROLLED_BACK;
}

static void do_fail(optimist_store *s, fuzz_in *in) {
    uint64_t id = pick_id(in);
    int transient = fz_u8(in) & 1;
    int rc = FUZZ_RC(optimist_fail(s, id, transient, "fuzz", NOW));
    mmut *m = find(id);
    int want = !m ? OPTIMIST_NOTFOUND
             : (m->status == ST_PENDING || m->status == ST_INFLIGHT) ? OPTIMIST_OK : OPTIMIST_STATE;
    if (rc != want) FUZZ_FAIL("fail of %llu (status %d) returned %d, expected %d", (unsigned long long)id, m ? m->status : 0, rc, want);
    if (rc != OPTIMIST_OK) return;
    if (transient) m->status = ST_PENDING;
    else m->status = m->keep ? ST_FAILED : ST_ROLLED_BACK;
}

static void do_retry(optimist_store *s, fuzz_in *in) {
    uint64_t id = pick_id(in);
    int rc = FUZZ_RC(optimist_retry(s, id));
    mmut *m = find(id);
    int want = !m ? OPTIMIST_NOTFOUND
             : (m->status == ST_PENDING || m->status == ST_FAILED) ? OPTIMIST_OK : OPTIMIST_STATE;
    if (rc != want) FUZZ_FAIL("retry of %llu (status %d) returned %d, expected %d", (unsigned long long)id, m ? m->status : 0, rc, want);
    if (rc != OPTIMIST_OK) return;
    if (m->status == ST_FAILED) m->qpos = M.next_id; /* sent after everything already queued */
    m->status = ST_PENDING;
}

static void do_outbox_next(optimist_store *s) {
    /* The due pending mutation with the smallest (queue position, not fresh first, id). */
    mmut *want = NULL;
    for (int i = 0; i < M.nmuts; i++) {
        mmut *m = &M.muts[i];
        if (m->status != ST_PENDING) continue;
        if (!want) { want = m; continue; }
        int mf = m->qpos == m->id, wf = want->qpos == want->id;
        if (m->qpos < want->qpos || (m->qpos == want->qpos && ((!mf && wf) || (mf == wf && m->id < want->id))))
            want = m;
    }
    uint64_t id = 0;
    char *ops = NULL;
    int rc = FUZZ_RC(optimist_outbox_next(s, NOW, &id, &ops));
    if (!want) {
        if (rc != OPTIMIST_NOTFOUND) FUZZ_FAIL("outbox_next returned %d (%llu) with nothing pending", rc, (unsigned long long)id);
        return;
    }
    if (rc != OPTIMIST_OK || id != want->id)
        FUZZ_FAIL("outbox_next returned %d id %llu, the model says %llu", rc, (unsigned long long)id, (unsigned long long)want->id);
    FUZZ_JSON(ops, '[');
    optimist_free(ops);
    want->status = ST_INFLIGHT;
}

static void do_server_apply(optimist_store *s, fuzz_in *in) {
    int n = fz_u8(in) % (MAXOPS + 1);
    mop ops[MAXOPS];
    optimist_batch *b = NULL;
    optimist_batch_new(&b);
    for (int i = 0; i < n; i++) {
        ops[i] = decode_op(in);
        add_op(b, &ops[i]);
    }
    int rc = FUZZ_RC(optimist_server_apply(s, b));
    optimist_batch_free(b);
    int ok = fold_confirmed(ops, n, 0);
    if (rc != (ok ? OPTIMIST_OK : OPTIMIST_INVALID)) FUZZ_FAIL("server_apply returned %d, the model says %s", rc, ok ? "ok" : "invalid");
}

static void do_view_define(optimist_store *s, fuzz_in *in) {
    uint8_t b = fz_u8(in);
    int i = b % MAXVIEWS, prefix = (b >> 2) % 3, sum = (b >> 4) % 3;
    static const char *const kinds[3] = {"count", "sum:n", "sum:m"};
    int rc = FUZZ_RC(optimist_view_define(s, VIEW_NAMES[i], COLL, prefix_str(prefix), kinds[sum]));
    if (rc != OPTIMIST_OK) FUZZ_FAIL("view_define returned %d", rc);
    M.views[i] = (mview){1, prefix, sum};
}

static void do_subscribe(optimist_store *s, fuzz_in *in) {
    uint8_t b = fz_u8(in);
    msub *sub = &M.subs[b % MAXSUBS];
    if (sub->active) {
        int rc = FUZZ_RC(optimist_unsubscribe(s, sub->id));
        if (rc != OPTIMIST_OK) FUZZ_FAIL("unsubscribe of a live subscription returned %d", rc);
        /* Twice: the second one finds nothing. */
        if (b & 0x80 && FUZZ_RC(optimist_unsubscribe(s, sub->id)) != OPTIMIST_NOTFOUND) FUZZ_FAIL("second unsubscribe");
        sub->active = 0;
        return;
    }
    memset(sub, 0, sizeof *sub);
    sub->prefix = (b >> 2) % 3;
    uint64_t id = 0;
    /* A subscription to another collection must never hear this one. */
    if (FUZZ_RC(optimist_subscribe(s, COLL, prefix_str(sub->prefix), listener, sub, &id)) != OPTIMIST_OK)
        FUZZ_FAIL("subscribe");
    sub->id = id;
    sub->active = 1;
}

/* Every input starts with the four views defined the same way, on a new store and on one reused
 * (a view cannot be dropped, so a reused store keeps its views; defining them all at the start
 * makes both the same). A name never defined must stay NOTFOUND. */
static void define_views(optimist_store *s) {
    static const char *const kinds[3] = {"count", "sum:n", "sum:m"};
    for (int i = 0; i < MAXVIEWS; i++) {
        M.views[i] = (mview){1, i % 3, (i + 1) % 3};
        if (FUZZ_RC(optimist_view_define(s, VIEW_NAMES[i], COLL, prefix_str(M.views[i].prefix), kinds[M.views[i].sum])) != OPTIMIST_OK)
            FUZZ_FAIL("view_define");
    }
    double v;
    if (FUZZ_RC(optimist_view_get(s, "never", &v)) != OPTIMIST_NOTFOUND) FUZZ_FAIL("an undefined view answered");
}

/* The store as a new one is, for the next input (fuzz_common.h): no subscription, every
 * mutation ended, no record. Checked, so the next input cannot see this one. */
static void back_to_empty(optimist_store *s) {
    for (int i = 0; i < MAXSUBS; i++)
        if (M.subs[i].active && FUZZ_RC(optimist_unsubscribe(s, M.subs[i].id)) != OPTIMIST_OK) FUZZ_FAIL("unsubscribe");
    for (int i = 0; i < M.nmuts; i++)
        if (live(&M.muts[i]) && FUZZ_RC(optimist_rollback(s, M.muts[i].id, NULL)) != OPTIMIST_OK) FUZZ_FAIL("rollback");
    optimist_batch *b = NULL;
    optimist_batch_new(&b);
    for (int k = 0; k < NKEYS; k++) optimist_batch_delete(b, COLL, KEYS[k]);
    if (FUZZ_RC(optimist_server_apply(s, b)) != OPTIMIST_OK) FUZZ_FAIL("server_apply of deletes");
    optimist_batch_free(b);
    uint64_t pending = 1;
    if (FUZZ_RC(optimist_pending_count(s, &pending)) != OPTIMIST_OK || pending != 0) FUZZ_FAIL("%llu still pending", (unsigned long long)pending);
    char *json = NULL;
    if (FUZZ_RC(optimist_scan(s, COLL, NULL, 0, &json)) != OPTIMIST_OK || strcmp(json, "[]") != 0)
        FUZZ_FAIL("records left after the reset: %.400s", json ? json : "(scan failed)");
    optimist_free(json);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_in in = {data, size};
    memset(&M, 0, sizeof M);
    int fresh = 0;
    optimist_store *s = fuzz_store(&fresh);
    /* No backoff and no running out of attempts: the outbox order stays predictable. */
    if (fresh && optimist_set_retry_policy(s, 1 << 30, 0, 0) != OPTIMIST_OK) FUZZ_FAIL("set_retry_policy");
    define_views(s);

    int steps = 0;
    while (!fz_empty(&in) && steps++ < 200) {
        rec before[NKEYS];
        int before_status[NKEYS];
        for (int k = 0; k < NKEYS; k++) {
            before[k] = visible(k);
            before_status[k] = record_status(k);
        }
        for (int i = 0; i < MAXSUBS; i++) {
            memset(M.subs[i].heard, 0, sizeof M.subs[i].heard);
            M.subs[i].heard_bad = 0;
        }
        uint8_t op = fz_u8(&in);
        int cause = 0;
        const char *what = "?";
        switch (op % 12) {
        case 0: case 1:
            if (M.nmuts == MAXMUT) break;
            do_mutate(s, &in); cause = OPTIMIST_CAUSE_MUTATE; what = "mutate"; break;
        case 2: do_commit(s, &in, 0); cause = OPTIMIST_CAUSE_COMMIT; what = "commit"; break;
        case 3: do_commit(s, &in, 1); cause = OPTIMIST_CAUSE_COMMIT; what = "commit with server ops"; break;
        case 4: do_rollback(s, &in); cause = OPTIMIST_CAUSE_ROLLBACK; what = "rollback"; break;
        case 5: do_fail(s, &in); cause = OPTIMIST_CAUSE_FAIL; what = "fail"; break;
        case 6: do_retry(s, &in); cause = OPTIMIST_CAUSE_RETRY; what = "retry"; break;
        case 7: do_outbox_next(s); what = "outbox_next"; break;
        case 8: do_server_apply(s, &in); cause = OPTIMIST_CAUSE_SERVER; what = "server_apply"; break;
        case 9: do_view_define(s, &in); what = "view_define"; break;
        case 10: do_subscribe(s, &in); what = "subscribe"; break;
        default: what = "check"; break;
        }
        check_all(s, before, before_status, cause, what);
    }
    back_to_empty(s);
    return 0;
}
