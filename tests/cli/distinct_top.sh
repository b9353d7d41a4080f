#!/usr/bin/env bash
# distinct_top.sh - `sweep --top K` gives K distinct simulated strategies:
# alike candidates (the same figures) fold into one row and the next best
# estimates are simulated in their place; the rows list their alike ones
# (alike_indices), each of which names its row (alike_of); a shard keeps
# the plain top K, which merge needs; a resume takes back the records of
# the candidates simulated in the place of alike ones.
. "$(dirname "$0")/../lib/cli.sh" "$@"

small=(-m gpt-7.5b --devices 8 --set model.layers=4 --global-batch 8 -j 2 -q)
"$bin" sweep "${small[@]}" --top 6 --json "$tmp/top6.json"
check "the sweep runs" test $? -eq 0
rows=$(jq '[.ranking[] | select(.simulated and (.alike_of == null))] | length' "$tmp/top6.json")
check "6 distinct simulated rows (got $rows)" test "$rows" -eq 6
folded=$(jq '[.ranking[] | select(.alike_of != null)] | length' "$tmp/top6.json")
check "this case has alike candidates (got $folded)" test "$folded" -gt 0
simulated=$(jq '.counts.simulated' "$tmp/top6.json")
check "as many more simulated as were folded ($simulated = 6 + $folded)" test "$simulated" -eq $((6 + folded))
check "each row lists its alike ones, each naming the row" jq -e '
  [.ranking[] | select(.alike != null) | . as $row | .alike_indices as $u
   | ($u | length) == ($row.alike - 1)] | all' "$tmp/top6.json"
check "and every folded record is listed under its row" jq -e '
  . as $d | [.ranking[] | select(.alike_of != null) | . as $f
   | ($d.ranking[] | select(.index == $f.alike_of) | .alike_indices | index($f.index)) != null] | all' "$tmp/top6.json"

# interrupted after all but the last record: resume takes back the widened
# candidates' records too and gives the same ranking
"$bin" sweep "${small[@]}" --top 6 --out "$tmp/all.jsonl" -q
head -n $((6 + folded - 1)) "$tmp/all.jsonl" >"$tmp/cut.jsonl"
"$bin" sweep "${small[@]}" --top 6 --out "$tmp/cut.jsonl" --resume --json "$tmp/resumed.json"
check "resume of a widened top runs" test $? -eq 0
r=$(jq '.counts.resumed' "$tmp/resumed.json")
check "every record but the last is resumed (got $r)" test "$r" -eq $((6 + folded - 1))
check "the same ranking as the uninterrupted sweep" \
  cmp -s <(jq -S 'del(.timing) | del(.counts.resumed)' "$tmp/top6.json") <(jq -S 'del(.timing) | del(.counts.resumed)' "$tmp/resumed.json")

"$bin" sweep "${small[@]}" --top 6 --shard 0/2 --json "$tmp/shard.json"
check "a shard runs" test $? -eq 0
n=$(jq '.counts.simulated' "$tmp/shard.json")
check "a shard simulates its half of the plain top 6 (got $n)" test "$n" -eq 3

# --budget: after the distinct top, top more of the best estimates at a time
# until the simulated best holds for a round; when it held, a plain sweep of
# as many candidates finds the same best; refused with a shard
"$bin" sweep "${small[@]}" --top 2 --budget 600 --json "$tmp/budget.json"
check "sweep --budget runs" test $? -eq 0
rounds=$(jq '.budget.rounds' "$tmp/budget.json")
check "at least one round ($rounds)" test "$rounds" -ge 1
if [ "$(jq '.budget.best_held' "$tmp/budget.json")" = true ]; then
  n=$(jq '.counts.simulated' "$tmp/budget.json")
  "$bin" sweep "${small[@]}" --top "$n" --json "$tmp/wide.json"
  check "the best held: as a plain sweep of $n" test "$(jq '.ranking[0].index' "$tmp/budget.json")" = \
    "$(jq '.ranking[0].index' "$tmp/wide.json")"
  check "the last round did not change it: the best is not among the last 2" \
    jq -e '.agreement.best_estimate_rank <= (.counts.simulated - 2)' "$tmp/budget.json"
else
  check "the budget ran out or nothing was left" jq -e '.budget.rounds >= 1' "$tmp/budget.json"
fi
check "no budget: budget null" jq -e '.budget == null' "$tmp/top6.json"
expect 2 "'--budget' widens the whole top" -- sweep "${small[@]}" --budget 5 --shard 0/2

summary
