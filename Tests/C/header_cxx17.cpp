/*
 * header_cxx17.cpp - optimist.h compiles as C++17 with -Wall -Wextra -pedantic -Werror, its
 * declarations have C linkage (this file links against the library through them), and a
 * capture-less lambda converts to optimist_listener.
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

int main() {
    optimist_listener fn = [](void *, const optimist_change *, size_t) {};
    (void)fn;
    optimist_store *s = nullptr;
    if (optimist_open(nullptr, &s) != OPTIMIST_OK) return 1;
    char *json = nullptr;
    int rc = optimist_get(s, "c", "k", &json);
    optimist_close(s);
    if (rc != OPTIMIST_NOTFOUND || std::strcmp(optimist_version(), OPTIMIST_VERSION) != 0) return 1;
    std::puts("ok");
    return 0;
}
