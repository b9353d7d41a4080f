#!/usr/bin/env bash
# architectures.sh - the models people train now, as a user meets them:
# DeepSeek-V3's own HuggingFace config.json gives 671 B parameters, 36.6 B
# active (DeepSeek's count, without the input embedding) and the MTP
# module apart; the shipped models with MLA and MTP, windows, squared ReLU
# and chunked attention simulate a small step; Gemma 3's window shortens a
# 32K step.
. "$(dirname "$0")/../lib/cli.sh" "$@"

# ------------------------------------------- DeepSeek-V3's config.json
# (exit 1: at the 4,096 tokens assumed for a config.json stage 1 does not fit
# the H100; the parameter counts are the point)
capture "$bin" memory -m "$data/models/hf/deepseek-v3" -p dgx-h100 --devices 2048 -s deepseek-v3-h800
if [ "$status" -le 1 ] && [ -s "$tmp/out" ]; then
  ok
  if python3 - "$tmp/out" <<'EOF'; then ok; else ko "deepseek-v3 parameters: $(head -3 "$tmp/out")"; fi
import re, sys
text = open(sys.argv[1]).read()
m = re.search(r"model +([\d.]+) B parameters, ([\d.]+) B active per token \(([\d.]+) B without the input embedding\)", text)
assert m, text
total, active, matmul = (float(g) for g in m.groups())
assert abs(total - 671) <= 0.005 * 671, total
assert abs(matmul - 36.6) <= 0.005 * 36.6, matmul      # README_WEIGHTS.md: 36.6 B activated
assert abs(active - matmul - 129280 * 7168 / 1e9) < 0.011, (active, matmul)  # the embedding table
m = re.search(r"multi-token prediction: 1 module, ([\d.]+) B of its own .* ([\d.]+) B with the embedding", text)
assert m, text
own, whole = (float(g) for g in m.groups())
assert 11.5 <= own <= 11.7 and 13.4 <= whole <= 13.5, (own, whole)  # 685 B - 671 B = "14 B" in DeepSeek's count
EOF
else
  ko "memory of deepseek-v3's config.json failed: $(head -2 "$tmp/err")"
fi

# ------------------------------------------ a small step of each model
cases=(
  "deepseek-v3 --set model.layers=5 --set model.moe.experts=16 --set pp=2 --set last_stage_layers=1 --set tp_x=2 --set sequence_parallel=true --set ep=4"
  "llama4-maverick --set model.layers=4 --set model.moe.experts=8 --set model.seq_len=16384 --set pp=2 --set tp_x=2 --set ep=2"
  "gemma-3-27b --set model.layers=6 --set model.seq_len=8192 --set pp=2 --set tp_x=4 --set ep=1"
  "nemotron-4-340b --set model.layers=4 --set model.hidden=4608 --set model.ffn_hidden=18432 --set pp=2 --set tp_x=4 --set ep=1"
  "qwen3-235b-a22b --set model.layers=4 --set model.moe.experts=16 --set pp=2 --set tp_x=4 --set ep=2"
)
for c in "${cases[@]}"; do
  read -r -a args <<<"$c"
  name=${args[0]}
  if capture "$bin" run -q -m "${args[@]}" -p dgx-h100 --devices 16 -s deepseek-v3-h800 --set dp=0 \
    --set global_batch=16 --json "$tmp/$name.json"; then
    ok
    if python3 - "$tmp/$name.json" <<'EOF'; then ok; else ko "$name: result (see above)"; fi
import json, sys
r = json.load(open(sys.argv[1]))
assert r["step_time_s"] > 0 and 0 < r["mfu"] < 1, r["mfu"]
assert r["hardware_flops_per_step"] >= r["model_flops_per_step"] > 0
EOF
  else
    ko "$name: a small step failed: $(head -2 "$tmp/err")"
  fi
done

# -------------------------------- Gemma 3's window shortens a 32K step
gemma=(-m gemma-3-27b --set model.layers=6 -p dgx-h100 --devices 8 -s deepseek-v3-h800 --set pp=1 --set dp=1
       --set last_stage_layers=0 --set tp_x=8 --set ep=1 --set global_batch=1 --set recompute=full -q)
if "$bin" run "${gemma[@]}" --json "$tmp/window.json" 2>"$tmp/err" &&
  "$bin" run "${gemma[@]}" --set model.attention_window.tokens=32768 --json "$tmp/full.json" 2>>"$tmp/err"; then
  ok
  if python3 - "$tmp/window.json" "$tmp/full.json" <<'EOF'; then ok; else ko "gemma's window (see above)"; fi
import json, sys
w, full = (json.load(open(p)) for p in sys.argv[1:3])
# 5 of the 6 layers attend to 1024 - 1024^2/(2s) keys instead of s/2, over
# q + o = 2 * 32 * 128 wide heads, 3 passes of a 32768-token sequence
s, W = 32768, 1024
saved = 3 * s * 5 * 2 * (s / 2 - (W - W * W / (2 * s))) * (2 * 32 * 128)
got = full["model_flops_per_step"] - w["model_flops_per_step"]
assert abs(got - saved) <= 1e-9 * saved, (got, saved)
assert w["step_time_s"] < full["step_time_s"], (w["step_time_s"], full["step_time_s"])
EOF
else
  ko "gemma at 32K failed: $(head -2 "$tmp/err")"
fi

# ------------------------------ DeepSeek-V3, Megatron-Bridge's layout, 1,024 H100
# the shipped deepseek-v3-h100-mbridge: EP 64 folded over TP 2 x DP 64, the
# layout Et*4|(t*4|)*14,tmL on PP 8 x VPP 2; every stage fits, stage 7 holds
# 4 + 1 layers, and the optimizer of stage 1 is 12 bytes per parameter over
# 64 (dense) or 2 (experts) ranks (docs/strategies.md)
capture "$bin" memory -m deepseek-v3 -p dgx-h100 -s deepseek-v3-h100-mbridge --json "$tmp/ds.json"
if [ "$status" -eq 0 ] && python3 - "$tmp/out" "$tmp/ds.json" <<'EOF'; then ok; else ko "deepseek-v3-h100-mbridge memory: $(head -3 "$tmp/out") $(head -2 "$tmp/err")"; fi
import json, re, sys
text = open(sys.argv[1]).read()
rows = {int(m.group(1)): m.groups() for m in re.finditer(r"^ +(\d) +([\d.]+) +([\d.]+) +([\d.]+) +([\d.]+) +([\d.]+) +([\d.]+) +(\d+) +(\d+) +fits$", text, re.M)}
assert sorted(rows) == list(range(8)), text
assert rows[7][8] == "5" and all(rows[i][8] == "8" for i in range(7)), rows
peak = json.load(open(sys.argv[2]))["memory"]
assert peak["stage"] == 1 and peak["fits"], peak
assert peak["grads_bytes"] == 2 * peak["weights_bytes"], peak   # BF16 weights, FP32 grads
# experts: 8 layers x 4 local experts x 3 x 7168 x 2048; the rest dense
experts = 8 * 4 * 3 * 7168 * 2048
dense = peak["params"] - experts
assert abs(peak["optimizer_bytes"] - 12 * (experts / 2 + dense / 64)) < 1e-6 * peak["optimizer_bytes"], peak
EOF

summary
