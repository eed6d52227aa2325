#!/bin/sh
# scripts/install-deps.sh — installs the Debian packages dlperf builds, tests and runs with,
# but only those that are missing (so `make` stays fast on a prepared machine).
# Usage: scripts/install-deps.sh [--bench | --test]   (--bench adds the PyTorch peer for
# bench/; --test headless Chromium, which the report test opens the page in, valgrind, and
# clang with its OpenMP and libFuzzer runtimes for the fuzz harnesses' replay)
set -eu
pkgs="build-essential pkg-config libopenblas-openmp-dev libgsl-dev libsqlite3-dev sqlite3 libcjson-dev
zlib1g-dev libcmocka-dev openmpi-bin libopenmpi-dev dataset-fashion-mnist gnuplot-nox"
[ "${1:-}" = "--bench" ] && pkgs="$pkgs python3-torch python3-numpy"
[ "${1:-}" = "--test" ] && pkgs="$pkgs chromium valgrind clang libomp-dev libclang-rt-dev"
missing=""
for p in $pkgs; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "install-deps: installing:$missing" >&2
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
