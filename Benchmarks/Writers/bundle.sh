#!/usr/bin/env bash
# Gathers what run_device.sh needs into one folder, for a machine with no toolchain:
#
#   bash Benchmarks/Writers/bundle.sh OUT NAME=LIBRARY [NAME=LIBRARY ...]
#
# OUT/bin: writers and percall, built against the first library; OUT/lib/NAME: each library
# (liboptimist.so.1, stripped); OUT/deps: the shared libraries they load that are not glibc's
# own; OUT/run.sh. Then `bash OUT/run.sh` there prints every figure.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out=$1; shift
rm -rf "$out"; mkdir -p "$out/bin" "$out/deps"
first=""
for pair in "$@"; do
    name=${pair%%=*}; lib=${pair#*=}
    mkdir -p "$out/lib/$name"
    strip --strip-unneeded -o "$out/lib/$name/liboptimist.so.1" "$lib"
    [ -n "$first" ] || first=$lib
done
dir=$(mktemp -d)
cp "$first" "$dir/liboptimist.so.1"; ln -sf liboptimist.so.1 "$dir/liboptimist.so"
cc -O2 -pthread -IInclude Benchmarks/C/writers.c -L"$dir" -loptimist -o "$out/bin/writers"
cc -O2 -IInclude -IBenchmarks/C Benchmarks/C/percall.c Benchmarks/C/common.c Benchmarks/C/optimistic.c \
    -L"$dir" -loptimist -lm -o "$out/bin/percall"
ldd "$first" | awk '/=> \// {print $3}' | grep -v -E '/(libc|libm|libpthread|libdl|librt|ld-linux[^/]*)\.so' \
    | while read -r so; do cp -L "$so" "$out/deps/"; done
cp Benchmarks/Writers/run_device.sh "$out/run.sh"
rm -rf "$dir"
du -sh "$out"
