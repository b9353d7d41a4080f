#!/usr/bin/env bash
# goodput.sh - `heptasim goodput`: the same seed gives a byte-identical
# JSON document (the slow step simulated too), another seed another; a
# reliability file with a misspelt key, a platform without storage and a
# bad --interval are refused with one line and exit status 2.  --csv has
# one row per trial agreeing with the JSON, --report a progress plot (the
# same bytes twice); run --goodput holds goodput's document under
# "goodput"; compare --objective goodput ranks the simulated candidates by
# days to the budget; misused goodput options are refused.  Small runs
# (16 devices, 4 layers).
. "$(dirname "$0")/../lib/cli.sh" "$@"

small=(-m gpt-7.5b -p dgx-h100 --devices 16 --set model.layers=4 --set tp_x=2 --set pp=4 --set dp=2 --set vpp=1
       --set schedule=1f1b --set global_batch=16 -q --days 5 --seeds 20 -j 2
       --set 'platform.storage={"node_GBps": 25, "aggregate_GBps": 100}')
# every run has a slow GPU, so its step is simulated
cat >"$tmp/rel.json" <<'J'
{"components": [{"name": "gpu", "failures_per_1000_days": 5, "source": "test"}],
 "recovery": {"detection_min": 2, "restart_min": 5, "source": "test"},
 "stragglers": [{"kind": "device", "per_1000": 1000, "speed": 0.8, "source": "test"}]}
J
for i in 1 2; do
  "$bin" goodput "${small[@]}" -r "$tmp/rel.json" --json "$tmp/g$i.json" || ko "goodput exited $?"
done
"$bin" goodput "${small[@]}" -r "$tmp/rel.json" --seed 9 --json "$tmp/g3.json" || ko "goodput --seed 9 exited $?"
if [ -s "$tmp/g1.json" ] && cmp -s "$tmp/g1.json" "$tmp/g2.json"; then ok; else ko "goodput --json differs between runs"; fi
cmp -s "$tmp/g1.json" "$tmp/g3.json" && ko "another seed gave the same document" || ok
# the slow step comes from the simulation: longer than the uniform one
python3 - "$tmp/g1.json" <<'P' && ok || ko "the straggler step is not longer than the step"
import json, sys
d = json.load(open(sys.argv[1]))
s = d["stragglers"][0]
sys.exit(0 if s["simulated"] and s["step_time_s"] > d["step_time_s"] and d["lost_s"]["stragglers"] > 0 else 1)
P

sed 's/"components"/"componets"/' "$tmp/rel.json" >"$tmp/bad.json"
"$bin" goodput "${small[@]}" -r "$tmp/bad.json" 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q "bad.json: .componets: unknown key (did you mean 'components'?)" "$tmp/err" && \
  [ "$(wc -l <"$tmp/err")" -eq 1 ] && ok || ko "misspelt reliability key: exit $rc, $(cat "$tmp/err")"
"$bin" goodput -m gpt-7.5b -p dgx-h100 --devices 16 --set model.layers=4 --set tp_x=2 --set pp=4 --set dp=2 \
  --set vpp=1 --set schedule=1f1b --set global_batch=16 -q 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q ".storage: missing" "$tmp/err" && ok || ko "platform without storage: exit $rc, $(cat "$tmp/err")"
"$bin" goodput "${small[@]}" --interval -3 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q "'--interval -3': expected a number above 0" "$tmp/err" && ok || ko "bad --interval: exit $rc"

# CSV: one row per trial, the columns of docs/outputs.md, its mean ETTR the JSON's
"$bin" goodput "${small[@]}" -r "$tmp/rel.json" --csv "$tmp/g.csv" --report "$tmp/g1.html" || ko "goodput --csv exited $?"
"$bin" goodput "${small[@]}" -r "$tmp/rel.json" --report "$tmp/g2.html" || ko "goodput --report exited $?"
python3 - "$tmp/g.csv" "$tmp/g1.json" <<'P' && ok || ko "goodput --csv does not agree with --json"
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
d = json.load(open(sys.argv[2]))
assert len(rows) == d["seeds"] == 20, len(rows)
assert [int(r["seed"]) for r in rows] == list(range(1, 21))
for k in ("days", "ettr", "goodput_tokens_per_s", "interruptions", "lost_s.restarts", "lost_s.stragglers"):
    assert k in rows[0], k
mean = sum(float(r["ettr"]) for r in rows) / len(rows)
assert abs(mean - d["ettr"]["mean"]) < 1e-12, (mean, d["ettr"]["mean"])
P
if cmp -s "$tmp/g1.html" "$tmp/g2.html" && grep -q '<polyline' "$tmp/g1.html" && grep -q 'id="progress"' "$tmp/g1.html"
then ok; else ko "goodput --report: no progress plot, or not the same bytes twice"; fi

# run --goodput: the run's document with goodput's under "goodput", and the HTML section
"$bin" run "${small[@]}" -r "$tmp/rel.json" --goodput --json "$tmp/run.json" --report "$tmp/run.html" \
  || ko "run --goodput exited $?"
python3 - "$tmp/run.json" "$tmp/g1.json" <<'P' && ok || ko "run --goodput's goodput key is not goodput's document"
import json, sys
r = json.load(open(sys.argv[1])); g = json.load(open(sys.argv[2]))
assert r["goodput"] == g
assert r["goodput"]["step_time_s"] == r["step_time_s"]
P
grep -q 'id="goodput"' "$tmp/run.html" && grep -q '<polyline' "$tmp/run.html" && ok || ko "run --goodput --report: no goodput section"

# compare --objective goodput: the simulated candidates ranked by days, both bests among them
cmp_in=(-m gpt-7.5b -p dgx-h100 --devices 16 --set model.layers=4 --set global_batch=16 --top 2 -j 2
        --set 'platform.storage={"node_GBps": 2, "aggregate_GBps": 10}')
"$bin" compare "${cmp_in[@]}" --objective goodput -r "$tmp/rel.json" --tokens 2e10 --seeds 10 --json "$tmp/c.json" \
  --csv "$tmp/c.csv" >"$tmp/c.txt" || ko "compare --objective goodput exited $?"
grep -q "ranked by goodput: the [0-9]* simulated candidates (the top 2 by estimate of each space" "$tmp/c.txt" && ok \
  || ko "compare --objective goodput: no ranking in the text"
python3 - "$tmp/c.json" "$tmp/c.csv" <<'P' && ok || ko "compare --objective goodput: JSON or CSV wrong"
import csv, json, sys
d = json.load(open(sys.argv[1])); g = d["goodput"]
assert d["objective"] == "goodput" and g["objective"] == "goodput"
days = [r["days"] for r in g["ranking"]]
assert len(days) >= 2 and days == sorted(days), days
assert g["best"] == g["ranking"][0]["id"]
assert g["megatron"] == next(r["id"] for r in g["ranking"] if r["megatron_style"])
assert g["stragglers_simulated"] is True
rows = [r for r in csv.DictReader(open(sys.argv[2])) if r["simulated"] == "true"]
assert rows and all(r["goodput.days"] for r in rows), rows[:1]
P

# the default objective stays the step time: no goodput in the document
"$bin" compare "${cmp_in[@]}" -q --json "$tmp/c0.json" || ko "compare exited $?"
python3 - "$tmp/c0.json" "$tmp/c.json" <<'P' && ok || ko "compare without --objective is not ranked by step time"
import json, sys
d = json.load(open(sys.argv[1])); g = json.load(open(sys.argv[2]))
assert d["objective"] == "step" and "goodput" not in d
# the same simulations: the goodput ranking holds the step times the step ranking simulated
steps = {r["strategy"]["name"]: r["step_time_s"] for r in d["ranking"] if r.get("simulated")}
same = [r for r in g["goodput"]["ranking"] if r["id"] in steps]
assert same and all(abs(steps[r["id"]] - r["step_time_s"]) < 1e-12 for r in same), (steps, same)
P

# --symmetry dp: the steps simulated approximately (one replica, each actor at
# its slowest mate's speed), said in the text and the JSON; within 1 % of the
# exact slow step here; the exact default says nothing of it
loud=()
for x in "${small[@]}"; do [ "$x" = -q ] || loud+=("$x"); done
capture "$bin" goodput "${loud[@]}" -r "$tmp/rel.json" --symmetry dp --json "$tmp/gdp.json"
check "goodput --symmetry dp succeeds" test "$status" -eq 0
check "goodput --symmetry dp says APPROXIMATE" grep -q "APPROXIMATE: the steps were simulated with --symmetry dp" "$tmp/out"
python3 - "$tmp/g1.json" "$tmp/gdp.json" <<'P' && ok || ko "--symmetry dp: approximate flags or slow step"
import json, sys
exact, dp = (json.load(open(f)) for f in sys.argv[1:3])
assert exact["approximate"] is False and dp["approximate"] is True
e, d = exact["stragglers"][0]["step_time_s"], dp["stragglers"][0]["step_time_s"]
assert abs(d - e) / e <= 0.01, (e, d)
P

expect 2 "'--objective' takes 'step' or 'goodput', got 'goodptu' \(did you mean 'goodput'\?\)" -- \
  compare "${cmp_in[@]}" --objective goodptu
expect 2 "heptasim compare: '--tokens' needs '--objective goodput'" -- compare "${cmp_in[@]}" --tokens 1e12
expect 2 "heptasim run: '--reliability' needs '--goodput'" -- run "${small[@]}" -r "$tmp/rel.json"
expect 2 "\.storage: missing" -- compare -m gpt-7.5b -p dgx-h100 --devices 16 --set model.layers=4 \
  --set global_batch=16 --objective goodput
expect 2 "'--interval 0': expected a number above 0" -- run "${small[@]}" --goodput --interval 0

summary
