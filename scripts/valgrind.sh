#!/usr/bin/env bash
# valgrind.sh - run heptasim under valgrind's memcheck and fail on any
# invalid read or write, use of uninitialised memory, or leak (definite,
# indirect or possible).  valgrind is installed through apt when missing.
#
#   scripts/valgrind.sh [--status N] [--] HEPTASIM-ARGUMENTS...
#
# --status N: the exit status heptasim must return (default 0; 2 to check
# the error path of bad input).  Exits 0 when clean, 1 otherwise; the
# valgrind log is kept in $HEPTASIM_BUILD/valgrind.log (default build/).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${HEPTASIM_BUILD:-$top/build}
want=0
while [ $# -gt 0 ]; do
  case $1 in
    --status) want=$2; shift 2 ;;
    --) shift; break ;;
    *) break ;;
  esac
done

if ! command -v valgrind >/dev/null; then
  echo "heptasim: installing valgrind" >&2
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq valgrind >&2
fi
[ -x "$build/heptasim" ] || "$top/scripts/setup.sh"

log="$build/valgrind.log"
export HEPTASIM_DATA=${HEPTASIM_DATA:-$top}
set +e
valgrind --tool=memcheck --leak-check=full --show-leak-kinds=definite,indirect,possible \
  --errors-for-leak-kinds=definite,indirect,possible --error-exitcode=99 --log-file="$log" \
  "$build/heptasim" "$@" >/dev/null 2>"$build/valgrind.stderr" </dev/null
got=$?
set -e
# every process's summary (a command that forks has one per child)
if [ "$got" -eq 99 ] || ! grep -q "ERROR SUMMARY: 0 errors" "$log" || grep -q "ERROR SUMMARY: [1-9]" "$log"; then
  echo "valgrind: heptasim $*: memory errors or leaks:" >&2
  grep -E "Invalid|uninitialised|definitely|indirectly|possibly|ERROR SUMMARY" "$log" | head -n 20 >&2
  exit 1
fi
if [ "$got" -ne "$want" ]; then
  echo "valgrind: heptasim $*: exit status $got, want $want:" >&2
  head -n 5 "$build/valgrind.stderr" >&2
  exit 1
fi
echo "valgrind: heptasim $*: clean ($(grep -o 'total heap usage: [0-9,]* allocs' "$log"))" >&2
