#!/bin/sh
# Capacity planning with failures from the command line (docs/finetune-goodput.md): the goodput,
# the effective days and the failure-free count; the options that set the failure model; and
# the refusals.
. "$top_srcdir/tests/lib.sh"

cap="plan train --model gpt-1.7b --tokens 2e10 --global-batch 512 --seq 2048 --systems dgx-a100"
run 0 $cap --days 2 --json
json_check "$TMPD/out" "(lambda s, f: 0 < f['goodput'] < 1 and abs(s['days'] - f['training_days'] / f['goodput']) < 1e-9 * s['days'] and s['gpus'] >= f['gpus_without_failures'])(d['systems'][0], d['systems'][0]['failures'])"
# Llama 3's rate by default: 419 / (54 x 24 x 16384) per GPU-hour
json_check "$TMPD/out" "abs(d['systems'][0]['failures']['failures_per_gpu_hour'] - 419 / (54 * 24 * 16384)) < 1e-15"
# 14 bytes a parameter: bf16 weights, fp32 master, two Adam moments
json_check "$TMPD/out" "d['systems'][0]['failures']['checkpoint_bytes'] == 14 * 1652230656"
run 0 $cap --days 2
expect_out "goodput"
expect_out "Days count failures"
run 0 $cap --days 2 --no-failures --json
json_check "$TMPD/out" "'failures' not in d['systems'][0]"
# a checkpoint every 10 minutes at 1 GB/s, no failures: goodput 600 / (600 + 23.1) exactly
run 0 $cap --days 2 --failure-rate 0 --checkpoint-gbps 1 --checkpoint-interval-min 10 --json
json_check "$TMPD/out" "abs(d['systems'][0]['failures']['goodput'] - 600 / (600 + 14 * 1652230656 / 1e9)) < 1e-12"

run 2 plan train --model gpt-1.7b --system dgx-a100 --gpus 8 --global-batch 64 --failure-rate 1e-5
expect_err "apply to capacity planning"
run 2 $cap --days 2 --failure-rate -1
run 2 $cap --days 2 --checkpoint-gbps 0

finish
