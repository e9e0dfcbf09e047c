/*
 * shim_ffi.h - calls liboptimist's exported entry points by name, through dlopen/dlsym and
 * libffi, so the scenario shim exercises exactly what the library exports (a missing or
 * renamed symbol is an error at load time, not a link-time surprise hidden by the header).
 */
#ifndef OPTIMIST_SHIM_FFI_H
#define OPTIMIST_SHIM_FFI_H

#include <stddef.h>

/* Loads the library at path and resolves every entry point in the signature table.
   Returns 0, or -1 with a message in err. */
int shim_load(const char *path, char *err, size_t errlen);

/* Calls `name` with args (pointers to each argument's value, in order) and returns its int. */
int shim_call_int(const char *name, void **args);

/* Calls `name`, which returns a string owned by the library. */
const char *shim_call_str(const char *name, void **args);

/* Calls `name`, which returns nothing. */
void shim_call_void(const char *name, void **args);

#endif
