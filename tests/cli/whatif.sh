#!/usr/bin/env bash
# whatif.sh - a what-if never reads like the baseline: the --set items of
# model, platform and strategy are named in the summary, the JSON (with the
# model and platform as simulated), the CSV, the trace and the HTML reports
# of run, memory, sweep and compare; --global-tokens keeps the tokens of
# a step when the sequence length changes.
. "$(dirname "$0")/../lib/cli.sh" "$@"

if ! command -v jq >/dev/null 2>&1; then
  skip "jq is not installed"
  summary
fi

in=(-m llama3-8b -p dgx-h100 --devices 8 --set model.layers=4 --set global_batch=16 -s 'dp2 pp2 tp2 sp mb1 sel z1')
sets="model.layers=4, global_batch=16, platform.network.nic_GBps=25"

if capture "$bin" run "${in[@]}" --set platform.network.nic_GBps=25 --json "$tmp/w.json" --report "$tmp/w.html" \
     --trace "$tmp/w.trace"; then
  ok
  check "the summary names the overrides under its first line" \
    test "$(sed -n 2p "$tmp/out")" = "overrides  $sets"
  check "the JSON lists them" test "$(jq -r '.overrides | join(", ")' "$tmp/w.json")" = "$sets"
  check "the JSON holds the platform as simulated" test "$(jq '.resolved_platform.network.nic_GBps' "$tmp/w.json")" = 25
  check "the JSON holds the model as simulated" test "$(jq '.resolved_model.layers' "$tmp/w.json")" = 4
  check "the report names them" grep -q "overrides</td><td class=\"l\">$sets<" "$tmp/w.html"
  check "the trace names them" test "$(jq -r '.otherData.overrides | join(", ")' "$tmp/w.trace")" = "$sets"
else
  ko "run with a platform override: status $status"
fi

capture "$bin" run "${in[@]}" --json "$tmp/b.json" -q
check "the baseline's JSON has the file's bandwidth" test "$(jq '.resolved_platform.network.nic_GBps' "$tmp/b.json")" = 50
check "and no platform override" test "$(jq -r '.overrides | join(", ")' "$tmp/b.json")" = "model.layers=4, global_batch=16"
check "the what-if is slower" test "$(jq '.step_time_s' "$tmp/w.json" "$tmp/b.json" | sort -g | tail -1)" = \
  "$(jq '.step_time_s' "$tmp/w.json")"

s=(-m llama3-8b -p dgx-h100 --devices 8 --set model.layers=4 --global-batch 16 --set platform.network.nic_GBps=25
   --top 2 -j 1)
if capture "$bin" sweep "${s[@]}" --json "$tmp/s.json" --csv "$tmp/s.csv" --report "$tmp/s.html"; then
  ok
  check "the sweep's summary names the overrides" grep -qx "overrides: model.layers=4, platform.network.nic_GBps=25" "$tmp/out"
  check "its JSON lists them" test "$(jq -r '.overrides | join(", ")' "$tmp/s.json")" = \
    "model.layers=4, platform.network.nic_GBps=25"
  check "its CSV has them on every row" \
    test "$(python3 -c 'import csv,sys; print(set(r["overrides"] for r in csv.DictReader(open(sys.argv[1]))))' "$tmp/s.csv")" \
    = "{'model.layers=4, platform.network.nic_GBps=25'}"
  check "its report's title names them" grep -q "<title>llama3-8b on dgx-h100 (8 devices, with model.layers=4, platform.network.nic_GBps=25)" "$tmp/s.html"
else
  ko "sweep with a platform override: status $status"
fi

capture "$bin" memory "${in[@]}" --set platform.device.hbm_GiB=40 -q --json "$tmp/m.json"
check "memory's JSON names them" test "$(jq -r '.overrides[-1]' "$tmp/m.json")" = "platform.device.hbm_GiB=40"

# the global batch in tokens stays the same number of tokens when the sequence changes
t=(-m llama3-8b -p dgx-h100 --devices 8 --set model.layers=4 --top 1 -j 1 --global-tokens 131072)
capture "$bin" sweep "${t[@]}" --json "$tmp/t1.json" -q
check "--global-tokens 131072 at seq_len 8192 is 16 sequences" test "$(jq .global_batch "$tmp/t1.json")" = 16
capture "$bin" sweep "${t[@]}" --set model.seq_len=4096 --json "$tmp/t2.json" -q
check "and 32 at seq_len 4096" test "$(jq .global_batch "$tmp/t2.json")" = 32
expect 2 "'--global-tokens 1000' is not a multiple of llama3-8b's seq_len 8192 \\(use a multiple of 8192\\)" -- \
  sweep -m llama3-8b -p dgx-h100 --devices 8 --global-tokens 1000
expect 2 "'--global-batch' and '--global-tokens' cannot be used together" -- \
  compare -m llama3-8b -p dgx-h100 --devices 8 --global-tokens 8192 --global-batch 2

# A memory headroom (platform.device.hbm_headroom) keeps that fraction of the
# usable HBM free in every fit test: the capacity the sweep prunes by is
# (hbm - reserved) x (1 - headroom), no ranked candidate exceeds it, and the
# best without headroom, which does, is no longer chosen.
sw=(-m llama3-8b -p dgx-h100 --devices 8 --top 2 -q)
if "$bin" sweep "${sw[@]}" --json "$tmp/free.json" 2>/dev/null &&
   "$bin" sweep "${sw[@]}" --set platform.device.hbm_headroom=0.2 --json "$tmp/room.json" 2>/dev/null; then
  cap=$(jq '(.resolved_platform.device.hbm_GiB - .resolved_platform.device.hbm_reserved_GiB) * 0.8 * 1073741824' "$tmp/room.json")
  check "headroom: the capacity is (hbm - reserved) x 0.8" \
    test "$(jq --argjson c "$cap" '[.ranking[].memory.capacity_bytes | . - $c | fabs < 1] | all' "$tmp/room.json")" = true
  check "headroom: every ranked candidate fits in it" \
    test "$(jq --argjson c "$cap" '[.ranking[].memory.peak_bytes <= $c] | all' "$tmp/room.json")" = true
  check "headroom: the best without it does not fit in it" \
    test "$(jq --argjson c "$cap" '.ranking[0].memory.peak_bytes > $c' "$tmp/free.json")" = true
  check "headroom: the summary names it" test "$(jq -r '.overrides | join(", ")' "$tmp/room.json")" = "platform.device.hbm_headroom=0.2"
else
  ko "sweep with a headroom"
fi

summary
