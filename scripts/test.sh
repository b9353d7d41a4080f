#!/usr/bin/env bash
# test.sh - set up (packages, build) when needed, then run every test:
#   1. the CTest suite (Check suites, tests/cli/*.sh) in build/;
#   2. the same suite built with AddressSanitizer + UBSan in build-asan/;
#   3. a bounded fuzz run of the config loaders, --set and the option parser (tests/fuzz/run.sh);
#   4. small `heptasim run`s under valgrind (one with --symmetry dp): no leak, no invalid access.
# HEPTASIM_QUICK=1 runs step 1 only, for a quick local check (CI runs all).
# HEPTASIM_FUZZ_SECONDS sets the fuzz time per harness (default 12, six
# harnesses).  Arguments go to each ctest run (e.g. -R config).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${HEPTASIM_BUILD:-$top/build}
asan=${HEPTASIM_ASAN_BUILD:-$top/build-asan}
jobs=$(nproc)
failed=()
step() { echo "== test.sh: $*" >&2; }

"$top/scripts/setup.sh"

step "test suite ($build)"
(cd "$build" && ctest --output-on-failure -j "$jobs" "$@") || failed+=("test suite")

if [ "${HEPTASIM_QUICK:-0}" != 1 ]; then
  step "test suite under AddressSanitizer + UBSan ($asan)"
  if [ ! -f "$asan/CMakeCache.txt" ]; then
    cmake -S "$top" -B "$asan" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHEPTASIM_SANITIZE=ON >&2
  fi
  cmake --build "$asan" -j "$jobs" >&2
  # Reports go to files: SimGrid switches actor stacks, which makes ASan
  # print a warning on stderr that would break the tests that check stderr.
  logs="$asan/sanitizer-logs"
  rm -rf "$logs"
  mkdir -p "$logs"
  (cd "$asan" &&
    ASAN_OPTIONS="log_path=$logs/asan:detect_leaks=1" \
    UBSAN_OPTIONS="log_path=$logs/ubsan:print_stacktrace=1:halt_on_error=1" \
    ctest --output-on-failure -j "$jobs" "$@") || failed+=("sanitizer test suite")
  reports=$(grep -l -E "ERROR: (Address|Leak)Sanitizer|runtime error|SUMMARY: UndefinedBehaviorSanitizer" \
    "$logs"/* 2>/dev/null || true)
  if [ -n "$reports" ]; then
    for f in $reports; do echo "--- $f" >&2; head -n 40 "$f" >&2; done
    failed+=("sanitizer reports")
  fi

  step "fuzzing the config loaders and the option parser"
  "$top/tests/fuzz/run.sh" "${HEPTASIM_FUZZ_SECONDS:-12}" || failed+=("fuzzing")

  step "valgrind"
  small=(-m gpt-1.7b -p dgx-a100 --devices 8 --set model.layers=4 --set tp_x=2 --set pp=2 --set dp=2
         --set vpp=1 --set schedule=1f1b --set global_batch=16 -q)
  moe=(-m mixtral-8x22b -p ascend-a3-2048 --devices 16 --set model.layers=2 --set tp_x=2 --set tp_y=2
       --set cp_ulysses=2 --set pp=1 --set dp=0 --set ep=4 --set vpp=1 --set schedule=1f1b --set global_batch=4
       --set zero=3 --set recompute=full -q)
  vg="$build/valgrind-out"
  mkdir -p "$vg"
  "$top/scripts/valgrind.sh" run "${small[@]}" --json "$vg/run.json" --trace "$vg/trace.json" \
    --report "$vg/report.html" || failed+=("valgrind run")
  "$top/scripts/valgrind.sh" run "${moe[@]}" || failed+=("valgrind run (moe)")
  "$top/scripts/valgrind.sh" run "${small[@]}" --set dp=4 --devices 16 --set global_batch=32 --symmetry dp \
    --set platform.network.oversubscription=2 || failed+=("valgrind run (--symmetry dp)")
  "$top/scripts/valgrind.sh" memory "${small[@]}" --json "$vg/memory.json" || failed+=("valgrind memory")
  "$top/scripts/valgrind.sh" --status 2 run "${small[@]}" --set tp_x=3 || failed+=("valgrind bad input")
fi

if [ ${#failed[@]} -gt 0 ]; then
  step "FAILED: ${failed[*]}"
  exit 1
fi
step "all passed"
