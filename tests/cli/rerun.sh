#!/usr/bin/env bash
# rerun.sh - what a sweep finds runs again: --save-best and --save-top write
# strategy files, and `run -s` takes them, a compact form as the sweep
# prints it, or a candidate's id in the sweep's records, each to the step
# time the sweep simulated; bad forms are one line with status 2.
. "$(dirname "$0")/../lib/cli.sh" "$@"

if ! command -v jq >/dev/null 2>&1; then
  skip "jq is not installed"
  summary
fi

# A small MoE case with pipeline, TP and EP held, so that the winners carry
# most tokens (a zero-bubble schedule joined to pp, sp, ep, etp).
inputs=(-m deepseek-moe-16b --devices 16 --set model.layers=4)
pins=(--set pp=2 --set ep=4 --set tp_x=2)
"$bin" sweep "${inputs[@]}" "${pins[@]}" --global-batch 32 --top 6 -j 2 -q --json "$tmp/s.json" \
  --out "$tmp/s.jsonl" --save-best "$tmp/best.json" --save-top "$tmp/top"
check "sweep with --save-best and --save-top succeeds" test $? -eq 0

step_of() { "$bin" run "$@" --json - -q | jq .step_time_s; }
best=$(jq '.ranking[0].step_time_s' "$tmp/s.json")
check "the best strategy file runs to the sweep's step time" \
  test "$(step_of "${inputs[@]}" -s "$tmp/best.json")" = "$best"
check "the best strategy file is the first of the top" cmp -s "$tmp/best.json" "$(ls "$tmp"/top/01-*.json)"

rows=$(ls "$tmp/top" | wc -l)
check "one file per distinct row of the table" test "$rows" -ge 2
for f in "$tmp"/top/*.json; do
  id=$(jq -r .name "$f")
  want=$(jq --arg id "$id" '.ranking[] | select(.strategy.name == $id) | .step_time_s' "$tmp/s.json")
  compact=$(jq -r .description "$f")
  check "$id: its file runs to its step time" test "$(step_of "${inputs[@]}" -s "$f")" = "$want"
  check "$id: its compact form '$compact' runs to its step time" \
    test "$(step_of "${inputs[@]}" --set global_batch=32 -s "$compact")" = "$want"
  check "$id: its record id runs to its step time" test "$(step_of "${inputs[@]}" -s "$id@$tmp/s.jsonl")" = "$want"
done

# compare: the best of the whole 7D space
"$bin" compare "${inputs[@]}" --set model.layers=2 --global-batch 16 --top 2 -j 2 -q --json "$tmp/c.json" \
  --save-best "$tmp/cbest.json"
check "compare with --save-best succeeds" test $? -eq 0
check "compare saves its best 7D strategy" \
  test "$(step_of "${inputs[@]}" --set model.layers=2 -s "$tmp/cbest.json")" = "$(jq '."7d".step_time_s' "$tmp/c.json")"

# bad forms: one line each, status 2
# a file whose name looks like a compact form or holds an '@' is read as the file
cp "$tmp/best.json" "$tmp/dp4"
cp "$tmp/best.json" "$tmp/7d-1@x"
check "a file named like a compact form is read as the file" \
  test "$(cd "$tmp" && step_of "${inputs[@]}" -s dp4)" = "$best"
check "a file named like a record id is read as the file" \
  test "$(step_of "${inputs[@]}" -s "$tmp/7d-1@x")" = "$best"
expect 2 "'dp4 pp2 foo'" "'foo' is not a token of a compact strategy" -- run "${inputs[@]}" -s 'dp4 pp2 foo'
expect 2 "'dp2' sets dp a second time" -- run "${inputs[@]}" -s 'dp4 dp2'
expect 2 "strategy 'dp4 tp3'" "tp_x: 3 does not divide" -- run "${inputs[@]}" -s 'dp4 tp3'
expect 2 "no record of candidate '7d-999999'" -- run "${inputs[@]}" -s "7d-999999@$tmp/s.jsonl"
expect 2 "missing.jsonl" -- run "${inputs[@]}" -s "7d-1@$tmp/missing.jsonl"
expect 2 "ID@RECORDS" -- run "${inputs[@]}" -s "@$tmp/s.jsonl"
expect 2 "'--save-best' with '--shard'" -- sweep "${inputs[@]}" --shard 0/2 --save-best "$tmp/x.json"
expect 1 "cannot create the folder" -- sweep "${inputs[@]}" "${pins[@]}" --global-batch 32 --top 1 -q \
  --save-top "$tmp/no/such/dir"
check "no strategy file after a refused sweep" test ! -e "$tmp/x.json"

summary
