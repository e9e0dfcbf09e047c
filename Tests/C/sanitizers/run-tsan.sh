#!/usr/bin/env bash
# Usage: run-tsan.sh PROGRAM [ARGS...]
#
# Runs a ThreadSanitizer-built program with address-space randomization turned off when the
# system allows it. Older TSan runtimes (GCC 12's among them) abort with "unexpected memory
# mapping" on kernels that randomize with vm.mmap_rnd_bits > 28; without randomization the
# shadow-memory layout always fits. Where personality() is not permitted (some container
# seccomp profiles), the program runs as is.
if setarch "$(uname -m)" -R true 2>/dev/null; then
    exec setarch "$(uname -m)" -R "$@"
fi
exec "$@"
