#!/usr/bin/env bash
# determinism.sh - the same inputs give byte-identical output: `run --json`
# (all but simulator.wall_s, a wall time), the Chrome trace and the HTML
# report (all but its wall-time figure), `memory --json`, and `sweep --json`
# across runs and across --jobs 1 and 2 (all but its "timing" object:
# wall times and the job count).  Runs are small (16 devices, 4 layers).
. "$(dirname "$0")/../lib/cli.sh" "$@"

# same A B WHAT: A and B are byte-identical (and not empty).
same() {
  if [ ! -s "$1" ]; then ko "$3: no output"
  elif cmp -s "$1" "$2"; then ok
  else ko "$3 differs between two runs:"; diff "$1" "$2" | head -n 10 | sed 's/^/    /'; fi
}

# Wall times are the only values allowed to differ.
strip_run() { sed -E 's/("wall_s":[[:space:]]*)[-+0-9.eE]+/\1WALL/' "$1" >"$1.cmp"; }
strip_sweep() { sed -E '/"timing":[[:space:]]*\{/,/\}/d' "$1" >"$1.cmp"; }
strip_html() { sed -E 's/[0-9.]+ s of wall time/WALL s of wall time/g' "$1" >"$1.cmp"; }

dense=(-m gpt-7.5b -p dgx-h100 --devices 16 --set model.layers=4 --set tp_x=2 --set pp=4 --set dp=2 --set vpp=1
       --set schedule=1f1b --set global_batch=16 -q)
# MoE with expert parallel, 2D TP, Ulysses context parallel and ZeRO-3
moe=(-m mixtral-8x22b -p ascend-a3-2048 --devices 32 --set model.layers=4 --set tp_x=2 --set tp_y=2
     --set cp_ulysses=2 --set pp=2 --set dp=0 --set ep=4 --set vpp=1 --set schedule=1f1b --set global_batch=8
     --set zero=3 --set recompute=full -q)

for i in 1 2; do
  "$bin" run "${dense[@]}" --json "$tmp/dense$i.json" --trace "$tmp/trace$i.json" --report "$tmp/report$i.html" \
    || ko "run (dense) exited $?"
  "$bin" run "${moe[@]}" --json "$tmp/moe$i.json" || ko "run (moe) exited $?"
  "$bin" memory "${dense[@]}" --json "$tmp/memory$i.json" || ko "memory exited $?"
  strip_run "$tmp/dense$i.json"
  strip_run "$tmp/moe$i.json"
  strip_html "$tmp/report$i.html"
done
same "$tmp/dense1.json.cmp" "$tmp/dense2.json.cmp" "run --json (dense)"
same "$tmp/moe1.json.cmp" "$tmp/moe2.json.cmp" "run --json (moe, ep, 2D TP, Ulysses)"
same "$tmp/trace1.json" "$tmp/trace2.json" "run --trace"
same "$tmp/report1.html.cmp" "$tmp/report2.html.cmp" "run --report"
same "$tmp/memory1.json" "$tmp/memory2.json" "memory --json"
# the wall time is the one key that was removed: the rest still has the result
grep -q '"step_time_s"' "$tmp/dense1.json.cmp" && grep -q '"wall_s":[[:space:]]*WALL' "$tmp/dense1.json.cmp" && ok ||
  ko "run --json lacks step_time_s or simulator.wall_s"

# sweep: --jobs 1, --jobs 2 twice
if "$bin" sweep --help >/dev/null 2>&1; then
  sweep=(-m gpt-1.7b -p dgx-a100 --devices 16 --set model.layers=4 --global-batch 32 --top 4 -q)
  "$bin" sweep "${sweep[@]}" --jobs 1 --json "$tmp/sweep-j1.json" || ko "sweep --jobs 1 exited $?"
  "$bin" sweep "${sweep[@]}" --jobs 2 --json "$tmp/sweep-j2a.json" || ko "sweep --jobs 2 exited $?"
  "$bin" sweep "${sweep[@]}" --jobs 2 --json "$tmp/sweep-j2b.json" || ko "sweep --jobs 2 (again) exited $?"
  for f in sweep-j1 sweep-j2a sweep-j2b; do strip_sweep "$tmp/$f.json"; done
  same "$tmp/sweep-j2a.json.cmp" "$tmp/sweep-j2b.json.cmp" "sweep --json --jobs 2"
  same "$tmp/sweep-j1.json.cmp" "$tmp/sweep-j2a.json.cmp" "sweep --json, --jobs 1 against --jobs 2,"
  # at least one candidate was simulated, so the comparison covers simulations
  grep -q '"simulated":[[:space:]]*true' "$tmp/sweep-j1.json" && ok || ko "sweep simulated no candidate"
fi

summary
