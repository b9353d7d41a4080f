#!/bin/bash
# labels.sh - labels and units: the summary's traffic in the binary units of
# the JSON's bytes, no "(1D)" at tp 1 nor overlap switches that do nothing;
# the sweep's table says "tie" exactly when two rows are within 0.1 % and
# puts the one with less memory first; no "(0 resumed from -, 0 failed)",
# plurals; the HTML report's head carries compare's speedup and the counts
# of the whole search, and its time axis no repeated label.
. "$(dirname "$0")/../lib/cli.sh" "$@"

small=(-m gpt-1.7b -p dgx-a100 --devices 16 --set model.layers=4)

# run: traffic in GiB/MiB/TiB, the JSON's bytes
if capture "$bin" run "${small[@]}" --set global_batch=32 --set dp=8 --set cp_ring=2 --json "$tmp/run.json"; then
  cp "$tmp/out" "$tmp/run.txt"
  python3 - "$tmp/run.txt" "$tmp/run.json" <<'PY' >"$tmp/py" 2>&1
import json, re, sys
text = open(sys.argv[1]).read()
d = json.load(open(sys.argv[2]))
assert not re.search(r"\d (kB|MB|GB|TB|PB)\b", text), "decimal units in the summary"
line = next(l for l in text.splitlines() if l.startswith("traffic, all ranks:"))
units = {"B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}
for dim, value, unit in re.findall(r"(\w+) ([\d.]+) (B|KiB|MiB|GiB|TiB)", line):
    want = d["dimensions"][dim]["bytes_total"] / units[unit]
    assert abs(float(value) - want) <= 0.05 + 1e-9 * want, (dim, value, unit, want)
strat = next(l for l in text.splitlines() if l.startswith("strategy "))
assert "tp 1 (1D" not in strat, strat
PY
  rc=$?
  check "run: traffic in binary units, the JSON's bytes: $(cat "$tmp/py")" test $rc -eq 0
  capture "$bin" memory "${small[@]}" --set global_batch=32 --set dp=16 --set overlap_cp_comm=true
  check "memory: no cp overlap without CP, no (1D) at tp 1: $(grep '^strategy' "$tmp/out")" \
    eval '! grep -Eq "^strategy.*(tp 1 \(1D|overlap [a-z+]*cp)" "$tmp/out"'
  # the backward-only TP overlap is named, and only where TP exists
  capture "$bin" memory "${small[@]}" --set global_batch=32 --set dp=8 --set tp_x=2 --set overlap_tp_backward=true
  check "memory: overlap_tp_backward named tp-bwd: $(grep '^strategy' "$tmp/out")" \
    grep -Eq '^strategy.*overlap [a-z+-]*tp-bwd' "$tmp/out"
  capture "$bin" memory "${small[@]}" --set global_batch=32 --set dp=16 --set overlap_tp_backward=true
  check "memory: no tp-bwd without TP: $(grep '^strategy' "$tmp/out")" eval '! grep -q "tp-bwd" "$tmp/out"'
else
  ko "run failed: $(head -2 "$tmp/err")"
fi

# the run report's strategy row: the summary's words, nothing that does nothing
if capture "$bin" run "${small[@]}" --set global_batch=32 --set dp=16 --report "$tmp/run.html"; then
  words=$(sed -n 's/^strategy   //p' "$tmp/out")
  python3 - "$tmp/run.html" "$words" <<'PY' >"$tmp/py" 2>&1
import html, re, sys
page, words = open(sys.argv[1]).read(), sys.argv[2]
row = re.search(r"<tr><td>strategy</td><td class=\"l\">(.*?)</td></tr>", page).group(1)
row = html.unescape(row)
assert row.endswith(": " + words), (row, words)
assert "ulysses 1" not in row and "tp 1 x 1" not in row and "(1D" not in row, row
PY
  rc=$?
  check "run --report: the strategy row in the summary's words: $(cat "$tmp/py")" test $rc -eq 0
else
  ko "run --report failed: $(head -2 "$tmp/err")"
fi

# sweep: ties and their order, the simulated line
if capture "$bin" sweep "${small[@]}" --global-batch 32 --top 8 --jobs 1 --json "$tmp/sweep.json"; then
  cp "$tmp/out" "$tmp/sweep.txt"
  check "sweep: no empty resumed/failed notes, one job: $(grep '^simulated' "$tmp/sweep.txt")" \
    grep -Eq '^simulated: 8 of the 8 best estimates in [0-9.]+ s with 1 job$' "$tmp/sweep.txt"
  python3 - "$tmp/sweep.txt" "$tmp/sweep.json" <<'PY' >"$tmp/py" 2>&1
import json, re, sys
text = open(sys.argv[1]).read().split("next best by estimate")[0]
d = json.load(open(sys.argv[2]))
rows = [r for r in d["ranking"] if "alike_of" not in r]
why = {}
for l in text.splitlines():
    m = re.match(r"\s+\d+\s+(\d+)\s+.*GiB  (.*)$", l)
    if m: why[int(m.group(1))] = m.group(2)
assert len(why) == len(rows), (len(why), len(rows))
ties = 0
for a, b in zip(rows, rows[1:]):
    ta, tb = a["step_time_s"], b["step_time_s"]
    tie = abs(ta - tb) <= max(1e-3 * min(ta, tb), 1e-6)
    w = why[a["index"]]
    assert w.startswith("tie") == tie, (a["index"], ta, tb, w)
    if tie:
        ties += 1
        ma, mb = a["memory"]["peak_bytes"], b["memory"]["peak_bytes"]
        assert ma <= mb, ("a tie with more memory first", a["index"], ma, mb)
        assert ("less memory" in w) == (mb - ma > 1e-3 * mb), w
    else:
        assert re.match(r"less \w+( comm)? \([\d.]+ (s|ms|us)\): ", w), w
assert ties > 0, "no tie in this sweep: the case checks nothing"
PY
  rc=$?
  check "sweep: 'tie' exactly within 0.1 %, less memory first: $(cat "$tmp/py")" test $rc -eq 0
else
  ko "sweep failed: $(head -2 "$tmp/err")"
fi

# compare --report: the head says what compare says
if capture "$bin" compare "${small[@]}" --global-batch 32 --top 3 --jobs 1 --report "$tmp/cmp.html" --json "$tmp/cmp.json"; then
  cp "$tmp/out" "$tmp/cmp.txt"
  python3 - "$tmp/cmp.txt" "$tmp/cmp.json" "$tmp/cmp.html" <<'PY' >"$tmp/py" 2>&1
import json, re, sys
text, d, html = open(sys.argv[1]).read(), json.load(open(sys.argv[2])), open(sys.argv[3]).read()
verdict = re.search(r"Megatron-style one \(simulated\): (.*)", text).group(1)
assert verdict.startswith("%.3fx" % d["speedup"]), (verdict, d["speedup"])
assert "(simulated): " + verdict + "." in html, verdict
k = d["counts"]
assert "{:,} strategies enumerated".format(k["enumerated"]) in html
assert "{:,} estimated, {} simulated".format(k["estimated"], k["simulated"]) in html
assert "faster" not in html
labels = re.findall(r'<text x="74.0" y="[\d.]+" text-anchor="end" font-size="11" fill="#444">([^<]*)</text>', html)
assert len(labels) >= 3 and len(set(labels)) == len(labels), labels
PY
  rc=$?
  check "compare --report: the speedup and counts of compare, distinct axis labels: $(cat "$tmp/py")" test $rc -eq 0
else
  ko "compare failed: $(head -2 "$tmp/err")"
fi

summary
