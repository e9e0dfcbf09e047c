/*
 * fuzz_record_json - records and ops built from the fuzzer's bytes, through the C ABI, on an
 * in-memory store.
 *
 * Input: a selector byte, a key (length-prefixed, any bytes), then either the rest as JSON text
 * (put / patch) or the rest decoded as typed fields (put_fields / patch_fields) or as an incr.
 *
 * One store serves many inputs, emptied after each (fuzz_common.h, fuzz_store).
 *
 * Promises checked: every call returns a result code and never crashes; an add that fails
 * leaves the batch unchanged (a mutation of it still applies only what was accepted); when a
 * mutation succeeds the record reads back as canonical JSON, and that text, fed back as a put,
 * is accepted and reads back identical (canonical output is a fixed point); scan, explain,
 * mutations and outbox_next hand out canonical JSON too; the confirmed value after a commit
 * equals the visible one before it.
 */
#include "fuzz_common.h"

static const char *const colls[] = {"c", "logs", ""};

/* The record's visible text, checked canonical; NULL when it is absent. */
static char *read_back(optimist_store *s, const char *coll, const char *key) {
    char *json = NULL;
    int rc = FUZZ_RC(optimist_get(s, coll, key, &json));
    if (rc == OPTIMIST_NOTFOUND) return NULL;
    if (rc != OPTIMIST_OK) FUZZ_FAIL("get after a successful mutate returned %d", rc);
    FUZZ_JSON(json, '{');
    return json;
}

/* Every other read that hands out JSON about the record. */
static void read_around(optimist_store *s, const char *coll, const char *key) {
    char *json = NULL;
    if (FUZZ_RC(optimist_scan(s, coll, NULL, 0, &json)) != OPTIMIST_OK) FUZZ_FAIL("scan failed");
    FUZZ_JSON(json, '[');
    optimist_free(json);
    json = NULL;
    if (FUZZ_RC(optimist_explain(s, coll, key, &json)) != OPTIMIST_OK) FUZZ_FAIL("explain failed");
    FUZZ_JSON(json, '{');
    optimist_free(json);
    json = NULL;
    if (FUZZ_RC(optimist_mutations(s, 0, &json)) != OPTIMIST_OK) FUZZ_FAIL("mutations failed");
    FUZZ_JSON(json, '[');
    optimist_free(json);
}

/* The canonical text as a put of its own: accepted, and reads back the same. */
static void check_fixed_point(optimist_store *s, const char *coll, const char *key, const char *canon) {
    optimist_batch *b = NULL;
    if (optimist_batch_new(&b) != OPTIMIST_OK) FUZZ_FAIL("batch_new");
    if (FUZZ_RC(optimist_batch_put(b, coll, key, canon)) != OPTIMIST_OK)
        FUZZ_FAIL("the library's own canonical output is refused as a put: %.400s", canon);
    uint64_t id = 0;
    if (FUZZ_RC(optimist_mutate(s, b, NULL, &id)) != OPTIMIST_OK) FUZZ_FAIL("mutate of a canonical put");
    char *again = read_back(s, coll, key);
    if (!again || strcmp(again, canon) != 0)
        FUZZ_FAIL("canonical JSON is not a fixed point:\n  %.400s\n  %.400s", canon, again ? again : "(absent)");
    optimist_free(again);
    if (FUZZ_RC(optimist_rollback(s, id, NULL)) != OPTIMIST_OK) FUZZ_FAIL("rollback");
    optimist_batch_free(b);
}

/* The store as a new one is, for the next input (fuzz_common.h): every mutation here ended
 * (committed or rolled back), so only the one record the input touched can be left; the server
 * deletes it. Then no collection holds anything and nothing is pending. */
static void back_to_empty(optimist_store *s, const char *coll, const char *key) {
    optimist_batch *del = NULL;
    if (optimist_batch_new(&del) != OPTIMIST_OK) FUZZ_FAIL("batch_new");
    /* A key that is not UTF-8 is refused here as it was everywhere: nothing is stored under it. */
    if (optimist_batch_delete(del, coll, key) == OPTIMIST_OK && FUZZ_RC(optimist_server_apply(s, del)) != OPTIMIST_OK)
        FUZZ_FAIL("server_apply of a delete");
    optimist_batch_free(del);
    for (size_t i = 0; i < sizeof colls / sizeof colls[0]; i++) {
        char *json = NULL;
        if (FUZZ_RC(optimist_scan(s, colls[i], NULL, 0, &json)) != OPTIMIST_OK) FUZZ_FAIL("scan failed");
        if (strcmp(json, "[]") != 0) FUZZ_FAIL("collection \"%s\" still holds %.400s after the reset", colls[i], json);
        optimist_free(json);
    }
    uint64_t pending = 1;
    if (FUZZ_RC(optimist_pending_count(s, &pending)) != OPTIMIST_OK || pending != 0)
        FUZZ_FAIL("%llu mutations still pending after the input", (unsigned long long)pending);
}

/* Typed fields from the bytes: up to 8, each a type, a name, and a text or a number. */
static size_t decode_fields(fuzz_in *in, optimist_field *f, char **owned, size_t *nowned) {
    size_t count = fz_u8(in) % 9;
    for (size_t i = 0; i < count; i++) {
        uint8_t t = fz_u8(in);
        /* Mostly valid types; sometimes an unknown one, which must be MISUSE. */
        f[i].type = t < 250 ? t % 4 : (int)t;
        owned[(*nowned)++] = fz_str(in, 24);
        f[i].name = owned[*nowned - 1];
        f[i].text = NULL;
        f[i].number = 0;
        if (f[i].type == OPTIMIST_FIELD_TEXT) {
            owned[(*nowned)++] = fz_str(in, 64);
            f[i].text = owned[*nowned - 1];
        } else if (f[i].type == OPTIMIST_FIELD_NUMBER || f[i].type == OPTIMIST_FIELD_BOOL) {
            /* Small integers most of the time, raw bit patterns (NaN, inf, subnormals) else. */
            uint8_t how = fz_u8(in);
            f[i].number = how & 1 ? fz_double(in) : (double)(int8_t)fz_u8(in);
        }
    }
    return count;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_in in = {data, size};
    uint8_t sel = fz_u8(&in);
    const char *coll = colls[(sel >> 3) % 3];
    char *key = fz_str(&in, 32);

    int fresh = 0;
    optimist_store *s = fuzz_store(&fresh);
    optimist_batch *b = NULL;
    if (optimist_batch_new(&b) != OPTIMIST_OK) FUZZ_FAIL("batch_new");

    /* A record already there for patch and incr to land on (sel bit 5). */
    if (sel & 0x20) {
        optimist_batch *seed = NULL;
        optimist_batch_new(&seed);
        if (FUZZ_RC(optimist_batch_put(seed, coll, key, "{\"n\":1,\"o\":{\"a\":[1,2]},\"s\":\"x\"}")) == OPTIMIST_OK &&
            FUZZ_RC(optimist_server_apply(s, seed)) != OPTIMIST_OK)
            FUZZ_FAIL("server_apply of a plain put");
        optimist_batch_free(seed);
    }

    int rc;
    char *json = NULL;
    optimist_field fields[8];
    char *owned[16];
    size_t nowned = 0;
    switch (sel % 6) {
    case 0:
        json = fz_rest(&in);
        rc = FUZZ_RC(optimist_batch_put(b, coll, key, json));
        break;
    case 1:
        json = fz_rest(&in);
        rc = FUZZ_RC(optimist_batch_patch(b, coll, key, json));
        break;
    case 2: {
        size_t n = decode_fields(&in, fields, owned, &nowned);
        rc = FUZZ_RC(optimist_batch_put_fields(b, coll, key, fields, n));
        break;
    }
    case 3: {
        size_t n = decode_fields(&in, fields, owned, &nowned);
        rc = FUZZ_RC(optimist_batch_patch_fields(b, coll, key, fields, n));
        break;
    }
    case 4: {
        char *field = fz_str(&in, 16);
        uint8_t how = fz_u8(&in);
        double d = how & 1 ? fz_double(&in) : (double)(int8_t)fz_u8(&in);
        rc = FUZZ_RC(optimist_batch_incr(b, coll, key, field, d));
        free(field);
        break;
    }
    default:
        rc = FUZZ_RC(optimist_batch_delete(b, coll, key));
        break;
    }

    /* A failed add leaves the batch empty here: mutating it is MISUSE ("at least one op"). */
    uint64_t id = 0;
    int mrc = FUZZ_RC(optimist_mutate(s, b, NULL, &id));
    if (rc != OPTIMIST_OK && mrc != OPTIMIST_MISUSE)
        FUZZ_FAIL("a batch whose only add failed (%d) mutated with %d, not MISUSE", rc, mrc);
    if (rc == OPTIMIST_OK && mrc != OPTIMIST_OK && mrc != OPTIMIST_INVALID)
        FUZZ_FAIL("mutate of a well-formed op returned %d", mrc);

    if (mrc == OPTIMIST_OK) {
        char *visible = read_back(s, coll, key);
        read_around(s, coll, key);
        if (visible) check_fixed_point(s, coll, key, visible);

        /* The outbox's wire form of the ops is canonical JSON as well. */
        uint64_t out_id = 0;
        char *ops = NULL;
        if (FUZZ_RC(optimist_outbox_next(s, 0, &out_id, &ops)) != OPTIMIST_OK || out_id != id)
            FUZZ_FAIL("outbox_next did not hand out mutation %llu", (unsigned long long)id);
        FUZZ_JSON(ops, '[');
        optimist_free(ops);

        /* Committed (own ops) or rolled back: either way the confirmed state is consistent. */
        if (sel & 0x40) {
            if (FUZZ_RC(optimist_commit(s, id, NULL)) != OPTIMIST_OK) FUZZ_FAIL("commit");
            char *confirmed = NULL;
            int grc = FUZZ_RC(optimist_get_confirmed(s, coll, key, &confirmed));
            if ((grc == OPTIMIST_OK) != (visible != NULL) ||
                (visible && strcmp(confirmed, visible) != 0))
                FUZZ_FAIL("committed %s but confirmed is %s", visible ? visible : "(absent)",
                          confirmed ? confirmed : "(absent)");
            optimist_free(confirmed);
        } else {
            if (FUZZ_RC(optimist_rollback(s, id, "fuzz")) != OPTIMIST_OK) FUZZ_FAIL("rollback");
        }
        optimist_free(visible);
    }

    /* The server's ops go through the same validation as a mutation's. */
    int src = FUZZ_RC(optimist_server_apply(s, b));
    if (rc == OPTIMIST_OK && src != OPTIMIST_OK && src != OPTIMIST_INVALID)
        FUZZ_FAIL("server_apply of a well-formed op returned %d", src);
    if (rc == OPTIMIST_OK) optimist_free(read_back(s, coll, key)); /* else the key may be bad */

    optimist_batch_free(b);
    back_to_empty(s, coll, key);
    free(json);
    free(key);
    for (size_t i = 0; i < nowned; i++) free(owned[i]);
    return 0;
}
