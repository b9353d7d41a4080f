#!/usr/bin/env bash
# hostile.sh - inputs meant to break the simulator rather than mistakes, one
# case per kind: platform figures that are positive but absurd (they once
# aborted SimGrid, or gave 1e9 s of silently capped traffic), SimGrid
# settings that hang a run or make it meaningless, JSON with a NUL byte or
# invalid UTF-8, HuggingFace files with a key given twice, paths that are
# not files (devices, FIFOs, loops of symbolic links, directories, names of
# 5000 characters), whole-number options at the edge of an int, empty
# values, sweep pins that break the rules, metric names that do not exist.
#
# Every case exits 2 (bad input) after exactly one line on stderr naming
# the culprit and what it may be, with no crash and no hang (each run has
# a time limit).  Cases run with a small valid baseline (a 4-layer model,
# 8 devices).
. "$(dirname "$0")/../lib/cli.sh" "$@"
cd "$tmp" || exit 1

small_inputs
# slow WANT PATTERN... -- ARGS...: expect, with 60 s to do it (a hang fails)
slow() {
  local want=$1 patterns=()
  shift
  while [ "$1" != -- ]; do patterns+=("$1"); shift; done
  shift
  expect_cmd "$want" "${patterns[@]}" -- timeout 60 "$bin" "$@"
}
if capture timeout 60 "$bin" run -q "${base[@]}"; then ok; else ko "the baseline does not run: $(cat "$tmp/err")"; fi

# -------------------------------------- platform figures: physical ranges
slow 2 "--set platform\.device\.peak_tflops=5e-324: \.device\.peak_tflops: expected a number in \[1e-06, 10000000\], got 4\.94[0-9]*e-324" \
  -- run -q "${base[@]}" --set platform.device.peak_tflops=5e-324
slow 2 "\.device\.hbm_TBps: expected a number in \[1e-06, 10000\], got 4\.94[0-9]*e-324" \
  -- run -q "${base[@]}" --set platform.device.hbm_TBps=5e-324
slow 2 "\.efficiency\.network: expected a number in \[0\.0001, 1\], got 1e-300" \
  -- run -q "${base[@]}" --set platform.efficiency.network=1e-300
slow 2 "\.efficiency\.gemm\[0\]: fraction must be in \[0\.0001, 1\], got 1e-300" \
  -- run -q "${base[@]}" --set 'platform.efficiency.gemm=[[1,1e-300],[10,0.2],[100,0.3]]'
slow 2 "\.network\.nic_GBps: expected a number in \[0\.0001, 100000\], got 1e\+300" \
  -- run -q "${base[@]}" --set platform.network.nic_GBps=1e300
slow 2 "\.node\.devices: expected an integer in \[1, 131072\], got 0" \
  -- run -q "${base[@]}" --set platform.node.devices=0
# a sweep refuses it up front too (it once exited 0 with its children killed)
slow 2 "\.device\.peak_tflops: expected a number in \[1e-06, 10000000\], got 4\.94[0-9]*e-324" \
  -- sweep -q "${M[@]}" "${P[@]}" --top 2 --jobs 1 --set platform.device.peak_tflops=5e-324

# ------------------------------------------------------- SimGrid settings
slow 2 "heptasim run: '--cfg network/crosstraffic:yes' needs '--symmetry none'" \
  -- run -q "${base[@]}" --cfg network/crosstraffic:yes
if capture timeout 60 "$bin" run -q "${base[@]}" --cfg network/crosstraffic:yes --symmetry none; then ok; else
  ko "cross traffic with --symmetry none does not run (status $status): $(cat "$tmp/err")"; fi
slow 2 "'--cfg network/bandwidth-factor:1e299': the value must be a number in \[0\.001, 1000\]" \
  -- run -q "${base[@]}" --cfg network/bandwidth-factor:1e299
slow 2 "'--cfg surf/precision:1e200': the value must be a number in \[1e-15, 1e-06\]" \
  -- run -q "${base[@]}" --cfg surf/precision:1e200
slow 2 "'--cfg network/TCP-gamma:1e-300': the value must be a number in \[1024, 1e\+12\], or 0 \(off\)" \
  -- run -q "${base[@]}" --cfg network/TCP-gamma:1e-300

# ------------------------------------------------------------ JSON text
# a valid object, a NUL byte, more JSON: the NUL is refused, not the end
{ head -c -1 small-model.json; printf '\0{"layers": 99}'; } >nul.json
n=$(($(wc -c <small-model.json)))
expect 2 "nul\.json: line 1: a NUL byte at byte $n " -- memory -q -m "$tmp/nul.json" "${P[@]}" "${S[@]}"
sed 's/"small"/"sm\xffall"/' small-model.json >latin1.json
expect 2 "latin1\.json: line 1: invalid UTF-8 at byte 13 " -- memory -q -m "$tmp/latin1.json" "${P[@]}" "${S[@]}"
expect 2 "--set model\.name=a\?b: not valid UTF-8" -- memory -q "${base[@]}" --set $'model.name=a\xffb'

# ---------------------------------------------------------- HuggingFace
mkdir -p hf
hf() { printf '{"num_hidden_layers": 4, "hidden_size": 256, "num_attention_heads": 8, "intermediate_size": 1024, "vocab_size": 1000%s}' "$1" >hf/config.json; }
hf ', "num_hidden_layers": 8'
expect 2 "hf/config\.json: \.num_hidden_layers: duplicate key \(transformers would silently take the last one" \
  -- memory -q -m "$tmp/hf" "${P[@]}" "${S[@]}"
hf ', "num_key_value_heads": 3'
expect 2 "hf/config\.json: \.num_key_value_heads: 3 does not divide num_attention_heads=8" \
  -- memory -q -m "$tmp/hf" "${P[@]}" "${S[@]}"
hf ', "num_local_experts": 4, "num_experts_per_tok": 8'
expect 2 "hf/config\.json: \.num_experts_per_tok: 8 is more than num_local_experts=4" \
  -- memory -q -m "$tmp/hf" "${P[@]}" "${S[@]}"
# gemma-7b: GeGLU (three MLP matrices) and tied embeddings, by its family
gemma=$data/tests/hf/gemma-7b
# (exit 1: 7 B parameters with Adam do not fit one device; the counts are the point)
capture "$bin" memory -m "$gemma" -p dgx-a100 --devices 1 "${S[@]}" --set pp=1 --set tp_x=1 --set global_batch=8 \
  --json - -q
if [ "$status" -le 1 ] && [ -s "$tmp/out" ]; then
  want=$(python3 -c 'h,q,f,V,L=3072,16*256,24576,256000,28; print(V*h + L*(4*h*q + 3*h*f + 2*h) + h)')
  got=$(python3 -c 'import json,sys; print(int(json.load(open(sys.argv[1]))["memory"]["params"]))' "$tmp/out")
  check "gemma-7b has $want parameters (V h + L (4 h q + 3 h f + 2 h) + h), got $got" test "$got" = "$want"
else
  ko "gemma-7b does not load: $(cat "$tmp/err")"
fi

# --------------------------------------------- what a path turns out to be
mkfifo fifo.json
ln -s loop-b loop-a && ln -s loop-a loop-b
long=$(printf 'x%.0s' $(seq 5000))
slow 2 "^/dev/zero: is a character device, not a file heptasim can read" -- memory -q -m /dev/zero "${P[@]}" "${S[@]}"
slow 2 "fifo\.json: is a FIFO \(named pipe\), not a file heptasim can read" -- memory -q -m "$tmp/fifo.json" "${P[@]}" "${S[@]}"
slow 2 "loop-a: cannot read the file: too many levels of symbolic links" -- memory -q -m "$tmp/loop-a" "${P[@]}" "${S[@]}"
slow 2 "^$tmp: is a directory, not a file heptasim can read" -- validate -q "$tmp"
slow 2 "^/dev/zero: is a character device" -- merge /dev/zero
slow 2 "^/dev/zero: is a character device" -- validate -q /dev/zero
slow 2 "^/dev/zero: is a character device" -- regress -q /dev/zero
slow 2 "^/dev/zero: is a character device" -- sweep -q "${M[@]}" "${P[@]}" --top 1 --out /dev/zero --resume
slow 2 "heptasim run: option '--model': a file name of 5000 characters is longer than the 511 heptasim takes \(use a shorter path, or a symbolic link\)$" \
  -- run -m "$long"
slow 2 "heptasim run: option '--json': a file name of 5000 characters is longer than the 511" -- run --json "$long"
slow 2 "heptasim merge: a file argument: a file name of 5000 characters is longer than the 511" -- merge "$long"
# a --set item or a JSON key too long to quote: its start and length, then the reason
slow 2 "^--set model\.name=x+\.\.\. \(5011 characters\): \.name: longer than 63 characters \(shorten it\)$" \
  -- memory -q "${base[@]}" --set "model.name=$long"
printf '{"%s": 1}' "$long" >longkey.json
slow 2 "longkey\.json: \.x+\.\.\. \(5000 characters\): unknown key \(known keys: name, .*, mtp_layers\)$" \
  -- memory -q -m "$tmp/longkey.json" "${P[@]}" "${S[@]}"

# ------------------------------------------------- whole-number options
slow 2 "heptasim sweep: option '--top' expects a whole number in \[1, 10000\], got '2147483647'" -- sweep --top 2147483647
slow 2 "heptasim sweep: option '--jobs' expects a whole number in \[1, 1024\], got '2147483647'" -- sweep --jobs 2147483647
slow 2 "heptasim sweep: option '--global-batch' expects a whole number in \[1, 16777216\], got '16777217'" \
  -- sweep --global-batch 16777217
slow 2 "heptasim sweep: '--shard' takes I/N with 0 <= I < N <= 65536, got '0/4294967297'" -- sweep --shard 0/4294967297
slow 2 "heptasim run: option '--json' needs a value \(FILE\|-\), got an empty one" -- run --json ''
slow 2 "heptasim calibrate: option '--fit' needs a value \(LIST\), got an empty one" -- calibrate --fit ''
# a pin that breaks a rule alone leaves nothing to search
slow 2 "search: no valid strategy in the 7d space: .*\.tp_x: 3 does not divide heads=8" \
  -- sweep -q "${M[@]}" "${P[@]}" --top 1 --set tp_x=3

# no command: the usage on stderr, exit 2
capture "$bin"
check "no arguments exit 2 (got $status)" test "$status" -eq 2
check "no arguments print the usage on stderr" grep -q '^usage: heptasim COMMAND' "$tmp/err"
check "no arguments print nothing on stdout" test ! -s "$tmp/out"

# ------------------------------------------------------ golden scenarios
golden=$(ls "$data"/results/golden/*.json | head -n 1)
python3 - "$golden" fast.json <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
d["metrics"]["step_time_s"] = "fast"
json.dump(d, open(sys.argv[2], "w"), indent=1)
EOF
expect 2 'fast\.json: \.metrics\.step_time_s: expected a number or true/false, got "fast"' -- regress -q "$tmp/fast.json"
# a key given twice in a scenario or a case file: refused, as in every JSON input
python3 - "$golden" twice.json <<'EOF'
import sys
text = open(sys.argv[1]).read()
open(sys.argv[2], "w").write(text.replace('"devices":', '"devices": 99, "devices":', 1))
EOF
expect 2 'twice\.json: \.devices: duplicate key \(keep one\)' -- regress -q "$tmp/twice.json"

summary
