#!/usr/bin/env bash
# search_workers.sh - a search shared out among worker processes (-j 2):
# the same ranking as one process; a signal in the middle of it stops and
# reaps the workers with one line and status 128+N; a worker killed (as the
# out-of-memory killer does) fails the sweep with one line naming it.  The
# signals are sent once a worker is seen, during a search that lasts tens
# of seconds.
. "$(dirname "$0")/../lib/cli.sh" "$@"

small=(-m gpt-7.5b --devices 32 --set platform.supernode.devices=16 --set model.layers=4 --global-batch 32
       --top 4 -q)
"$bin" sweep "${small[@]}" -j 1 --json "$tmp/one.json"
check "search in one process" test $? -eq 0
"$bin" sweep "${small[@]}" -j 2 --json "$tmp/two.json"
check "search in two processes" test $? -eq 0
strip() { grep -v '"search_s"\|"per_candidate_us"\|"search_processes"\|"simulate_s"\|"jobs"' "$1"; }
check "the same result with one and two processes" cmp -s <(strip "$tmp/one.json") <(strip "$tmp/two.json")
check "the JSON says two processes searched" grep -Eq '"search_processes":[[:space:]]*2' "$tmp/two.json"

# a search of 28 million candidates: long enough to catch its workers
big=(sweep -m gpt-310b -p ascend-a3-2048 --top 1 -j 2 -q)

# waits (at most 20 s) for a child of $1 and prints it
a_child() {
  local i c
  for i in $(seq 400); do
    c=$(pgrep -P "$1" | head -1)
    [ -n "$c" ] && { echo "$c"; return 0; }
    sleep 0.05
  done
  return 1
}

for sig in INT TERM; do
  "$bin" "${big[@]}" 2>"$tmp/$sig.err" &
  pid=$!
  a_child $pid >/dev/null
  kill -$sig $pid
  wait $pid
  st=$?
  want=$((128 + $(kill -l $sig)))
  check "SIG$sig while searching: exit $want (got $st)" test $st -eq $want
  check "SIG$sig while searching: one line saying so" \
    test "$(wc -l <"$tmp/$sig.err")" -eq 1 -a -n "$(grep "stopped by SIG$sig while searching" "$tmp/$sig.err")"
  check "SIG$sig while searching: no worker left" test -z "$(pgrep -P $pid)"
done

"$bin" "${big[@]}" 2>"$tmp/kill.err" &
pid=$!
c=$(a_child $pid)
kill -KILL "$c"
wait $pid
st=$?
check "a worker killed: exit 1 (got $st)" test $st -eq 1
check "a worker killed: one line naming it and the signal" \
  test "$(wc -l <"$tmp/kill.err")" -eq 1 -a -n "$(grep -E "search worker [0-9]+ killed by signal 9 \(SIGKILL" "$tmp/kill.err")"
check "a worker killed: the other one is stopped" test -z "$(pgrep -P $pid)"

summary
