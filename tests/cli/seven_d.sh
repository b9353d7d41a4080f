#!/usr/bin/env bash
# seven_d.sh - every kind of 7D point simulates end to end on a small
# platform: 2D TP, ring and Ulysses CP (with all-to-alls of more than two
# ranks in several groups at once), fusion, experts (the three dispatchers),
# ZeRO 2/3, interleaving;
# and the rank order changes the simulated time.  Each point also runs with
# one actor per rank (--symmetry none): lockstep TP groups must not change it.
. "$(dirname "$0")/../lib/cli.sh" "$@"
base=(run -m gpt-1.7b -p dgx-a100 -s gpt-310b-a3-megatron --set model.layers=4 --set pp=1 --set vpp=1
      --set schedule=1f1b --set dp=0 --set tp_x=1 -q --json -)
moe=(run -m mixtral-8x22b -p dgx-a100 -s mixtral-8x22b-a3-megatron --set model.layers=4 --set pp=1
     --set dp=0 --set tp_x=1 --set etp=0 -q --json -)

# step_time ARGS...: print the simulated step time, or nothing on failure.
step_time() {
  "$bin" "$@" 2>/dev/null | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["step_time_s"])' 2>/dev/null
}

check_point() { # check_point NAME ARGS...: the run succeeds with a positive step time,
  # the same (to rounding) when every rank has its own actor
  local name=$1
  shift
  local t full
  t=$(step_time "$@")
  full=$(step_time "$@" --symmetry none)
  if [ -n "$t" ] && [ -n "$full" ] &&
    python3 -c "import sys; t, f = float('$t'), float('$full'); sys.exit(0 if t > 0 and abs(t - f) <= 1e-9 * f else 1)"; then
    ok
  else
    ko "$name: heptasim $* (step time $t s; every rank simulated: $full s)"
    "$bin" "$@" 2>&1 >/dev/null | head -3 | sed 's/^/    /'
  fi
}

check_point "ulysses 4 in two groups" "${base[@]}" --devices 8 --set cp_ulysses=4 --set global_batch=4
check_point "2D TP 2x2" "${base[@]}" --devices 8 --set tp_x=2 --set tp_y=2 --set global_batch=4
check_point "2D TP 1x4 (all-to-all over tp_y)" "${base[@]}" --devices 8 --set tp_y=4 --set global_batch=4
check_point "fused tp_y x ulysses" "${base[@]}" --devices 8 --set tp_y=2 --set cp_ulysses=2 --set fuse_tpy_cp=true --set global_batch=4
check_point "ring CP" "${base[@]}" --devices 8 --set cp_ring=2 --set tp_x=2 --set sequence_parallel=true --set global_batch=8
check_point "ring + ulysses" "${base[@]}" --devices 16 --set cp_ring=2 --set cp_ulysses=2 --set tp_x=2 --set sequence_parallel=true --set global_batch=8
check_point "zero 2" "${base[@]}" --devices 8 --set zero=2 --set global_batch=8
check_point "zero 3" "${base[@]}" --devices 8 --set zero=3 --set global_batch=8
check_point "interleaved" "${base[@]}" --devices 8 --set pp=2 --set vpp=2 --set schedule=interleaved --set global_batch=8
check_point "gpipe" "${base[@]}" --devices 8 --set pp=2 --set schedule=gpipe --set global_batch=8
check_point "experts ep 4" "${moe[@]}" --devices 8 --set ep=4 --set global_batch=8
check_point "experts ep 2 etp 2 over tp 2" "${moe[@]}" --devices 8 --set ep=2 --set tp_x=2 --set etp=2 --set global_batch=8
check_point "experts, ep = the whole data-parallel group" "${moe[@]}" --devices 16 --set tp_x=4 --set dp=4 --set ep=4 --set etp=1 --set global_batch=8
check_point "experts with ulysses" "${moe[@]}" --devices 16 --set ep=4 --set cp_ulysses=2 --set tp_x=2 --set global_batch=8
check_point "experts, allgather dispatcher" "${moe[@]}" --devices 8 --set ep=4 --set etp=1 --set moe_dispatcher=allgather --set global_batch=8
check_point "experts, flex dispatcher across nodes" "${moe[@]}" --devices 16 --set ep=8 --set etp=1 --set order=tp_x-tp_y-cp_ulysses-cp_ring-dp-ep-pp --set moe_dispatcher=flex --set global_batch=16

# Rank order: TP innermost keeps TP inside a node; TP outermost sends it
# over the NICs, which must be slower.
inner=$(step_time "${base[@]}" --devices 16 --set tp_x=8 --set global_batch=8)
outer=$(step_time "${base[@]}" --devices 16 --set tp_x=8 --set global_batch=8 --set order=dp-tp_x-tp_y-cp_ulysses-cp_ring-ep-pp)
if [ -n "$inner" ] && [ -n "$outer" ] && python3 -c "import sys; sys.exit(0 if float('$outer') > 1.05 * float('$inner') else 1)"; then
  ok
else
  ko "TP across nodes ($outer s) should be slower than TP inside a node ($inner s)"
fi

summary
