#!/usr/bin/env bash
# Builds the Swift API's documentation with DocC: the catalog Sources/Optimist/Optimist.docc
# (overview, getting started, topics) and the doc comments of Optimist and of the modules it
# re-exports (OptimistModel, OptimistCore, OptimistSync, OptimistOpen), as one combined archive. Any DocC warning (a broken
# symbol link, an ambiguous one, a missing article) fails the build.
#
#   bash scripts/docs.sh [OUTPUT_DIR]     # default: build/docs (open OUTPUT_DIR/index.html
#                                         # through a web server, or use `swift package
#                                         # preview-documentation` with OPTIMIST_DOCS=1)
#
# OPTIMIST_DOCS=1 makes Package.swift add swift-docc-plugin: apps that depend on the package
# never resolve it. The Swift build it needs is the debug build `swift build` / `swift test`
# make, so after them this takes well under a minute.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${1:-$ROOT/build/docs}"
mkdir -p "$out"
start=$SECONDS
OPTIMIST_DOCS=1 swift package --package-path "$ROOT" ${OPTIMIST_SWIFT_JOBS:+--jobs "$OPTIMIST_SWIFT_JOBS"} \
    --allow-writing-to-directory "$out" \
    generate-documentation --target OptimistModel --target OptimistCore --target OptimistSync --target OptimistOpen --target Optimist \
    --enable-experimental-combined-documentation --warnings-as-errors --output-path "$out"
echo "docs: built $out in $((SECONDS - start)) s"
