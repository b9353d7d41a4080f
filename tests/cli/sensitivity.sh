#!/usr/bin/env bash
# sensitivity.sh - heptasim sensitivity: a bad --step or --simulate is
# refused with one line (exit 2); on a small case the table, the JSON, the
# CSV and the HTML report agree on the figures and their order.
. "$(dirname "$0")/../lib/cli.sh" "$@"
small_inputs

for bad in 0 -5 91 abc 20x; do
  expect 2 "'--step' takes a per cent above 0 and at most 90" -- sensitivity "${base[@]}" --step "$bad"
done
expect 2 "'--simulate' expects a whole number in \[0, 64\]" -- sensitivity "${base[@]}" --simulate 65
expect 2 "does not apply to this command" -- run --step 20

if capture "$bin" sensitivity "${base[@]}" --step 25% --simulate 2 -j 2 --json "$tmp/s.json" --csv "$tmp/s.csv" \
  --report "$tmp/s.html"; then
  ok
  python3 - "$tmp/s.json" "$tmp/s.csv" "$tmp/out" <<'PY' >"$tmp/py" 2>&1 && ok || ko "documents: $(cat "$tmp/py")"
import csv, json, sys
d = json.load(open(sys.argv[1]))
rows = list(csv.DictReader(open(sys.argv[2])))
text = open(sys.argv[3]).read()
assert d["step"] == 0.25, d["step"]
keys = [f["key"] for f in d["figures"]]
assert keys == [r["key"] for r in rows], (keys, [r["key"] for r in rows])
swings = [f["swing"] for f in d["figures"]]
assert swings == sorted(swings, reverse=True), swings
assert "step_time_s" in d and d["step_time_s"] > 0
sim = [f for f in d["figures"] if f["low"].get("simulated") or f["high"].get("simulated")]
assert [f["key"] for f in sim] == keys[:2], [f["key"] for f in sim]
peak = next(f for f in d["figures"] if f["key"] == "device.peak_tflops")
assert abs(peak["low"]["value"] / peak["value"] - 0.75) < 1e-12, peak
assert peak["low"]["estimate_change"] > 0 > peak["high"]["estimate_change"], peak
for k in keys:
    assert k in text, k
PY
  grep -q "<svg" "$tmp/s.html" && grep -q "device.peak_tflops" "$tmp/s.html" && ok || ko "the report has no tornado"
else
  ko "sensitivity on the small case: $(cat "$tmp/err")"
fi
# --search: the best strategy on the platform, and at each simulated end
if capture "$bin" sensitivity "${base[@]}" --simulate 1 --search -j 2 --json "$tmp/r.json"; then
  python3 - "$tmp/r.json" <<'PY' >"$tmp/py" 2>&1 && ok || ko "--search: $(cat "$tmp/py")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["search"]["space"] == "megatron" and d["search"]["best"], d["search"]
top = d["figures"][0]
for e in ("low", "high"):
    if top[e]["applicable"]:
        b = top[e]["best"]
        assert b["changed"] == (b["strategy"] != d["search"]["best"]), b
assert all("best" not in f[e] for f in d["figures"][1:] for e in ("low", "high"))
PY
else
  ko "sensitivity --search: $(cat "$tmp/err")"
fi
summary
