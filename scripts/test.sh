#!/usr/bin/env bash
# test.sh - set up (packages, build) when needed, then run every test.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${HEPTASIM_BUILD:-$top/build}
"$top/scripts/setup.sh"
cd "$build"
ctest --output-on-failure -j "$(nproc)" "$@"
