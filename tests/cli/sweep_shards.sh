#!/usr/bin/env bash
# sweep_shards.sh - the search on the command line, on a small case: shards
# run in parallel (GNU parallel when installed, else xargs -P) and merged
# give the same ranking as one run; --resume carries on an interrupted sweep
# (torn last line included) and refuses records of another search; compare
# reports both bests and a speedup; errors are one line with status 2.
. "$(dirname "$0")/../lib/cli.sh" "$@"

# A small case: 32 devices in two supernodes, a 4-layer model, 7 candidates.
args=(-m gpt-7.5b --devices 32 --set platform.supernode.devices=16 --set model.layers=4 --global-batch 32
      --top 7 -j 1 -q)

"$bin" sweep "${args[@]}" --out "$tmp/one.jsonl" --json "$tmp/one.json" 2>"$tmp/one.err"
check "single sweep succeeds" test $? -eq 0
check "no progress bar when stderr is not a terminal" test ! -s "$tmp/one.err"
check "one record per simulated candidate" test "$(wc -l <"$tmp/one.jsonl")" -eq 7

# Three shards, two at a time.
if command -v parallel >/dev/null 2>&1; then
  parallel -j 2 "$bin" sweep "${args[@]}" --shard {}/3 --out "$tmp/shard{}.jsonl" ::: 0 1 2
else
  printf '%s\n' 0 1 2 | xargs -P 2 -I{} "$bin" sweep "${args[@]}" --shard {}/3 --out "$tmp/shard{}.jsonl"
fi
check "shards succeed" test $? -eq 0
check "shards split the candidates" test "$(cat "$tmp"/shard*.jsonl | wc -l)" -eq 7
check "a shard holds a third" test "$(wc -l <"$tmp/shard1.jsonl")" -eq 2

"$bin" merge "$tmp/shard0.jsonl" "$tmp/shard1.jsonl" "$tmp/shard2.jsonl" --out "$tmp/merged.jsonl" -q
check "merge succeeds" test $? -eq 0
"$bin" merge "$tmp/one.jsonl" --out "$tmp/single.jsonl" -q
check "merged shards rank exactly as one run" cmp -s "$tmp/merged.jsonl" "$tmp/single.jsonl"
"$bin" merge "$tmp/shard2.jsonl" "$tmp/shard0.jsonl" "$tmp/shard1.jsonl" "$tmp/shard0.jsonl" --out "$tmp/again.jsonl" -q
check "merge ignores file order and duplicates" cmp -s "$tmp/merged.jsonl" "$tmp/again.jsonl"
if command -v jq >/dev/null 2>&1; then
  jq -c '.ranking[] | [.index, .step_time_s]' "$tmp/one.json" >"$tmp/rank.one"
  jq -c '[.index, .step_time_s]' "$tmp/merged.jsonl" >"$tmp/rank.merged"
  check "merged ranking equals the sweep's --json ranking" cmp -s "$tmp/rank.one" "$tmp/rank.merged"
  check "counts add up" test "$(jq '.counts | .enumerated == .pruned_memory + .estimated and .simulated == 7' "$tmp/one.json")" = true
  check "agreement is reported" test "$(jq '.agreement.n' "$tmp/one.json")" -eq 7
  check "estimates are not simulated results" test "$(jq '[.estimated_only[] | select(.simulated or has("step_time_s"))] | length' "$tmp/one.json")" -eq 0
fi

# An interrupted sweep: three records and half of a fourth.
{ head -n 3 "$tmp/one.jsonl"; sed -n 4p "$tmp/one.jsonl" | head -c 120; } >"$tmp/resume.jsonl"
"$bin" sweep "${args[@]}" --out "$tmp/resume.jsonl" --resume --json "$tmp/resume.json"
check "resume succeeds" test $? -eq 0
check "resume keeps one line per candidate" test "$(wc -l <"$tmp/resume.jsonl")" -eq 7
"$bin" merge "$tmp/resume.jsonl" --out "$tmp/resumed.jsonl" -q
check "resumed sweep ranks as one run" cmp -s "$tmp/resumed.jsonl" "$tmp/single.jsonl"
if command -v jq >/dev/null 2>&1; then
  check "resume counts what it reused" test "$(jq '.counts.resumed' "$tmp/resume.json")" -eq 3
fi

expect 2 "comes from another search" -- sweep "${args[@]}" --set model.layers=8 --out "$tmp/one.jsonl" --resume
expect 2 "'--resume' needs '--out FILE'" -- sweep "${args[@]}" --resume
expect 2 "'--shard' takes I/N" -- sweep "${args[@]}" --shard 3/3
"$bin" sweep "${args[@]}" --global-batch 64 --top 1 --out "$tmp/other.jsonl"
expect 2 "different searches" -- merge "$tmp/one.jsonl" "$tmp/other.jsonl"
expect 2 "give the JSONL files" -- merge
printf '{"index": 1}\n' >"$tmp/bad.jsonl"
expect 2 "bad.jsonl: line 1: 'space'" -- merge "$tmp/bad.jsonl"
expect 1 "no strategy of the 7d space fits" -- sweep "${args[@]}" --set platform.device.hbm_GiB=2.01

# compare: both bests, simulated, and the speedup of the 7D best.
"$bin" compare -m gpt-7.5b --devices 32 --set platform.supernode.devices=16 --set model.layers=4 \
  --global-batch 32 --top 2 -j 2 --json "$tmp/cmp.json" >"$tmp/cmp.txt"
check "compare succeeds" test $? -eq 0
check "compare prints the speedup" grep -q "speedup of the best 7D strategy over the best Megatron-style one" "$tmp/cmp.txt"
if command -v jq >/dev/null 2>&1; then
  check "compare: Megatron-style best is Megatron-style" test "$(jq '.megatron.megatron_style and .megatron.simulated' "$tmp/cmp.json")" = true
  check "compare: speedup is the ratio of simulated steps" test "$(jq '(.megatron.step_time_s / ."7d".step_time_s - .speedup) | fabs < 1e-12' "$tmp/cmp.json")" = true
  check "compare: the 7D best is no slower" test "$(jq '.speedup >= 1' "$tmp/cmp.json")" = true
fi

# The HTML report of a sweep.
"$bin" sweep "${args[@]}" --top 3 --report "$tmp/sweep.html"
check "sweep --report writes HTML" grep -qi "<svg" "$tmp/sweep.html"

summary
