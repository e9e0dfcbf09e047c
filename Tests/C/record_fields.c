/*
 * record_fields.c - records given as typed fields (optimist_batch_put_fields and
 * optimist_batch_patch_fields) read back exactly as the same record given as JSON; text needs
 * no escaping; bad fields are refused and leave the batch unchanged.
 */
#include "fixtures.h"

#include <math.h>
#include <stddef.h>

/* The library reads optimist_field at these offsets (Sources/OptimistC/RecordFields.swift). */
static void layout(void) {
    CHECK(sizeof(optimist_field) == 32);
    CHECK(offsetof(optimist_field, name) == 0);
    CHECK(offsetof(optimist_field, text) == 8);
    CHECK(offsetof(optimist_field, number) == 16);
    CHECK(offsetof(optimist_field, type) == 24);
}

static char *visible(optimist_store *s, const char *key) {
    char *out = NULL;
    CHECK_OK(optimist_get(s, "logs", key, &out));
    return out;
}

/* The same record through both entry points, compared as canonical JSON. */
static void same_as_json(void) {
    optimist_store *s = open_memory();
    optimist_field f[] = {
        {"habit", "h001", 0, OPTIMIST_FIELD_TEXT},
        {"done", NULL, 1, OPTIMIST_FIELD_BOOL},
        {"at", NULL, 1763770000123.0, OPTIMIST_FIELD_NUMBER},
        {"ratio", NULL, 0.25, OPTIMIST_FIELD_NUMBER},
        {"gone", NULL, 0, OPTIMIST_FIELD_NULL},
        {"note", "said \"hi\"\\ \xc3\xa9\n", 0, OPTIMIST_FIELD_TEXT},
    };
    optimist_batch *b = NULL;
    uint64_t id = 0;
    CHECK_OK(optimist_batch_new(&b));
    CHECK_OK(optimist_batch_put_fields(b, "logs", "by-fields", f, sizeof f / sizeof f[0]));
    CHECK_OK(optimist_batch_put(b, "logs", "by-json",
                                "{\"habit\":\"h001\",\"done\":true,\"at\":1763770000123,\"ratio\":0.25,"
                                "\"gone\":null,\"note\":\"said \\\"hi\\\"\\\\ \\u00e9\\n\"}"));
    CHECK_OK(optimist_mutate(s, b, NULL, &id));
    optimist_batch_free(b);
    char *x = visible(s, "by-fields"), *y = visible(s, "by-json");
    CHECK(x && y && strcmp(x, y) == 0);
    optimist_free(x);
    optimist_free(y);

    /* An empty field list is the empty record; a repeated name keeps the last value. */
    optimist_field twice[] = {{"n", NULL, 1, OPTIMIST_FIELD_NUMBER}, {"n", NULL, 2, OPTIMIST_FIELD_NUMBER}};
    CHECK_OK(optimist_batch_new(&b));
    CHECK_OK(optimist_batch_put_fields(b, "logs", "empty", NULL, 0));
    CHECK_OK(optimist_batch_put_fields(b, "logs", "twice", twice, 2));
    CHECK_OK(optimist_mutate(s, b, NULL, &id));
    optimist_batch_free(b);
    x = visible(s, "empty");
    y = visible(s, "twice");
    CHECK(x && strcmp(x, "{}") == 0);
    CHECK(y && strcmp(y, "{\"n\":2}") == 0);
    optimist_free(x);
    optimist_free(y);
    CHECK_OK(optimist_close(s));
}

/* A patch sets the given members, removes those given as null, keeps the others. */
static void patch(void) {
    optimist_store *s = open_memory();
    mutate_put(s, "logs", "k", "{\"a\":1,\"b\":2,\"c\":3}");
    optimist_field f[] = {{"b", NULL, 0, OPTIMIST_FIELD_NULL}, {"c", "three", 0, OPTIMIST_FIELD_TEXT}};
    optimist_batch *b = NULL;
    uint64_t id = 0;
    CHECK_OK(optimist_batch_new(&b));
    CHECK_OK(optimist_batch_patch_fields(b, "logs", "k", f, 2));
    CHECK_OK(optimist_mutate(s, b, NULL, &id));
    optimist_batch_free(b);
    char *x = visible(s, "k");
    CHECK(x && strcmp(x, "{\"a\":1,\"c\":\"three\"}") == 0);
    optimist_free(x);
    CHECK_OK(optimist_close(s));
}

/* Each bad field is refused with its code; the batch keeps only what was added before. */
static void refused(void) {
    static const char bad_utf8[] = {'a', (char)0xE2, (char)0x82, 0};
    optimist_field ok_field[] = {{"a", NULL, 1, OPTIMIST_FIELD_NUMBER}};
    optimist_field no_name[] = {{NULL, NULL, 1, OPTIMIST_FIELD_NUMBER}};
    optimist_field no_text[] = {{"t", NULL, 0, OPTIMIST_FIELD_TEXT}};
    optimist_field bad_type[] = {{"a", NULL, 0, 7}};
    optimist_field nan_number[] = {{"a", NULL, NAN, OPTIMIST_FIELD_NUMBER}};
    optimist_field inf_number[] = {{"a", NULL, INFINITY, OPTIMIST_FIELD_NUMBER}};
    optimist_field bad_name[] = {{bad_utf8, NULL, 1, OPTIMIST_FIELD_NUMBER}};
    optimist_field bad_text[] = {{"t", bad_utf8, 0, OPTIMIST_FIELD_TEXT}};
    optimist_field second_bad[] = {{"a", NULL, 1, OPTIMIST_FIELD_NUMBER}, {"b", NULL, 0, -1}};
    optimist_batch *b = NULL;
    CHECK_OK(optimist_batch_new(&b));
    CHECK_FAILS(optimist_batch_put_fields(NULL, "logs", "k", ok_field, 1), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_batch_put_fields(b, NULL, "k", ok_field, 1), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_batch_put_fields(b, "logs", NULL, ok_field, 1), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_batch_put_fields(b, "logs", "k", NULL, 1), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_batch_put_fields(b, "logs", "k", ok_field, (size_t)-1), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_batch_put_fields(b, "logs", "k", no_name, 1), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_batch_put_fields(b, "logs", "k", no_text, 1), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_batch_put_fields(b, "logs", "k", bad_type, 1), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_batch_patch_fields(b, "logs", "k", second_bad, 2), OPTIMIST_MISUSE);
    CHECK_FAILS(optimist_batch_put_fields(b, "logs", "k", nan_number, 1), OPTIMIST_INVALID);
    CHECK_FAILS(optimist_batch_patch_fields(b, "logs", "k", inf_number, 1), OPTIMIST_INVALID);
    CHECK_FAILS(optimist_batch_put_fields(b, "logs", "k", bad_name, 1), OPTIMIST_INVALID);
    CHECK_FAILS(optimist_batch_put_fields(b, "logs", "k", bad_text, 1), OPTIMIST_INVALID);
    CHECK_FAILS(optimist_batch_put_fields(b, "logs", bad_utf8, ok_field, 1), OPTIMIST_INVALID);

    /* Nothing was added: mutating the batch is the empty-batch misuse. */
    optimist_store *s = open_memory();
    uint64_t id = 0;
    CHECK_FAILS(optimist_mutate(s, b, NULL, &id), OPTIMIST_MISUSE);
    optimist_batch_free(b);
    CHECK_OK(optimist_close(s));
}

int main(void) {
    layout();
    same_as_json();
    patch();
    refused();
    CHECK_DONE();
}
