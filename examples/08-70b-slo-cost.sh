#!/bin/sh
# 8. A 70B LLM at 100 requests/s with P99 latency under 500 ms at the lowest GPU cost, with and
#    without 4-bit weights, on H100 and H200: GPUs needed and dollars per million tokens.
. "$(dirname "$0")/lib.sh"
say "Llama-3-70B, 100 requests/s of 512 prompt and 256 output tokens; P99 time to first token
under 500 ms and P99 time per output token under 50 ms."
ask llama70b-slo plan serve --model llama-3-70b --rate 100 --slo-ttft-p99 500 --slo-tpot-p99 50 \
	--systems dgx-h100,hgx-h200 --weights bf16,int4 --duration 60 --top 12
say "Each row is a deployment that meets the SLO at 100 requests/s, cheapest first: its GPUs, dollars
per hour and month at the system's on-demand price, dollars per million output tokens, the P99
latencies it reaches, and its headroom (capacity over the requested rate).

The cheapest deployment's replica as a vLLM server (start as many as the replicas column says):"
launch llama70b-vllm llama70b-vllm.sh plan serve --model llama-3-70b --rate 100 --slo-ttft-p99 500 \
	--slo-tpot-p99 50 --systems dgx-h100,hgx-h200 --weights bf16,int4 --duration 60 --top 12 --no-disaggregate \
	--export vllm
