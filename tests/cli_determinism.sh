#!/bin/sh
# Determinism and degenerate configurations.  The same simulate, plan and serve command run
# twice prints byte-identical output (tables and JSON) and writes byte-identical trace files:
# events are ordered by (time, sequence), random streams are seeded, the planner's threads
# rank by value and never by finishing order.  The smallest configurations (one layer of width
# one, one GPU, one request of one token) run without a division by zero: tests/lib.sh scans
# every JSON number printed here.
. "$top_srcdir/tests/lib.sh"

# twice NAME ARGS... : runs paraplan ARGS twice (exit 0 each), compares stdout byte for byte
twice() {
	name=$1
	shift
	run 0 "$@"
	cp "$TMPD/out" "$TMPD/$name.1"
	run 0 "$@"
	cmp -s "$TMPD/out" "$TMPD/$name.1" || fail "paraplan $*: two runs printed different output"
	[ -s "$TMPD/out" ] || fail "paraplan $*: printed nothing"
}

twice train simulate train --model llama-3-70b --system dgx-h100 --gpus 64 --tp 8 --pp 4 --vpp 2 --micro-batch 1 \
	--global-batch 64 --recompute selective --sequence-parallel --json
twice train-table simulate train --model gpt3-175b --system dgx-a100 --gpus 128 --tp 8 --pp 8 --micro-batch 1 \
	--global-batch 64 --schedule zb-h1
twice train-full simulate train --model gpt-1.7b --system dgx-a100 --gpus 32 --tp 2 --pp 4 --micro-batch 1 \
	--global-batch 32 --full --straggler 5:1.5 --json
twice moe simulate train --model mixtral-8x7b --system dgx-h100 --gpus 32 --tp 2 --pp 2 --ep 8 --micro-batch 1 \
	--global-batch 64 --zero 1 --json
twice cnn simulate train --model resnet-50 --system dgx-a100 --gpus 16 --micro-batch 32 --global-batch 512 \
	--dtype fp16 --json
twice serve simulate serve --model llama-3-8b --system dgx-h100 --tp 1 --replicas 2 --rate 20 \
	--prompt-len lognormal:mean=800,sigma=0.6 --output-len exponential:mean=200 --duration 30 --seed 7 --json
twice serve-gamma simulate serve --model llama-3-70b --system dgx-h100 --tp 4 --rate 5 --arrival gamma:cv=2 \
	--prompt-len uniform:min=100,max=2000 --output-len 128 --duration 20 --disaggregate 1:1 --json
twice serve-trace simulate serve --model llama-3-8b --system dgx-h100 --tp 1 --rate 1 \
	--arrival "trace:$top_srcdir/tests/fuzz/corpus/trace/trace.jsonl" --json
twice plan plan train --model llama-3-8b --system dgx-h100 --gpus 16 --global-batch 128 --top 5 --json
twice plan-range plan train --model llama-3-70b --system dgx-h100 --gpus 64..256 --global-batch 512 --top 3
twice plan-serve plan serve --model llama-3-8b --system dgx-h100 --rate 20 --slo-ttft-p99 500 --slo-tpot-p99 50 --json

# a different seed is a different run: the comparison above can fail
run 0 simulate serve --model llama-3-8b --system dgx-h100 --tp 1 --replicas 2 --rate 20 \
	--prompt-len lognormal:mean=800,sigma=0.6 --output-len exponential:mean=200 --duration 30 --seed 8 --json
cmp -s "$TMPD/out" "$TMPD/serve.1" && fail "seeds 7 and 8 gave the same serving run"

# trace files are deterministic too
for i in 1 2; do
	run 0 simulate train --model gpt-1.7b --system dgx-a100 --gpus 16 --tp 2 --pp 4 --micro-batch 1 \
		--global-batch 16 --trace "$TMPD/train-$i.json"
	run 0 simulate serve --model llama-3-8b --system dgx-h100 --tp 1 --rate 5 --duration 5 \
		--trace "$TMPD/serve-$i.json"
done
cmp -s "$TMPD/train-1.json" "$TMPD/train-2.json" || fail "two training traces differ"
cmp -s "$TMPD/serve-1.json" "$TMPD/serve-2.json" || fail "two serving traces differ"

# ---- degenerate configurations -------------------------------------------------------------------
printf '{"name": "tiny", "layers": 1, "hidden": 1, "heads": 1, "ffn": 1, "vocab": 1, "seq": 1}' >"$TMPD/tiny.json"
printf '{"name": "tinycnn", "kind": "cnn", "input": {"channels": 1, "height": 1, "width": 1},
  "layers": [{"type": "fc", "out": 1}]}' >"$TMPD/tinycnn.json"
T=$TMPD/tiny.json
twice tiny-show model show "$T" --json
twice tiny-train simulate train --model "$T" --system dgx-h100 --gpus 1 --tp 1 --pp 1 --micro-batch 1 \
	--global-batch 1 --json
json_check "$TMPD/out" "d['step_time_s'] > 0 and d['tokens_per_s'] > 0 and 0 <= d['mfu'] <= 1"
twice tiny-full simulate train --model "$T" --system dgx-h100 --gpus 8 --tp 1 --pp 1 --micro-batch 1 \
	--global-batch 8 --full --straggler 3:2 --json
twice tiny-cnn simulate train --model "$TMPD/tinycnn.json" --system dgx-h100 --gpus 2 --micro-batch 1 \
	--global-batch 2 --dtype fp16 --full --json
json_check "$TMPD/out" "d['step_time_s'] > 0"
twice tiny-serve simulate serve --model "$T" --system dgx-h100 --tp 1 --arrival batch --requests 1 --prompt-len 1 \
	--output-len 1 --max-num-seqs 1 --max-batched-tokens 1 --json
json_check "$TMPD/out" "d['requests_per_s'] > 0 and d['output_tokens_per_s'] == d['requests_per_s'] and d['tpot_s']['p99'] >= 0"
twice tiny-plan plan train --model "$T" --system dgx-h100 --gpus 1 --global-batch 1 --json
twice tiny-plan-serve plan serve --model "$T" --system dgx-h100 --rate 0.001 --slo-ttft-p99 1000 --slo-tpot-p99 100 --json
finish
