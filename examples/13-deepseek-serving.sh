#!/bin/sh
# 13. DeepSeek-R1 at 20 requests/s under MLPerf's Server limits (P99 time to first token 2 s,
#     P99 time per output token 80 ms): how many B200 or H200 nodes, and which layout --
#     tensor parallelism, or the experts sharded (EP) with attention data-parallel as
#     TensorRT-LLM and SGLang serve it -- with fp8 or NVFP4 (Blackwell only) weights.
. "$(dirname "$0")/lib.sh"
say "DeepSeek-R1 (671B, 256 routed experts, top 8), 20 requests/s of the MLPerf deepseek-r1
dataset's mean prompt (804 tokens) and 2000 output tokens; P99 TTFT under 2000 ms and P99 TPOT
under 80 ms, under TensorRT-LLM, on DGX B200 and HGX H200 nodes (8 GPUs each)."
ask deepseek-r1-slo plan serve --model deepseek-r1 --rate 20 --slo-ttft-p99 2000 --slo-tpot-p99 80 \
	--prompt-len 804 --output-len 2000 --engine trtllm --systems dgx-b200,hgx-h200 --weights fp8,fp4 \
	--no-disaggregate --duration 30 --top 10
say "Each row meets the SLO at 20 requests/s, cheapest first; 'experts' is the MoE layout (EP8
dp-attn: the experts over 8 GPUs, attention data-parallel on each), 'GPUs' over 8 is the nodes.
The winner's replica, simulated alone at the same rate per replica, and its memory per GPU
(attention-DP holds the attention weights whole and an eighth of the experts on each GPU):"
ask deepseek-r1-ep8 simulate serve --model deepseek-r1 --system dgx-b200 --tp 8 --ep 8 --attention-dp \
	--weights fp4 --kv-dtype fp8 --engine trtllm --rate 20 --prompt-len 804 --output-len 2000 --requests 600
say "The same replica with tensor parallelism only (experts split by TP 8, no all-to-all):"
ask deepseek-r1-tp8 simulate serve --model deepseek-r1 --system dgx-b200 --tp 8 \
	--weights fp4 --kv-dtype fp8 --engine trtllm --rate 20 --prompt-len 804 --output-len 2000 --requests 600
