#!/usr/bin/env bash
# search_cache.sh - the search cache: a second sweep of the same inputs, and
# a compare of them, take the search back from the cache, say so and give
# the JSON of a search run again (timing apart); other inputs search again;
# --no-cache and HEPTASIM_CACHE=off keep nothing; a damaged, foreign or
# truncated file is ignored with one warning and the result is the same.
. "$(dirname "$0")/../lib/cli.sh" "$@"

export HEPTASIM_CACHE="$tmp/cache"
small=(-m gpt-7.5b --devices 32 --set platform.supernode.devices=16 --set model.layers=4 --global-batch 32
       --top 4 -j 2)
strip() { jq -S 'del(.timing)' "$1"; }

"$bin" sweep "${small[@]}" --json "$tmp/first.json" >"$tmp/first.txt" 2>"$tmp/first.err"
check "a first sweep runs" test $? -eq 0
check "a first sweep searches" grep -q "estimated in .* by 2 processes" "$tmp/first.txt"
n=$(ls "$tmp/cache"/search-*.bin 2>/dev/null | wc -l)
check "it keeps one file in the cache (got $n)" test "$n" -eq 1
"$bin" sweep "${small[@]}" --json "$tmp/again.json" >"$tmp/again.txt" 2>"$tmp/again.err"
check "a second sweep of the same inputs runs" test $? -eq 0
check "it says the search was reused" grep -q "reused from the search cache $tmp/cache/search-" "$tmp/again.txt"
check "its JSON names the cache file" jq -e '.timing.search_cache | startswith("'"$tmp"'/cache/")' "$tmp/again.json"
check "the same JSON as the sweep that searched" cmp -s <(strip "$tmp/first.json") <(strip "$tmp/again.json")
check "nothing on stderr" test ! -s "$tmp/again.err"

"$bin" compare "${small[@]}" --json "$tmp/cmp.json" >"$tmp/cmp.txt"
check "a compare of the same inputs reuses the sweep's search" grep -q "reused from the search cache" "$tmp/cmp.txt"
"$bin" compare "${small[@]}" --no-cache --json "$tmp/cmp-fresh.json" >"$tmp/cmp-fresh.txt"
check "compare --no-cache searches" grep -q "estimated in .* by 2 processes" "$tmp/cmp-fresh.txt"
check "compare: the same JSON reused or searched" cmp -s <(strip "$tmp/cmp.json") <(strip "$tmp/cmp-fresh.json")

"$bin" sweep "${small[@]}" --set platform.network.nic_GBps=12.5 -q --json "$tmp/whatif.json"
check "a what-if searches (other inputs)" jq -e '.timing | has("search_cache") | not' "$tmp/whatif.json"
n=$(ls "$tmp/cache"/search-*.bin | wc -l)
check "and keeps its own file (got $n)" test "$n" -eq 2

# damage every file: one warning each time, the result unchanged
for how in flip junk cut; do
  for f in "$tmp/cache"/search-*.bin; do
    case $how in
      flip) printf 'XY' | dd of="$f" bs=1 seek=3000 conv=notrunc 2>/dev/null ;;
      junk) head -c 512 /dev/urandom >"$f" ;;
      cut) head -c 2000 "$f" >"$f.part" && mv "$f.part" "$f" ;;
    esac
  done
  "$bin" sweep "${small[@]}" -q --json "$tmp/$how.json" 2>"$tmp/$how.err"
  check "$how: the sweep runs" test $? -eq 0
  check "$how: one warning line" test "$(wc -l <"$tmp/$how.err")" -eq 1
  check "$how: the warning names the file and says it is ignored" \
    grep -q "heptasim: cache file $tmp/cache/search-.*ignored, searching again" "$tmp/$how.err"
  check "$how: the same JSON" cmp -s <(strip "$tmp/first.json") <(strip "$tmp/$how.json")
done

rm -rf "$tmp/cache"
"$bin" sweep "${small[@]}" --no-cache -q
check "--no-cache keeps nothing" test ! -e "$tmp/cache"
HEPTASIM_CACHE=off "$bin" sweep "${small[@]}" -q
check "HEPTASIM_CACHE=off keeps nothing" test ! -e "$tmp/cache"

summary
