#!/usr/bin/env bash
# Usage: check_library.sh LIB SONAME
#
# Checks the ELF facts installs rely on: the SONAME is SONAME; no Swift runtime library is
# needed at load time (the runtime is linked statically); nothing it needs is "not found" with
# LD_LIBRARY_PATH empty; and the only functions it exports are the optimist_* C API (the
# statically linked Swift runtime must not leak symbols into programs that load it).
set -euo pipefail
lib=$1 want_soname=$2
status=0

soname=$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
if [ "$soname" != "$want_soname" ]; then
    echo "SONAME is '$soname', expected '$want_soname'"; status=1
fi

needed=$(readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
if echo "$needed" | grep -Ei 'swift|Foundation|dispatch|BlocksRuntime' >/dev/null; then
    echo "needs Swift runtime libraries:"; echo "$needed" | sed 's/^/  /'; status=1
fi

missing=$(env LD_LIBRARY_PATH= ldd "$lib" | grep 'not found' || true)
if [ -n "$missing" ]; then
    echo "ldd with LD_LIBRARY_PATH empty:"; echo "$missing"; status=1
fi

others=$(nm -D --defined-only "$lib" | awk 'NF >= 3 && $2 ~ /^[TWDBRVi]$/ { print $3 }' \
         | sed 's/@.*$//' | grep -v '^optimist_' | grep -v '^OPTIMIST_' || true)
if [ -n "$others" ]; then
    echo "exports beyond the C API ($(echo "$others" | wc -l)), e.g.:"
    echo "$others" | head -10 | sed 's/^/  /'; status=1
fi

[ $status -eq 0 ] && echo "library ok: SONAME $soname, needs: $(echo $needed)"
exit $status
