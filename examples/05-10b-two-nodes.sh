#!/bin/sh
# 5. A 10B model that does not fit on one GPU, on 8 GPUs in two nodes: the best TP/PP/ZeRO
#    layout, with the memory per GPU and the pipeline bubble.
. "$(dirname "$0")/lib.sh"
M=examples/models/gpt-10b.json
say "A 10B GPT (examples/models/gpt-10b.json) on two nodes of 4 A100 80GB (--gpus-per-node 4), global batch 64."
ask gpt10b-1gpu simulate train --model $M --system dgx-a100 --gpus 1 --tp 1 --pp 1 --micro-batch 1 --global-batch 64
ask gpt10b-plan plan train --model $M --system dgx-a100 --gpus 8 --gpus-per-node 4 --global-batch 64 --top 10
say "The single GPU does not fit (160 GB of weights, gradients and Adam states for 10B
parameters).  The plan's first row is the fastest layout that fits; 'memory' is the peak per GPU
and 'bubble' the pipeline's idle share; the last column says why each runner-up lost.

The winner as a SLURM job for Megatron-LM: two nodes of 4 GPUs, one torchrun per node."
launch gpt10b-slurm gpt10b-slurm.sh plan train --model $M --system dgx-a100 --gpus 8 --gpus-per-node 4 \
	--global-batch 64 --top 3 --export slurm
