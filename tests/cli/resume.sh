#!/usr/bin/env bash
# resume.sh - nothing lost: a sweep stopped by SIGINT, killed with SIGKILL
# (a torn last line, NULs), with a simulation killed (as the out-of-memory
# killer does), or out of disk space, carries on with --resume to exactly
# the ranking of an uninterrupted sweep; records of another kind are
# refused, junk is skipped with one warning, --out is locked, and a full
# disk leaves an earlier result file as it was.  No check depends on
# timing: signals are sent once the first record is in the file.
. "$(dirname "$0")/../lib/cli.sh" "$@"

# The Megatron-style space searches in a fraction of a second, and 256
# devices simulated rank by rank, one at a time, take a few tenths of a
# second each: the signals below arrive while simulations are left to run
# (with the 7D space's longer search and fast simulations, the records came
# in one burst and the sweep could finish before the signal).
top=6
args=(-m gpt-7.5b --devices 256 --set platform.supernode.devices=16 --set model.layers=16 --global-batch 256
      --space megatron --symmetry none --top $top -j 1 -q)

# the ranking a records file gives: one record per candidate, ranked
ranking() { "$bin" merge "$1" --out "$2" -q 2>/dev/null; }

# waits (at most 20 s) until file $1 holds a whole line
first_record() {
  local i
  for i in $(seq 400); do
    [ -s "$1" ] && grep -q . "$1" && [ "$(tail -c 1 "$1" | od -An -c | tr -d ' ')" = '\n' ] && return 0
    sleep 0.05
  done
  return 1
}

"$bin" sweep "${args[@]}" --out "$tmp/clean.jsonl" --json "$tmp/clean.json"
check "uninterrupted sweep" test $? -eq 0
ranking "$tmp/clean.jsonl" "$tmp/clean.rank"
check "every record is final" test "$(grep -c "\"final\":true" "$tmp/clean.jsonl")" -eq $top

# --- SIGINT (and SIGTERM) mid-sweep: the children are stopped and reaped
for sig in INT TERM; do
  f=$tmp/$sig.jsonl
  "$bin" sweep "${args[@]}" --out "$f" 2>"$tmp/$sig.err" &
  pid=$!
  first_record "$f"
  kill -$sig $pid
  wait $pid
  st=$?
  want=$((128 + $(kill -l $sig)))
  check "SIG$sig: exit $want (got $st)" test $st -eq $want
  check "SIG$sig: one line on stderr" test "$(wc -l <"$tmp/$sig.err")" -eq 1
  [ "$(wc -l <"$tmp/$sig.err")" -eq 1 ] || sed 's/^/  stderr: /' "$tmp/$sig.err"
  check "SIG$sig: no SimGrid backtrace" test -z "$(grep -E 'EngineImpl|Backtrace|assert' "$tmp/$sig.err")"
  check "SIG$sig: no child left" test -z "$(pgrep -P $pid)"
  check "SIG$sig: whole lines kept" test "$(tail -c 1 "$f" | od -An -c | tr -d ' ')" = '\n'
  "$bin" sweep "${args[@]}" --out "$f" --resume
  check "SIG$sig: resume succeeds" test $? -eq 0
  ranking "$f" "$tmp/$sig.rank"
  check "SIG$sig: resumed ranking equals the uninterrupted one" cmp -s "$tmp/clean.rank" "$tmp/$sig.rank"
done

# --- SIGKILL of the parent, then a torn line and a run of NULs
f=$tmp/kill.jsonl
"$bin" sweep "${args[@]}" --out "$f" 2>/dev/null &
pid=$!
first_record "$f"
kill -KILL $pid
wait $pid 2>/dev/null
for i in $(seq 100); do pgrep -f "$f" >/dev/null || break; sleep 0.05; done
check "SIGKILL: the children die with the parent" test -z "$(pgrep -f "$f")"
printf '{"index": 3, "space": "7d", "inp' >>"$f"
printf '\n\0\0\0\0\0\0\0\0\n' >>"$f"
head -c 40 /dev/urandom | tr -d '\n' >>"$f"
capture "$bin" sweep "${args[@]}" --out "$f" --resume
check "SIGKILL: resume succeeds" test $status -eq 0
check "SIGKILL: one warning counting the skipped lines" grep -Eq "skipped 3 unreadable lines" "$tmp/err"
ranking "$f" "$tmp/kill.rank"
check "SIGKILL: resumed ranking equals the uninterrupted one" cmp -s "$tmp/clean.rank" "$tmp/kill.rank"

# --- a simulation killed (the out-of-memory killer's SIGKILL): not final
f=$tmp/oom.jsonl
"$bin" sweep "${args[@]}" --out "$f" 2>"$tmp/oom.err" &
pid=$!
killed=""
for i in $(seq 400); do
  # the records file opens once the search (whose workers are children too) is over
  c=$([ -e "$f" ] && pgrep -P $pid | head -1)
  if [ -n "$c" ] && kill -KILL "$c" 2>/dev/null; then killed=$c; break; fi
  sleep 0.02
done
wait $pid
st=$?
if [ -n "$killed" ] && grep -q '"final":false' "$f"; then
  check "killed simulation: sweep exits 1" test $st -eq 1
  check "killed simulation: one line saying some failed" grep -Eq "simulations failed.*SIGKILL.*--resume" "$tmp/oom.err"
  "$bin" sweep "${args[@]}" --out "$f" --resume
  check "killed simulation: resume retries it" test $? -eq 0
  ranking "$f" "$tmp/oom.rank"
  check "killed simulation: resumed ranking equals the uninterrupted one" cmp -s "$tmp/clean.rank" "$tmp/oom.rank"
else
  skip "no simulation could be killed before it finished"
fi

# --- disk full (a file size limit): the sweep stops with exit 1, resumes
f=$tmp/full.jsonl
cp "$tmp/clean.json" "$tmp/good.json"
capture bash -c "ulimit -f 2; exec \"\$0\" \"\$@\"" "$bin" sweep "${args[@]}" --out "$f" --json "$tmp/good.json"
check "disk full: exit 1" test $status -eq 1
check "disk full: one line naming the records" grep -Eq "full.jsonl: cannot write" "$tmp/err"
check "disk full: the earlier --json file is kept" cmp -s "$tmp/clean.json" "$tmp/good.json"
check "disk full: no temporary file left" test -z "$(ls -A "$tmp" | grep '^\.good')"
"$bin" sweep "${args[@]}" --out "$f" --resume
check "disk full: resume succeeds" test $? -eq 0
ranking "$f" "$tmp/full.rank"
check "disk full: resumed ranking equals the uninterrupted one" cmp -s "$tmp/clean.rank" "$tmp/full.rank"

# --- records heptasim never writes are refused by resume and merge
sed '1s/"step_time_s":[0-9.e+-]*/"step_time_s":-5/' "$tmp/clean.jsonl" >"$tmp/neg.jsonl"
expect 2 "neg.jsonl: line 1" "step_time_s" -- merge "$tmp/neg.jsonl"
expect 2 "neg.jsonl: line 1" "step_time_s" -- sweep "${args[@]}" --out "$tmp/neg.jsonl" --resume
sed '1s/"space"/"spice"/' "$tmp/clean.jsonl" >"$tmp/key.jsonl"
expect 2 "key.jsonl: line 1" "spice" -- merge "$tmp/key.jsonl"
{ head -c 16 /dev/zero; echo; head -2 "$tmp/clean.jsonl"; } >"$tmp/nul.jsonl"
capture "$bin" merge "$tmp/nul.jsonl" -q
check "records after a NUL run are read" test $status -eq 0
check "the NUL run is reported" grep -q "skipped 1 unreadable line" "$tmp/err"

# --- a resumed record keeps its simulation, not its estimate: the search's
# estimate is this binary's (records written before a change to the
# estimate are still the same simulations)
sed 's/"estimate_step_time_s":[0-9.e+-]*/"estimate_step_time_s":99.5/' "$tmp/clean.jsonl" >"$tmp/old_est.jsonl"
"$bin" sweep "${args[@]}" --out "$tmp/old_est.jsonl" --resume --json "$tmp/old_est.json"
check "old estimates: resume succeeds" test $? -eq 0
check "old estimates: nothing simulated again" test "$(grep -c . "$tmp/old_est.jsonl")" -eq $top
check "old estimates: the search's estimates are reported" \
  test "$(grep -Ec '"estimate_step_time_s":[[:space:]]*99.5' "$tmp/old_est.json")" -eq 0
check "old estimates: the simulations are kept" \
  test "$(grep -Eo '"step_time_s":[[:space:]]*[0-9.e+-]+' "$tmp/old_est.json" | sort)" = \
       "$(grep -Eo '"step_time_s":[[:space:]]*[0-9.e+-]+' "$tmp/clean.json" | sort)"

# --- --out locked against a second writer
if command -v flock >/dev/null 2>&1; then
  : >"$tmp/locked.jsonl"
  flock "$tmp/locked.jsonl" sleep 30 &
  holder=$!
  for i in $(seq 100); do flock -n "$tmp/locked.jsonl" true || break; sleep 0.05; done
  expect 1 "locked.jsonl" "being written by" -- sweep "${args[@]}" --out "$tmp/locked.jsonl"
  kill $holder 2>/dev/null
  wait $holder 2>/dev/null
else
  skip "no flock command"
fi

summary
