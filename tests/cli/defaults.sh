#!/bin/bash
# defaults.sh - what a run takes and says when the user names little: the
# strategy derived for the model and platform when there is no -s, the
# names of overridden strategies in every output, and the summary's
# sequence length, micro-batches and parameter counts.
. "$(dirname "$0")/../lib/cli.sh" "$@"

small=(-m llama3-8b -p dgx-h100 --devices 8 --set model.layers=4 --set global_batch=16)

# ---------------------------------------------- the derived strategy
if capture "$bin" run "${small[@]}" --json "$tmp/run.json"; then
  ok
  check "the summary names the derived strategy" grep -q 'strategy derived (best Megatron-style by estimate): ' "$tmp/out"
else
  ko "run without -s failed: $(head -2 "$tmp/err")"
fi
# The derived strategy is the best estimate of the Megatron-style sweep.
if capture "$bin" sweep "${small[@]}" --space megatron --top 1 -q --json "$tmp/sweep.json"; then
  python3 - "$tmp/run.json" "$tmp/sweep.json" <<'PY' >"$tmp/py" 2>&1
import json, sys
run, sweep = (json.load(open(p)) for p in sys.argv[1:])
a, b = run["strategy"], sweep["ranking"][0]["strategy"]
for k in ("name", "description"):
    a.pop(k); b.pop(k)
assert a == b, (a, b)
assert run["strategy_name"] == "derived (best Megatron-style by estimate)", run["strategy_name"]
PY
  rc=$?
  check "run without -s takes the sweep's best Megatron-style estimate: $(cat "$tmp/py")" test $rc -eq 0
else
  ko "sweep failed: $(head -2 "$tmp/err")"
fi
# A key set on the command line is held by the derivation.
if capture "$bin" memory "${small[@]}" --set tp_x=2 --json "$tmp/mem.json"; then
  check "a --set key is held by the derivation" \
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["strategy"]["tp_x"] == 2' "$tmp/mem.json"
else
  ko "memory without -s failed: $(head -2 "$tmp/err")"
fi
# Keys of the 7D space take the derivation there.
capture "$bin" memory "${small[@]}" --set tp_y=2
check "tp_y=2 derives in the 7D space" grep -q 'strategy derived (best 7D by estimate): ' "$tmp/out"
expect 1 'no Megatron-style strategy of llama3-8b fits on dgx-h100 with 8 devices' -- \
  memory -m llama3-8b -p dgx-h100 --devices 8 --set model.layers=4 --set recompute=none --set global_batch=8 \
  --set micro_batch=8 --set model.seq_len=65536
# The shipped default keeps its strategy file.
capture "$bin" memory
check "the shipped default keeps its strategy" grep -q 'strategy gpt-310b-a3-megatron: ' "$tmp/out"

# ------------------------------------------- overridden strategies
over=(-m llama3-8b -p dgx-h100 --devices 8 -s gpt3-175b-a100 --set model.layers=4 --set tp_x=2 --set pp=2
      --set dp=0 --set vpp=1 --set schedule=1f1b --set global_batch=16)
if capture "$bin" run "${over[@]}" --json "$tmp/over.json" --trace "$tmp/trace.json" --report "$tmp/r.html"; then
  ok
  check "the summary says the strategy was overridden" grep -q 'strategy gpt3-175b-a100 + 6 overrides: ' "$tmp/out"
  check "the JSON says so" python3 -c 'import json,sys; d=json.load(open(sys.argv[1]));
assert d["strategy_name"] == "gpt3-175b-a100 + 6 overrides" == d["strategy"]["name"]
assert d["strategy_compact"].startswith("dp2 pp2 tp2"), d["strategy_compact"]' "$tmp/over.json"
  check "the trace says so" python3 -c 'import json,sys; d=json.load(open(sys.argv[1]));
assert d["otherData"]["strategy"] == "gpt3-175b-a100 + 6 overrides"' "$tmp/trace.json"
  check "the HTML subtitle is built from the resolved inputs" \
    grep -q '<p class="sub">llama3-8b on 8 H100[^<]* devices (dgx-h100), strategy gpt3-175b-a100 + 6 overrides: dp2 pp2 tp2' "$tmp/r.html"
  check "the HTML holds no word of the strategy file's description" bash -c "! grep -q '175B' '$tmp/r.html'"
else
  ko "overridden run failed: $(head -2 "$tmp/err")"
fi
expect 1 "strategy 'gpt3-175b-a100 \+ 7 overrides' does not fit" -- \
  run "${over[@]}" --set model.seq_len=262144 --set recompute=none
capture "$bin" memory "${over[@]}" --set name=mine
check "--set name=... names the strategy" grep -q 'strategy mine: ' "$tmp/out"

# ------------------------------------------------- summary fields
capture "$bin" memory "${over[@]}" --json "$tmp/m.json"
check "the summary prints the sequence length and parameters" \
  grep -Eq '^model +[0-9.]+ B parameters, [0-9.]+ B active per token .* sequence length 8,192$' "$tmp/out"
check "the summary counts micro-batches" grep -q 'gb 16 (8 micro-batches)' "$tmp/out"
capture "$bin" memory "${over[@]}" --set global_batch=2 --set micro_batch=1
check "one micro-batch is singular" grep -q '(1 micro-batch)' "$tmp/out"
check "memory --json holds seq_len, micro_batches and parameters" python3 -c 'import json,sys; d=json.load(open(sys.argv[1]));
assert d["seq_len"] == 8192 and d["seq_len_assumed"] is False and d["micro_batches"] == 8
p = d["parameters"]; assert p["total"] >= p["active"] > 0' "$tmp/m.json"
# An imported HuggingFace config says which sequence length it assumed.
capture "$bin" memory -m "$data/models/hf/deepseek-v3" -p dgx-h100 --devices 2048 -s deepseek-v3-h800
check "a HuggingFace config notes its assumed sequence length (one line)" \
  test "$(grep -c 'a HuggingFace config gives no training sequence length; assuming 4096' "$tmp/err")" = 1
check "the summary says it was assumed" grep -q 'sequence length 4,096 (assumed' "$tmp/out"
capture "$bin" memory -m "$data/models/hf/deepseek-v3" -p dgx-h100 --devices 2048 -s deepseek-v3-h800 \
  --set model.seq_len=4096
check "no note when the sequence length is given" bash -c "! grep -q HuggingFace '$tmp/err'"

# an uncalibrated preset says so when a calibrated one is shipped beside it
cal=(-m llama3-8b --devices 8 --set model.layers=4 --set global_batch=16 -s 'dp2 pp2 tp2 sp mb1 sel z1')
capture "$bin" memory "${cal[@]}" -p dgx-h100
check "dgx-h100's summary points at dgx-h100-calibrated" \
  grep -qx 'platform   dgx-h100: efficiencies uncalibrated (defaults); dgx-h100-calibrated is fitted to published runs (-p dgx-h100-calibrated)' "$tmp/out"
capture "$bin" memory "${cal[@]}" -p dgx-h100-calibrated
check "the calibrated preset says nothing of the kind" sh -c "! grep -q 'efficiencies uncalibrated' '$tmp/out'"
capture "$bin" memory "${cal[@]}" -p dgx-h200
check "nor a preset with no calibrated file beside it" sh -c "! grep -q 'efficiencies uncalibrated' '$tmp/out'"

summary
