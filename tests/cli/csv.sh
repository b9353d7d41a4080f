#!/bin/bash
# csv.sh - --csv of memory, sweep, compare and validate: the documented
# columns, one row per stage / candidate / comparison, the same figures as
# the JSON, and no partial file when the write fails.
. "$(dirname "$0")/../lib/cli.sh" "$@"

small=(-m llama3-8b -p dgx-h100 --devices 8 --set model.layers=4 --set global_batch=16)

# memory: one row per stage, the JSON's peak is the largest total
capture "$bin" memory "${small[@]}" --set pp=2 --csv "$tmp/mem.csv" --json "$tmp/mem.json"
python3 - "$tmp/mem.csv" "$tmp/mem.json" <<'PY' >"$tmp/py" 2>&1
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
d = json.load(open(sys.argv[2]))
assert list(rows[0].keys()) == ["stage", "layers", "weights_bytes", "grads_bytes", "optimizer_bytes",
    "activations_bytes", "buffers_bytes", "total_bytes", "capacity_bytes", "inflight_microbatches", "fits",
    "overrides"], rows[0].keys()
assert d["overrides"] and all(r["overrides"] == ", ".join(d["overrides"]) for r in rows), (d["overrides"], rows[0])
assert len(rows) == d["strategy"]["pp"] == 2, len(rows)
for r in rows:
    parts = sum(float(r[k]) for k in ("weights_bytes", "grads_bytes", "optimizer_bytes", "activations_bytes", "buffers_bytes"))
    assert abs(parts - float(r["total_bytes"])) <= 1e-9 * parts, r
assert max(float(r["total_bytes"]) for r in rows) == d["memory"]["peak_bytes"]
assert sum(int(r["layers"]) for r in rows) == 4
PY
rc=$?
check "memory --csv: a row per stage, parts add up, the JSON's peak: $(cat "$tmp/py")" test $rc -eq 0

# sweep: one row per candidate of the JSON (ranking, then estimated only)
capture "$bin" sweep "${small[@]}" --top 2 -q --csv "$tmp/sweep.csv" --json "$tmp/sweep.json"
python3 - "$tmp/sweep.csv" "$tmp/sweep.json" <<'PY' >"$tmp/py" 2>&1
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
d = json.load(open(sys.argv[2]))
want = d["ranking"] + d.get("estimated_only", [])
assert len(rows) == len(want) > 2, (len(rows), len(want))
for r, w in zip(rows, want):
    assert int(r["index"]) == w["index"] and r["strategy.description"] == w["strategy"]["description"]
    assert float(r["estimate_step_time_s"]) == w["estimate_step_time_s"]
    assert r["simulated"] == ("true" if w["simulated"] else "false")
    assert (r["step_time_s"] == "") == (not w["simulated"])
    if w["simulated"]: assert float(r["step_time_s"]) == w["step_time_s"]
    for k, v in w["strategy"].items():  # every key of the record's strategy has its column
        cell = r["strategy." + k]
        if isinstance(v, bool): assert cell == ("true" if v else "false"), (k, cell)
        elif isinstance(v, (int, float)): assert float(cell) == v, (k, cell)
        else: assert cell == v, (k, cell)
PY
rc=$?
check "sweep --csv: a row per candidate, figures of the JSON: $(cat "$tmp/py")" test $rc -eq 0
capture "$bin" compare "${small[@]}" --top 1 -q --csv -
check "compare --csv -: a header and rows on stdout" \
  python3 -c 'import csv,sys; r=list(csv.DictReader(open(sys.argv[1]))); assert r and "megatron_style" in r[0]' "$tmp/out"

# validate: one row per comparison
case=$data/results/published/korthikanti23-table4-22b-layer.json
capture "$bin" validate "$case" -q -j 1 --csv "$tmp/val.csv" --json "$tmp/val.json"
python3 - "$tmp/val.csv" "$tmp/val.json" <<'PY' >"$tmp/py" 2>&1
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
d = json.load(open(sys.argv[2]))
cmp = [(c["id"], r["name"], x) for c in d["cases"] for r in c["runs"] for x in r["compare"]]
assert len(rows) == len(cmp) > 0
for row, (cid, run, x) in zip(rows, cmp):
    assert row["case"] == cid and row["run"] == run and row["metric"] == x["metric"]
    assert float(row["measured"]) == x["measured"] and float(row["error"]) == x["error"]
PY
rc=$?
check "validate --csv: a row per comparison: $(cat "$tmp/py")" test $rc -eq 0

# no partial file; stdout shared is refused
expect 1 "nodir/m.csv: cannot write the CSV table" -- memory "${small[@]}" --csv "$tmp/nodir/m.csv"
if [ -w /dev/full ]; then
  expect 1 "/dev/full" "CSV table" -- memory "${small[@]}" --csv /dev/full
else
  skip "no /dev/full"
fi
expect 2 "'--json -' and '--csv -' cannot both go to stdout" -- memory "${small[@]}" --json - --csv -
expect 2 "option '--csv' does not apply to this command" -- run --csv x.csv

summary
