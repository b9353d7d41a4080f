#!/usr/bin/env bash
# bench.sh - the benchmark script's table is well formed: tests/bench/run.sh
# --smoke (one tiny case, well under a second of simulation) prints a
# machine line, a Markdown header of eleven columns, its separator and one
# row of eleven cells whose devices, actors, mode and step time are what the
# run's JSON says; --list names every case of the issue table and the
# 65,536-device ones; a bad option is refused.  No figure of time is
# checked (tests never assert on wall-clock time).
. "$(dirname "$0")/../lib/cli.sh" "$@"
script=$(dirname "$0")/../bench/run.sh

if ! command -v python3 >/dev/null 2>&1; then
  skip "tests/bench/run.sh needs python3"
  summary
fi
capture bash "$script" --smoke "$bin"
check "run.sh --smoke exits 0" test "$status" -eq 0
check "run.sh --smoke: a machine line first" grep -Eq '^Machine: [0-9]+ cores' <(head -n 1 "$tmp/out")
cells() { awk -F'|' '{ print NF - 2 }'; }
header=$(grep -m1 '^| case |' "$tmp/out")
check "run.sh --smoke: the header has eleven columns" test "$(cells <<<"$header")" -eq 11
check "run.sh --smoke: the separator follows the header" \
  grep -Eqx '\|(---\|){11}' <(grep -A1 '^| case |' "$tmp/out" | tail -n 1)
rows=$(grep '^| ' "$tmp/out" | grep -v '^| case |')
check "run.sh --smoke: one row" test "$(grep -c . <<<"$rows")" -eq 1
check "run.sh --smoke: the row has eleven cells" test "$(cells <<<"$rows")" -eq 11
IFS='|' read -r _ name devices actors mode wall cpu rss events flows rate step _ <<<"$rows"
check "run.sh --smoke: 8 devices" test "$(echo $devices)" = 8
check "run.sh --smoke: actors a count" grep -Eq '^ [0-9]+ $' <<<"$actors"
check "run.sh --smoke: exact mode" test "$(echo $mode)" = exact
check "run.sh --smoke: wall, CPU, RSS, events, flows and rate are figures" \
  grep -Eq '^ [0-9.,]+ s \| [0-9.,]+ s \| [0-9.,]+ MiB \| [0-9,]+ \| [0-9,]+ \| [0-9.,]+ M/s $' <<<"$wall|$cpu|$rss|$events|$flows|$rate"
# the same case run here: the row's actors and step time are the JSON's
args=$(bash "$script" --list | grep -A1 '^smoke ' | tail -n 1 | sed 's/^  heptasim //')
read -r -a argv <<<"$args"
"$bin" "${argv[@]}" -q --json "$tmp/smoke.json" || ko "the smoke case exited $?"
want=$(python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(d["simulator"]["ranks_simulated"], "%.4f s" % d["step_time_s"])' "$tmp/smoke.json")
check "run.sh --smoke: actors and step time as the JSON says ($want)" test "$(echo $actors) $(echo $step)" = "$want"
capture bash "$script" --list
for c in default llama3-16k mixtral-7d sweep nvl72-tp16 deepseek-v3 llama3-65k deepseek-v3-65k llama3-131k pod-llama3-1k \
  pod-llama3-16k pod-deepseek-1k pod-deepseek-2k pod3-llama3-2k pod3-llama3-16k straggler-node-16k straggler-gpu-16k; do
  check "run.sh --list names $c" grep -q "^$c " "$tmp/out"
done
capture bash "$script" --bogus "$bin"
check "run.sh refuses an unknown option (exit 2)" test "$status" -eq 2
capture bash "$script" --timeout x "$bin"
check "run.sh refuses a timeout that is not whole seconds (exit 2)" test "$status" -eq 2
summary
