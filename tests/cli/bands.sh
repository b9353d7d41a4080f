#!/usr/bin/env bash
# bands.sh - error bands: a bad provenance record is refused with one line
# naming the file and the key (exit 2); run prints and writes the band of
# its platform's record; compare holds its speed-up against the pair error.
. "$(dirname "$0")/../lib/cli.sh" "$@"

cal="$data/platforms/ascend-910b-calibrated.json"
printf '{"base": "%s", "provenance": {"derived_from": "ascend-910b"}}' "$cal" >"$tmp/not-calibrated.json"
expect 2 "not-calibrated.json: \.provenance\.derived_from: 'ascend-910b' is not calibrated" \
  -- memory -p "$tmp/not-calibrated.json"
printf '{"base": "ascend-910b", "provenance": {"derived_from": "dgx-h100-calibrated"}}' >"$tmp/not-base.json"
expect 2 "not-base.json: \.provenance\.derived_from: the file's efficiencies differ from those of 'dgx-h100-calibrated'" \
  -- memory -p "$tmp/not-base.json"
printf '{"base": "ascend-910b-calibrated", "provenance": {"derived_from": 3}}' >"$tmp/number.json"
expect 2 "number.json: \.provenance\.derived_from" -- memory -p "$tmp/number.json"
printf '{"base": "ascend-910b-calibrated", "provenance": {"derived_from": "ascend-910b-calibrated", "source": "x"}}' \
  >"$tmp/unknown.json"
expect 2 "unknown.json: \.provenance\.source: unknown key" -- memory -p "$tmp/unknown.json"
expect 2 "\.provenance\.derived_from: platform 'nowhere' not found" \
  -- memory -p ascend-a3-2048-derived --set platform.provenance.derived_from=nowhere

# the shipped derived preset keeps every efficiency of its relative
capture "$bin" memory -p ascend-a3-2048-derived -q
[ "$status" = 0 ] && ok || ko "ascend-a3-2048-derived loads: $(cat "$tmp/err")"

# run: the band of the platform's record, the ranges it gives, and its reason
small=(-m gpt-1.7b --devices 16 --set model.layers=4)
if capture "$bin" run "${small[@]}" -p dgx-h100-calibrated --json "$tmp/run.json"; then
  python3 - "$tmp/run.json" "$data/platforms/dgx-h100-calibrated.json" "$tmp/out" <<'PY' >"$tmp/py" 2>&1
import json, sys
d, rec, text = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))["calibration"], open(sys.argv[3]).read()
a = d["accuracy"]
assert a["kind"] == "calibrated" and a["relative_error"] == rec["held_out_error"], a
assert a["speedup_error"] == rec["pair_error_after"], a
lo, hi = a["step_time_s"]
assert abs(lo - d["step_time_s"] * (1 - a["relative_error"])) < 1e-12 and abs(hi - d["step_time_s"] * (1 + a["relative_error"])) < 1e-12
assert a["mfu"][1] > d["mfu"] > a["mfu"][0] and a["tokens_per_s"][1] > d["tokens_per_s"] > a["tokens_per_s"][0]
line = "band       +-%.1f %%: step time" % (100 * a["relative_error"])
assert line in text and a["reason"] in text, text
PY
  check "run: the band follows the calibration record: $(cat "$tmp/py")" test $? -eq 0
else
  ko "run on dgx-h100-calibrated failed: $(head -2 "$tmp/err")"
fi
capture "$bin" run "${small[@]}" -p ascend-a3-2048 --report "$tmp/run.html" -q
before=$(python3 -c 'import json,sys; print("%.1f" % (100 * json.load(open(sys.argv[1]))["calibration"]["rms_error_before"]))' \
  "$data/platforms/ascend-910b-calibrated.json")
grep -q "<tr><td>error band</td><td class=\"l\">+-$before % (step time .*): uncalibrated: rms error of uncalibrated efficiencies on the 10 cases of ascend-910b-calibrated" "$tmp/run.html" \
  && ok || ko "run --report: the error band row: $(grep -o '<tr><td>error band.\{0,120\}' "$tmp/run.html")"
capture "$bin" run "${small[@]}" -p dgx-h100-calibrated --set platform.efficiency.attention=0.9 --json - -q
python3 -c 'import json,sys; a=json.load(open(sys.argv[1]))["accuracy"]; assert a["kind"] == "uncalibrated" and "efficiencies changed" in a["reason"], a' "$tmp/out" \
  && ok || ko "run: changed efficiencies are uncalibrated: $(head -c 300 "$tmp/out")"

# compare: the speed-up held against twice the pair error
if capture "$bin" compare "${small[@]}" -p dgx-a100-calibrated --global-batch 32 --top 2 --jobs 1 --json "$tmp/cmp.json"; then
  python3 - "$tmp/cmp.json" "$tmp/out" <<'PY' >"$tmp/py" 2>&1
import json, re, sys
d, text = json.load(open(sys.argv[1])), open(sys.argv[2]).read()
assert d["speedup_error"] > 0 and d["speedup_exceeds_error"] == (d["speedup"] > 1 + 2 * d["speedup_error"]), d
verdict = re.search(r"Megatron-style one \(simulated\): (.*)", text).group(1)
word = "larger than" if d["speedup_exceeds_error"] else "within"
assert "; %s the model error on a speed-up (2 x %.1f %%, calibrated)" % (word, 100 * d["speedup_error"]) in verdict, verdict
PY
  check "compare: the speed-up against the model error: $(cat "$tmp/py")" test $? -eq 0
else
  ko "compare failed: $(head -2 "$tmp/err")"
fi

# validate: the band of every platform file, by the kind its records give
if capture "$bin" validate -q -j 1 --json "$tmp/val.json" "$data/results/published/simumax-b200-llama3-70b-tp2-pp1-dp4-l12-mbc8-cef.json"; then
  python3 - "$tmp/val.json" "$data/platforms" <<'PY' >"$tmp/py" 2>&1
import json, os, sys
d, folder = json.load(open(sys.argv[1])), sys.argv[2]
bands = {b["platform"]: b for b in d["bands"]}
files = sorted(f for f in os.listdir(folder) if f.endswith(".json"))
assert len(bands) == len(files), (len(bands), len(files))
for f in files:
    p = json.load(open(os.path.join(folder, f)))
    kind = "calibrated" if "calibration" in p else "derived" if "provenance" in p else "uncalibrated"
    assert bands[p.get("name", f[:-5])]["kind"] == kind, (f, bands[p.get("name", f[:-5])])
g = d["groups"][0]
assert g["step_times"] == 1 and g["rank_correlation"] is None and g["pair_error"] is None, g
PY
  check "validate: a band per platform, by its records: $(cat "$tmp/py")" test $? -eq 0
else
  ko "validate failed: $(head -2 "$tmp/err")"
fi

summary
