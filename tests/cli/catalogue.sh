#!/usr/bin/env bash
# catalogue.sh - a catalogue of bad inputs, one case per kind of mistake:
# bad flags, missing, unreadable and malformed files, wrong types, missing
# and unknown keys, zero/negative/non-integer sizes, products that do not
# match the device count, dimensions that do not divide heads, layers,
# experts, batch or sequence, first/last pipeline stage layer counts that
# leave no even split, absurd sizes, steps too large to simulate on
# this machine, bad --set expressions, bad HuggingFace configs.
#
# Every case must exit with status 2 after exactly one line on stderr that
# names the file (or option) and the JSON key at fault, with no crash, core
# dump or sanitizer report.  Cases run with a small valid baseline (a 4-layer
# model, 8 devices) so that a case which wrongly passes costs no time.
. "$(dirname "$0")/../lib/cli.sh" "$@"
cd "$tmp" || exit 1
ulimit -c unlimited 2>/dev/null || true

# Every case: expect 2 WHAT [KEY] -- ARGS... (tests/lib/cli.sh), WHAT the
# file or option (ERE), KEY the JSON key and what is wrong (ERE; none for a
# command-line case).

# ------------------------------------------------------------ fixtures
small_inputs
# model|strategy SED-EXPR OUT: the small file with one edit, into OUT
model() { sed "$1" small-model.json >"$2"; }
strategy() { sed "$1" small-strategy.json >"$2"; }

# The baseline is valid: each case below breaks one thing.
if capture "$bin" memory "${base[@]}" -q; then ok; else ko "the baseline does not load: $(cat "$tmp/err")"; fi

# ------------------------------------------------------- command line
expect 2 "unknown command 'frobnicate'" -- frobnicate
expect 2 "unknown option '--frob'" -- run --frob
expect 2 "unknown option '-z'" -- run -z
expect 2 "option '--json' needs a value" -- run --json
expect 2 "option '--quiet' takes no value" -- run --quiet=yes
expect 2 "option '--devices' expects a whole number in \\[1, 131072\\], got 'abc'" -- run --devices abc
expect 2 "option '--devices' expects a whole number in \\[1, 131072\\], got '-3'" -- run --devices -3
expect 2 "option '--devices' expects a whole number in \\[1, 131072\\], got '99999999999999999999'" -- run --devices 99999999999999999999
expect 2 "'--set tp_x' must be KEY=VALUE" -- run --set tp_x
expect 2 "'--set =4' must be KEY=VALUE" -- run --set =4
expect 2 "'--comm-mode' takes 'flows' or 'steps'" -- run --comm-mode packets
expect 2 "'--symmetry' takes 'tp', 'dp' or 'none'" -- run --symmetry pp
# SimGrid aborts on an unknown setting or a bad value: checked before
expect 2 "'--cfg foo/bar:1': not a setting heptasim passes to SimGrid" -- run --cfg foo/bar:1
expect 2 "'--cfg network/optim:Nope': the value must be one of Full|Lazy" -- run --cfg network/optim:Nope
expect 2 "'--cfg maxmin/precision:nan': the value must be a number in \\[1e-15, 0\\.01\\]" -- run --cfg maxmin/precision:nan
expect 2 "'--cfg network' must be KEY:VALUE" -- run --cfg network
expect 2 "unexpected argument 'extra'" -- run extra
expect 2 "option '--jobs' expects a whole number in \\[1, 1024\\], got '0'" -- sweep --jobs 0
expect 2 "'--shard' takes I/N" -- sweep --shard 2/2
expect 2 "'--space' takes 'megatron' or '7d'" -- sweep --space 8d
expect 2 "option '--top' expects a whole number in \\[1, 10000\\], got '0'" -- sweep --top 0
expect 2 "'--trace-ranks' needs '--trace FILE'" -- run --trace-ranks 5
expect 2 "heptasim calibrate: '--fit'" "unknown parameter 'nope'" -- calibrate --fit nope
# found by fuzzing: a control character in an argument split the message
expect 2 "unknown option '--fr\?ob'" -- run $'--fr\nob'
expect 2 "--set tp_x\?=2" "unknown key" -- memory "${base[@]}" --set $'tp_x\n=2'

# -------------------------------------------------------------- files
expect 2 "model 'no-such-model' not found" -- memory -m no-such-model "${P[@]}"
expect 2 "platform 'no-such-platform' not found" -- memory "${M[@]}" -p no-such-platform
expect 2 "strategy 'no-such-strategy' not found" -- memory "${M[@]}" "${P[@]}" -s no-such-strategy
expect 2 "model '$tmp/missing/m.json' not found" -- memory -m "$tmp/missing/m.json" "${P[@]}" "${S[@]}"
mkdir -p emptydir
expect 2 "emptydir' is a directory without config.json" -- memory -m "$tmp/emptydir" "${P[@]}" "${S[@]}"
: >empty.json
expect 2 "empty.json: malformed JSON" "unexpected end of input" -- memory -m "$tmp/empty.json" "${P[@]}" "${S[@]}"
printf '{"name": "broken", "layers": 4,' >broken.json
expect 2 "broken.json: malformed JSON near line 1" -- memory -m "$tmp/broken.json" "${P[@]}" "${S[@]}"
printf '{"layers": 4}\n{"layers": 5}\n' >two.json
expect 2 "two.json: malformed JSON near line 2" -- memory -m "$tmp/two.json" "${P[@]}" "${S[@]}"
printf '[1, 2, 3]' >array.json
expect 2 "array.json: expected a JSON object at the top level" -- memory -m "$tmp/array.json" "${P[@]}" "${S[@]}"
head -c 300 /dev/urandom >binary.json 2>/dev/null || printf '\001\002\377' >binary.json
expect 2 "binary.json: line [0-9]+: (invalid UTF-8|a NUL byte) at byte [0-9]+" -- memory -m "$tmp/binary.json" "${P[@]}" "${S[@]}"
truncate -s 65M huge.json
expect 2 "huge.json: larger than 64 MiB" -- memory -m "$tmp/huge.json" "${P[@]}" "${S[@]}"
rm -f huge.json
if [ "$(id -u)" -ne 0 ]; then
  cp small-model.json unreadable.json && chmod 000 unreadable.json
  expect 2 "unreadable.json: cannot read the file" -- memory -m "$tmp/unreadable.json" "${P[@]}" "${S[@]}"
else # root reads any file; this one fails to read (EIO) for everyone
  expect 2 "/proc/self/mem: cannot read the file" -- memory -m /proc/self/mem "${P[@]}" "${S[@]}"
fi

# files of the other commands: sweep records, validation cases, suites
printf 'not json\n' >bad.jsonl
expect 2 "bad.jsonl: line 1" "JSON" -- merge "$tmp/bad.jsonl"
expect 2 "missing.jsonl: cannot read" -- merge "$tmp/missing.jsonl"
printf '{"cases": [' >bad-cases.json
expect 2 "bad-cases.json: line 1" "JSON" -- validate "$tmp/bad-cases.json"
expect 2 "missing-suite.json: cannot read the file" -- regress "$tmp/missing-suite.json"

# -------------------------------------------------------------- model
model 's/"heads": 8, //' m.json
expect 2 "m.json" "\.heads: required key is missing" -- memory -m "$tmp/m.json" "${P[@]}" "${S[@]}"
model 's/"layers": 4/"layers": "four"/' m.json
expect 2 "m.json" "\.layers: expected an integer, got \"four\"" -- memory -m "$tmp/m.json" "${P[@]}" "${S[@]}"
model 's/"hidden": 256/"hidden": 256.5/' m.json
expect 2 "m.json" "\.hidden: expected an integer, got 256.5" -- memory -m "$tmp/m.json" "${P[@]}" "${S[@]}"
model 's/"layers": 4/"layers": 0/' m.json
expect 2 "m.json" "\.layers: expected an integer in \[1, 16384\], got 0" -- memory -m "$tmp/m.json" "${P[@]}" "${S[@]}"
model 's/"vocab": 1000/"vocab": -1/' m.json
expect 2 "m.json" "\.vocab: expected an integer in \[1, 16777216\], got -1" -- memory -m "$tmp/m.json" "${P[@]}" "${S[@]}"
model 's/"layers": 4/"layers": 1000000/' m.json
expect 2 "m.json" "\.layers: expected an integer in \[1, 16384\], got 1000000" -- memory -m "$tmp/m.json" "${P[@]}" "${S[@]}"
model 's/"hidden": 256/"hidden": 1e400/' m.json
expect 2 "m.json" "\.hidden: expected an integer" -- memory -m "$tmp/m.json" "${P[@]}" "${S[@]}"
model 's/"layers"/"layer"/' m.json
expect 2 "m.json" "\.layer: unknown key \(did you mean 'layers'\?\)" -- memory -m "$tmp/m.json" "${P[@]}" "${S[@]}"
model 's/"layers": 4,/"layers": 4, "layers": 8,/' m.json
expect 2 "m.json" "\.layers: duplicate key" -- memory -m "$tmp/m.json" "${P[@]}" "${S[@]}"
model 's/}$/, "activation": "tanh"}/' m.json
expect 2 "m.json" "\.activation: expected one of" -- memory -m "$tmp/m.json" "${P[@]}" "${S[@]}"
model 's/"name": "small"/"name": "two\\nlines"/' m.json
expect 2 "m.json" "\.name: must be one line" -- memory -m "$tmp/m.json" "${P[@]}" "${S[@]}"
model 's/"heads": 8/"heads": 7/' m.json
expect 2 "m.json" "\.heads: 7 does not divide hidden=256" -- memory -m "$tmp/m.json" "${P[@]}" "${S[@]}"
model 's/}$/, "kv_heads": 3}/' m.json
expect 2 "m.json" "\.kv_heads: 3 does not divide heads=8" -- memory -m "$tmp/m.json" "${P[@]}" "${S[@]}"
model 's/}$/, "moe": {"experts": 4, "top_k": 8, "ffn_hidden": 512}}/' m.json
expect 2 "m.json" "\.moe\.top_k: 8 is more than moe\.experts=4" -- memory -m "$tmp/m.json" "${P[@]}" "${S[@]}"
model 's/}$/, "moe": {"experts": 4, "ffn_hidden": 512}}/' m.json
expect 2 "m.json" "\.moe\.top_k: required key is missing" -- memory -m "$tmp/m.json" "${P[@]}" "${S[@]}"
# found by fuzzing: hidden/heads above the head_dim bound loaded, then
# failed the cross checks on ".head_dim", a key not in the file
model 's/"heads": 8/"heads": 1/; s/"hidden": 256/"hidden": 131072/' m.json
expect 2 "m.json" "\.heads: hidden/heads = 131072/1 = 131072 is more than the largest head_dim 65536" -- \
  memory -m "$tmp/m.json" "${P[@]}" "${S[@]}"
# found by fuzzing: a key holding a newline split the message
model 's/"layers"/"lay\\ners"/' m.json
expect 2 "m.json" "\.lay\?ers: unknown key" -- memory -m "$tmp/m.json" "${P[@]}" "${S[@]}"

# --------------------------------------------------- HuggingFace model
mkdir -p hf-model
cat >hf-model/config.json <<'EOF'
{"num_hidden_layers": 4, "num_attention_heads": 8, "intermediate_size": 1024, "vocab_size": 1000, "hidden_act": "silu"}
EOF
expect 2 "hf-model/config.json" "\.hidden_size: required key is missing" -- memory -m "$tmp/hf-model" "${P[@]}" "${S[@]}"
cat >hf-model/config.json <<'EOF'
{"num_hidden_layers": 4, "hidden_size": 256, "num_attention_heads": 8, "intermediate_size": 1024, "vocab_size": 1000, "hidden_act": "tanh"}
EOF
expect 2 "hf-model/config.json" "\.hidden_act: unsupported activation" -- memory -m "$tmp/hf-model" "${P[@]}" "${S[@]}"
cat >hf-model/config.json <<'EOF'
{"num_hidden_layers": 4, "hidden_size": 256, "num_attention_heads": 8, "intermediate_size": 1024, "vocab_size": 1000, "num_local_experts": 8}
EOF
expect 2 "hf-model/config.json" "\.num_experts_per_tok: required key is missing" -- memory -m "$tmp/hf-model" "${P[@]}" "${S[@]}"
cat >hf-model/config.json <<'EOF'
{"num_hidden_layers": 4, "hidden_size": 256, "num_attention_heads": 0, "intermediate_size": 1024, "vocab_size": 1000}
EOF
expect 2 "hf-model/config.json" "\.num_attention_heads: expected an integer in \[1, 65536\], got 0" -- memory -m "$tmp/hf-model" "${P[@]}" "${S[@]}"

# ------------------------------------------------------------ platform
sed 's/"peak_tflops": 312/"peak_tflops": 0/' "$data/platforms/dgx-a100.json" >pl.json
expect 2 "pl.json" "\.device\.peak_tflops: expected a number in \[1e-06, 10000000\], got 0" -- memory "${M[@]}" -p "$tmp/pl.json" "${S[@]}"
sed 's/"hbm_TBps": 2/"hbm_TBps": "fast"/' "$data/platforms/dgx-a100.json" >pl.json
expect 2 "pl.json" "\.device\.hbm_TBps: expected a number, got \"fast\"" -- memory "${M[@]}" -p "$tmp/pl.json" "${S[@]}"
sed 's/\[1e9, 0.45\]/[1e7, 0.45]/' "$data/platforms/dgx-a100.json" >pl.json
expect 2 "pl.json" "\.efficiency\.gemm\[2\]: flops 10000000 is not above" -- memory "${M[@]}" -p "$tmp/pl.json" "${S[@]}"
sed '/"devices": 1024,/d' "$data/platforms/dgx-a100.json" >pl.json
expect 2 "pl.json" "\.devices: required key is missing \(or give --devices\)" -- memory "${M[@]}" -p "$tmp/pl.json" "${S[@]}"
expect 2 "--set platform\.device\.peak_tflops=0" "\.device\.peak_tflops: expected a number in \[1e-06, 10000000\], got 0" -- \
  memory "${M[@]}" "${P[@]}" "${S[@]}" --set platform.device.peak_tflops=0
expect 2 "--set platform\.device\.hbm_GiB=lots" "\.device\.hbm_GiB: expected a number, got \"lots\"" -- \
  memory "${M[@]}" "${P[@]}" "${S[@]}" --set platform.device.hbm_GiB=lots
expect 2 "--set platform\.network\.oversubscription=0\.5" "\.network\.oversubscription: expected a number in \[1, 1000\], got 0.5" -- \
  memory "${M[@]}" "${P[@]}" "${S[@]}" --set platform.network.oversubscription=0.5
expect 2 "dgx-a100.json" "\.supernode\.devices: 12 is not a multiple of node\.devices=8" -- \
  memory "${M[@]}" "${P[@]}" "${S[@]}" --set platform.supernode.devices=12
expect 2 "dgx-a100.json" "\.device\.hbm_reserved_GiB: 90 is not less than hbm_GiB=80" -- \
  memory "${M[@]}" "${P[@]}" "${S[@]}" --set platform.device.hbm_reserved_GiB=90
expect 2 "--set platform\.efficiency\.gemm=" "\.efficiency\.gemm\[1\]: flops 1 is not above" -- \
  memory "${M[@]}" "${P[@]}" "${S[@]}" --set 'platform.efficiency.gemm=[[10,0.1],[1,0.2],[100,0.3]]'
expect 2 "--set platform\.efficiency\.gemm=" "\.efficiency\.gemm\[2\]: fraction must be in \[0\.0001, 1\]" -- \
  memory "${M[@]}" "${P[@]}" "${S[@]}" --set 'platform.efficiency.gemm=[[1,0.1],[10,0.2],[100,1.5]]'
expect 2 "option '--devices' expects a whole number in \\[1, 131072\\], got '1000000000'" -- \
  memory "${M[@]}" -p dgx-a100 --devices 1000000000 "${S[@]}"
# found by fuzzing: an infinite point of the GEMM curve loaded, and the
# cost model then refused the platform
expect 2 "--set platform\.efficiency\.gemm=" "\.efficiency\.gemm\[2\]: flops inf is too large" -- \
  memory "${M[@]}" "${P[@]}" "${S[@]}" --set 'platform.efficiency.gemm=[[1,0.1],[10,0.2],[1e999,0.3]]'
expect 2 "--set platform\.devices=1000000000" "\.devices: expected an integer in \[1, 131072\], got 1000000000" -- \
  memory "${M[@]}" -p dgx-a100 "${S[@]}" --set platform.devices=1000000000

# ------------------------------------------------------------ strategy
expect 2 "small-strategy.json" "\.tp_x: 3 does not divide heads=8" -- memory "${base[@]}" --set tp_x=3
expect 2 "small-strategy.json" "\.dp: world size dp\*pp\*tp_x.* does not equal the 8 devices" -- \
  memory "${base[@]}" --set dp=3
expect 2 "small-strategy.json" "\.dp: cannot derive dp" -- memory "${M[@]}" -p dgx-a100 --devices 6 "${S[@]}" --set pp=4
expect 2 "small-strategy.json" "\.pp: 3 does not divide layers=4" -- memory "${M[@]}" -p dgx-a100 --devices 6 "${S[@]}" --set pp=3
expect 2 "small-strategy.json" "\.global_batch: 5 is not a multiple of dp\*micro_batch = 2\*1 = 2" -- \
  memory "${base[@]}" --set global_batch=5
expect 2 "small-strategy.json" "\.global_batch: 65540 micro-batches per step is more than the limit" -- \
  memory "${base[@]}" --set global_batch=131080
expect 2 "small-strategy.json" "\.ep: ep=2 needs an MoE model" -- memory "${base[@]}" --set ep=2
expect 2 "small-strategy.json" "\.ep: 3 does not divide moe\.experts=8" -- \
  memory -m mixtral-8x22b -p dgx-a100 --devices 24 "${S[@]}" --set tp_x=8 --set pp=1 --set ep=3 --set global_batch=24
expect 2 "small-strategy.json" "\.ep: ep\*etp = 16\*8 = 128 does not divide tp_x\*tp_y\*cp_ring\*cp_ulysses\*dp = 8\*1\*1\*1\*3 = 24" -- \
  memory -m mixtral-8x22b -p dgx-a100 --devices 24 "${S[@]}" --set tp_x=8 --set pp=1 --set ep=16 --set etp=8 \
  --set model.moe.experts=16 --set global_batch=24
expect 2 "small-strategy.json" "\.pipeline_layout: 3 virtual stages, but pp\*vpp = 4\*1 = 4" -- \
  memory "${base[@]}" --set pp=4 --set 'pipeline_layout="Et|t|tL"'
expect 2 "small-strategy.json" "\.recompute_modules: unknown module 'core_atn' .did you mean 'core_attn'" -- \
  memory "${base[@]}" --set recompute=selective --set 'recompute_modules="core_atn"'
expect 2 "small-strategy.json" "\.cp_ring: seq_len=512 of model 'small' is not a multiple" -- \
  memory "${M[@]}" -p dgx-a100 --devices 24 "${S[@]}" --set pp=1 --set tp_x=1 --set cp_ring=3 --set dp=8 --set global_batch=16
expect 2 "--set schedule=1fb1" "\.schedule: expected one of \"gpipe\", \"1f1b\", \"interleaved\"" -- \
  memory "${base[@]}" --set schedule=1fb1
expect 2 "--set order=" "\.order: 'dp' appears twice" -- \
  memory "${base[@]}" --set order=dp-dp-tp_y-cp_ulysses-cp_ring-ep-pp
expect 2 "small-strategy.json" "\.vpp: vpp=2 needs schedule \"interleaved\"" -- memory "${base[@]}" --set vpp=2
# precision: FP8 needs a device with an FP8 peak (dgx-a100 has none), in
# every command; FP8 is a strategy key, not a model dtype
expect 2 "small-strategy.json" "\.fp8: platform 'dgx-a100' has no FP8 peak \(device\.fp8_peak_tflops in .*dgx-a100\.json" -- \
  memory "${base[@]}" --set fp8=true
expect 2 "small-strategy.json" "\.fp8: platform 'dgx-a100' has no FP8 peak" -- run "${base[@]}" --set fp8=true
expect 2 "small-strategy.json" "\.fp8: platform 'dgx-a100' has no FP8 peak" -- sweep "${base[@]}" --set fp8=true
expect 2 "--set model.dtype=fp8" "\.dtype: expected one of \"bf16\", \"fp16\", got \"fp8\"; FP8 GEMMs are the strategy key fp8" -- \
  memory "${base[@]}" --set model.dtype=fp8
expect 2 "--set attention_kernel=flash2" "\.attention_kernel: expected one of \"flash\", \"eager\", got \"flash2\" \(did you mean \"flash\"\?\)" -- \
  memory "${base[@]}" --set attention_kernel=flash2
expect 2 "--set optimizer_moments=fp8" "\.optimizer_moments: expected one of \"fp32\", \"bf16\"" -- \
  memory "${base[@]}" --set optimizer_moments=fp8
expect 2 "--set platform.device.fp8_peak_tflops=-1" "\.device\.fp8_peak_tflops: expected a number in \[0, 10000000\], got -1" -- \
  memory "${M[@]}" -p dgx-h100 --devices 8 "${S[@]}" --set platform.device.fp8_peak_tflops=-1
expect 2 "dgx-h100.json" "\.device\.fp8_peak_tflops: 1e-09 is below the smallest peak 1e-06 \(give 0 for a device without FP8\)" -- \
  memory "${M[@]}" -p dgx-h100 --devices 8 "${S[@]}" --set platform.device.fp8_peak_tflops=1e-9
expect 2 "--set platform.efficiency.gemm_fp8" "\.efficiency\.gemm_fp8: expected at least 3 points" -- \
  memory "${M[@]}" -p dgx-h100 --devices 8 "${S[@]}" --set 'platform.efficiency.gemm_fp8=[[1e9,0.5]]'
expect 2 "small-strategy.json" "\.fuse_tpy_cp: needs tp_y > 1 and cp_ulysses > 1" -- \
  memory "${base[@]}" --set fuse_tpy_cp=true
# uneven pipeline stages (first_stage_layers / last_stage_layers)
expect 2 "--set first_stage_layers=-1" "\.first_stage_layers: expected an integer in \[0, 16384\], got -1" -- \
  memory "${base[@]}" --set first_stage_layers=-1
expect 2 "small-strategy.json" "\.first_stage_layers: first_stage_layers=2 needs pp > 1, got pp=1" -- \
  memory "${base[@]}" --set pp=1 --set first_stage_layers=2
expect 2 "small-strategy.json" "\.last_stage_layers: .* = 1\+1 = 2, but with pp=2 the two stages hold all layers=4" -- \
  memory "${base[@]}" --set first_stage_layers=1 --set last_stage_layers=1
expect 2 "small-strategy.json" "\.first_stage_layers: .* leaves 1 of layers=4 for the other 2 stages, fewer than one each" -- \
  memory "${base[@]}" --set pp=4 --set tp_x=1 --set first_stage_layers=2 --set last_stage_layers=1
expect 2 "small-strategy.json" "\.first_stage_layers: .* leaves 7 of layers=8, which the other 3 stages cannot share evenly" -- \
  memory "${base[@]}" --set model.layers=8 --set pp=4 --set tp_x=1 --set first_stage_layers=1
expect 2 "small-strategy.json" "\.first_stage_layers: 1 is not a multiple of vpp=2" -- \
  memory "${base[@]}" --set schedule=interleaved --set vpp=2 --set first_stage_layers=1
expect 2 "small-strategy.json" "\.vpp: 2 does not divide the 3 layers each of the other 2 stages holds" -- \
  memory "${base[@]}" --set model.layers=10 --set pp=4 --set tp_x=1 --set schedule=interleaved --set vpp=2 \
  --set first_stage_layers=2 --set last_stage_layers=2
strategy 's/"1f1b"/"1fb1"/' s.json
expect 2 "s.json" "\.schedule: expected one of .*, got \"1fb1\"" -- memory "${M[@]}" "${P[@]}" -s "$tmp/s.json"
strategy 's/"dp": 0/"dp": 2.5/' s.json
expect 2 "s.json" "\.dp: expected an integer, got 2\.5" -- memory "${M[@]}" "${P[@]}" -s "$tmp/s.json"
strategy 's/"tp_x": 2/"tp_x": -2/' s.json
expect 2 "s.json" "\.tp_x: expected an integer in \[1, 131072\], got -2" -- memory "${M[@]}" "${P[@]}" -s "$tmp/s.json"
strategy 's/"pp": 2,/"pp": 2, "last_stage_layers": "one",/' s.json
expect 2 "s.json" "\.last_stage_layers: expected an integer, got \"one\"" -- memory "${M[@]}" "${P[@]}" -s "$tmp/s.json"
expect 2 "--set zero=4" "\.zero: expected an integer in \[0, 3\], got 4" -- memory "${base[@]}" --set zero=4
expect 2 "--set sequence_parallel=yes" "\.sequence_parallel: expected true or false, got \"yes\"" -- \
  memory "${base[@]}" --set sequence_parallel=yes
strategy 's/"global_batch": 16, //' s.json
expect 2 "s.json" "\.global_batch: required key is missing" -- memory "${M[@]}" "${P[@]}" -s "$tmp/s.json"

# ----------------------------------------------------------- --set syntax
expect 2 "--set model=3" "expected model\.KEY=VALUE" -- memory "${base[@]}" --set model=3
expect 2 "--set model\.layers=-4" "\.layers: expected an integer in \[1, 16384\], got -4" -- memory "${base[@]}" --set model.layers=-4
expect 2 "--set model\.\.layers=4" "empty name in the key" -- memory "${base[@]}" --set model..layers=4
expect 2 "--set platform\.devices\.x=1" "\.devices: not an object" -- memory "${base[@]}" --set platform.devices.x=1
expect 2 "--set no_such_key=1" "\.no_such_key: unknown key" -- memory "${base[@]}" --set no_such_key=1
expect 2 "--set model\.a\.b\.c\.d\.e\.f\.g\.h\.i=1" "key too long or too deep" -- \
  memory "${base[@]}" --set model.a.b.c.d.e.f.g.h.i=1

# ------------------------------------------- too large for this machine
# 131072 devices, every rank simulated, x 8 micro-batches x 1024 layers
# per stage: ~2^30 layer steps (memory does not replay the step: it takes
# it; with its exact classes, one rank per stage, the run would take 2^17)
expect 2 "gpt-1.7b.json|strategy" "\.global_batch: .* layer steps to simulate .* more than the limit" -- \
  run -m gpt-1.7b -p dgx-a100 --devices 131072 "${S[@]}" --set model.layers=16384 --set pp=16 --set tp_x=8 \
  --set global_batch=8192 --symmetry none
# (it does not fit either: exit 1, not the 2 of a refusal)
capture "$bin" memory -q -m gpt-1.7b -p dgx-a100 --devices 131072 "${S[@]}" --set model.layers=16384 --set pp=16 \
  --set tp_x=8 --set global_batch=8192
if [ "$status" -le 1 ] && ! grep -q 'to simulate' "$tmp/err"; then
  ok
else
  ko "memory refused a step only too large to simulate: $(head -1 "$tmp/err")"
fi
# 16384 devices with every rank simulated need ~4.6 GiB of address space;
# with ulimit -v 2 GiB the run is refused up front (not under
# AddressSanitizer, whose shadow memory needs more)
if ldd "$bin" 2>/dev/null | grep -q 'libasan\|libubsan' || nm "$bin" 2>/dev/null | grep -q __asan_init; then
  skip "run --devices 16384 under ulimit -v (AddressSanitizer build)"
else
  limited() { (ulimit -v 2000000; exec "$@"); }
  expect_cmd 2 "dgx-a100.json" "\.devices: simulating 16384 devices needs about .* GiB of address space" -- \
    limited "$bin" run -q "${M[@]}" -p dgx-a100 --devices 16384 "${S[@]}" --set global_batch=8192 --symmetry none
fi

summary
