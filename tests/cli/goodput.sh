#!/usr/bin/env bash
# goodput.sh - `heptasim goodput`: the same seed gives a byte-identical
# JSON document (the slow step simulated too), another seed another; a
# reliability file with a misspelt key, a platform without storage and a
# bad --interval are refused with one line and exit status 2.  Small runs
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

summary
