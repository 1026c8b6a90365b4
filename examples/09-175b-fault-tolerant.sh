#!/bin/sh
# 9. A fault-tolerant serving cluster for a 175B model at 100 requests/s with P99 under 500 ms
#    on 8-GPU nodes: the replicas needed with N+1 and N+2 redundancy.
. "$(dirname "$0")/lib.sh"
say "GPT-3 175B on DGX H100 nodes, 100 requests/s of 512 prompt and 256 output tokens, P99 TTFT
under 500 ms and P99 TPOT under 50 ms."
for k in 0 1 2; do
	ask "gpt175b-n$k" plan serve --model gpt3-175b --rate 100 --slo-ttft-p99 500 --slo-tpot-p99 50 \
		--systems dgx-h100 --failures "$k" --no-disaggregate --duration 60 --top 3
done
say "N+K keeps the SLO with K replicas down: the replicas column shows the N the rate needs and
the K spares; GPUs and cost include the spares.  One replica of the N+2 deployment, for SGLang:"
launch gpt175b-sglang gpt175b-sglang.sh plan serve --model gpt3-175b --rate 100 --slo-ttft-p99 500 \
	--slo-tpot-p99 50 --systems dgx-h100 --failures 2 --no-disaggregate --duration 60 --top 3 --export sglang
