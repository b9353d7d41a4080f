#!/usr/bin/env bash
# validate.sh - heptasim validate and calibrate on the two quick published
# cases (Korthikanti's one layer on 8 GPUs, Narayanan's 1.7B on 32): the
# table and JSON carry every comparison, the calibrated platform file loads
# and lowers the error when validated with it, leave-one-out reports each
# case, and bad command lines exit 2 with one line.  Then the 2024-2026
# cases: those not modelled are listed as skipped with their reason and
# counted per source, never simulated; every platform preset runs a tiny
# step; a calibrated platform keeps its base's physical figures; the SimuMax
# B200 cases meet their targets on hgx-b200-calibrated.
. "$(dirname "$0")/../lib/cli.sh" "$@"
pub=$data/results/published
cases="$pub/korthikanti23-table4-22b-layer.json $pub/narayanan21-table1-gpt-1.7b.json"

# 1. validate: table, per-source summary, JSON
"$bin" validate -q -j 2 $cases >"$tmp/table" 2>"$tmp/err"
check "validate exits 0" test $? -eq 0
check "the table lists the layer forward time" grep -Eq '^korthikanti23-table4-22b-layer +baseline_no_recompute +layer_forward_ms +7\.7 ' "$tmp/table"
check "the summary has one line per source" grep -Eq '^narayanan21-table1 +1 ' "$tmp/table"
"$bin" validate -q -j 2 --json "$tmp/v.json" $cases >/dev/null 2>&1
check "validate --json exits 0" test $? -eq 0
python3 - "$tmp/v.json" >"$tmp/py" 2>&1 <<'EOF'
import json, math, sys
d = json.load(open(sys.argv[1]))
rows = [c for case in d["cases"] for r in case["runs"] for c in r["compare"]]
assert len(rows) == 9, len(rows)
for c in rows:
    assert c["simulated"] > 0, c
    assert abs(c["error"] - (c["simulated"] - c["measured"]) / c["measured"]) < 1e-12, c
groups = {g["group"]: g for g in d["groups"]}
k = groups["korthikanti23-table4"]
errs = [abs(c["error"]) for case in d["cases"] if case["group"] == "korthikanti23-table4" for r in case["runs"] for c in r["compare"]]
assert abs(k["max_abs_error"] - max(errs)) < 1e-12 and abs(k["mean_abs_error"] - sum(errs) / len(errs)) < 1e-12
assert k["targets"]["max_abs_error"] == 0.05
n = [case for case in d["cases"] if case["group"] == "narayanan21-table1"][0]
assert n["runs"][0]["simulated_as"] == "full" and n["assumptions"]
EOF
check "validate JSON: every comparison simulated, errors and group statistics consistent" test $? -eq 0 || cat "$tmp/py"
# each uncalibrated preset against its nearest calibrated relative
check "the table gives dgx-h200 against dgx-h100-calibrated through dgx-h100" \
  grep -Eq '^dgx-h200 +dgx-h100-calibrated +dgx-h100 +[0-9.]+x +[0-9.]+x +1\.00x' "$tmp/table"
check "the table gives hgx-b200 against its calibrated file" grep -Eq '^hgx-b200 +hgx-b200-calibrated +hgx-b200 ' "$tmp/table"
python3 - "$tmp/v.json" "$data/platforms" >"$tmp/py" 2>&1 <<'EOF'
import json, os, sys
d = json.load(open(sys.argv[1]))
pdir = sys.argv[2]
def raw(name):
    return json.load(open(os.path.join(pdir, name + ".json")))
def resolved(name):  # a naive merge along the base chain
    f = raw(name)
    if "base" not in f:
        return f
    out = resolved(f["base"])
    def lay(dst, src):
        for k, v in src.items():
            if isinstance(v, dict) and isinstance(dst.get(k), dict):
                lay(dst[k], v)
            else:
                dst[k] = v
    lay(out, {k: v for k, v in f.items() if k not in ("base", "name", "description", "calibration")})
    return out
names = sorted(os.path.basename(x)[:-5] for x in os.listdir(pdir) if x.endswith(".json"))
uncal = [n for n in names if "calibration" not in raw(n)]
got = {x["preset"]: x for x in d["presets"]}
assert sorted(got) == sorted(uncal), (sorted(got), uncal)
b, c = resolved("hgx-b200")["efficiency"], resolved("hgx-b200-calibrated")["efficiency"]
r = got["hgx-b200"]["ratio"]
assert abs(r["attention"] - b["attention"] / c["attention"]) < 1e-12, r
assert abs(r["network"] - b["network"] / c["network"]) < 1e-12, r
assert abs(r["gemm"] - b["gemm"][-1][1] / c["gemm"][-1][1]) < 1e-12, r
h, hc = resolved("dgx-h200")["efficiency"], resolved("dgx-h100-calibrated")["efficiency"]
assert abs(got["dgx-h200"]["ratio"]["gemm_fp8"] - h["gemm"][-1][1] / hc["gemm_fp8"][-1][1]) < 1e-12, got["dgx-h200"]
assert got["dgx-a100"]["ratio"]["gemm_fp8"] is None  # no FP8 peak
assert got["ascend-a3-2048"]["calibrated_relative"] == "ascend-910b-calibrated" and got["ascend-a3-2048"]["chain_distance"] == 2
EOF
check "validate JSON: every uncalibrated preset with its ratios to its calibrated relative" test $? -eq 0 || cat "$tmp/py"

# 2. calibrate: attention efficiency only, with leave-one-out and a platform file
capture "$bin" calibrate -q -j 2 --fit attention,gemm_scale --loo --out "$tmp/cal.json" --json "$tmp/c.json" $cases
check "calibrate exits 0 (got $status)" test $status -eq 0
[ $status -eq 0 ] || sed 's/^/    /' "$tmp/err"
check "calibrate prints the fitted parameters with their uncertainty" grep -Eq '^attention +0\.55 +[0-9.e-]+ +[0-9.e-]+$' "$tmp/out"
check "calibrate prints the leave-one-out summary" grep -q "^leave-one-out" "$tmp/out"
python3 - "$tmp/c.json" >"$tmp/py" 2>&1 <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["rms_error_after"] < d["rms_error_before"], (d["rms_error_before"], d["rms_error_after"])
fitted = {p["name"]: p for p in d["parameters"] if p["fitted"]}
assert set(fitted) == {"attention", "gemm_scale"}, fitted
assert all(p["sigma"] is not None and p["sigma"] >= 0 for p in fitted.values())
loo = {x["id"]: x["held_out_max_error"] for x in d["leave_one_out"]}
# without the layer case one figure is left for two parameters: no held-out fit
assert loo["korthikanti23-table4-22b-layer"] is None and loo["narayanan21-table1-gpt-1.7b"] is not None, loo
assert d["platform"]["device"]["peak_tflops"] == 312
EOF
check "calibrate JSON: error lowered, parameters with sigma, leave-one-out, peak unchanged" test $? -eq 0 || cat "$tmp/py"
"$bin" memory -q -p "$tmp/cal.json" --devices 8 -m gpt-1.7b -s gpt3-175b-a100 --set dp=8 --set pp=1 --set tp_x=1 \
  --set vpp=1 --set schedule=1f1b --set global_batch=8 >/dev/null 2>"$tmp/err"
check "the calibrated platform file loads" test $? -eq 0
"$bin" validate -q -j 2 -p "$tmp/cal.json" --json "$tmp/v2.json" $cases >/dev/null 2>&1
check "validate with the calibrated platform exits 0" test $? -eq 0
python3 - "$tmp/v.json" "$tmp/v2.json" >"$tmp/py" 2>&1 <<'EOF'
import json, sys
def rms(p):
    d = json.load(open(p))
    e = [c["error"] for case in d["cases"] for r in case["runs"] for c in r["compare"]]
    return (sum(x * x for x in e) / len(e)) ** 0.5
a, b = rms(sys.argv[1]), rms(sys.argv[2])
assert b < a, (a, b)
EOF
check "validate -p calibrated platform has a lower rms error" test $? -eq 0 || cat "$tmp/py"

# 3. bad command lines
expect 2 "option '-m' does not apply to this command" -- validate -m gpt-1.7b
expect 2 "unknown parameter 'bogus'" -- calibrate --fit attention,bogus
expect 2 "no-such.json: cannot read the file" -- validate "$tmp/no-such.json"
expect 2 "loose cases are never calibration targets" -- calibrate "$pub/megatron-readme-h100-weak-1.7b.json"
expect 2 "option '--bless' does not apply to this command" -- validate --bless

# 4. cases heptasim does not model: listed, counted, never simulated; a
# case in fp8 runs with the fp8 key
fp8=$pub/nemo2407-h100-llama2-7b.json
mamba=$pub/dgxc2505-h100-nemotronh-56b-32.json
"$bin" validate -q -j 2 --json "$tmp/s.json" "$fp8" "$mamba" >/dev/null 2>"$tmp/err"
check "validate of a skipped and an fp8 case exits 0" test $? -eq 0
"$bin" validate -q -j 2 "$fp8" "$mamba" >"$tmp/table" 2>&1
check "a case in fp8 is simulated" grep -Eq '^nemo2407-h100-llama2-7b +step +step_time_s\*? ' "$tmp/table"
check "a case with Mamba-2 layers is listed as skipped with the feature" \
  grep -Eq '^dgxc2505-h100-nemotronh-56b-32 .* skipped, not modelled: Mamba-2' "$tmp/table"
check "the source line counts the skipped case" \
  grep -Eq '^dgxc-2505-h100-nemotronh \(loose\) +0 .* skipped \(1 case not modelled\)' "$tmp/table"
python3 - "$tmp/s.json" >"$tmp/py" 2>&1 <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
cases = {c["id"]: c for c in d["cases"]}
mamba = cases["dgxc2505-h100-nemotronh-56b-32"]
assert mamba["runs"] == [] and mamba["not_modelled"], mamba
nemo = cases["nemo2407-h100-llama2-7b"]
assert nemo["runs"][0]["strategy"]["fp8"] is True and "not_modelled" not in nemo, nemo
assert {g["group"]: g["skipped"] for g in d["groups"]} == {"nemo-2407-h100": 0, "dgxc-2505-h100-nemotronh": 1}, d["groups"]
assert {g["group"]: g["n"] for g in d["groups"]} == {"nemo-2407-h100": 1, "dgxc-2505-h100-nemotronh": 0}, d["groups"]
EOF
check "validate JSON: the skipped case has no runs and a reason, the fp8 case runs with fp8" test $? -eq 0 || cat "$tmp/py"
"$bin" calibrate -q -j 2 "$mamba" >"$tmp/out" 2>"$tmp/err"
check "calibrate on cases not modelled exits 2" test $? -eq 2
check "and says why" grep -q "nor cases not modelled" "$tmp/err"
# a text longer than a case can hold is refused, not cut
python3 - "$pub/nemo2407-h100-llama2-7b.json" "$tmp/long.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
d["assumptions"].append("x" * 5000)
json.dump(d, open(sys.argv[2], "w"))
EOF
"$bin" validate -q "$tmp/long.json" >"$tmp/out" 2>"$tmp/err"
check "validate of a case with a 5,000-character assumption exits 2" test $? -eq 2
check "in one line naming the file and the entry" \
  grep -Eq "^$tmp/long.json: \.assumptions\[[0-9]+\]: 5000 characters, more than the [0-9]+ it can hold" "$tmp/err"
check "and nothing else on stderr" test "$(wc -l <"$tmp/err")" -eq 1
python3 - "$pub/nemo2407-h100-llama2-7b.json" "$tmp/long-nm.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
d["not_modelled"] = ["y" * 1500, "z" * 1500]
json.dump(d, open(sys.argv[2], "w"))
EOF
"$bin" validate -q "$tmp/long-nm.json" >"$tmp/out" 2>"$tmp/err"
check "validate of a case whose not_modelled list is too long exits 2" test $? -eq 2
check "in one line naming the file and the key" \
  grep -Eq "^$tmp/long-nm.json: \.not_modelled: the features take more than the [0-9]+ characters" "$tmp/err"

# 5. every platform preset loads and runs a tiny step; calibration changes no physical figure
for p in "$data"/platforms/*.json; do
  name=$(basename "$p" .json)
  "$bin" run -q -p "$name" --devices 8 -m llama3-8b --set model.layers=2 --set model.seq_len=1024 --set dp=8 \
    --set pp=1 --set vpp=1 --set tp_x=1 --set schedule=1f1b --set global_batch=8 --set micro_batch=1 \
    --json "$tmp/run.json" >/dev/null 2>"$tmp/err"
  check "run -p $name --devices 8 exits 0" test $? -eq 0 || sed 's/^/    /' "$tmp/err"
  check "run -p $name gives a step time" \
    python3 -c 'import json, sys; assert json.load(open(sys.argv[1]))["step_time_s"] > 0' "$tmp/run.json"
done
# (test_config's shipped_bases_resolve compares the resolved figures)
for p in "$data"/platforms/*-calibrated.json "$tmp/cal.json"; do
  python3 - "$p" >"$tmp/py" 2>&1 <<'EOF'
import json, os, sys
a = json.load(open(sys.argv[1]))
name = os.path.basename(sys.argv[1])
assert a["base"] == name.replace("-calibrated.json", "") or (name == "cal.json" and a["base"] == "dgx-a100"), a["base"]
assert set(a) <= {"name", "description", "base", "efficiency", "calibration"}, set(a)
assert a["calibration"]["cases"] > 0 and a["calibration"]["fitted"], a["calibration"]
EOF
  rc=$?
  check "$(basename "$p") names its base and holds its efficiencies and fit record only" test $rc -eq 0 || cat "$tmp/py"
done

# 6. the shipped B200 calibration still meets its targets; when a change of
# the cost model moves it, refit with scripts/calibrate-all.sh hgx-b200
"$bin" validate -q -j 2 -p "$data/platforms/hgx-b200-calibrated.json" "$pub"/simumax-b200-*.json >"$tmp/table" 2>&1
check "simumax-b200 on hgx-b200-calibrated meets its targets (refit: scripts/calibrate-all.sh hgx-b200)" \
  grep -Eq '^simumax-b200 +9 .* met' "$tmp/table" || grep -A1 '^simumax-b200 ' "$tmp/table"
# the quick ones of the other shipped fits: NeMo 24.07's FP8 H100 cases,
# Korthikanti's layer (the Narayanan steps and MindSpeed take minutes)
"$bin" validate -q -j 2 -p "$data/platforms/dgx-h100-calibrated.json" "$pub"/nemo2407-h100-*.json >"$tmp/table" 2>&1
check "nemo-2407-h100 on dgx-h100-calibrated meets its targets (refit: scripts/calibrate-all.sh dgx-h100)" \
  grep -Eq '^nemo-2407-h100 .* met' "$tmp/table" || grep -A1 '^nemo-2407-h100 ' "$tmp/table"
"$bin" validate -q -j 2 -p "$data/platforms/dgx-a100-calibrated.json" "$pub"/korthikanti23-*.json >"$tmp/table" 2>&1
check "korthikanti23 on dgx-a100-calibrated meets its targets (refit: scripts/calibrate-all.sh dgx-a100)" \
  grep -Eq '^korthikanti23-table4 +8 .* met' "$tmp/table" || grep -A1 '^korthikanti23-table4 ' "$tmp/table"

# the mixture-of-experts cases of a source apart from its dense ones: the
# MoE summary holds the MoE case's comparison alone, the source's all of them
moe_case="$pub/simumax-b200-deepseekv3-l4-tp1-ep8-pp1-dp8-mbc8-cef.json"
dense_case="$pub/simumax-b200-llama3-70b-l12-tp8-pp1-dp1-mbc8-cef.json"
"$bin" validate -j 2 "$moe_case" "$dense_case" --json "$tmp/moe.json" >"$tmp/moe.txt" 2>/dev/null
python3 - "$tmp/moe.json" <<'P' && ok || ko "validate: MoE summary"
import json, sys
d = json.load(open(sys.argv[1]))
errs = {c["id"]: [abs(x["error"]) for r in c["runs"] for x in r["compare"]] for c in d["cases"]}
moe = [e for i, v in errs.items() if "deepseekv3" in i for e in v]
every = [e for v in errs.values() for e in v]
(m,), (g,) = d["moe_groups"], d["groups"]
assert m["group"] == g["group"] == "simumax-b200"
assert m["n"] == len(moe) == 1 and g["n"] == len(every) == 2
assert abs(m["mean_abs_error"] - sum(moe) / len(moe)) < 1e-12
assert abs(g["mean_abs_error"] - sum(every) / len(every)) < 1e-12
P
check "validate prints the MoE summary" grep -q '^mixture-of-experts cases alone:' "$tmp/moe.txt"

summary
