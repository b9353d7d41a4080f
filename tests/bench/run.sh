#!/usr/bin/env bash
# run.sh - benchmark of the simulator at scale (not a test: it prints
# figures and asserts nothing).
#
# Two tables.  The reference scenarios: the 2,048-die default (gpt-310b),
# Mixtral 8x22B with a 7D strategy using EP and CP on the same 2,048 dies,
# and Llama 3 405B on 16,384 H100s as Meta trained it.  Then the cost curve:
# the default strategy (TP 8, PP 16, vpp 2) on 256 to 16,384 dies, DP
# growing with the devices and 64 micro-batches per replica, so the work
# per rank stays the same and only the number of ranks changes.
#
# For each run: wall time, peak RSS (of the heptasim process), ranks that
# had an actor, simulated events (program instructions and network flows)
# and events per second of wall time.
#
# usage: tests/bench/run.sh path/to/heptasim [MAX_DEVICES [SCENARIOS]]
#   MAX_DEVICES  largest point of the curve (default 16384)
#   SCENARIOS    "all" (default), "targets" or "curve"
# Extra heptasim options for every run go in HEPTASIM_BENCH_ARGS, e.g.
#   HEPTASIM_BENCH_ARGS="--symmetry none" tests/bench/run.sh build/heptasim 2048
set -u
bin=${1:?usage: run.sh path/to/heptasim [MAX_DEVICES [all|targets|curve]]}
max=${2:-16384}
which=${3:-all}
read -r -a extra <<<"${HEPTASIM_BENCH_ARGS:-}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# bench NAME ARGS...: run heptasim ARGS once and print a row of the table.
bench() {
  local name=$1
  shift
  python3 - "$name" "$tmp/out.json" "$bin" "$@" "${extra[@]}" --json "$tmp/out.json" -q <<'EOF'
import json, resource, subprocess, sys, time
name, out, cmd = sys.argv[1], sys.argv[2], sys.argv[3:]
t0 = time.monotonic()
p = subprocess.run(cmd, stderr=subprocess.PIPE, text=True)
wall = time.monotonic() - t0
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # KiB -> MiB
if p.returncode != 0:
    print(f"{name:<34} failed (status {p.returncode}): {p.stderr.strip()[:200]}")
    sys.exit(0)
d = json.load(open(out))
s = d["simulator"]
events = s["instructions"] + s["flows"]
print(f"{name:<34} {d['devices']:>7} {s['ranks_simulated']:>7} {wall:>8.2f} {rss:>8.0f} "
      f"{s['instructions'] / 1e6:>8.2f} {s['flows'] / 1e6:>7.2f} {events / wall / 1e6:>8.2f} "
      f"{d['step_time_s']:>8.3f}")
EOF
}

header() {
  printf '%-34s %7s %7s %8s %8s %8s %7s %8s %8s\n' "$1" devices actors "wall s" "RSS MiB" "instr M" "flows M" \
    "Mev/s" "step s"
}

printf 'heptasim benchmark: %s cores, %s, %s %s\n' "$(nproc)" "$(date -u +%FT%TZ)" "$("$bin" --version)" \
  "${HEPTASIM_BENCH_ARGS:-}"
if [ "$which" = all ] || [ "$which" = targets ]; then
  header "scenario"
  bench "gpt-310b, default (2,048 dies)" run
  bench "mixtral-8x22b, 7D EP+CP (2,048)" run -m mixtral-8x22b -p ascend-a3-2048 -s mixtral-8x22b-a3-7d
  [ "$max" -ge 16384 ] &&
    bench "llama3-405b, 16,384 H100" run -m llama3-405b -p dgx-h100 -s llama3-405b-h100-16k --devices 16384
  echo
fi
if [ "$which" = all ] || [ "$which" = curve ]; then
  header "gpt-310b, tp 8 pp 16 vpp 2, dp n/128"
  for n in 256 512 1024 2048 4096 8192 16384; do
    [ "$n" -gt "$max" ] && break
    dp=$((n / 128))
    bench "  $n dies" run --devices "$n" --set "dp=$dp" --set "global_batch=$((64 * dp))"
  done
fi
