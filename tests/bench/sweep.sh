#!/usr/bin/env bash
# sweep.sh - benchmark of the design-space search (not a test: it prints
# figures and asserts nothing).  For each model, a full 7D sweep on the
# 2,048-die Ascend platform: candidates enumerated, pruned by memory and
# estimated, the search's wall time and time per candidate, then the top K
# simulated J at a time, the simulation time and the agreement of the
# estimate with the simulation.
#
# usage: [PLATFORM=P] [DEVICES=N] tests/bench/sweep.sh path/to/heptasim [TOP [JOBS [MODEL...]]]
#   TOP      candidates simulated (default 16; 0 simulates one: the search's
#            own time is printed separately in any case)
#   JOBS     simulations at once (default 2)
#   MODEL    default: gpt-310b mixtral-8x22b
#   PLATFORM default ascend-a3-2048; DEVICES the platform's unless given
#            (PLATFORM=dgx-h100 DEVICES=1024 ... 16 2 qwen3-235b-a22b is the
#            planner's case of docs/search.md)
# Each sweep starts from an empty search cache; a compare of the same
# inputs then runs on the cached records, and its wall time is printed.
set -u
bin=${1:?usage: sweep.sh path/to/heptasim [TOP [JOBS [MODEL...]]]}
top=${2:-16}
jobs=${3:-2}
shift $(($# < 3 ? $# : 3))
models=("$@")
[ ${#models[@]} -eq 0 ] && models=(gpt-310b mixtral-8x22b)
platform=${PLATFORM:-ascend-a3-2048}
devices=()
[ -n "${DEVICES:-}" ] && devices=(--devices "$DEVICES")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export HEPTASIM_CACHE="$tmp/cache"
command -v jq >/dev/null 2>&1 || { echo "sweep.sh: needs jq to read the --json summary"; exit 1; }

k=$top
[ "$top" -eq 0 ] && k=1
printf 'platform %s, %s simulations at once, top %s, %s cores, %s\n' "$platform" "$jobs" "$k" "$(nproc)" "$(date -u +%FT%TZ)"
for model in "${models[@]}"; do
  start=$(date +%s.%N)
  /usr/bin/time -f '%U %S %M' -o "$tmp/time" \
    "$bin" sweep -m "$model" -p "$platform" "${devices[@]}" --top "$k" -j "$jobs" --json "$tmp/$model.json" -q
  status=$?
  end=$(date +%s.%N)
  "$bin" compare -m "$model" -p "$platform" "${devices[@]}" -j "$jobs" --json "$tmp/$model-compare.json" -q
  compare_status=$?
  compare_end=$(date +%s.%N)
  compare_wall=$(awk -v a="$end" -v b="$compare_end" 'BEGIN { print b - a }')
  read -r user sys rss <"$tmp/time"
  wall=$(awk -v a="$start" -v b="$end" 'BEGIN { print b - a }')
  echo
  echo "$model (exit status $status)"
  jq -r --arg wall "$wall" --arg user "$user" --arg sys "$sys" --arg rss "$rss" '
    def r(n): . * pow(10; n) | round / pow(10; n);
    "  enumerated        \(.counts.enumerated) (\(.counts.rejected) rejected by the validity rules)",
    "  pruned by memory  \(.counts.pruned_memory)",
    "  estimated         \(.counts.estimated) (\(.counts.estimated_megatron_style) Megatron-style), \(.counts.probes) workload probes",
    "  search            \(.timing.search_s | . * 1000 | round / 1000) s wall, \(.timing.per_candidate_us | . * 100 | round / 100) us per candidate",
    "  simulated         \(.counts.simulated) of \(.counts.selected) (\(.counts.failed) failed) in \(.timing.simulate_s | r(1)) s wall",
    "  sweep             \($wall | tonumber | . * 10 | round / 10) s wall, \($user) s user + \($sys) s system CPU (children included), \($rss) KB max RSS",
    "  agreement         Spearman \(.agreement.spearman // "n/a" | if type == "number" then r(3) else . end), largest gap \(if .agreement.largest_gap then (.agreement.largest_gap * 1000 | round / 10 | tostring) + "%" else "n/a" end)",
    "  best simulated    \(.ranking[0].strategy.description // "-"): \(.ranking[0].step_time_s // 0 | r(4)) s, MFU \(.ranking[0].mfu // 0 | . * 100 | r(1))%",
    "  its estimate      \(.ranking[0].estimate_step_time_s // 0 | r(4)) s"
  ' "$tmp/$model.json"
  printf '  compare           %.1f s wall on the cached records (exit status %s)\n' "$compare_wall" "$compare_status"
done
