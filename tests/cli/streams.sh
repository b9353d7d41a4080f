#!/bin/bash
# streams.sh - estimate mode, and what goes where: exit status 1 for a
# strategy that does not fit (run, memory, estimate alike), stdout holding
# the JSON alone with --json -, and each --help listing only the options
# its command takes.
. "$(dirname "$0")/../lib/cli.sh" "$@"

small=(-m llama3-8b -p dgx-h100 --devices 8 -s gpt3-175b-a100 --set model.layers=4 --set tp_x=2 --set pp=2
       --set dp=0 --set vpp=1 --set schedule=1f1b --set global_batch=16)

# --------------------------------------------------------- estimate
if capture "$bin" estimate "${small[@]}" --json "$tmp/est.json"; then
  ok
  check "estimate says it is one" grep -q '^ESTIMATE: analytic' "$tmp/out"
  check "estimate marks its step time" grep -Eq '^step time +[0-9.]+ s \(estimate\)' "$tmp/out"
  # The estimate is the sweep's estimate of the same strategy: est_step,
  # and its breakdown adds up to it.
  python3 - "$tmp/est.json" <<'PY' >"$tmp/py" 2>&1
import json, sys
d = json.load(open(sys.argv[1]))
assert d["estimate"] is True and "simulator" not in d, d.keys()
b = d["breakdown"]
assert abs(sum(b["exposed_by_dimension_s"].values()) - b["exposed_comm_s"]) < 1e-12
t = d["step_time_s"]
assert t > 0 and b["compute_s"] <= t
assert abs(d["tokens_per_s"] - 16 * 8192 / t) < 1e-6 * d["tokens_per_s"], d["tokens_per_s"]
assert d["memory"]["fits"] is True
PY
  rc=$?
  check "estimate --json: estimate true, a breakdown, tokens/s of its step time: $(cat "$tmp/py")" test $rc -eq 0
else
  ko "estimate failed: $(head -2 "$tmp/err")"
fi
# The estimate of a strategy is what the sweep ranks it by: without -s,
# estimate takes the Megatron-style sweep's best.
derive=(-m llama3-8b -p dgx-h100 --devices 8 --set model.layers=4 --set global_batch=16)
capture "$bin" estimate "${derive[@]}" -q --json "$tmp/est.json"
capture "$bin" sweep "${derive[@]}" --space megatron --top 1 -q --json "$tmp/sweep.json"
check "estimate equals the sweep's estimate of the same strategy" python3 -c '
import json, sys
e, s = (json.load(open(p)) for p in sys.argv[1:])
r = s["ranking"][0]
assert abs(r["estimate_step_time_s"] - e["step_time_s"]) <= 1e-12 * e["step_time_s"], (r["estimate_step_time_s"], e["step_time_s"])' \
  "$tmp/est.json" "$tmp/sweep.json"

# ------------------------------------------------ exits and streams
oom=(--set model.seq_len=262144 --set recompute=none)
expect 1 "does not fit" -- estimate "${small[@]}" "${oom[@]}"
capture "$bin" memory "${small[@]}" "${oom[@]}"
check "memory exits 1 when the strategy does not fit (got $status)" test "$status" -eq 1
check "memory still prints the per-stage table" grep -q 'does NOT fit' "$tmp/out"
for cmd in run memory estimate; do
  if capture "$bin" "$cmd" "${small[@]}" --json -; then
    check "$cmd --json -: stdout is the JSON alone" python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$tmp/out"
    check "$cmd --json -: the summary on stderr" grep -q '^model ' "$tmp/err"
  else
    ko "$cmd --json - failed: $(head -2 "$tmp/err")"
  fi
done

# ---------------------------------------------------------- --help
"$bin" compare --help >"$tmp/help"
check "compare --help lists no --space" bash -c "! grep -q -- '--space' '$tmp/help'"
check "compare --help lists no --shard" bash -c "! grep -q -- '--shard' '$tmp/help'"
"$bin" sweep --help >"$tmp/help"
check "sweep --help lists --space and --shard" grep -q -- '--shard' "$tmp/help"
expect 2 "option '--space' does not apply to this command" -- compare --space 7d
expect 2 "option '--shard' does not apply to this command" -- compare --shard 0/2

summary
