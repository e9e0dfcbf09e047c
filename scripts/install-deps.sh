#!/usr/bin/env bash
# Installs, only when missing, what building and testing Optimist needs on Debian/Ubuntu:
# cmake, ninja-build, pkg-config, libffi-dev, libsqlite3-dev, libcurl4-openssl-dev (the sync's
# built-in HTTP transport), python3 with venv, and Python's headers when python3 is Debian's and
# lacks them (python3-dev: the Python package's C accelerator compiles against them) (one
# `apt-get update` first, with sudo when not root). Swift itself must already be installed.
# Used by both README commands (scripts/demo.sh and scripts/test.sh).
set -euo pipefail

command -v swift >/dev/null 2>&1 || { echo "install-deps: Swift 6 is not on PATH (https://www.swift.org/install/linux/)" >&2; exit 1; }

have_deb() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
missing=()
command -v cmake >/dev/null 2>&1 || missing+=(cmake)
command -v ninja >/dev/null 2>&1 || missing+=(ninja-build)
command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
command -v python3 >/dev/null 2>&1 || missing+=(python3 python3-venv)
# Debian's own python3 needs python3-venv for `python3 -m venv` (the test command makes one).
if command -v python3 >/dev/null 2>&1 && ! python3 -c 'import ensurepip, venv' >/dev/null 2>&1; then
    missing+=(python3-venv)
fi
# Python.h, where this python3 looks for it; only Debian's python3 gets it from apt (another
# Python, e.g. pyenv's, brings its own).
if command -v python3 >/dev/null 2>&1 && [ "$(command -v python3)" = /usr/bin/python3 ] &&
    ! python3 -c 'import os, sysconfig, sys; sys.exit(not os.path.isfile(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' 2>/dev/null; then
    missing+=(python3-dev)
fi
if command -v dpkg-query >/dev/null 2>&1; then
    have_deb libffi-dev || missing+=(libffi-dev)
    have_deb libsqlite3-dev || missing+=(libsqlite3-dev)
    # Any of Debian's libcurl -dev flavours provides curl/curl.h and libcurl.pc.
    have_deb libcurl4-openssl-dev || have_deb libcurl4-gnutls-dev || have_deb libcurl4-nss-dev || missing+=(libcurl4-openssl-dev)
fi
[ "${#missing[@]}" -eq 0 ] && exit 0

command -v apt-get >/dev/null 2>&1 || { echo "install-deps: missing ${missing[*]} and no apt-get: install them yourself" >&2; exit 1; }
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || { echo "install-deps: missing ${missing[*]}; not root and no sudo" >&2; exit 1; }
    SUDO=sudo
fi
echo "install-deps: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
