#!/usr/bin/env bash
# symmetry.sh - the ranks a run simulates (--symmetry): lockstep TP groups
# (the default) give the step of a run with one actor per rank; one
# data-parallel replica for all (dp) is flagged as approximate in the
# summary and the JSON, and stays close to the full run on cases where the
# replicas are alike, including an oversubscribed spine, experts spanning
# replicas or crossing node uplinks and data parallel inside context
# parallel in the rank order; a strategy whose groups tie the replicas together
# falls back to simulating them all, and says so.
. "$(dirname "$0")/../lib/cli.sh" "$@"

dense=(-m gpt-7.5b -p dgx-h100 -s gpt3-175b-a100 --devices 32 --set model.layers=4 --set tp_x=2 --set pp=4
       --set dp=4 --set vpp=1 --set schedule=1f1b --set global_batch=16 --set micro_batch=1)
zero3=(-m llama3-8b -p dgx-h100 -s gpt3-175b-a100 --devices 64 --set model.layers=4 --set tp_x=4 --set pp=1
       --set dp=16 --set vpp=1 --set schedule=1f1b --set global_batch=32 --set zero=3
       --set platform.network.oversubscription=4)
moe=(-m mixtral-8x22b -p ascend-a3-2048 -s mixtral-8x22b-a3-megatron --devices 32 --set model.layers=4
     --set model.seq_len=4096 --set tp_x=4 --set pp=2 --set dp=4 --set ep=2 --set etp=1 --set vpp=1
     --set schedule=1f1b --set global_batch=16)

# run NAME MODE ARGS...: simulate into $tmp/NAME-MODE.{json,out,err}
run() {
  local name=$1 mode=$2
  shift 2
  "$bin" run "$@" --symmetry "$mode" --json "$tmp/$name-$mode.json" >"$tmp/$name-$mode.out" 2>"$tmp/$name-$mode.err" ||
    ko "$name --symmetry $mode failed: $(head -1 "$tmp/$name-$mode.err")"
}

# check_doc NAME PYTHON-EXPR: evaluate with n, t, d (none, tp, dp JSON documents)
check_doc() {
  python3 - "$tmp/$1" "$2" <<'P' && ok || ko "$1: $2"
import json, sys
base, expr = sys.argv[1], sys.argv[2]
n, t, d = (json.load(open(f"{base}-{m}.json")) for m in ("none", "tp", "dp"))
step = lambda doc: doc["step_time_s"]
sim = lambda doc: doc["simulator"]
rel = lambda a, b: abs(a - b) / b
sys.exit(0 if eval(expr) else 1)
P
}

# context parallel with data parallel inside it in the rank order: the
# simulated ranks are every (dp)-th member of a DP group, not its first ones
cpdp=(-m gpt-7.5b -p ascend-a3-2048 -s gpt-310b-a3-megatron --devices 64 --set model.layers=4 --set model.seq_len=8192
      --set tp_x=2 --set cp_ring=2 --set cp_ulysses=2 --set pp=2 --set dp=4 --set vpp=1 --set schedule=1f1b
      --set global_batch=16 --set order=tp_x-tp_y-ep-dp-cp_ulysses-cp_ring-pp)

# experts across nodes of 8, two TP groups per node: the expert all-to-all
# crosses the node uplinks beside the data-parallel rings (a share of an
# uplink that never limits the full step once throttled it, 9 % slower)
moenodes=(-m mixtral-8x22b -p dgx-h100 -s mixtral-8x22b-a3-megatron --devices 64 --set model.layers=4
          --set model.seq_len=4096 --set tp_x=4 --set pp=1 --set dp=8 --set cp_ring=2 --set ep=8 --set etp=4
          --set vpp=1 --set schedule=1f1b --set recompute=none --set platform.device.hbm_GiB=400
          --set global_batch=64 --set micro_batch=2)

for case in dense zero3 moe cpdp moenodes; do
  declare -n args=$case
  for mode in none tp dp; do run "$case" "$mode" "${args[@]}"; done
  check_doc "$case" 'sim(n)["ranks_simulated"] == n["devices"] and sim(n)["lockstep"] == 1 and not sim(n)["approximate"]'
  check_doc "$case" 'sim(t)["lockstep"] > 1 and sim(t)["replicas"] == 1 and not sim(t)["approximate"]'
  check_doc "$case" 'rel(step(t), step(n)) <= 1e-9'
  check_doc "$case" 'sim(d)["replicas"] > 1 and sim(d)["approximate"]'
  check_doc "$case" 'sim(d)["ranks_simulated"] * sim(d)["lockstep"] * sim(d)["replicas"] == d["devices"]'
  check_doc "$case" 'rel(step(d), step(n)) <= 0.01'
  # every rank's traffic is accounted, simulated or not
  check_doc "$case" 'all(rel(d["dimensions"][k]["bytes_total"], n["dimensions"][k]["bytes_total"]) <= 1e-9
                     for k in n["dimensions"] if n["dimensions"][k]["bytes_total"] > 0)'
  if grep -q '^APPROXIMATE: one data-parallel replica simulated for' "$tmp/$case-dp.out" &&
    ! grep -q APPROXIMATE "$tmp/$case-tp.out" "$tmp/$case-none.out"; then ok; else ko "$case: APPROXIMATE line"; fi
done

# experts over the whole data-parallel group tie the replicas together (etp
# = tp: the expert numbering puts ep above the TP digits, over the dp ranks)
tied=(-m mixtral-8x22b -p ascend-a3-2048 -s mixtral-8x22b-a3-megatron --devices 16 --set model.layers=4
      --set tp_x=4 --set pp=1 --set dp=4 --set ep=4 --set etp=4 --set vpp=1 --set schedule=1f1b --set global_batch=8)
run tied dp "${tied[@]}"
if grep -q "every replica was simulated" "$tmp/tied-dp.err" &&
  python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["simulator"]; sys.exit(0 if s["replicas"] == 1 and not s["approximate"] else 1)' "$tmp/tied-dp.json"; then
  ok
else
  ko "tied replicas: no fallback note or replicas != 1"
fi

# slow parts (platform stragglers): the exact classes give every figure of
# the full run; --symmetry dp with a slow device or node runs each simulated
# rank at the speed of the slowest rank it stands for (its TP group waits for
# it at every TP collective, its replicas at the gradient reduction), flagged
# approximate and within 1 % of the full run; a slow link keeps every rank
for slow in '{"kind":"device","index":5,"speed":0.8}' '{"kind":"node","index":1,"speed":0.7}' \
            '{"kind":"device","index":13,"speed":0.5}'; do
  for mode in none tp dp; do run slow "$mode" "${dense[@]}" --set "platform.stragglers=[$slow]"; done
  check_doc slow 'rel(step(t), step(n)) <= 1e-9'
  check_doc slow 'sim(d)["slowest_mate"] and sim(d)["approximate"] and sim(d)["ranks_simulated"] < d["devices"]'
  check_doc slow 'rel(step(d), step(n)) <= 0.01'
  check_doc slow 'not sim(t)["slowest_mate"] and not sim(n)["slowest_mate"]'
  if grep -q '^APPROXIMATE: slow devices' "$tmp/slow-dp.out"; then ok; else ko "$slow: no APPROXIMATE line"; fi
done
for mode in none tp dp; do run link "$mode" "${dense[@]}" --set 'platform.stragglers=[{"kind":"link","index":3,"speed":0.5}]'; done
check_doc link 'sim(d)["ranks_simulated"] == d["devices"] and not sim(d)["slowest_mate"] and rel(step(d), step(n)) <= 1e-9'

summary
