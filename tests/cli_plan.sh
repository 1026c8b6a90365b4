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
sed -n "/<<'EOF'/,/^EOF/p" "$TMPD/out" | sed '1d;$d' >"$TMPD/ds.json"
json_check "$TMPD/ds.json" "d['train_batch_size'] == 128"
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
# a CNN's layouts are data parallelism, micro-batch and dtype: a pin of another dimension is
# refused, not ignored
for o in "--tp 2" "--pp 2" "--zero 1" "--dp-shard 4" "--recompute full"; do
	# shellcheck disable=SC2086
	run 2 plan train --model resnet-50 --system dgx-a100 --gpus 8 --global-batch 256 $o
	expect_err "resnet-50 is a CNN: its layouts are data parallelism, micro-batch and dtype; ${o% *} does not apply"
done
run 0 plan train --model resnet-50 --system dgx-a100 --gpus 8 --global-batch 256 --micro-batch 32
run 2 plan train --model llama-3-8b --system dgx-h100 --gpus 16 --global-batch 128 --export megatron --out "$TMPD/nodir/x.txt" --bogus
# an export that cannot be written fails the command, with nothing on stdout (the plan's table
# was printed before the failure)
run 1 plan train --model llama-3-8b --system dgx-h100 --gpus 8 --global-batch 16 --export megatron --out "$TMPD/nodir/x.sh"
expect_err "cannot create"
[ ! -s "$TMPD/out" ] || fail "a failed export still printed the plan on stdout"
# two nodes of 4 GPUs: TP stays inside the 4-GPU node
run 0 plan train --model gpt-7.5b --system dgx-a100 --gpus 8 --gpus-per-node 4 --global-batch 64 --json
json_check "$TMPD/out" "d['gpus_per_node'] == 4 and all(c['config']['tp'] <= 4 for g in d['counts'] for c in g['candidates'])"
run 2 plan train --model gpt-7.5b --system dgx-a100 --gpus 8 --gpus-per-node 16 --global-batch 64
expect_err "--gpus-per-node"

# ---- a planner users can steer -------------------------------------------------------------------
C0="d['counts'][0]['candidates']"
# pin any dimension, a value or a list (a bare --tp is not --tp-across-nodes)
run 0 plan train --model llama-3-8b --system dgx-h100 --gpus 16 --global-batch 128 --tp 4 --top 5 --json
json_check "$TMPD/out" "len($C0) == 5 and all(c['config']['tp'] == 4 for c in $C0)"
run 0 plan train --model llama-3-8b --system dgx-h100 --gpus 16 --global-batch 128 --tp 2,8 --pp 2 --vpp 2 \
	--zero 1 --recompute full --micro-batch 1 --dtype bf16,fp8 --top 50 --json
json_check "$TMPD/out" "len($C0) > 0 and all(c['config']['tp'] in (2, 8) and c['config']['pp'] == 2 and c['config']['vpp'] == 2 and c['config']['schedule'] == 'interleaved' and c['config']['zero'] == 1 and c['config']['recompute'] == 'full' and c['config']['micro_batch'] == 1 and c['config']['dtype'] in ('bf16', 'fp8') for c in $C0)"
run 0 plan train --model llama-3-8b --system dgx-h100 --gpus 16 --global-batch 128 --pp 2 --schedule gpipe,1f1b \
	--framework torchtitan --top 50 --json
json_check "$TMPD/out" "len($C0) > 0 and {c['config']['schedule'] for c in $C0} <= {'gpipe', '1f1b'} and 'gpipe' in {c['config']['schedule'] for c in $C0}"
# a pinned CP needs no long sequence; a pinned EP on a MoE model
run 0 plan train --model llama-3-8b --system dgx-h100 --gpus 16 --global-batch 128 --cp 2 --top 3 --json
json_check "$TMPD/out" "all(c['config']['cp'] == 2 for c in $C0)"
run 0 plan train --model mixtral-8x7b --system dgx-h100 --gpus 32 --global-batch 256 --ep 4 --top 3 --json
json_check "$TMPD/out" "len($C0) == 3 and all(c['config']['ep'] == 4 for c in $C0)"
run 2 plan train --model llama-3-8b --system dgx-h100 --gpus 16 --global-batch 128 --tp
expect_err "option \"--tp\" needs a value"
run 2 plan train --model llama-3-8b --system dgx-h100 --gpus 16 --global-batch 128 --tp 3
expect_err "no valid layout of llama-3-8b on dgx-h100: --gpus (16) must be a multiple of tp x pp x cp (3 x 1 x 1 = 3)"
run 2 plan train --model llama-3-8b --system dgx-h100 --gpus 16 --global-batch 128 --schedule 2f2b
expect_err "--schedule takes gpipe, 1f1b, interleaved or zb-h1"
# memory headroom: 10% by default, stated in the table and in the JSON, never exceeded
run 0 plan train --model llama-3-8b --system dgx-h100 --gpus 8 --global-batch 64 --top 3
expect_out "memory limit per GPU 71.7 GiB: 79.6 GiB less 10% headroom (--memory-headroom)"
run 0 plan train --model llama-3-8b --system dgx-h100 --gpus 8 --global-batch 64 --top 20 --json
json_check "$TMPD/out" "d['memory_headroom'] == 0.1 and all(c['peak_bytes'] <= 0.9 * c['capacity_bytes'] for c in $C0)"
run 0 plan train --model llama-3-8b --system dgx-h100 --gpus 8 --global-batch 64 --top 20 --memory-headroom 0 --json
json_check "$TMPD/out" "d['memory_headroom'] == 0 and max(c['peak_bytes'] for c in $C0) > 0.9 * $C0[0]['capacity_bytes']"
run 2 plan train --model llama-3-8b --system dgx-h100 --gpus 8 --global-batch 64 --memory-headroom 95
expect_err "--memory-headroom must be a percentage from 0 to 90"
# ties within the winner's uncertainty, the dtype and the framework in the table
run 0 plan train --model llama-3-8b --system dgx-h100 --gpus 16 --global-batch 128 --top 8 --json
json_check "$TMPD/out" "all(c['tie'] == (c['rank'] > 1 and c['step_time_interval_s'][0] <= $C0[0]['step_time_interval_s'][1]) for c in $C0) and all(c['framework'] for c in $C0)"
run 0 plan train --model llama-3-8b --system dgx-h100 --gpus 16 --global-batch 128 --top 8
expect_out "dtype  framework"
expect_out "ties (=): runners-up whose 80% interval overlaps the winner's"
grep -q '^ *2=  .*tie: ' "$TMPD/out" || fail "the second layout is not marked as a tie: $(sed -n 8p "$TMPD/out")"
# --framework ranks only what that framework runs
run 0 plan train --model llama-3-8b --system dgx-h100 --gpus 16 --global-batch 128 --pp 2 --framework megatron --top 50 --json
json_check "$TMPD/out" "len($C0) > 0 and d['framework'] == 'megatron' and all(c['config']['schedule'] != 'zb-h1' and c['framework'] == 'megatron' for c in $C0)"
run 0 plan train --model llama-3-8b --system dgx-h100 --gpus 16 --global-batch 128 --framework llm-foundry --top 20 --json
json_check "$TMPD/out" "len($C0) > 0 and all(c['config']['tp'] == 1 and c['config']['pp'] == 1 for c in $C0)"
run 0 plan train --model llama-3-8b --system dgx-h100 --gpus 16 --global-batch 128 --framework torchtitan --zero 3 --top 5 --json
json_check "$TMPD/out" "len($C0) > 0 and all(c['config']['fsdp'] and (c['config']['tp'] == 1 or c['config']['sequence_parallel']) for c in $C0)"
run 2 plan train --model llama-3-8b --system dgx-h100 --gpus 16 --global-batch 128 --framework megatron-lm
expect_err "unknown framework \"megatron-lm\""
# the default framework (megatron) ranks no zero-bubble schedule: none that Megatron-LM ships
run 0 plan train --model llama-3-8b --system dgx-h100 --gpus 16 --global-batch 128 --pp 2 --top 50 --json
json_check "$TMPD/out" "len($C0) > 0 and all(c['config']['schedule'] in ('1f1b', 'interleaved') for c in $C0)"
run 2 plan train --model llama-3-8b --system dgx-h100 --gpus 16 --global-batch 128 --pp 2 --schedule zb-h1 --framework megatron
expect_err "does not run the zb-h1 pipeline schedule"
# the capacity plan keeps pipelines even (or two end stages a layer short, as Llama 3 405B)
run 0 plan train --model llama-3-70b --tokens 15T --days 90 --global-batch 2048 --systems dgx-h100,dgx-a100 --json
json_check "$TMPD/out" "all(s['feasible'] for s in d['systems']) and all(80 % s['config']['pp'] == 0 or (-(-80 // s['config']['pp']) * s['config']['pp'] - 80 <= 2 and 80 // s['config']['pp'] >= 4) for s in d['systems'])"
# progress on stderr when it is not a terminal: whole lines with counts and the time left
PARAPLAN_PROGRESS_INTERVAL=0 run 0 plan train --model llama-3-8b --system dgx-h100 --gpus 16 --global-batch 128 --top 1
expect_err "progress: "
expect_err " layouts ("
expect_err "s left"
grep -q "$(printf '\r')" "$TMPD/err" && fail "a carriage return on a stderr that is not a terminal"
finish
