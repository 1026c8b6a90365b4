#!/bin/sh
# 7. A 7B LLM served on 4 GPUs with tensor parallelism: latency per token and throughput
#    against TP 1, 2 and 4.
. "$(dirname "$0")/lib.sh"
say "Llama-2-7B on H100s, 4 requests/s of 512 prompt and 256 output tokens, 4 GPUs in all:
4 replicas of TP 1, 2 of TP 2, or 1 of TP 4."
ask llama7b-tp1 simulate serve --model llama-2-7b --system dgx-h100 --tp 1 --replicas 4 --rate 4 --duration 120
ask llama7b-tp2 simulate serve --model llama-2-7b --system dgx-h100 --tp 2 --replicas 2 --rate 4 --duration 120
ask llama7b-tp4 simulate serve --model llama-2-7b --system dgx-h100 --tp 4 --replicas 1 --rate 4 --duration 120
say "And the most each layout serves when overloaded (300 requests/s offered):"
ask llama7b-tp1-load simulate serve --model llama-2-7b --system dgx-h100 --tp 1 --replicas 4 --rate 300 --duration 30
ask llama7b-tp4-load simulate serve --model llama-2-7b --system dgx-h100 --tp 4 --replicas 1 --rate 300 --duration 30
say "TPOT (time per output token) falls with TP (each GPU reads a quarter of the weights), but
the all-reduces per layer cost latency; under load the replicas of TP 1 serve more requests."
