/*
 * shim_ffi.c - the signature table of liboptimist's entry points and the libffi calls
 * through it. Each entry names a symbol, its return type and its argument types, one letter
 * each:
 *   i int   U uint64_t   I int64_t   d double   z size_t   p pointer
 *   s (return only) const char *   v (return only) void
 * The letters are turned into libffi types once, when the library is loaded.
 */
#include "shim_ffi.h"

#include <dlfcn.h>
#include <ffi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_ARGS = 8 };

/* One entry point: its name and type letters. */
typedef struct {
    const char *name;
    char ret;
    const char *args;
} signature;

/* Every entry point the scenarios use, as optimist.h declares it. */
static const signature table[] = {
    {"optimist_version", 's', ""},
    {"optimist_errstr", 's', "i"},
    {"optimist_last_error", 's', ""},
    {"optimist_free", 'v', "p"},
    {"optimist_open", 'i', "pp"},
    {"optimist_close", 'i', "p"},
    {"optimist_flush", 'i', "p"},
    {"optimist_batch_new", 'i', "p"},
    {"optimist_batch_free", 'v', "p"},
    {"optimist_batch_put", 'i', "pppp"},
    {"optimist_batch_patch", 'i', "pppp"},
    {"optimist_batch_delete", 'i', "ppp"},
    {"optimist_batch_incr", 'i', "ppppd"},
    {"optimist_mutate", 'i', "pppp"},
    {"optimist_mutate_with_policy", 'i', "pppip"},
    {"optimist_commit", 'i', "pUp"},
    {"optimist_rollback", 'i', "pUp"},
    {"optimist_server_apply", 'i', "pp"},
    {"optimist_get", 'i', "pppp"},
    {"optimist_get_confirmed", 'i', "pppp"},
    {"optimist_is_pending", 'i', "pppp"},
    {"optimist_scan", 'i', "pppzp"},
    {"optimist_status", 'i', "pUp"},
    {"optimist_pending_count", 'i', "pp"},
    {"optimist_outbox_next", 'i', "pIpp"},
    {"optimist_fail", 'i', "pUipI"},
    {"optimist_retry", 'i', "pU"},
    {"optimist_mark_loaded", 'i', "ppppI"},
    {"optimist_needs_reload", 'i', "pppIIp"},
    {"optimist_view_define", 'i', "ppppp"},
    {"optimist_view_get", 'i', "ppp"},
    {"optimist_subscribe", 'i', "pppppp"},
    {"optimist_unsubscribe", 'i', "pU"},
    {"optimist_query_open", 'i', "ppp"},
    {"optimist_query_rows", 'i', "pzzp"},
    {"optimist_query_subscribe", 'i', "pppp"},
    {"optimist_query_close", 'i', "p"},
    {"optimist_index_define", 'i', "ppp"},
    {"optimist_sync_start", 'i', "pp"},
    {"optimist_sync_stop", 'i', "p"},
    {"optimist_sync_now", 'i', "p"},
    {"optimist_sync_set_headers", 'i', "pp"},
    {"optimist_sync_wait_idle", 'i', "pIp"},
    {"optimist_sync_status", 'i', "pp"},
};
enum { N_ENTRIES = sizeof table / sizeof table[0] };

/* What loading made of each table row: the symbol's address and its prepared call. */
typedef struct {
    void *fn;
    ffi_cif cif;
    ffi_type *types[MAX_ARGS];
} prepared;

static prepared calls[N_ENTRIES];

static ffi_type *type_of(char c) {
    switch (c) {
    case 'i': return &ffi_type_sint;
    case 'U': return &ffi_type_uint64;
    case 'I': return &ffi_type_sint64;
    case 'd': return &ffi_type_double;
    case 'z': return sizeof(size_t) == 8 ? &ffi_type_uint64 : &ffi_type_uint32;
    case 'p': case 's': return &ffi_type_pointer;
    case 'v': return &ffi_type_void;
    default: return NULL;
    }
}

int shim_load(const char *path, char *err, size_t errlen) {
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        snprintf(err, errlen, "dlopen(%s): %s", path, dlerror());
        return -1;
    }
    for (size_t i = 0; i < N_ENTRIES; i++) {
        const signature *sig = &table[i];
        prepared *c = &calls[i];
        unsigned n = (unsigned)strlen(sig->args);
        c->fn = dlsym(lib, sig->name);
        if (c->fn == NULL) {
            snprintf(err, errlen, "%s does not export %s", path, sig->name);
            return -1;
        }
        for (unsigned a = 0; a < n; a++) c->types[a] = type_of(sig->args[a]);
        if (ffi_prep_cif(&c->cif, FFI_DEFAULT_ABI, n, type_of(sig->ret), c->types) != FFI_OK) {
            snprintf(err, errlen, "ffi_prep_cif failed for %s", sig->name);
            return -1;
        }
    }
    return 0;
}

/* A name missing from the table is a bug in the shim itself: stop loudly. */
static prepared *find(const char *name, char ret) {
    for (size_t i = 0; i < N_ENTRIES; i++)
        if (strcmp(table[i].name, name) == 0) {
            if (table[i].ret != ret || calls[i].fn == NULL) break;
            return &calls[i];
        }
    fprintf(stderr, "scenario_shim: no loaded %c-returning entry %s in the signature table\n", ret, name);
    abort();
}

int shim_call_int(const char *name, void **args) {
    prepared *e = find(name, 'i');
    ffi_arg rc = 0; /* integral results are widened to ffi_arg */
    ffi_call(&e->cif, FFI_FN(e->fn), &rc, args);
    return (int)rc;
}

const char *shim_call_str(const char *name, void **args) {
    prepared *e = find(name, 's');
    const char *s = NULL;
    ffi_call(&e->cif, FFI_FN(e->fn), &s, args);
    return s;
}

void shim_call_void(const char *name, void **args) {
    prepared *e = find(name, 'v');
    ffi_call(&e->cif, FFI_FN(e->fn), NULL, args);
}
