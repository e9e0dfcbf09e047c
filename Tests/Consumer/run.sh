#!/usr/bin/env bash
# The package as an app adds it: by URL (file://, a git repository with a version tag) and a
# version, built in debug and in release, then run. SwiftPM refuses unsafe flags in a package
# it fetches by URL, so this fails if a product apps use carries one (or if the manifest needs
# an environment variable to build).
#
#   bash Tests/Consumer/run.sh
#
# The repository tested is this checkout's tracked files as they are now (committed or not),
# copied into a scratch git repository and tagged with the header's version.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
HERE="$ROOT/Tests/Consumer"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/optimist-consumer.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
VERSION="$(sed -n 's/^#define OPTIMIST_VERSION *"\([0-9.]*\)".*/\1/p' "$ROOT/Include/optimist.h")"
[ -n "$VERSION" ] || { echo "consumer: no OPTIMIST_VERSION in Include/optimist.h" >&2; exit 1; }

echo "== the package at file://$WORK/optimist, tag $VERSION"
mkdir "$WORK/optimist"
(cd "$ROOT" && git ls-files -z --cached --others --exclude-standard |
    tar --null --ignore-failed-read -T - -cf - 2>/dev/null) | tar -xf - -C "$WORK/optimist"
git -C "$WORK/optimist" init -q
git -C "$WORK/optimist" add -A
git -C "$WORK/optimist" -c user.name=consumer -c user.email=consumer@example.invalid commit -q -m "as tested"
git -C "$WORK/optimist" tag "$VERSION"

echo "== the app"
mkdir -p "$WORK/app/Sources/consumer"
cp "$HERE/Sources/consumer/main.swift" "$WORK/app/Sources/consumer/"
sed -e "s|@URL@|file://$WORK/optimist|" -e "s|@VERSION@|$VERSION|" "$HERE/Package.swift.in" > "$WORK/app/Package.swift"
# No OPTIMIST_* variable reaches the build: an app sets none.
for v in $(env | sed -n 's/^\(OPTIMIST_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
for config in debug release; do
    echo "== swift build -c $config"
    swift build --package-path "$WORK/app" -c "$config"
    "$(swift build --package-path "$WORK/app" -c "$config" --show-bin-path)/consumer"
done
echo "consumer: built and ran in debug and release"
