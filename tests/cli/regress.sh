#!/usr/bin/env bash
# regress.sh - the golden scenarios of results/golden/ still give their
# stored metrics (heptasim regress), and regress itself notices a moved
# metric and a scenario never blessed, refuses metric names the run does not
# give, and --bless stores what the simulator gives now.
. "$(dirname "$0")/../lib/cli.sh" "$@"
golden=$data/results/golden

# 1. the stored suite
capture "$bin" regress -j 2
if [ $status -ne 0 ]; then sed 's/^/    /' "$tmp/out" "$tmp/err"; fi
check "heptasim regress: the golden scenarios did not move (status $status)" test $status -eq 0
check "regress reports the number of stored metrics" grep -Eq '^[0-9]+ scenarios, [0-9]+ stored metrics: 0 moved' "$tmp/out"

# 2. a stored metric moved by 10%: exit 1, the metric and its change printed
one=$(ls "$golden"/*.json | head -n 1)
python3 - "$one" "$tmp/moved.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
d["metrics"]["step_time_s"] *= 1.1
json.dump(d, open(sys.argv[2], "w"), indent=1)
EOF
capture "$bin" regress "$tmp/moved.json"
check "a moved step time exits 1 (got $status)" test $status -eq 1
check "the moved metric is named with its change" grep -Eq 'step_time_s +[0-9.e+-]+ +[0-9.e+-]+ +-9\.09?[0-9]*%' "$tmp/out"
check "stderr says how to re-bless" grep -q "regress --bless" "$tmp/err"

# 3. --bless stores the current metrics; then nothing moves
capture "$bin" regress --bless -q "$tmp/moved.json"
check "--bless succeeds" test $? -eq 0
capture "$bin" regress "$tmp/moved.json"
check "after --bless nothing moves" test $? -eq 0

# 4. a stored metric or a tolerance the run does not give is a mistake in
# the file (exit 2 naming it), never a moved metric; so is a value that is
# not a number
python3 - "$tmp/moved.json" "$tmp/missing.json" "$tmp/fast.json" "$tmp/badtol.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
d["metrics"]["no_such_metric"] = 1.0
json.dump(d, open(sys.argv[2], "w"), indent=1)
d = json.load(open(sys.argv[1]))
d["metrics"]["step_time_s"] = "fast"
json.dump(d, open(sys.argv[3], "w"), indent=1)
d = json.load(open(sys.argv[1]))
d["tolerance"] = {"fast": 0.1}
json.dump(d, open(sys.argv[4], "w"), indent=1)
EOF
expect 2 "missing.json: \.metrics\.no_such_metric: not a metric of a run" -- regress "$tmp/missing.json"
expect 2 'fast.json: \.metrics\.step_time_s: expected a number or true/false, got "fast"' -- regress "$tmp/fast.json"
expect 2 "badtol.json: \.tolerance\.fast: not a metric of a run" -- regress "$tmp/badtol.json"

# 5. a tolerance lets a small move pass
python3 - "$tmp/moved.json" "$tmp/tol.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
d["metrics"]["step_time_s"] *= 1.01
d["tolerance"] = {"step_time_s": 0.02}
json.dump(d, open(sys.argv[2], "w"), indent=1)
EOF
capture "$bin" regress "$tmp/tol.json"
check "a 1% move within a 2% tolerance passes" test $? -eq 0

# 6. a scenario without stored metrics, and a broken one
python3 - "$tmp/moved.json" "$tmp/fresh.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
del d["metrics"]
json.dump(d, open(sys.argv[2], "w"), indent=1)
EOF
capture "$bin" regress "$tmp/fresh.json"
check "a scenario never blessed exits 1" test $? -eq 1
check "it says how to store its metrics" grep -q "regress --bless" "$tmp/out"
printf '{"model": "gpt-1.7b", "platform": "dgx-a100", "strategy": "gpt3-175b-a100", "colour": 1}' >"$tmp/bad.json"
capture "$bin" regress "$tmp/bad.json"
check "an unknown key exits 2" test $? -eq 2
check "the error names the file and the key" grep -q "bad.json: .colour: unknown key" "$tmp/err"

summary
