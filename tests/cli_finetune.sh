#!/bin/sh
# Fine-tuning from the command line (docs/finetune-goodput.md): LoRA, QLoRA and packed
# sequences in 'simulate train' and 'plan train', and the settings refused with exit 2.
. "$top_srcdir/tests/lib.sh"

# Llama-2-7B, LoRA r 16 on q and v: 32 x 2 x 16 x (4096 + 4096) = 8,388,608 trainable, whose
# fp32 gradients are 32 MiB and Adam states 96 MiB; the base's 6,738,415,616 bf16 weights
base="simulate train --model llama-2-7b --system dgx-a100 --gpus 1 --micro-batch 1 --global-batch 8 --seq 1024"
run 0 $base --lora-rank 16 --lora-modules q,v --json
json_check "$TMPD/out" "d['finetune']['method'] == 'lora' and d['finetune']['trainable_params'] == 8388608 and d['config']['lora_modules'] == 'q,v'"
json_check "$TMPD/out" "d['memory'][0]['grads_bytes'] == 32 * 2**20 and d['memory'][0]['optimizer_bytes'] == 96 * 2**20"
json_check "$TMPD/out" "d['memory'][0]['weights_bytes'] == 2 * (6738415616 + 8388608) and d['memory'][0]['fits']"
cp "$TMPD/out" "$TMPD/lora.json"
run 0 $base --lora-rank 16 --lora-modules q,v
expect_out "lora rank 16 on q,v, bf16 base"
# QLoRA: the same adapters over an NF4 base, less memory, more time (the dequantization)
run 0 $base --lora-rank 16 --lora-modules q,v --base-dtype nf4 --json
json_check "$TMPD/out" "d['finetune']['method'] == 'qlora' and d['config']['base_dtype'] == 'nf4'"
python3 - "$TMPD/lora.json" "$TMPD/out" <<'PY' || fail "QLoRA against LoRA"
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
assert b['memory'][0]['weights_bytes'] < 0.3 * a['memory'][0]['weights_bytes']
assert b['step_time_s'] > a['step_time_s']
PY
# full SFT of 512-token samples packed into 1024-token sequences: fewer attention FLOPs
run 0 $base --sample-len 512 --json
json_check "$TMPD/out" "d['finetune']['method'] == 'full' and d['config']['sample_len'] == 512"
# the 70B LoRA on one node: the planner finds a layout that fits
run 0 plan train --model llama-2-70b --system dgx-h100 --gpus 8 --global-batch 32 --seq 4096 --lora-rank 16 --top 3 --json
json_check "$TMPD/out" "d['winner']['config']['lora_rank'] == 16 and all(c['peak_bytes'] <= c['capacity_bytes'] for c in d['counts'][0]['candidates'])"
run 2 plan train --model llama-2-70b --system dgx-h100 --gpus 8 --global-batch 32 --lora-rank 16 --export megatron
expect_err "LoRA fine-tuning (--lora-rank) is not written by the exporters"

# refused
run 2 $base --lora-rank 16 --lora-modules q,w
expect_err '"w" is not a projection'
run 2 $base --base-dtype nf4
expect_err "need --lora-rank"
run 2 $base --lora-rank 16 --base-dtype int3
expect_err "--base-dtype must be bf16, fp16"
run 2 $base --lora-rank 0
run 2 $base --sample-len 4096
expect_err "--sample-len must be from 1 to the sequence length"
run 2 simulate train --model mnist-cnn --system dgx-a100 --gpus 1 --micro-batch 1 --global-batch 8 --lora-rank 4
expect_err "is a CNN"
run 2 simulate train --model nemotron-h-56b --system dgx-h100 --gpus 8 --tp 8 --micro-batch 1 --global-batch 8 --lora-rank 8
expect_err "is a hybrid model"

finish
