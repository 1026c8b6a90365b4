#!/bin/sh
# 12. Fine-tuning: a 1.5B model on a 16 GB GPU where full fine-tuning does not fit, and a 70B
#     LoRA on one DGX H100 node (or QLoRA on one of its GPUs).
. "$(dirname "$0")/lib.sh"
say "GPT-2 XL (1.56B) on one T4 (16 GB), fp16, sequences of 1024 tokens, full recomputation:
full fine-tuning (weights, gradients and Adam states of every parameter) against LoRA r 16 on
every linear layer of a frozen base."
ask ft-gpt2xl-full simulate train --model gpt2-xl --system pcie-t4x4 --gpus 1 --micro-batch 1 --global-batch 16 \
	--seq 1024 --dtype fp16 --recompute full
ask ft-gpt2xl-lora simulate train --model gpt2-xl --system pcie-t4x4 --gpus 1 --micro-batch 1 --global-batch 16 \
	--seq 1024 --dtype fp16 --recompute full --lora-rank 16
say "Llama-2-70B, LoRA r 16 on one DGX H100 node (8 GPUs), 32 sequences of 4096 tokens per step:
the planner's best layouts (the frozen base sharded, only the adapters' gradients reduced)."
ask ft-70b-lora-node plan train --model llama-2-70b --system dgx-h100 --gpus 8 --global-batch 32 --seq 4096 \
	--lora-rank 16 --top 3
say "The same model with QLoRA (NF4 base, r 64 on every linear layer) on a single H100."
ask ft-70b-qlora-gpu simulate train --model llama-2-70b --system dgx-h100 --gpus 1 --micro-batch 1 --global-batch 16 \
	--seq 2048 --lora-rank 64 --base-dtype nf4 --recompute full
