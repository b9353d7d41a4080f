#!/usr/bin/env bash
# run.sh - build the libFuzzer harnesses of the config loaders, of the
# command-line option parser and of the sweep records reader with clang
# (-fsanitize=fuzzer,address,undefined) and run each for a bounded time.
#
#   tests/fuzz/run.sh [SECONDS]       each harness runs SECONDS (default 12)
#   tests/fuzz/run.sh --build-only    build, do not run
#
# Environment: HEPTASIM_FUZZ_BUILD (build and corpus directory, default
# build-fuzz/ in the repository), CLANG (compiler, default clang).  clang and its
# runtime are installed through apt when missing, as scripts/setup.sh does.
# Each harness starts from a seed corpus of the shipped models/, platforms/
# and strategies/ files, the HuggingFace-style files and argument lists in
# tests/fuzz/seeds/, and the corpus a previous run left in the build
# directory.  A crash, a leak, undefined behaviour or a broken property
# (see fuzz.h) stops that harness; its input is saved under
# $HEPTASIM_FUZZ_BUILD/artifacts/ and the script exits 1.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
here="$top/tests/fuzz"
out=${HEPTASIM_FUZZ_BUILD:-$top/build-fuzz}
cc=${CLANG:-clang}
secs=12
build_only=0
case "${1:-}" in
  --build-only) build_only=1 ;;
  "") ;;
  *[!0-9]*) echo "usage: tests/fuzz/run.sh [SECONDS|--build-only]" >&2; exit 2 ;;
  *) secs=$1 ;;
esac

# clang, and the libFuzzer/sanitizer runtimes (libclang-rt-dev)
if ! command -v "$cc" >/dev/null || ! echo 'int LLVMFuzzerTestOneInput(const char *d, long n){(void)d;(void)n;return 0;}' |
    "$cc" -x c -fsanitize=fuzzer -o /dev/null - 2>/dev/null; then
  echo "fuzz: installing clang libclang-rt-dev" >&2
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq clang libclang-rt-dev >&2
  cc=clang
fi

mkdir -p "$out/obj" "$out/artifacts"
flags=(-std=c11 -g -O1 -Wall -Wextra -D_POSIX_C_SOURCE=200809L "-DHEPTASIM_DATADIR=\"$top\""
       -fno-omit-frame-pointer -fno-sanitize-recover=all -I "$top/sim"
       $(pkg-config --cflags libcjson gsl))
libs=($(pkg-config --libs libcjson gsl) -lm)

# The simulator sources the harnesses use (the pure modules whole, so a new
# file in one of them is picked up), compiled once for all of them.
srcs=()
for f in "$top"/sim/{common,config,model,cost}/*.c; do srcs+=("${f#"$top/sim/"}"); done
objs=()
for s in "${srcs[@]}"; do
  o="$out/obj/$(echo "$s" | tr / _).o"
  if [ ! -f "$o" ] || [ "$top/sim/$s" -nt "$o" ] || [ -n "$(find "$top/sim" -name '*.h' -newer "$o" -print -quit)" ]; then
    "$cc" "${flags[@]}" -fsanitize=fuzzer-no-link,address,undefined -c "$top/sim/$s" -o "$o"
  fi
  objs+=("$o")
done

# The records harness reads and merges sweep records, and the option parser
# (cli/options.c) takes its value names from the engine's and the search's
# tables: those harnesses link the rest of the simulator (workload,
# estimator, runner, engine, so SimGrid too).
sobjs=()
for f in "$top"/sim/*/*.c; do
  case $f in "$top/sim/cli/options.c") ;; "$top"/sim/cli/*|"$top"/sim/common/*|"$top"/sim/config/*|"$top"/sim/model/*|"$top"/sim/cost/*) continue ;; esac
  s=${f#"$top/sim/"}
  o="$out/obj/$(echo "$s" | tr / _).o"
  if [ ! -f "$o" ] || [ "$f" -nt "$o" ] || [ -n "$(find "$top/sim" -name '*.h' -newer "$o" -print -quit)" ]; then
    "$cc" "${flags[@]}" $(pkg-config --cflags simgrid) -fsanitize=fuzzer-no-link,address,undefined -c "$f" -o "$o"
  fi
  sobjs+=("$o")
done

harnesses=(model hf platform strategy set cli records)
for h in "${harnesses[@]}"; do
  extra=()
  case $h in records|cli|set) extra=("${sobjs[@]}" $(pkg-config --libs simgrid)) ;; esac
  "$cc" "${flags[@]}" -fsanitize=fuzzer,address,undefined "$here/fuzz_$h.c" "${objs[@]}" "${extra[@]}" "${libs[@]}" \
    -o "$out/fuzz_$h"
done
# The end-to-end driver forks a simulation per case (SimGrid: one per
# process), so it is a plain program linked with the simulator's library
# of the normal build (built when missing), with UBSan.
core=${HEPTASIM_BUILD:-$top/build}/libheptasim_core.a
[ -f "$core" ] || "$top/scripts/setup.sh"
"$cc" -std=c11 -g -O1 -Wall -Wextra -D_POSIX_C_SOURCE=200809L -fsanitize=undefined -fno-sanitize-recover=all \
  -I "$top/sim" "$here/fuzz_e2e.c" "$core" $(pkg-config --cflags --libs simgrid libcjson gsl) -lm -o "$out/fuzz_e2e"
echo "fuzz: built ${harnesses[*]} e2e in $out" >&2
[ "$build_only" -eq 1 ] && exit 0

# Seed corpora.  The platform and strategy harnesses read a selector byte
# before the file (devices override; model), so each file is seeded with a
# few of them.
seeds="$out/seeds"
rm -rf "$seeds"
mkdir -p "$seeds"/{model,hf,platform,strategy,set,cli,records}
cp "$here"/seeds/records/* "$seeds/records/"
cp "$top"/models/*.json "$here"/seeds/hf/*.json "$seeds/model/"
cp "$here"/seeds/hf/*.json "$seeds/hf/"
for f in "$top"/platforms/*.json; do
  for b in 0 2 4 5; do { printf "\\x0$b"; cat "$f"; } >"$seeds/platform/$b-$(basename "$f")"; done
done
for f in "$top"/strategies/*.json; do
  for b in 0 1 2 3; do { printf "\\x0$b"; cat "$f"; } >"$seeds/strategy/$b-$(basename "$f")"; done
done
cp "$here"/seeds/set/* "$seeds/set/"
# the option parser: each argument list under every command's option set
for f in "$here"/seeds/set/* "$here"/seeds/cli/*; do
  # all options; run; sweep; merge; validate; calibrate; regress (cli.c's command table)
  for b in '\xff\x7f' '\xcf\x00' '\xbb\x40' '\x0a\x05' '\x2a\x29' '\x2a\x3d' '\x2a\x03'; do
    { printf "$b"; cat "$f"; } >"$seeds/cli/$(echo "$b" | tr -d '\\x')-$(basename "$f")"
  done
done

export HEPTASIM_DATA="$top"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
failed=()
for h in "${harnesses[@]}"; do
  corpus="$out/corpus/$h"
  mkdir -p "$corpus"
  echo "fuzz: $h for ${secs}s" >&2
  if ! "$out/fuzz_$h" "$corpus" "$seeds/$h" -dict="$here/config.dict" -max_total_time="$secs" -timeout=10 \
      -rss_limit_mb=2048 -max_len=8192 -artifact_prefix="$out/artifacts/$h-" -print_final_stats=1 \
      >"$out/$h.log" 2>&1; then
    failed+=("$h")
    echo "fuzz: $h FAILED, last lines of $out/$h.log:" >&2
    tail -n 40 "$out/$h.log" >&2
  else
    { grep -E '^(stat::number_of_executed_units|stat::new_units_added|Done )' "$out/$h.log" || true; } | tr '\n' ' ' >&2
    echo >&2
  fi
done
echo "fuzz: e2e for ${secs}s" >&2
if ! HEPTASIM_DATA="$top" "$out/fuzz_e2e" "$secs" 1 >"$out/e2e.log" 2>&1; then
  failed+=(e2e)
  echo "fuzz: e2e FAILED:" >&2
  tail -n 5 "$out/e2e.log" >&2
else
  cat "$out/e2e.log" >&2
fi
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: ${#failed[@]} harness(es) failed: ${failed[*]} (inputs in $out/artifacts/)" >&2
  exit 1
fi
echo "fuzz: ${#harnesses[@]} harnesses and e2e ran ${secs}s each, no failure" >&2
