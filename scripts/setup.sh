#!/usr/bin/env bash
# setup.sh - install the Debian packages heptasim needs (when missing) and
# build it into build/ (or $HEPTASIM_BUILD).  Safe to run again: it only
# installs and rebuilds what is missing or changed.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${HEPTASIM_BUILD:-$top/build}

packages=(libsimgrid-dev libcjson-dev libgsl-dev check cmake pkg-config gcc make)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "heptasim: installing ${missing[*]}" >&2
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >&2
fi

if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S "$top" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo ${HEPTASIM_CMAKE_ARGS:-} >&2
fi
cmake --build "$build" -j "$(nproc)" >&2
