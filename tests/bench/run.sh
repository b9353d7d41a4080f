#!/usr/bin/env bash
# run.sh - benchmark of the simulator at scale (not a test: it prints
# figures and asserts nothing).
#
# The cases: the 2,048-die default (gpt-310b, TP 8), Llama 3 405B on 16,384
# H100s as Meta trained it, Mixtral 8x22B with its 7D strategy (2D TP,
# Ulysses CP, EP) on 2,048 dies, a sweep of gpt-310b over 2,048 dies (top
# 16, 2 at a time), the sensitivity of the default to its platform, TP 16 on GB200 NVL72 racks (576 GPUs: the TP groups
# straddle the 72-GPU NVLink domains), and DeepSeek-V3 on 2,048 H100s with
# EP 64, PP 16 and no TP.  With --large, also 65,536 H100s: Llama 3 405B
# with TP 8 (DP 512) and DeepSeek-V3 with EP 64 (DP 4,096), and Llama 3 405B
# on 131,072.  With --fabric, the fabrics people build: Llama 3 405B and
# DeepSeek-V3 on the rail-optimised two-tier dgx-h100-superpod (1,024 to
# 16,384 GPUs) and on the three-tier dgx-h100-superpod-3tier (2:1 above
# the leaves), and Llama 3 405B with one node or one GPU at 80 % (1,024 and
# 16,384 H100s, dgx-h100 and the SuperPOD).  With --curve,
# the default strategy on 256 to 16,384 dies, DP growing with the devices
# and 64 micro-batches per replica, so that only the number of ranks
# changes.
#
# For each case, a row of a Markdown table: devices, ranks with an actor
# (the JSON's simulator.ranks_simulated), exact or approximate
# (simulator.approximate), wall time, CPU time (user + system) and peak
# RSS (of heptasim and its children: getrusage), simulated events (program
# instructions and flows), the flows among them, events per second of
# wall time, and the step time.  On a shared machine the CPU time is the steadier figure.  A case still running after
# the timeout is stopped and reported with how far it got (its --progress
# line); the script never waits longer.
#
# usage: tests/bench/run.sh [options] path/to/heptasim
#   --cases LIST   only the cases whose names match one of the comma-separated
#                  shell patterns of LIST (e.g. 'default,sweep*'); any group
#   --large        also the 65,536- and 131,072-device cases (slow)
#   --fabric       also the rail-optimised, multi-tier and straggler cases
#   --curve        also the scaling curve of the default strategy
#   --timeout S    seconds per case (default 900)
#   --out FILE     also write the table (with its machine line) to FILE
#   --smoke        one tiny case (seconds), to check the table's form
#   --list         list the cases and exit
# Extra heptasim options for every run go in HEPTASIM_BENCH_ARGS, e.g.
#   HEPTASIM_BENCH_ARGS="--symmetry dp" tests/bench/run.sh build/heptasim
set -u
usage() {
  sed -n '/^# usage:/,/^#   HEPTASIM_BENCH_ARGS=/s/^# \{0,1\}//p' "$0" >&2
  exit 2
}
filter="" large=0 fabric=0 curve=0 timeout=900 out="" smoke=0 list=0 bin=""
while [ $# -gt 0 ]; do
  case $1 in
    --cases) filter=${2:?--cases needs a LIST}; shift ;;
    --large) large=1 ;;
    --fabric) fabric=1 ;;
    --curve) curve=1 ;;
    --timeout) timeout=${2:?--timeout needs seconds}; shift ;;
    --out) out=${2:?--out needs a FILE}; shift ;;
    --smoke) smoke=1 ;;
    --list) list=1 ;;
    -h | --help) usage ;;
    -*) echo "run.sh: unknown option '$1'" >&2; usage ;;
    *) bin=$1 ;;
  esac
  shift
done
[[ $timeout =~ ^[0-9]+$ ]] && [ "$timeout" -gt 0 ] || { echo "run.sh: --timeout takes whole seconds" >&2; exit 2; }
read -r -a extra <<<"${HEPTASIM_BENCH_ARGS:-}"

# name|group|description|heptasim arguments (one line each)
cases() {
  cat <<'EOF'
default|std|gpt-310b, default (TP 8), 2,048 dies|run
llama3-16k|std|llama3-405b-h100-16k (TP 8), 16,384 H100|run -m llama3-405b -p dgx-h100 -s llama3-405b-h100-16k --devices 16384
mixtral-7d|std|mixtral-8x22b-a3-7d (2D TP, Ulysses, EP 8), 2,048 dies|run -m mixtral-8x22b -p ascend-a3-2048 -s mixtral-8x22b-a3-7d
sweep|std|`sweep --top 16 -j 2`, gpt-310b, 2,048 dies|sweep -m gpt-310b -p ascend-a3-2048 --top 16 -j 2
sensitivity|std|`sensitivity -j 2` (default: every figure estimated, 4 simulated), gpt-310b, 2,048 dies|sensitivity -j 2
nvl72-tp16|std|gpt-310b, TP 16 PP 4 DP 9 on gb200-nvl72 (TP groups straddle the 72-GPU domains), 576 GPUs|run -p gb200-nvl72 -s gpt-310b-a3-megatron --set tp_x=16 --set pp=4 --set dp=9 --set global_batch=1152
deepseek-v3|std|deepseek-v3, EP 64 PP 16 no TP (full recompute), 2,048 H100|run -m deepseek-v3 -p dgx-h100 --devices 2048 -s deepseek-v3-h800 --set recompute=full
llama3-65k|large|llama3-405b, TP 8 PP 16 DP 512, 65,536 H100|run -m llama3-405b -p dgx-h100 -s llama3-405b-h100-16k --devices 65536 --set dp=512 --set global_batch=8192
deepseek-v3-65k|large|deepseek-v3, EP 64 PP 16 DP 4,096 (full recompute), 65,536 H100|run -m deepseek-v3 -p dgx-h100 --devices 65536 -s deepseek-v3-h800 --set recompute=full --set dp=4096 --set global_batch=65536
llama3-131k|large|llama3-405b, TP 8 PP 16 DP 1,024, 131,072 H100|run -m llama3-405b -p dgx-h100 -s llama3-405b-h100-16k --devices 131072 --set dp=1024 --set global_batch=16384
pod-llama3-1k|fabric|llama3-405b, TP 8 PP 16 DP 8, 1,024 H100 on dgx-h100-superpod (rails, two tiers)|run -m llama3-405b -p dgx-h100-superpod -s llama3-405b-h100-16k --devices 1024 --set dp=0 --set global_batch=128
pod-llama3-1k-none|fabric|the same, `--symmetry none` (every rank simulated)|run -m llama3-405b -p dgx-h100-superpod -s llama3-405b-h100-16k --devices 1024 --set dp=0 --set global_batch=128 --symmetry none
pod-llama3-16k|fabric|llama3-405b-h100-16k (TP 8 PP 16 DP 128), 16,384 H100 on dgx-h100-superpod|run -m llama3-405b -p dgx-h100-superpod -s llama3-405b-h100-16k --devices 16384
pod-deepseek-1k|fabric|deepseek-v3, EP 64 PP 8 no TP (full recompute), 1,024 H100 on dgx-h100-superpod|run -m deepseek-v3 -p dgx-h100-superpod --devices 1024 -s deepseek-v3-h800 --set recompute=full --set pp=8 --set last_stage_layers=5 --set dp=0 --set global_batch=1024
pod-deepseek-2k|fabric|deepseek-v3, EP 64 PP 8 no TP (full recompute), 2,048 H100 on dgx-h100-superpod|run -m deepseek-v3 -p dgx-h100-superpod --devices 2048 -s deepseek-v3-h800 --set recompute=full --set pp=8 --set last_stage_layers=5 --set dp=0 --set global_batch=2048
pod3-llama3-2k|fabric|llama3-405b, TP 8 PP 16 DP 16, 2,048 H100 on dgx-h100-superpod-3tier (2:1 above the leaves; rings inside a leaf)|run -m llama3-405b -p dgx-h100-superpod-3tier -s llama3-405b-h100-16k --devices 2048 --set dp=0 --set global_batch=256
pod3-llama3-2k-none|fabric|the same, `--symmetry none`|run -m llama3-405b -p dgx-h100-superpod-3tier -s llama3-405b-h100-16k --devices 2048 --set dp=0 --set global_batch=256 --symmetry none
pod3-rings-2k|fabric|llama3-405b cut to 32 layers, TP 8 PP 4 DP 64, 2,048 H100 on dgx-h100-superpod-3tier (DP rings through 2:1 leaf uplinks)|run -m llama3-405b -p dgx-h100-superpod-3tier -s llama3-405b-h100-16k --devices 2048 --set model.layers=32 --set pp=4 --set dp=0 --set global_batch=256
pod3-rings-2k-none|fabric|the same, `--symmetry none`|run -m llama3-405b -p dgx-h100-superpod-3tier -s llama3-405b-h100-16k --devices 2048 --set model.layers=32 --set pp=4 --set dp=0 --set global_batch=256 --symmetry none
pod3-llama3-16k|fabric|llama3-405b-h100-16k, 16,384 H100 on dgx-h100-superpod-3tier (DP rings through 2:1 leaf uplinks)|run -m llama3-405b -p dgx-h100-superpod-3tier -s llama3-405b-h100-16k --devices 16384
straggler-node-16k|fabric|llama3-405b-h100-16k, 16,384 H100 (dgx-h100), node 0 at 80 %|run -m llama3-405b -p dgx-h100 -s llama3-405b-h100-16k --devices 16384 --set platform.stragglers=[{"kind":"node","index":0,"speed":0.8}]
straggler-gpu-16k|fabric|llama3-405b-h100-16k, 16,384 H100 (dgx-h100), GPU 0 at 80 %|run -m llama3-405b -p dgx-h100 -s llama3-405b-h100-16k --devices 16384 --set platform.stragglers=[{"kind":"device","index":0,"speed":0.8}]
straggler-node-16k-pod|fabric|llama3-405b-h100-16k, 16,384 H100 on dgx-h100-superpod, node 0 at 80 %|run -m llama3-405b -p dgx-h100-superpod -s llama3-405b-h100-16k --devices 16384 --set platform.stragglers=[{"kind":"node","index":0,"speed":0.8}]
straggler-gpu-16k-pod|fabric|llama3-405b-h100-16k, 16,384 H100 on dgx-h100-superpod, GPU 5 at 80 %|run -m llama3-405b -p dgx-h100-superpod -s llama3-405b-h100-16k --devices 16384 --set platform.stragglers=[{"kind":"device","index":5,"speed":0.8}]
straggler-node-1k-pod|fabric|llama3-405b, TP 8 PP 16 DP 8, 1,024 H100 on dgx-h100-superpod, node 0 at 80 %|run -m llama3-405b -p dgx-h100-superpod -s llama3-405b-h100-16k --devices 1024 --set dp=0 --set global_batch=128 --set platform.stragglers=[{"kind":"node","index":0,"speed":0.8}]
straggler-node-1k-pod-none|fabric|the same, `--symmetry none`|run -m llama3-405b -p dgx-h100-superpod -s llama3-405b-h100-16k --devices 1024 --set dp=0 --set global_batch=128 --set platform.stragglers=[{"kind":"node","index":0,"speed":0.8}] --symmetry none
straggler-gpu-1k-pod|fabric|llama3-405b, TP 8 PP 16 DP 8, 1,024 H100 on dgx-h100-superpod, GPU 5 at 80 % (every rank, as `--symmetry none`)|run -m llama3-405b -p dgx-h100-superpod -s llama3-405b-h100-16k --devices 1024 --set dp=0 --set global_batch=128 --set platform.stragglers=[{"kind":"device","index":5,"speed":0.8}]
straggler-gpu-16k-dp|fabric|llama3-405b-h100-16k, 16,384 H100 (dgx-h100), GPU 0 at 80 %, `--symmetry dp` (approximate)|run -m llama3-405b -p dgx-h100 -s llama3-405b-h100-16k --devices 16384 --set platform.stragglers=[{"kind":"device","index":0,"speed":0.8}] --symmetry dp
straggler-node-16k-dp|fabric|llama3-405b-h100-16k, 16,384 H100 (dgx-h100), node 0 at 80 %, `--symmetry dp` (approximate)|run -m llama3-405b -p dgx-h100 -s llama3-405b-h100-16k --devices 16384 --set platform.stragglers=[{"kind":"node","index":0,"speed":0.8}] --symmetry dp
smoke|smoke|gpt-1.7b, TP 2 PP 2 DP 2, 8 A100|run -m gpt-1.7b -p dgx-a100 --devices 8 --set model.layers=4 --set tp_x=2 --set pp=2 --set dp=2 --set vpp=1 --set schedule=1f1b --set global_batch=16
EOF
  local n dp
  for n in 256 512 1024 2048 4096 8192 16384; do
    dp=$((n / 128))
    echo "curve-$n|curve|gpt-310b, TP 8 PP 16 vpp 2 DP $dp, $n dies|run --devices $n --set dp=$dp --set global_batch=$((64 * dp))"
  done
}

# selected NAME GROUP: whether the options pick the case.
selected() {
  local pat
  if [ "$smoke" = 1 ]; then [ "$2" = smoke ]; return; fi
  if [ -n "$filter" ]; then
    IFS=',' read -r -a pats <<<"$filter"
    for pat in "${pats[@]}"; do
      # shellcheck disable=SC2053 # the pattern is a glob on purpose
      [[ $1 == $pat ]] && return 0
    done
    return 1
  fi
  [ "$2" = std ] || { [ "$2" = large ] && [ "$large" = 1 ]; } || { [ "$2" = curve ] && [ "$curve" = 1 ]; } ||
    { [ "$2" = fabric ] && [ "$fabric" = 1 ]; }
}

if [ "$list" = 1 ]; then
  cases | while IFS='|' read -r name group desc args; do printf '%-16s %-6s %s\n  heptasim %s\n' "$name" "$group" "$desc" "$args"; done
  exit 0
fi
[ -n "$bin" ] || usage
[ -x "$bin" ] || { echo "run.sh: '$bin' is not an executable heptasim" >&2; exit 2; }
command -v python3 >/dev/null 2>&1 || { echo "run.sh: needs python3 (to time the runs and read their JSON)" >&2; exit 2; }
top=$(cd "$(dirname "$0")/../.." && pwd)
export HEPTASIM_DATA=${HEPTASIM_DATA:-$top}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# measure NAME DESCRIPTION ARGS...: run heptasim ARGS once under the
# timeout and print a row of the table.
measure() {
  local name=$1 desc=$2
  shift 2
  rm -f "$tmp/out.json" "$tmp/progress.log"
  python3 - "$timeout" "$desc" "$tmp" "$bin" "$@" "${extra[@]}" --json "$tmp/out.json" --progress "$tmp/progress.log" \
    -q <<'EOF'
import json, os, resource, signal, subprocess, sys, time
timeout, desc, tmp, cmd = float(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4:]
t0 = time.monotonic()
p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, "err"), "w"))
late = False
try:
    p.wait(timeout=timeout)
except subprocess.TimeoutExpired:
    late = True
    p.send_signal(signal.SIGTERM)  # a sweep stops and reaps its own simulations
    try:
        p.wait(timeout=30)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
wall = time.monotonic() - t0
use = resource.getrusage(resource.RUSAGE_CHILDREN)  # heptasim and its children
rss = use.ru_maxrss / 1024  # KiB -> MiB, the largest of them
cpu = use.ru_utime + use.ru_stime
def last_progress():
    try:
        lines = open(os.path.join(tmp, "progress.log")).read().splitlines()
    except OSError:
        return ""
    return lines[-1].split(": ", 1)[-1] if lines else ""
def row(devices="–", actors="–", mode="–", wall_cell="–", events="–", flows="–", rate="–", step="–"):
    print(f"| {desc} | {devices} | {actors} | {mode} | {wall_cell} | {cpu:,.1f} s | {rss:,.0f} MiB | {events} | "
          f"{flows} | {rate} | {step} |", flush=True)
if late:
    row(wall_cell=f"stopped after {timeout:,.0f} s ({last_progress() or 'no progress line'})")
    sys.exit(0)
if p.returncode != 0:
    err = open(os.path.join(tmp, "err")).read().strip().splitlines()
    row(wall_cell=f"failed, exit status {p.returncode}: {(err[-1] if err else '')[:160]}")
    sys.exit(0)
d = json.load(open(os.path.join(tmp, "out.json")))
if "figures" in d:  # sensitivity: the simulated unperturbed step
    sims = sum(1 for f in d["figures"] for e in ("low", "high") if f[e].get("simulated"))
    row(f"{d['devices']:,}", "–", "exact", f"{wall:,.1f} s ({len(d['figures'])} figures, {sims} ends simulated)",
        step=f"{d['step_time_s']:.4f} s" if "step_time_s" in d else "–")
elif "simulator" in d:  # run
    s = d["simulator"]
    events = s["instructions"] + s["flows"]
    row(f"{d['devices']:,}", f"{s['ranks_simulated']:,}", "approximate" if s.get("approximate") else "exact",
        f"{wall:,.1f} s", f"{events:,}", f"{s['flows']:,}", f"{events / wall / 1e6:,.2f} M/s", f"{d['step_time_s']:.4f} s")
else:  # sweep: the best simulated candidate's step
    best = next((r for r in d.get("ranking", []) if r.get("simulated")), None)
    c, t = d.get("counts", {}), d.get("timing", {})
    mode = "approximate" if any(x == "dp" for x in cmd) else "exact"
    detail = f"{wall:,.1f} s ({t.get('search_s', 0):,.1f} s search, {c.get('simulated', 0)} simulated in " \
             f"{t.get('simulate_s', 0):,.1f} s)"
    row(f"{d['devices']:,}", "–", mode, detail, step=f"{best['step_time_s']:.4f} s" if best else "–")
EOF
}

header() {
  local machine
  machine=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -n 1)
  printf 'Machine: %s cores (%s), %s of memory, load average %s at the start; %s, %s; timeout %s s per case%s.\n\n' \
    "$(nproc)" "${machine:-unknown CPU}" "$(free -g 2>/dev/null | awk '/^Mem:/ { print $2 " GiB" }')" \
    "$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo unknown)" \
    "$("$bin" --version)" "$(date -u +%F)" "$timeout" "${HEPTASIM_BENCH_ARGS:+, options $HEPTASIM_BENCH_ARGS}"
  echo "| case | devices | actors | mode | wall | CPU | peak RSS | events | flows | events/s | step time |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|"
}

{
  header
  n=0 total=0
  while IFS='|' read -r name group desc args; do selected "$name" "$group" && total=$((total + 1)); done < <(cases)
  while IFS='|' read -r name group desc args; do
    selected "$name" "$group" || continue
    n=$((n + 1))
    echo "run.sh: [$n/$total] $name: heptasim $args ${HEPTASIM_BENCH_ARGS:-}" >&2
    read -r -a argv <<<"$args"
    measure "$name" "$desc" "${argv[@]}"
  done < <(cases)
} | if [ -n "$out" ]; then tee "$out"; else cat; fi
