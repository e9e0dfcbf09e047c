/*
 * header_cxx17.cpp - optimist.h compiles as C++17 with -Wall -Wextra -pedantic -Werror, its
 * declarations have C linkage (this file links against the library through them), and
 * capture-less lambdas convert to optimist_listener, optimist_transport and
 * optimist_sync_listener (OPTIMIST_SYNC_OPTIONS_INIT is a valid aggregate initialiser).
 */
#include <optimist.h>

#include <cstdio>
#include <cstring>
#include <type_traits>

static_assert(std::is_same<decltype(&optimist_get),
                           int (*)(optimist_store *, const char *, const char *, char **)>::value,
              "optimist_get signature");
static_assert(std::is_same<decltype(optimist_change::value_json), const char *>::value,
              "value_json is a C string");
static_assert(std::is_same<decltype(&optimist_sync_set_headers),
                           int (*)(optimist_store *, const char *const *)>::value,
              "optimist_sync_set_headers signature");

int main() {
    optimist_listener fn = [](void *, const optimist_change *, size_t) {};
    (void)fn;
    optimist_sync_options o = OPTIMIST_SYNC_OPTIONS_INIT;
    o.transport = [](void *, const char *, const char *, const char *, const char *const *, int64_t, int *,
                     const char **, int64_t *) { return 1; };
    o.on_status = [](void *, const char *) {};
    if (o.max_batch != 100 || o.version != OPTIMIST_SYNC_OPTIONS_VERSION) return 1;
    optimist_open_options oo = OPTIMIST_OPEN_OPTIONS_INIT;
    optimist_mutate_options mo = OPTIMIST_MUTATE_OPTIONS_INIT;
    if (oo.max_delay_ms != 60000 || mo.policy != OPTIMIST_POLICY_ROLLBACK) return 1;
    optimist_store *s = nullptr;
    if (optimist_open(nullptr, &s) != OPTIMIST_OK) return 1;
    char *json = nullptr;
    int rc = optimist_get(s, "c", "k", &json);
    optimist_close(s);
    if (rc != OPTIMIST_NOTFOUND || std::strcmp(optimist_version(), OPTIMIST_VERSION) != 0) return 1;
    std::puts("ok");
    return 0;
}
