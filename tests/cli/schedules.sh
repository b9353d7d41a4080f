#!/usr/bin/env bash
# schedules.sh - the pipeline schedules through `heptasim run`: on a
# uniform 8-stage pipeline with 16 micro-batches whose forward,
# input-gradient and weight-gradient passes take the same time and whose
# transfers cost nothing, the bubble of each schedule is its closed form
# (docs/schedules.md) within 2 %; memory follows each schedule's in-flight
# activations; DualPipe-V hides part of the expert all-to-all that ZB-V
# exposes; the weight-gradient passes show in the trace; the V schedules'
# rules are refused in one line with exit status 2.
. "$(dirname "$0")/../lib/cli.sh" "$@"

# Every GEMM at half of peak whatever its size, no kernel overhead, memory
# traffic and transfers nearly free.
cat >"$tmp/flat.json" <<'EOF'
{"name": "flat", "description": "8 ideal devices", "devices": 8,
 "device": {"name": "ideal", "peak_tflops": 1000, "hbm_GiB": 80, "hbm_TBps": 10000},
 "node": {"devices": 8}, "supernode": {"devices": 8, "fabric_GBps": 1000000, "latency_us": 0},
 "network": {"nic_GBps": 100000, "latency_us": 0},
 "efficiency": {"gemm": [[1e6, 0.5], [1e9, 0.5], [1e15, 0.5]], "attention": 0.5, "memory": 1, "network": 1,
                "kernel_overhead_us": 0, "collective_step_us": 0}}
EOF
# 2 layers per stage; short sequences (small core attention, whose backward
# costs more) and a 16-word vocabulary (edges that cost next to nothing)
cat >"$tmp/uniform.json" <<'EOF'
{"name": "uniform", "layers": 16, "hidden": 4096, "heads": 32, "ffn_hidden": 16384, "vocab": 16, "seq_len": 32}
EOF
cat >"$tmp/pipe.json" <<'EOF'
{"name": "pipe", "pp": 8, "tp_x": 1, "dp": 1, "micro_batch": 32, "global_batch": 512, "sequence_parallel": false,
 "recompute": "none", "zero": 0}
EOF
uniform=(-m "$tmp/uniform.json" -p "$tmp/flat.json" -s "$tmp/pipe.json" -q)

# ----------------------------------------- bubbles against closed forms
all_ran=1
for sch in 1f1b zb-h1 zb-v dualpipe-v; do
  if ! "$bin" run "${uniform[@]}" --set schedule=$sch --json "$tmp/$sch.json" 2>"$tmp/err"; then
    ko "run schedule=$sch: $(head -2 "$tmp/err")"
    all_ran=0
  fi
done
if [ $all_ran = 1 ]; then
  if python3 - "$tmp" <<'EOF'; then ok; else ko "bubbles (see above)"; fi
import json, sys
p, m = 8, 16
# With T_F = T_B = T_W = T per stage and micro-batch, ideal step m*3T:
#   1F1B (p-1)*3T; ZB-H1 (p-1)(T_F+T_B-T_W) = (p-1)T; ZB-V (p-1)*T_F/2 (the
#   V's fill); DualPipe-V (p-1)(F&B+B-3W) over chunks of T/2 = (p-1)T.
closed = {"1f1b": (p - 1) / m, "zb-h1": (p - 1) / (3 * m), "zb-v": (p - 1) / (6 * m),
          "dualpipe-v": (p - 1) / (3 * m)}
got = {}
for sch, want in closed.items():
    d = json.load(open(f"{sys.argv[1]}/{sch}.json"))
    b = d["breakdown"]
    ideal = b["compute_s"] - b["optimizer_s"]
    got[sch] = b["bubble_s"] / ideal
    print(f"  {sch:11s} bubble {b['bubble_s'] * 1e3:8.3f} ms = {got[sch]:.4f} of the ideal step, closed form {want:.4f}")
    assert abs(got[sch] - want) <= 0.02 * want, (sch, got[sch], want)
    assert b["exposed_comm_s"] < 1e-3 * ideal, b
assert got["zb-v"] < got["zb-h1"] < got["1f1b"] and got["dualpipe-v"] < got["1f1b"]
# memory: 1F1B's first stage holds p micro-batches; ZB-H1 p on every stage,
# ZB-V 2p chunks of half a stage (the same bytes); DualPipe-V one chunk more
mem = {sch: json.load(open(f"{sys.argv[1]}/{sch}.json"))["memory"] for sch in closed}
for sch in ("zb-h1", "zb-v"):
    assert mem[sch]["activations_bytes"] == mem["1f1b"]["activations_bytes"], (sch, mem[sch])
    assert mem[sch]["inflight_microbatches"] == p
a, b = mem["dualpipe-v"]["activations_bytes"], mem["1f1b"]["activations_bytes"]
assert abs(a / b - (2 * p + 1) / (2 * p)) < 1e-9, (a, b)
EOF
fi

# ------------------- one pipeline flush per accumulation step
# pipeline_flushes k: the 1F1B schedule runs k times over 16/k micro-batches,
# so the bubble is k times 1F1B's closed form, (p-1)*3T per flush, the first
# stage holds min(p, 16/k) micro-batches, and in the trace the last stage waits for
# the first forward of every flush: micro-batches 0, 16/k, 2*16/k, ...
all_ran=1
for k in 2 4; do
  if ! "$bin" run "${uniform[@]}" --set schedule=1f1b --set pipeline_flushes=$k --json "$tmp/flush$k.json" \
    --trace "$tmp/flush$k.trace.json" 2>"$tmp/err"; then
    ko "run pipeline_flushes=$k: $(head -2 "$tmp/err")"
    all_ran=0
  fi
done
"$bin" run "${uniform[@]}" --set schedule=1f1b --trace "$tmp/flush1.trace.json" 2>"$tmp/err" || all_ran=0
if [ $all_ran = 1 ]; then
  if python3 - "$tmp" <<'EOF'; then ok; else ko "pipeline flushes (see above)"; fi
import json, sys
p, m = 8, 16
one = json.load(open(f"{sys.argv[1]}/1f1b.json"))
for k in (2, 4):
    d = json.load(open(f"{sys.argv[1]}/flush{k}.json"))
    b = d["breakdown"]
    ideal = b["compute_s"] - b["optimizer_s"]
    want = k * (p - 1) / m
    print(f"  pipeline_flushes {k}: bubble {b['bubble_s'] / ideal:.4f} of the ideal step, closed form {want:.4f}")
    assert abs(b["bubble_s"] / ideal - want) <= 0.02 * want, (k, b)
    # the first stage holds min(p, m/k) micro-batches: a flush has no more
    assert d["memory"]["inflight_microbatches"] == min(p, m // k), d["memory"]
    assert (d["memory"]["activations_bytes"] == one["memory"]["activations_bytes"]) == (m // k >= p)
    assert d["strategy"]["pipeline_flushes"] == k
for k in (1, 2, 4):
    t = json.load(open(f"{sys.argv[1]}/flush{k}.trace.json"))
    ev = t["traceEvents"] if isinstance(t, dict) else t
    names = {e["pid"]: e["args"]["name"] for e in ev if e.get("name") == "process_name"}
    last = [q for q, n in names.items() if f"stage {p - 1}" in n]
    waits = sorted(e["args"]["micro_batch"] for e in ev
                   if e.get("cat") == "bubble" and e["pid"] == last[0] and e["args"]["phase"] == "forward")
    print(f"  pipeline_flushes {k}: the last stage waits before the forwards of micro-batches {waits}")
    assert waits == [f * m // k for f in range(k)], (k, waits)
EOF
fi
expect 2 '\.pipeline_flushes: 3 does not divide the 16 micro-batches' -- \
  run "${uniform[@]}" --set pipeline_flushes=3
expect 2 '\.pipeline_flushes: "zb-v" needs at least 15 micro-batches per flush with pp=8, got 8' -- \
  run "${uniform[@]}" --set schedule=zb-v --set pipeline_flushes=2

# ------------------------------ DualPipe-V hides expert all-to-alls
# Mixtral cut to 8 layers on 4 stages, EP 8 across the nodes: ZB-V runs every
# all-to-all blocking; DualPipe-V's overlapped pairs hide part of the same
# traffic behind the other micro-batch's compute.
moe=(-m mixtral-8x22b -p dgx-h100 -s mixtral-8x22b-a3-megatron --devices 32 --set model.layers=8
     --set model.seq_len=1024 --set pp=4 --set tp_x=1 --set etp=1 --set dp=8 --set ep=8 --set global_batch=128
     --set order=tp_x-tp_y-cp_ulysses-cp_ring-pp-ep-dp -q)
if "$bin" run "${moe[@]}" --set schedule=zb-v --json "$tmp/moe-zbv.json" 2>"$tmp/err" &&
  "$bin" run "${moe[@]}" --set schedule=dualpipe-v --json "$tmp/moe-dpv.json" 2>>"$tmp/err"; then
  if python3 - "$tmp/moe-zbv.json" "$tmp/moe-dpv.json" <<'EOF'; then ok; else ko "EP overlap (see above)"; fi
import json, sys
zbv, dpv = (json.load(open(p)) for p in sys.argv[1:3])
a, b = zbv["dimensions"]["ep"], dpv["dimensions"]["ep"]
print(f"  EP all-to-all exposed: zb-v {a['exposed_s'] * 1e3:.2f} ms of {a['comm_s'] * 1e3:.2f} ms, "
      f"dualpipe-v {b['exposed_s'] * 1e3:.2f} ms of {b['comm_s'] * 1e3:.2f} ms")
assert abs(a["exposed_s"] - a["comm_s"]) <= 1e-6 * a["comm_s"], a
assert b["bytes_total"] == a["bytes_total"], (a, b)
assert b["exposed_s"] < 0.75 * a["exposed_s"], (a, b)
assert dpv["step_time_s"] < zbv["step_time_s"]
EOF
else
  ko "MoE runs: $(head -2 "$tmp/err")"
fi

# ------------------------------------- the W passes are in the trace
if "$bin" run "${uniform[@]}" --set schedule=zb-h1 --trace "$tmp/t.json" 2>"$tmp/err" &&
  grep -q '"phase":"wgrad"\|"phase": *"wgrad"' "$tmp/t.json"; then ok; else
  ko "zb-h1 trace has no wgrad slices: $(head -2 "$tmp/err")"
fi
# and the fused schedules have none
if "$bin" run "${uniform[@]}" --set schedule=1f1b --trace "$tmp/t1.json" 2>"$tmp/err" &&
  ! grep -q '"phase":"wgrad"\|"phase": *"wgrad"' "$tmp/t1.json"; then ok; else ko "1f1b trace has wgrad slices"; fi

# ------------------------------------------------------ refused rules
expect 2 'pipe.json: \.pp: "zb-v" cuts the layers into 2\*pp = 16 chunks, which does not divide layers=24' -- \
  run "${uniform[@]}" --set schedule=zb-v --set model.layers=24
expect 2 'pipe.json: \.global_batch: "dualpipe-v" needs at least 16 micro-batches with pp=8, got .* = 8' -- \
  run "${uniform[@]}" --set schedule=dualpipe-v --set global_batch=256
expect 2 'pipe.json: \.global_batch: "zb-v" needs at least 15 micro-batches' -- \
  run "${uniform[@]}" --set schedule=zb-v --set global_batch=448
expect 2 'pipe.json: \.schedule: "zb-v" places two model chunks per stage in a V and needs pp > 1' -- \
  memory "${uniform[@]}" --set schedule=zb-v --set pp=1 --set dp=8
expect 2 'pipe.json: \.schedule: "dualpipe-v" places the layers evenly in a V' -- \
  run "${uniform[@]}" --set schedule=dualpipe-v --set first_stage_layers=1 --set last_stage_layers=1 \
  --set model.layers=14
expect 2 '\.schedule: expected one of .*"dualpipe-v", got "dualpipe" \(did you mean "dualpipe-v"\?\)' -- \
  run "${uniform[@]}" --set schedule=dualpipe

summary
