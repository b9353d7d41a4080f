#!/usr/bin/env bash
# study.sh - `heptasim study` on the shipped tiny study: the folder holds the
# table, the CSV, one summary, report and records file per cell, the
# command and copies of the inputs; the table's figures are the cells'; the
# Megatron-style bests are in the baseline's space; a rerun with --resume
# skips finished cells and runs a missing one again; two shards and a
# resume give the table of one run; a cell borrows its twin's simulations
# without changing a figure; a bad study file is one line, exit 2.
. "$(dirname "$0")/../lib/cli.sh" "$@"

study=$data/studies/tiny.json
cells=6 # 2 sequence lengths x 2 CP baselines, and 1 sensitivity value x 2 baselines

capture "$bin" study "$study" --out "$tmp/one" -j 1
check "study succeeds" test "$status" -eq 0
check "study prints where the table is" grep -q "table: $tmp/one/study.md" "$tmp/out"
check "one log line per cell and result" test "$(grep -c 'speed-up' "$tmp/err")" -eq $cells
for f in study.md study.csv command.txt inputs/study.json inputs/model-gpt-1.7b.json inputs/platform-dgx-a100.json; do
  check "the folder holds $f" test -s "$tmp/one/$f"
done
check "the study file is copied as it is" cmp -s "$study" "$tmp/one/inputs/study.json"
check "the command is recorded" grep -qx "heptasim study $study --out $tmp/one -j 1" "$tmp/one/command.txt"
for ext in json html jsonl; do
  check "one .$ext per cell" test "$(find "$tmp/one/cells" -name "*.$ext" | wc -l)" -eq $cells
done
check "one CSV line per cell" test "$(($(wc -l <"$tmp/one/study.csv") - 1))" -eq $cells
check "the table has a row per main cell" test "$(grep -c '^| gpt-1.7b | dgx-a100 (16) |' "$tmp/one/study.md")" -eq $cells
check "the sensitivity table names the key and factor" grep -q 'network.nic_GBps x0.5 (12.5)' "$tmp/one/study.md"
check "half the HBM is in the cells" grep -q '_hbm40_' <(ls "$tmp/one/cells")
check "the HTML reports are drawn" grep -qi '<svg' "$tmp/one/cells/gpt-1.7b_dgx-a100-d16_s2048_hbm40_ring.html"

if command -v jq >/dev/null 2>&1; then
  for j in "$tmp"/one/cells/*.json; do
    name=$(basename "$j" .json)
    check "$name: speed-up is the ratio of the simulated steps" \
      test "$(jq '(.megatron.step_time_s / ."7d".step_time_s - .speedup) | fabs < 1e-12' "$j")" = true
    check "$name: global batch is tokens / seq_len" \
      test "$(jq '.global_batch * .study_cell.model.seq_len' "$j")" -eq 32768
    check "$name: the Megatron-style best has the distributed optimizer at most, 1D TP" \
      test "$(jq '.megatron.strategy | .zero <= 1 and .tp_y == 1 and .fuse_tpy_cp == false' "$j")" = true
    check "$name: both sides take the study's strategy keys" \
      test "$(jq '.megatron.strategy.overlap_tp_backward and ."7d".strategy.overlap_tp_backward' "$j")" = true
    case $name in *_ring*)
      check "$name: the ring baseline has no Ulysses" test "$(jq '.megatron.strategy.cp_ulysses' "$j")" -eq 1 ;;
    esac
    speedup=$(jq '.speedup' "$j")
    check "$name: the CSV holds the cell's speed-up" \
      python3 -c 'import csv,sys; r=[x for x in csv.DictReader(open(sys.argv[1])) if x["cell"]==sys.argv[2]]; assert len(r)==1 and abs(float(r[0]["speedup"])-float(sys.argv[3]))<1e-12' \
      "$tmp/one/study.csv" "$name" "$speedup"
  done
fi

# A cell borrows the simulations its twin (the same search with the other
# baseline) finished, and the search its twin ran for it just before: each
# a2a cell from its ring twin.  Its own records still hold every
# simulation, and run alone (no twin to borrow from) it gives the same
# figures.
check "each a2a cell borrows from its ring twin" \
  test "$(grep -c '_a2a[^ ]*: speed-up .*borrowed from the ring twin' "$tmp/err")" -eq $((cells / 2))
check "each a2a cell takes the search its ring twin ran for it" \
  test "$(grep -c '_a2a[^ ]*: speed-up .*its twin.s search' "$tmp/err")" -eq $((cells / 2))
check "no ring cell borrows (its twin runs after it)" test "$(grep -c '_ring[^ ]*: speed-up .*borrowed' "$tmp/err")" -eq 0
if command -v jq >/dev/null 2>&1; then
  for j in "$tmp"/one/cells/*.json; do
    check "$(basename "$j" .json): the records hold every simulation of the cell" \
      test "$(jq '.counts.simulated' "$j")" -eq "$(wc -l <"${j%.json}.jsonl")"
  done
fi
# A rerun with --resume: every cell finished, nothing simulated again.
cp -r "$tmp/one/cells" "$tmp/cells.before"
cp "$tmp/one/study.csv" "$tmp/run.csv"
cp "$tmp/one/study.md" "$tmp/run.md"
capture "$bin" study "$study" --out "$tmp/one" -j 1 --resume
check "resume succeeds" test "$status" -eq 0
# every figure of the summaries reads back as the double computed
check "the table read back from the summaries is the run's" cmp -s "$tmp/run.csv" "$tmp/one/study.csv"
check "the Markdown table too (its command aside)" \
  cmp -s <(grep -v '^Regenerate with' "$tmp/run.md") <(grep -v '^Regenerate with' "$tmp/one/study.md")
check "resume skips every finished cell" test "$(grep -c 'finished earlier, skipped' "$tmp/err")" -eq $cells
check "resume runs nothing" test "$(grep -c 'speed-up' "$tmp/err")" -eq 0
check "resume leaves the cells as they were" diff -r "$tmp/cells.before" "$tmp/one/cells"
cp "$tmp/one/study.csv" "$tmp/one.csv"
# a cell whose summary is gone runs again; the others are skipped
rm "$tmp/one/cells/gpt-1.7b_dgx-a100-d16_s1024_hbm40_a2a.json"
capture "$bin" study "$study" --out "$tmp/one" -j 1 --resume
check "resume runs the unfinished cell" test "$(grep -c 'speed-up' "$tmp/err")" -eq 1
check "the unfinished cell takes its simulations from its records" \
  grep -Eq "_s1024_hbm40_a2a: speed-up .*\(0 simulated, [1-9][0-9]* from its records\)" "$tmp/err"
check "resume gives the same table" cmp -s "$tmp/one.csv" "$tmp/one/study.csv"

capture "$bin" study "$study" --out "$tmp/alone" -j 1 --cells '*_a2a*'
check "a2a cells alone borrow nothing" test "$(grep -c 'borrowed' "$tmp/err")" -eq 0
check "a2a cells alone search themselves" test "$(grep -c "twin's search" "$tmp/err")" -eq 0
capture "$bin" study "$study" --out "$tmp/alone" -j 1 --cells '*_a2a*' --resume
check "a2a cells alone give the figures of those that borrowed" \
  cmp -s <(grep '_a2a' "$tmp/one.csv") <(grep '_a2a' "$tmp/alone/study.csv")

# A shard runs its share of the cells and writes no table; the other
# shards' cells (here those of the first run) joined into its folder, a
# resume runs nothing and writes the table of one run.
capture "$bin" study "$study" --out "$tmp/sh" -j 1 --shard 1/3
check "a shard succeeds" test "$status" -eq 0
check "a shard runs its third of the cells" test "$(grep -c 'speed-up' "$tmp/err")" -eq $((cells / 3))
check "a shard says how to write the table" grep -q "shard 1/3 done.*--resume" "$tmp/out"
check "a shard writes no table" test ! -e "$tmp/sh/study.md"
for j in "$tmp"/one/cells/*.json; do
  [ -e "$tmp/sh/cells/$(basename "$j")" ] || cp "${j%.json}".* "$tmp/sh/cells/"
done
capture "$bin" study "$study" --out "$tmp/sh" -j 1 --resume
check "the resume after the shards runs nothing" test "$(grep -c 'speed-up' "$tmp/err")" -eq 0
check "shards and resume give the table of one run" cmp -s "$tmp/one.csv" "$tmp/sh/study.csv"

# --cells runs the cells named alone; with --resume the table also holds
# the cells finished earlier, and the rest are "not run".
capture "$bin" study "$study" --out "$tmp/some" -j 1 --cells '*_s1024_*_ring'
check "--cells succeeds" test "$status" -eq 0
check "--cells runs the matching cell only" test "$(grep -c 'speed-up' "$tmp/err")" -eq 1
check "--cells: its table marks the others not run" test "$(grep -c '| not run |' "$tmp/some/study.md")" -eq $((cells - 1))
capture "$bin" study "$study" --out "$tmp/some" -j 1 --cells '*_s2048_*,*nic*' --resume
check "--cells --resume runs the newly named cells" test "$(grep -c 'speed-up' "$tmp/err")" -eq 4
check "--cells --resume: the table holds those finished earlier too" \
  test "$(grep -c '| not run |' "$tmp/some/study.md")" -eq 1
check "--cells: the recorded command regenerates the whole study" \
  grep -qx "heptasim study $study --out $tmp/some -j 1 --resume" "$tmp/some/command.txt"
check "--cells --list lists the matching cells" \
  test "$("$bin" study "$study" --list --cells '*_a2a*' | cut -f1 | grep -c '_a2a')" -eq $((cells / 2))
expect 2 "tiny.json: '--cells nothing\*' matches no cell name" -- study "$study" --cells 'nothing*'

# A platform with a base: factors and axes scale the inherited values.
printf '%s\n' '{"name": "based", "models": ["gpt-1.7b"], "platforms": [{"platform": "dgx-a100-calibrated", "devices": 16, "hbm": [0.5]}], "seq_lens": [1024], "tokens_per_step": 32768, "sensitivity": {"platform": "dgx-a100-calibrated", "seq_lens": [1024], "axes": [{"key": "network.nic_GBps", "factors": [2]}]}}' >"$tmp/based.json"
"$bin" study "$tmp/based.json" --list >"$tmp/based.list" 2>"$tmp/based.err"
check "a study on a platform with a base: half its inherited HBM" grep -q '_hbm40_ring' "$tmp/based.list"
check "a study on a platform with a base: twice its inherited NIC bandwidth" grep -q 'nic_GBps=50' "$tmp/based.list"

# Bad study files: one line naming the file and the key, exit 2.
bad() { # bad NAME JSON PATTERN...
  local name=$1 json=$2
  shift 2
  printf '%s\n' "$json" >"$tmp/$name.json"
  expect 2 "$tmp/$name.json" "$@" -- study "$tmp/$name.json" --out "$tmp/bad"
}
ok_part='"name": "t", "models": ["gpt-1.7b"], "platforms": [{"platform": "dgx-a100", "devices": 16}]'
bad tokens "{$ok_part, \"seq_lens\": [1024, 3000], \"tokens_per_step\": 32768}" '\.tokens_per_step: 32768 is not a multiple of the sequence length 3000'
bad unknown "{$ok_part, \"seq_lens\": [1024], \"tokens_per_step\": 32768, \"seqlens\": [1]}" '\.seqlens: unknown key'
bad cp "{$ok_part, \"seq_lens\": [1024], \"tokens_per_step\": 32768, \"megatron_cp\": [\"ulysses\"]}" '\.megatron_cp\[0\]: must be "ring" or "a2a"'
bad nomodels '{"name": "t", "platforms": ["dgx-a100"], "seq_lens": [1024], "tokens_per_step": 32768}' '\.models: missing'
bad model "{\"name\": \"t\", \"models\": [\"no-such-model\"], \"platforms\": [\"dgx-a100\"], \"seq_lens\": [1024], \"tokens_per_step\": 32768}" "model 'no-such-model' not found"
bad axis "{$ok_part, \"seq_lens\": [1024], \"tokens_per_step\": 32768, \"sensitivity\": {\"platform\": \"dgx-a100\", \"axes\": [{\"key\": \"network.no_such\", \"factors\": [2]}]}}" "\.sensitivity\.axes\[0\]: dgx-a100: 'network.no_such' is not a number"
bad hbm "{$ok_part, \"seq_lens\": [1024], \"tokens_per_step\": 32768, \"hbm\": [-1]}" '\.hbm\[0\]: must be a factor'
bad name '{"name": "../up", "models": ["gpt-1.7b"], "platforms": ["dgx-a100"], "seq_lens": [1024], "tokens_per_step": 1024}' '\.name: must be the study'
bad json '{"name": "t",' 'not valid JSON'
bad strategy "{$ok_part, \"seq_lens\": [1024], \"tokens_per_step\": 32768, \"strategy\": {\"global_batch\": 8}}" '\.strategy\.global_batch: not a strategy key'
check "a refused study writes nothing" test ! -e "$tmp/bad"
expect 2 "give one study file" -- study
expect 2 "'--megatron-cp' takes 'ring' or 'a2a'" -- compare --megatron-cp ulysses

# Each speed-up carries the error of a ratio on its platform: compare's
# own figure, "beyond" exactly when the speed-up exceeds 1 + 2 x that
# error; a summary without it (written before the bands) gets it from
# the platform on a resume.
capture "$bin" compare -m gpt-1.7b -p dgx-a100 --devices 16 --top 1 -q --json "$tmp/pair.json"
pair=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["speedup_error"])' "$tmp/pair.json")
check "compare on the study's platform has a pair error" python3 -c 'import sys; assert float(sys.argv[1]) > 0' "$pair"
bands() {
  python3 - "$1/study.csv" "$1/study.md" "$pair" <<'PY'
import csv, re, sys
rows = list(csv.DictReader(open(sys.argv[1])))
md = open(sys.argv[2]).read()
pair = float(sys.argv[3])
for r in rows:
    assert abs(float(r["speedup_error"]) - pair) < 1e-12, r["cell"]
    sure = float(r["speedup"]) > 1 + 2 * pair
    assert r["speedup_exceeds_error"] == ("true" if sure else "false"), r["cell"]
    assert "%.3fx, %s +-%.1f %%" % (float(r["speedup"]), "beyond" if sure else "within", 200 * pair) in md
beyond = sum(r["speedup_exceeds_error"] == "true" for r in rows)
assert "%d of the %d cells with an error band have a speed-up beyond it" % (beyond, len(rows)) in md
PY
}
check "the CSV and the table carry each speed-up's band" bands "$tmp/one"
cp -r "$tmp/one" "$tmp/old"
for j in "$tmp"/old/cells/*.json; do
  sed -i -e 's/"speedup_error":[^,]*,//' -e 's/"speedup_exceeds_error":[^,]*,//' "$j"
done
check "old summaries have no band" test -z "$(grep -l speedup_error "$tmp"/old/cells/*.json)"
capture "$bin" study "$study" --out "$tmp/old" --resume -j 1
check "resume of old summaries succeeds" test "$status" -eq 0
check "old summaries get the platform's band" bands "$tmp/old"

summary
