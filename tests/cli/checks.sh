#!/usr/bin/env bash
# checks.sh - the checks of tests/lib/cli.sh, which every script here uses,
# fail for each way a command can go wrong: another exit status, no line or
# two lines on stderr, a line that misses a pattern, a crash report, a core
# dump, a malformed expect; and summary exits 1 on a failure or when no
# check ran.
. "$(dirname "$0")/../lib/cli.sh" "$@"

# counted CHECK...: "PASSES FAILS" after CHECK alone, with fresh counters
counted() { (passes=0 fails=0 skips=0; "$@" >/dev/null 2>&1; echo "$passes $fails"); }
# want "PASSES FAILS" CHECK...
want() {
  local w=$1 got
  shift
  got=$(counted "$@")
  if [ "$got" = "$w" ]; then ok; else ko "$* counted '$got' (passes fails), want '$w'"; fi
}
# say STATUS LINE...: print each LINE on stderr, return STATUS
say() {
  local st=$1 line
  shift
  for line in "$@"; do echo "$line" >&2; done
  return "$st"
}
dump() { : >"$tmp/core.1"; say "$@"; }

want "1 0" expect_cmd 2 "x\.json" "\.layers: bad" -- say 2 "x.json: .layers: bad"
want "0 1" expect_cmd 2 "x\.json" -- say 1 "x.json: .layers: bad"
want "0 1" expect_cmd 1 "x\.json" -- say 2 "x.json: .layers: bad"
want "0 1" expect_cmd 2 "x\.json" -- say 2
want "0 1" expect_cmd 2 "x\.json" -- say 2 "x.json: .layers: bad" "and a second line"
want "0 1" expect_cmd 2 "x\.json" "\.heads" -- say 2 "x.json: .layers: bad"
want "0 1" expect_cmd 2 "x\.json" -- say 2 "x.json: runtime error: shift exponent"
want "0 1" expect_cmd 2 "x\.json" -- dump 2 "x.json: .layers: bad"
want "0 1" expect_cmd 2 -- say 2 "x.json"
want "0 1" expect_cmd 2 "x\.json" say 2 "x.json"
want "1 0" expect 2 "unknown command 'frobnicate'" -- frobnicate
want "0 1" expect 2 "unknown command 'other'" -- frobnicate
want "0 1" expect 0 "unknown command" -- frobnicate
want "1 0" check "true" true
want "0 1" check "false" false
capture say 3 "one line"
check "capture keeps the status" test "$status" -eq 3
check "capture keeps stderr" grep -qx "one line" "$tmp/err"

# summary: the last line, and the exit status
out=$(passes=2 fails=0 summary)
check "summary exits 0 when every check passed" test $? -eq 0
check "summary ends with 'N passed, N failed'" test "$(tail -n 1 <<<"$out")" = "2 passed, 0 failed"
out=$(passes=2 fails=1 summary)
check "summary exits 1 on a failure" test $? -eq 1
out=$(passes=0 fails=0 summary)
check "summary exits 1 when no check ran" test $? -eq 1

summary
