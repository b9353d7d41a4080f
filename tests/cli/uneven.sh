#!/usr/bin/env bash
# uneven.sh - pipelines whose first and last stage hold fewer layers
# (first_stage_layers / last_stage_layers): a small uneven step simulates
# with the model FLOPs of the even split; setting the keys to 0 changes
# nothing; the memory table gives each stage its own layer count (the
# shipped Llama 3 405B run: 7 + 14 x 8 + 7 on 16,384 H100s); the HTML
# report names the split; the search runs from an uneven base strategy.
. "$(dirname "$0")/../lib/cli.sh" "$@"

small=(-m llama3-8b -p dgx-h100 -s llama3-405b-h100-16k --devices 16 --set model.layers=10 --set tp_x=2
       --set dp=0 --set global_batch=16)
uneven=("${small[@]}" --set pp=4 --set first_stage_layers=1 --set last_stage_layers=3)
even=("${small[@]}" --set pp=2 --set first_stage_layers=0 --set last_stage_layers=0)

# ------------------------------------------------ a small uneven step
if "$bin" run -q "${uneven[@]}" --json "$tmp/uneven.json" 2>"$tmp/err" &&
  "$bin" run -q "${even[@]}" --json "$tmp/even.json" 2>>"$tmp/err"; then
  ok
  if python3 - "$tmp/uneven.json" "$tmp/even.json" <<'EOF'; then ok; else ko "uneven run: JSON (see above)"; fi
import json, sys
u, e = (json.load(open(p)) for p in sys.argv[1:3])
s = u["strategy"]
assert s["pp"] == 4 and s["first_stage_layers"] == 1 and s["last_stage_layers"] == 3, s
assert "first_stage_layers" not in e["strategy"], "an even split writes no first_stage_layers"
assert u["step_time_s"] > 0 and u["memory"]["fits"] is True
assert u["model_flops_per_step"] == e["model_flops_per_step"], (u["model_flops_per_step"], e["model_flops_per_step"])
assert u["hardware_flops_per_step"] == e["hardware_flops_per_step"]
EOF
else
  ko "uneven run failed: $(head -2 "$tmp/err")"
fi

# ----------------------------------- the keys at 0 are the even split
plain=(-m llama3-8b -p dgx-h100 -s gpt3-175b-a100 --devices 16 --set model.layers=8 --set pp=2 --set vpp=2
       --set tp_x=2 --set dp=4 --set global_batch=16 -q --json -)
strip='import json, sys; d = json.load(sys.stdin); d["simulator"].pop("wall_s", None); d.pop("strategy_name"); d.pop("overrides"); d["strategy"].pop("name"); print(json.dumps(d, sort_keys=True))'
a=$("$bin" run "${plain[@]}" 2>/dev/null | python3 -c "$strip")
b=$("$bin" run "${plain[@]}" --set first_stage_layers=0 --set last_stage_layers=0 2>/dev/null | python3 -c "$strip")
if [ -n "$a" ] && [ "$a" == "$b" ]; then ok; else ko "first/last_stage_layers=0 changed the result"; fi

# ------------------------------- memory per stage, Llama 3 405B at 16K
if "$bin" memory -m llama3-405b -p dgx-h100 -s llama3-405b-h100-16k --devices 16384 >"$tmp/mem" 2>"$tmp/err"; then
  ok
  # stage rows: the layers column is the second to last field before the verdict
  if awk '$1 ~ /^[0-9]+$/ && NF >= 10 { n[$1] = $9; sum += $9; rows++ }
          END { ok = rows == 16 && sum == 126 && n[0] == 7 && n[15] == 7;
                for (s = 1; s < 15; s++) ok = ok && n[s] == 8;
                exit ok ? 0 : 1 }' "$tmp/mem"; then ok; else ko "memory table layers column:"; cat "$tmp/mem"; fi
  if grep -q "fits" "$tmp/mem" && ! grep -q "does NOT fit" "$tmp/mem"; then ok; else ko "Llama 3 405B at 16K does not fit"; fi
else
  ko "memory of llama3-405b-h100-16k: $(head -2 "$tmp/err")"
fi

# --------------------------------------------------- the HTML report
if "$bin" run -q "${uneven[@]}" --report "$tmp/r.html" 2>"$tmp/err" && grep -q "layers per stage" "$tmp/r.html" &&
  grep -q "first stage 1, middle stages 3 each, last stage 3" "$tmp/r.html"; then ok; else
  ko "report of an uneven run does not give the layers per stage"
fi

# ------------------------------------------ search from an uneven base
# pp pinned by --set: every candidate keeps the split
if "$bin" sweep -q -m llama3-8b -p dgx-h100 --devices 16 --set model.layers=10 --set pp=4 --set first_stage_layers=1 \
  --set last_stage_layers=3 --global-batch 16 --top 1 -j 1 --json "$tmp/pinned.json" >/dev/null 2>"$tmp/err" &&
  python3 - "$tmp/pinned.json" <<'EOF'; then ok; else ko "sweep with an uneven, pinned pp: $(head -2 "$tmp/err")"; fi
import json, sys
d = json.load(open(sys.argv[1]))
rows = d["ranking"] + d["estimated_only"]
assert rows and d["counts"]["simulated"] >= 1, d["counts"]
for r in rows:
    s = r["strategy"]
    assert s["pp"] == 4 and s["first_stage_layers"] == 1 and s["last_stage_layers"] == 3, s
    assert "first1 last3" in s["description"], s["description"]
EOF
# from a strategy file, pp free: candidates of the file's pp keep its split, the others are even
cat >"$tmp/base.json" <<'EOF'
{"name": "base", "pp": 4, "first_stage_layers": 1, "last_stage_layers": 3, "global_batch": 16}
EOF
if "$bin" sweep -q -m llama3-8b -p dgx-h100 --devices 16 -s "$tmp/base.json" --set model.layers=10 --top 2 -j 1 \
  --json "$tmp/free.json" >/dev/null 2>"$tmp/err" &&
  python3 - "$tmp/free.json" <<'EOF'; then ok; else ko "sweep from an uneven base: $(head -2 "$tmp/err")"; fi
import json, sys
d = json.load(open(sys.argv[1]))
rows = d["ranking"] + d["estimated_only"]
assert rows and d["counts"]["estimated"] > 0, d["counts"]
for r in rows:
    s = r["strategy"]
    if s["pp"] == 4:
        assert s["first_stage_layers"] == 1 and s["last_stage_layers"] == 3, s
    else:
        assert "first_stage_layers" not in s and "last_stage_layers" not in s, s
EOF

summary
