#!/usr/bin/env bash
# errors.sh - bad command lines and bad inputs: one line on stderr naming
# what to fix, exit status 2; never a crash.
. "$(dirname "$0")/../lib/cli.sh" "$@"

expect 2 "unknown command 'frobnicate'" -- frobnicate
expect 2 "unknown option '--frob'" -- run --frob
expect 2 "unknown option '-z'" -- run -z
expect 2 "option '--json' needs a value" -- run --json
expect 2 "'--set tp_x' must be KEY=VALUE" -- run --set tp_x
expect 2 "option '--devices' expects a whole number in \\[1, 131072\\], got 'x'" -- run --devices x
expect 2 "option '--devices' expects a whole number in \\[1, 131072\\], got '0'" -- run --devices 0
expect 2 "'--comm-mode' takes 'flows' or 'steps'" -- run --comm-mode packets
expect 2 "unexpected argument 'extra'" -- run extra
expect 2 "model 'no-such-model' not found" -- run -m no-such-model
expect 2 "platform 'no-such-platform' not found" -- memory -p no-such-platform
# stragglers: one line naming the key and the fix, exit 2
st='-m gpt-7.5b -p dgx-h100 -s gpt-310b-a3-megatron --devices 16 --set pp=2 --set dp=1 --set global_batch=8'
# shellcheck disable=SC2086 # $st is a list of words
expect 2 "platforms/dgx-h100.json: .stragglers\[0\].index: 16 is not a device of the platform's 16 \(use 0 to 15\)" \
  -- run $st --set 'platform.stragglers=[{"kind": "device", "index": 16, "speed": 0.8}]'
# shellcheck disable=SC2086
expect 2 "\.stragglers\[0\]\.index: 2 is not a node of the platform's 2" \
  -- run $st --set 'platform.stragglers=[{"kind": "node", "index": 2, "speed": 0.8}]'
# shellcheck disable=SC2086
expect 2 '\.stragglers\[0\]\.kind: expected one of "device", "node", "link", got "gpu"' \
  -- run $st --set 'platform.stragglers=[{"kind": "gpu", "index": 1, "speed": 0.8}]'
# shellcheck disable=SC2086
expect 2 '\.stragglers\[0\]\.speed: expected a number in \[0.01, 1\], got 0' \
  -- run $st --set 'platform.stragglers=[{"kind": "device", "index": 1, "speed": 0}]'
expect 2 "\.stragglers: the analytic estimate .* does not model stragglers" \
  -- estimate -m gpt-7.5b -p dgx-h100 --devices 16 --set 'platform.stragglers=[{"kind": "node", "index": 0, "speed": 0.8}]'
expect 2 "strategy 'no-such-strategy' not found" -- memory -s no-such-strategy
# a mistyped shipped name gets the name it was close to
expect 2 "model 'qwen3-235b' not found" "did you mean 'qwen3-235b-a22b'\?" -- memory -m qwen3-235b
expect 2 "platform 'dgx-h10' not found" "did you mean 'dgx-h100'\?" -- memory -p dgx-h10
expect 2 "strategy 'gpt3-175b-a10' not found" "did you mean 'gpt3-175b-a100'\?" -- memory -s gpt3-175b-a10
expect 2 "model 'no-such-model' not found \(tried [^)]*\)$" -- memory -m no-such-model
# a search that finds nothing names the limit: the device count's factors, the memory
q=(-m qwen3-235b-a22b -p dgx-h100 --devices 1000)
expect 2 "no valid strategy in the megatron space: 1000 = 2\^3 x 5\^3 limits dp to 8 \(a divisor of the global batch 1024\), tp_x to 8 \(a divisor of the 64 heads\), ep to 8 \(a divisor of the 128 experts\)" -- memory "${q[@]}"
expect 1 "all pruned by memory: the least memory a candidate needs is [0-9.]+ GiB of 78.0 GiB usable per device; 1000 = 2\^3 x 5\^3 limits tp_x to 8 .*, ep to 8" -- memory "${q[@]}" --set global_batch=1000
expect 1 "pruned by memory: the least memory a candidate needs is [0-9.]+ GiB of 78.0 GiB usable per device; give more" -- memory -m qwen3-235b-a22b -p dgx-h100 --devices 8

printf '{"name": "broken", "layers": 4,' >"$tmp/broken.json"
expect 2 "broken.json: .*(malformed|JSON)" -- memory -m "$tmp/broken.json"
printf '{"name":"x","layers":0,"hidden":64,"heads":4,"ffn_hidden":256,"vocab":100,"seq_len":64}' >"$tmp/zero.json"
expect 2 "zero.json: .layers" -- memory -m "$tmp/zero.json"
expect 2 "\.tp_x" -- memory --set tp_x=abc
expect 2 "\.tp_x" -- memory --set tp_x=3
expect 2 "\.no_such_key: unknown key" -- memory --set no_such_key=1
expect 2 "\.layers" -- memory --set model.layers=-4
expect 2 "option '--devices' expects a whole number in \\[1, 131072\\]" -- memory --devices 1000000000

# MoE dispatch and FP8 recipes a platform or a layout cannot run.
expect 2 "\.fp8_recipe: \"mxfp8\" needs MXFP8 tensor cores" -- memory -m mixtral-8x22b -p dgx-h100 --devices 64 --set fp8=true --set fp8_recipe=mxfp8
expect 2 "\.moe_dispatcher: \"flex\" .* got etp 8" -- memory -m mixtral-8x22b -s mixtral-8x22b-a3-megatron --set moe_dispatcher=flex
expect 2 "\.moe_dispatcher: expected one of" -- memory --set moe_dispatcher=deepep
expect 2 "\.moe.group_top_k: 9 is more than moe.groups=8" -- memory -m deepseek-v3 --set model.moe.group_top_k=9

# A capacity below the load imbalance drops tokens: one note says how many.
expect 0 "moe_capacity_factor: the busiest EP rank's experts drop 16.7 % of their routed copies" \
  -- memory -m mixtral-8x22b -s mixtral-8x22b-a3-megatron --set moe_capacity_factor=1.25 --set moe_load_imbalance=1.5

# An out-of-memory strategy is reported as such, not simulated.
expect 1 "does not fit" -- run --set recompute=none --set sequence_parallel=false --set zero=0 --set pp=2 --set dp=128 -q

# Help and version succeed.
# a write error names its file, whichever output it is (exit 1)
if [ -w /dev/full ]; then
  tiny=(-m gpt-1.7b -p dgx-a100 --devices 8 --set model.layers=2 --set global_batch=8 -q)
  for opt in --json --dump-platform --trace --report; do
    expect 1 "/dev/full" -- run "${tiny[@]}" $opt /dev/full
  done
else
  skip "no /dev/full"
fi
"$bin" --version | grep -q '^heptasim [0-9]' && ok || ko "--version"
"$bin" run --help | grep -q -- '--set KEY=VALUE' && ok || ko "run --help"
"$bin" memory --help | grep -q -- '--json' && ok || ko "memory --help"

summary
