/*
 * io_model.h - what a store file must hold after a run on a failing disk, for io_faults.c.
 *
 * Each record the workload writes (collection "f") keeps the history of its visible values:
 * version 1, 2, ... or absent (0), as the store accepted them in order. A successful flush (or
 * close) marks every record's current version durable. After a reopen, each record must read
 * as its durable version or a later one: older, or missing, is data lost. When the run ended
 * with a successful flush, that is exactly the latest version.
 *
 * Values are made from (key, version), so the model keeps numbers, not text.
 */
#ifndef OPTIMIST_TEST_IO_MODEL_H
#define OPTIMIST_TEST_IO_MODEL_H

#include "../check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MODEL_KEYS 128
#define MODEL_HISTORY 8
#define MODEL_BIG_PAD 3000

typedef struct {
    char key[16];
    int big;                       /* a 3 KB value: spans pages, grows the WAL */
    int history[MODEL_HISTORY];    /* versions in the order the store took them; 0: absent */
    int n;
    int durable;                   /* index in history of the version a flush made durable; -1: none */
} model_key;

typedef struct {
    model_key keys[MODEL_KEYS];
    int nkeys;
} io_model;

/* The canonical JSON of key at version v (members sorted: "k", "pad", "v"). */
static inline void model_json(const model_key *k, int v, char *out, size_t cap) {
    static char pad[MODEL_BIG_PAD + 1];
    if (!pad[0]) memset(pad, 'x', MODEL_BIG_PAD);
    snprintf(out, cap, "{\"k\":\"%s\",\"pad\":\"%s\",\"v\":%d}", k->key, k->big ? pad : "", v);
}

static inline model_key *model_find(io_model *m, const char *key) {
    for (int i = 0; i < m->nkeys; i++)
        if (strcmp(m->keys[i].key, key) == 0) return &m->keys[i];
    if (m->nkeys == MODEL_KEYS) abort();
    model_key *k = &m->keys[m->nkeys++];
    memset(k, 0, sizeof *k);
    snprintf(k->key, sizeof k->key, "%s", key);
    k->big = key[0] == 'b';
    k->durable = -1;
    return k;
}

/* The store accepted a change of key to version v (0: absent). */
static inline void model_set(io_model *m, const char *key, int v) {
    model_key *k = model_find(m, key);
    if (k->n == MODEL_HISTORY) abort();
    k->history[k->n++] = v;
}

static inline int model_latest(const model_key *k) { return k->n ? k->history[k->n - 1] : 0; }

/* A flush or close returned OK: everything accepted so far is durable. */
static inline void model_durable(io_model *m) {
    for (int i = 0; i < m->nkeys; i++) m->keys[i].durable = m->keys[i].n - 1;
}

#define MODEL_UNKNOWN (-1) /* a value the model never had */
#define MODEL_ERROR (-2)   /* the read failed: model_read_rc says how */
static int model_read_rc;

/* The version the store shows for k (0: absent), MODEL_UNKNOWN or MODEL_ERROR. */
static inline int model_read(optimist_store *s, const model_key *k) {
    char *json = NULL;
    int rc = model_read_rc = optimist_get(s, "f", k->key, &json);
    if (rc == OPTIMIST_NOTFOUND) return 0;
    if (rc != OPTIMIST_OK) return MODEL_ERROR;
    int found = MODEL_UNKNOWN;
    char want[MODEL_BIG_PAD + 64];
    for (int i = 0; i < k->n && found < 0; i++) {
        if (!k->history[i]) continue;
        model_json(k, k->history[i], want, sizeof want);
        if (strcmp(json, want) == 0) found = k->history[i];
    }
    optimist_free(json);
    return found;
}

/* Compares a reopened store with the model: returns how many records were lost (older than
 * their durable version, or missing); `exact` also requires the latest version of each. */
static inline int model_lost(optimist_store *s, const io_model *m, int exact, const char *what) {
    int lost = 0;
    for (int i = 0; i < m->nkeys; i++) {
        const model_key *k = &m->keys[i];
        int got = model_read(s, k), ok = 0;
        int from = exact ? k->n - 1 : (k->durable < 0 ? 0 : k->durable);
        for (int j = from; j < k->n; j++) ok |= k->history[j] == got;
        /* Never written durably and not there: nothing was promised. */
        if (!ok && k->durable < 0 && got == 0 && !exact) ok = 1;
        if (!ok) {
            fprintf(stderr, "%s: record f/%s reads as version %d; durable %d, latest %d\n", what, k->key, got,
                    k->durable < 0 ? -1 : k->history[k->durable], model_latest(k));
            lost++;
        }
    }
    return lost;
}

#endif
