#!/bin/sh
# 6. A 100B model on 64 GPUs (8 nodes of 8): the 3D parallelism choice (TP inside the node, PP
#    across), and the micro-batch count against the bubble.
. "$(dirname "$0")/lib.sh"
M=examples/models/gpt-100b.json
say "A 100B GPT (examples/models/gpt-100b.json) on 8 DGX A100 nodes, global batch 512."
ask gpt100b-plan plan train --model $M --system dgx-a100 --gpus 64 --global-batch 512 --top 10
say "The winner as a Megatron-LM run script (run it on each of the 8 nodes), and as a NeMo 2.0 /
Megatron-Bridge script:"
launch gpt100b-megatron gpt100b-megatron.sh plan train --model $M --system dgx-a100 --gpus 64 --global-batch 512 \
	--top 3 --export megatron
launch gpt100b-nemo gpt100b-nemo.py plan train --model $M --system dgx-a100 --gpus 64 --global-batch 512 \
	--top 3 --export nemo
say "TP 8 inside each node, PP 8 across the nodes, 1F1B: the bubble against the number of
micro-batches per step (m = global batch / (dp x micro-batch); the closed form is (p-1)/(m+p-1)):"
for gb in 8 16 32 64 128; do
	ask "gpt100b-tp8pp8-m$gb" simulate train --model $M --system dgx-a100 --gpus 64 --tp 8 --pp 8 \
		--micro-batch 1 --global-batch "$gb" --recompute selective --sequence-parallel
done
