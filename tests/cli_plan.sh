#!/bin/sh
# 'paraplan plan train' from the command line: the ranked table, JSON, exports, scaling,
# capacity planning, and usage errors.
. "$top_srcdir/tests/lib.sh"

run 0 plan train --model llama-3-8b --system dgx-h100 --gpus 16 --global-batch 128 --top 5 --json
json_check "$TMPD/out" "d['kind'] == 'plan-train' and len(d['counts'][0]['candidates']) == 5 and d['winner']['config']['gpus'] == 16"
json_check "$TMPD/out" "all(c['peak_bytes'] <= c['capacity_bytes'] for c in d['counts'][0]['candidates'])"
json_check "$TMPD/out" "[c['step_time_s'] for c in d['counts'][0]['candidates']] == sorted(c['step_time_s'] for c in d['counts'][0]['candidates'])"
run 0 plan train --model llama-3-8b --system dgx-h100 --gpus 16 --global-batch 128 --top 3
expect_out "why not first"
run 0 plan train --model llama-3-8b --system dgx-h100 --gpus 16 --global-batch 128 --export deepspeed
json_check "$TMPD/out" "d['train_batch_size'] == 128"
run 0 plan train --model llama-3-8b --system dgx-h100 --gpus 16 --global-batch 128 --export megatron --out "$TMPD/args.txt"
grep -q -- "--tensor-model-parallel-size" "$TMPD/args.txt" || fail "megatron args not written"
# Llama-3-405B's 126 layers interleaved over uneven virtual stages: Megatron-Core's explicit
# layout, one part per virtual stage, layers adding up to 126, embedding first, loss last
run 0 plan train --model llama-3-405b --system dgx-h100 --gpus 16384 --global-batch 2048 --export megatron
layout=$(sed -n "s/.*--pipeline-model-parallel-layout '\([^']*\)'.*/\1/p" "$TMPD/out")
[ -n "$layout" ] || fail "no --pipeline-model-parallel-layout in: $(cat "$TMPD/out")"
echo "$layout" | python3 -c "
import sys
parts = sys.stdin.read().strip().split('|')
assert parts[0].startswith('E,') and parts[-1].endswith(',L'), parts
n = sum(int(p.replace('E,', '').replace(',L', '').split('*')[1]) for p in parts)
assert n == 126, n
" || fail "bad layout: $layout"
run 0 plan train --model llama-3-8b --system dgx-h100 --gpus 16 --global-batch 128 --export slurm
expect_out "#SBATCH --nodes=2"
run 0 plan train --model llama-3-8b --system dgx-h100 --gpus 8..32 --global-batch 256 --top 1 --json
json_check "$TMPD/out" "[s['gpus'] for s in d['scaling']] == [8, 16, 32] and abs(d['scaling'][0]['efficiency'] - 1) < 1e-9 and len(d['pareto']) >= 1"
run 0 plan train --model gpt2-xl --tokens 1e9 --days 1 --global-batch 64 --systems dgx-a100,dgx-h100 --json
json_check "$TMPD/out" "all(s['feasible'] and s['days'] <= 1.0 for s in d['systems']) and all(r['total_usd'] > 0 for s in d['systems'] for r in s['rent'])"

run 1 plan train --model llama-3-70b --system dgx-h100 --gpus 8 --global-batch 64
expect_err "no layout of llama-3-70b fits"
expect_out "the smallest needs"
run 2 plan train --model llama-3-8b --system dgx-h100 --gpus 0 --global-batch 64
expect_err "--gpus must be"
run 2 plan train --model llama-3-8b --system dgx-h100 --gpus 16
expect_err "--global-batch is required"
run 2 plan train --model llama-3-8b --system dgx-h100 --gpus 16 --global-batch 64 --export pytorch
expect_err "--export must be"
run 2 plan train --model llama-3-8b --tokens 1e9 --global-batch 64
expect_err "both --tokens and --days"
run 2 plan train --model llama-3-8b --system nope --gpus 8 --global-batch 64
expect_err "unknown system"
run 2 plan train --model llama-3-8b --system dgx-h100 --gpus 16 --global-batch 128 --export megatron --out "$TMPD/nodir/x.txt" --bogus
# two nodes of 4 GPUs: TP stays inside the 4-GPU node
run 0 plan train --model gpt-7.5b --system dgx-a100 --gpus 8 --gpus-per-node 4 --global-batch 64 --json
json_check "$TMPD/out" "d['gpus_per_node'] == 4 and all(c['config']['tp'] <= 4 for g in d['counts'] for c in g['candidates'])"
run 2 plan train --model gpt-7.5b --system dgx-a100 --gpus 8 --gpus-per-node 16 --global-batch 64
expect_err "--gpus-per-node"
finish
