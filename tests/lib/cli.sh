# cli.sh - what the command-line test scripts share: the binary, the data
# directory, a temporary directory removed on exit, pass/fail counters,
# running a command into files, and the checks on exit status and stderr.
#
# Source it first, with the script's arguments:
#   . "$(dirname "$0")/../lib/cli.sh" "$@"
# It sets
#   bin     the heptasim binary (first argument, made absolute)
#   data    the repository's data (HEPTASIM_DATA, else this checkout)
#   tmp     a fresh directory, removed when the script exits
# and defines
#   ok / ko MESSAGE / skip MESSAGE   count a check (ko and skip print MESSAGE)
#   check NAME COMMAND...            passes when COMMAND succeeds
#   capture COMMAND...               COMMAND > $tmp/out 2> $tmp/err < /dev/null;
#                                    its exit status in $status (and returned)
#   expect STATUS PATTERN... -- ARGS...
#                                    heptasim ARGS exits STATUS after exactly one
#                                    line on stderr that matches every PATTERN
#                                    (grep -E), with no crash report or core dump
#   expect_cmd STATUS PATTERN... -- COMMAND...
#                                    the same for any command (a subshell with
#                                    limits, say)
#   summary                          prints "N passed, N failed" and exits 0
#                                    only when every check passed
#   small_inputs                     writes the small valid baseline the
#                                    bad-input scripts break one thing of
#                                    ($tmp/small-model.json, a 4-layer model;
#                                    $tmp/small-strategy.json, pp 2 x tp 2, dp
#                                    derived, 16 sequences) and sets the arrays
#                                    P (dgx-a100, 8 devices), M, S and base
set -u
bin=${1:?usage: $(basename "$0") path/to/heptasim}
case $bin in /*) ;; */*) bin=$PWD/$bin ;; esac
data=${HEPTASIM_DATA:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
tmp=$(mktemp -d)
# u+rwx first: a case may leave an unreadable file or directory behind
trap 'chmod -R u+rwx "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
passes=0 fails=0 skips=0 status=0

ok() { passes=$((passes + 1)); }
ko() { echo "FAIL: $*"; fails=$((fails + 1)); }
skip() { echo "skip: $*"; skips=$((skips + 1)); }

check() {
  local name=$1
  shift
  if "$@"; then ok; else ko "$name"; fi
}

capture() {
  "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
  status=$?
  return $status
}

# cli_expect_captured STATUS DESCRIPTION PATTERN...: the checks of expect
# on the command capture just ran.
cli_expect_captured() {
  local want=$1 desc=$2 why="" lines pattern
  shift 2
  lines=$(wc -l <"$tmp/err")
  if [ "$status" -ne "$want" ]; then why="exit status $status, want $want"
  elif grep -Eq 'Sanitizer|runtime error|core dumped|Segmentation|Aborted' "$tmp/err"; then why="crash report"
  elif compgen -G "$tmp/core*" >/dev/null; then why="core dump"; rm -f "$tmp"/core*
  elif [ "$lines" -ne 1 ]; then why="$lines lines on stderr, want 1"
  else
    for pattern in "$@"; do
      grep -Eq -- "$pattern" "$tmp/err" || { why="stderr does not match '$pattern'"; break; }
    done
  fi
  if [ -n "$why" ]; then
    ko "$desc: $why; stderr:"
    sed 's/^/    /' "$tmp/err"
  else
    ok
  fi
}

# cli_expect_parse KIND STATUS PATTERN... -- WORDS...: shared by expect and
# expect_cmd; KIND "bin" runs heptasim WORDS, "cmd" runs WORDS.
cli_expect_parse() {
  local kind=$1 want=$2 patterns=()
  shift 2
  while [ $# -gt 0 ] && [ "$1" != -- ]; do patterns+=("$1"); shift; done
  if [ $# -eq 0 ] || [ ${#patterns[@]} -eq 0 ]; then
    ko "expect: want STATUS PATTERN... -- ARGS..., got: $want ${patterns[*]}"
    return
  fi
  shift
  if [ "$kind" = bin ]; then
    capture "$bin" "$@"
    cli_expect_captured "$want" "heptasim $*" "${patterns[@]}"
  else
    capture "$@"
    cli_expect_captured "$want" "$*" "${patterns[@]}"
  fi
}

expect() { cli_expect_parse bin "$@"; }
expect_cmd() { cli_expect_parse cmd "$@"; }

small_inputs() {
  cat >"$tmp/small-model.json" <<'EOF'
{"name": "small", "layers": 4, "hidden": 256, "heads": 8, "ffn_hidden": 1024, "vocab": 1000, "seq_len": 512}
EOF
  cat >"$tmp/small-strategy.json" <<'EOF'
{"name": "small", "dp": 0, "pp": 2, "tp_x": 2, "global_batch": 16, "micro_batch": 1, "schedule": "1f1b"}
EOF
  P=(-p dgx-a100 --devices 8)
  M=(-m "$tmp/small-model.json")
  S=(-s "$tmp/small-strategy.json")
  base=("${M[@]}" "${P[@]}" "${S[@]}")
}

summary() {
  [ "$skips" -eq 0 ] || echo "skipped: $skips"
  [ $((passes + fails)) -gt 0 ] || ko "no check ran"
  echo "$passes passed, $fails failed"
  [ "$fails" -eq 0 ] && exit 0
  exit 1
}
