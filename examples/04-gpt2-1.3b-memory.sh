#!/bin/sh
# 4. Fine-tune a 1.3B GPT-2-style model where memory is the limit: per-GPU memory under DDP,
#    ZeRO-1/2/3 and FSDP, and the speed cost of each.
. "$(dirname "$0")/lib.sh"
M=examples/models/gpt2-1.3b.json
say "A 1.3B GPT-2-style model (examples/models/gpt2-1.3b.json), 8 L4 GPUs (24 GB, PCIe), bf16, 8 sequences of 1024 per GPU."
B="--model $M --system pcie-l4x8 --gpus 8 --tp 1 --pp 1 --micro-batch 8 --global-batch 64"
ask gpt2-ddp simulate train $B --zero 0
ask gpt2-zero1 simulate train $B --zero 1
ask gpt2-zero2 simulate train $B --zero 2
ask gpt2-zero3 simulate train $B --zero 3
ask gpt2-fsdp simulate train $B --zero 3 --fsdp
ask gpt2-fsdp-recompute simulate train $B --zero 3 --fsdp --recompute full
say "Each table's memory line is one GPU: weights, gradients and Adam states shrink by the
degree they are sharded (ZeRO-1 the optimizer states, ZeRO-2 also the gradients, ZeRO-3/FSDP
also the weights); the step time shows what the extra all-gathers and reduce-scatters cost."
