#!/usr/bin/env bash
# progress.sh - progress of long runs: `run --progress FILE` and `sweep
# --progress FILE` write well-formed lines (run: the simulated clock against
# the estimate, then a last "done" line with the step time; sweep: the
# search, then the simulations done of all), and stdout and the JSON are
# byte-identical to a run without it (but simulator.wall_s and the sweep's
# "timing", wall times).  On a terminal (faked with util-linux's script) the
# line goes to stderr, and -q silences it.  --progress - and an unwritable
# file are refused.  Nothing is asserted on time.
. "$(dirname "$0")/../lib/cli.sh" "$@"

# Wall times are the only values allowed to differ: strip FILE writes FILE.cmp.
strip() {
  sed -E -e 's/("wall_s":[[:space:]]*)[-+0-9.eE]+/\1WALL/' -e '/"timing":[[:space:]]*\{/,/\}/d' \
    -e 's/^simulated in [0-9.]+ s /simulated in WALL s /' "$1" >"$1.cmp"
}
# same A B WHAT: A and B (stripped) are identical, and A is not empty unless EMPTY_OK.
same() {
  strip "$1"
  strip "$2"
  if [ ! -s "$1" ] && [ -z "${EMPTY_OK:-}" ]; then ko "$3: no output"
  elif cmp -s "$1.cmp" "$2.cmp"; then ok
  else ko "$3 differs with --progress:"; diff "$1.cmp" "$2.cmp" | head -n 10 | sed 's/^/    /'; fi
}
# lines FILE WHAT REGEX: FILE has lines, every one of them matching REGEX.
lines() {
  if [ ! -s "$1" ]; then ko "$2: empty progress log"
  elif bad=$(grep -Ev -- "$3" "$1"); then ko "$2: malformed progress lines:"; echo "$bad" | head -n 5 | sed 's/^/    /'
  else ok; fi
}

num='[0-9]+(\.[0-9]+)?'
dur="($num s|[0-9]+m[0-9]{2}s|[0-9]+h[0-9]{2}m|more than 99 h)"
run_line="^heptasim run: simulated ($num s of about $num s \([0-9]+ %\), $dur wall(, about $dur left)?"
run_line+="|$num s, past the estimate of $num s, $dur wall|$num s in $dur wall, done)\$"

# a run long enough (about a second) for the engine to report on its way
run=(run --set model.layers=32 --set global_batch=256)
"$bin" "${run[@]}" --json "$tmp/plain.json" >"$tmp/plain.out" 2>"$tmp/plain.err" || ko "run exited $?"
"$bin" "${run[@]}" --json "$tmp/prog.json" --progress "$tmp/run.log" >"$tmp/prog.out" 2>"$tmp/prog.err" ||
  ko "run --progress exited $?"
same "$tmp/plain.out" "$tmp/prog.out" "run's stdout"
EMPTY_OK=1 same "$tmp/plain.err" "$tmp/prog.err" "run's stderr (not a terminal)"
same "$tmp/plain.json" "$tmp/prog.json" "run --json"
lines "$tmp/run.log" "run --progress" "$run_line"
step=$(sed -n 's/^[[:space:]]*"step_time_s":[[:space:]]*\([0-9.eE+-]*\).*/\1/p' "$tmp/plain.json" | head -n 1)
last=$(tail -n 1 "$tmp/run.log")
if [[ $last =~ ^heptasim\ run:\ simulated\ ([0-9.]+)\ s\ in\ .*done$ ]] &&
  awk -v a="${BASH_REMATCH[1]}" -v b="$step" 'BEGIN { exit !(a - b < 0.0005 && b - a < 0.0005) }'; then ok; else
  ko "run --progress: the last line should be done at the step time $step s: '$last'"
fi

# sweep: the search, then the simulations counted by the runner
sweep=(sweep -m gpt-7.5b -p dgx-h100 --devices 16 --set model.layers=4 --global-batch 16 --space megatron --top 3 -j 2
       -q)
"$bin" "${sweep[@]}" --json "$tmp/s1.json" >"$tmp/s1.out" || ko "sweep exited $?"
"$bin" "${sweep[@]}" --json "$tmp/s2.json" --progress "$tmp/sweep.log" >"$tmp/s2.out" || ko "sweep --progress exited $?"
same "$tmp/s1.json" "$tmp/s2.json" "sweep --json"
EMPTY_OK=1 same "$tmp/s1.out" "$tmp/s2.out" "sweep's stdout"
sweep_line="^heptasim sweep: (searched [0-9]+/[0-9]+ \([0-9]+ %\), $dur wall"
sweep_line+="|[0-9]+/[0-9]+ simulated, [0-9]+ running, $dur wall(, about $dur left)?)\$"
lines "$tmp/sweep.log" "sweep --progress" "$sweep_line"
check "sweep --progress: the last line counts every simulation done" \
  grep -Eq '^heptasim sweep: 3/3 simulated, 0 running, ' <(tail -n 1 "$tmp/sweep.log")

# a terminal: the line on stderr, redrawn in place; none with -q
if command -v script >/dev/null 2>&1 && script -qc true /dev/null >/dev/null 2>&1 </dev/null; then
  tiny=(run -m gpt-7.5b -p dgx-h100 --devices 16 --set model.layers=4 --set tp_x=2 --set pp=4 --set dp=2
        --set vpp=1 --set schedule=1f1b --set global_batch=16)
  # stderr is the terminal; what it shows is script's output
  script -qc "$(printf '%q ' "$bin" "${tiny[@]}" --json "$tmp/tty.json") >/dev/null" /dev/null >"$tmp/tty.err" \
    </dev/null
  if grep -q $'\r''heptasim run: simulated .* done' "$tmp/tty.err"; then ok; else
    ko "run on a terminal: no progress line on stderr:"; head -c 300 "$tmp/tty.err" | cat -v | sed 's/^/    /'
  fi
  script -qc "$(printf '%q ' "$bin" "${tiny[@]}" -q) >/dev/null" /dev/null >"$tmp/ttyq.err" </dev/null
  if [ ! -s "$tmp/ttyq.err" ]; then ok; else
    ko "run -q on a terminal printed on stderr:"; head -c 300 "$tmp/ttyq.err" | cat -v | sed 's/^/    /'
  fi
  "$bin" "${tiny[@]}" --json "$tmp/notty.json" -q
  same "$tmp/notty.json" "$tmp/tty.json" "run --json on a terminal"
else
  skip "no terminal to fake: util-linux's script is not installed"
fi

# refusals
expect 2 "--progress -" "never goes to stdout" -- run --progress - -q
expect 1 "$tmp/none/p.log: cannot write the progress log" -- run --progress "$tmp/none/p.log" -q
expect 2 "option '--progress' does not apply" -- memory --progress "$tmp/m.log"
summary
