#!/bin/sh
# MoE serving from the command line: expert parallelism and attention data-parallelism in
# 'simulate serve' (JSON keys, per-GPU memory that follows the layout, determinism) and the
# refusals that name their flag (exit 2, nothing on stdout).
. "$top_srcdir/tests/lib.sh"

S="simulate serve --model deepseek-v3 --system dgx-b200 --tp 8 --engine trtllm --rate 2 --requests 100"

run 0 $S --weights fp8 --json
json_check "$TMPD/out" "d['config']['ep'] == 1 and d['config']['attention_dp'] == False"
cp "$TMPD/out" "$TMPD/tp.json"
run 0 $S --weights fp8 --ep 8 --attention-dp --json
json_check "$TMPD/out" "d['config']['ep'] == 8 and d['config']['attention_dp'] and d['simulation']['completed'] == 100"
# attention DP holds the attention weights whole on every GPU: more weights, fewer KV tokens a
# GPU (the same MLA latent per token)
python3 - "$TMPD/tp.json" "$TMPD/out" <<'PY' || fail "attention DP did not raise the weights per GPU"
import json, sys
a, b = (json.load(open(p))['memory_per_gpu'] for p in sys.argv[1:3])
assert b['weights_bytes'] > a['weights_bytes'] and b['kv_cache_tokens'] < a['kv_cache_tokens'], (a, b)
PY
cp "$TMPD/out" "$TMPD/dp.json"
run 0 $S --weights fp8 --ep 8 --attention-dp --json
cmp -s "$TMPD/out" "$TMPD/dp.json" || fail "the same EP run gave different output"
# NVFP4 experts on Blackwell: smaller weights than fp8
run 0 $S --weights fp4 --kv-dtype fp8 --ep 8 --attention-dp --json
json_check "$TMPD/out" "d['config']['weights'] == 'fp4'"
python3 - "$TMPD/dp.json" "$TMPD/out" <<'PY' || fail "fp4 weights are not smaller than fp8"
import json, sys
a, b = (json.load(open(p))['memory_per_gpu'] for p in sys.argv[1:3])
assert b['weights_bytes'] < 0.7 * a['weights_bytes'], (a, b)
PY
run 0 $S --weights fp8 --ep 8 --attention-dp --moe-imbalance 1.3
expect_out "time to first token"

# the table says the layout
run 0 $S --weights fp8 --ep 8 --attention-dp
expect_out "MoE: the experts over EP 8, attention data-parallel on each GPU"

# plan serve searches expert layouts for a MoE model beside TP, and shows them
P="plan serve --model mixtral-8x7b --systems dgx-h100 --rate 2 --slo-ttft-p99 3000 --slo-tpot-p99 100 --duration 20 --no-disaggregate --top 100"
run 0 $P --json
json_check "$TMPD/out" "all('ep' in x and 'attention_dp' in x for x in d['deployments'] + d['rejected'])"
json_check "$TMPD/out" "any(x['ep'] == 8 and x['attention_dp'] for x in d['deployments'] + d['rejected']) and any(x['ep'] == 1 for x in d['deployments'])"
json_check "$TMPD/out" "all(x['ep'] == 1 or x['tp'] % x['ep'] == 0 for x in d['deployments'])"
run 0 $P
expect_out "experts"
# a dense model gets no expert layouts
run 0 plan serve --model llama-3-8b --systems dgx-h100 --rate 2 --slo-ttft-p99 3000 --slo-tpot-p99 100 --duration 20 --no-disaggregate --top 100 --json
json_check "$TMPD/out" "all(x['ep'] == 1 for x in d['deployments'] + d['rejected'])"
# fp4 is a --weights choice of plan serve; the H100 gets no fp4 candidates
run 0 $P --weights fp8,fp4 --json
json_check "$TMPD/out" "all(x['weights'] == 'fp8' for x in d['deployments'] + d['rejected'])"

# validation rows: DeepSeek-R1 is in the catalog, "FP4 weights" is --weights fp4 (refused on the
# H200: the row is skipped saying so), the notes' "MoE EP8, enable_attention_dp True" change the
# layout (the same row without them predicts another throughput)
run 0 validate --set serving --data "$top_srcdir/tests/data/serving-moe.csv" --json
json_check "$TMPD/out" "len(d['rows']) == 2 and all(x['system'] == 'dgx-b200' and x['predicted'] > 0 for x in d['rows'])"
json_check "$TMPD/out" "abs(d['rows'][0]['predicted'] / d['rows'][1]['predicted'] - 1) > 0.01"
json_check "$TMPD/out" "len(d['skipped']) == 1 and '--weights fp4' in d['skipped'][0]['reason']"

# refusals name the flag
run 2 $S --weights fp8 --ep 3
expect_err "--ep 3"
expect_no_out
run 2 $S --weights fp8 --attention-dp
expect_err "--attention-dp"
run 2 simulate serve --model deepseek-v3 --system hgx-h200 --tp 8 --rate 2 --weights fp4
expect_err "--weights fp4"
expect_no_out
run 2 simulate serve --model llama-3-8b --system dgx-h100 --tp 2 --ep 2 --rate 2
expect_err "--ep 2"
run 2 $S --weights fp8 --ep 8 --moe-imbalance 0.5
expect_err "--moe-imbalance"

finish
