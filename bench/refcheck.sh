#!/bin/sh
# refcheck.sh -- the outputs a speed change must leave byte for byte as they were.
#
# Runs a fixed set of commands (simulate train in both modes over every schedule and
# parallelism the simulator knows, CNNs, inference, plan train, validate, simulate serve and
# plan serve, a trace file) with
# the given paraplan and writes each output to DIR/NAME.  Record a reference with the build
# before a change, then the same after it and compare:
#
#   bench/refcheck.sh ./paraplan /tmp/ref          # before
#   bench/refcheck.sh ./paraplan /tmp/new /tmp/ref # after: lists what differs, exit 1 if any
#
# The set is slow on purpose (about a minute; the 405B full run is most of it): it includes
# the cases whose event counts and flow sharing a faster engine must not change.
set -u
PARAPLAN=${1:?usage: refcheck.sh PARAPLAN OUTDIR [REFDIR]}
OUT=${2:?usage: refcheck.sh PARAPLAN OUTDIR [REFDIR]}
REF=${3:-}
PARAPLAN_DB=${PARAPLAN_DB:-:memory:}
export PARAPLAN_DB
mkdir -p "$OUT" || exit 2

# one NAME ARGS... : stdout of paraplan ARGS into OUT/NAME, with its exit status on the last line
one() {
	name=$1
	shift
	"$PARAPLAN" "$@" >"$OUT/$name" 2>"$OUT/$name.err"
	echo "exit $?" >>"$OUT/$name"
	# the planners' progress lines carry their speed, which is meant to change
	grep -v -e 'layouts/s' -e '^progress: ' "$OUT/$name.err" >"$OUT/$name.err.tmp"
	mv "$OUT/$name.err.tmp" "$OUT/$name.err"
}

T="simulate train --json"
one gpt3-interleaved $T --model gpt3-175b --system dgx-a100 --gpus 1024 --tp 8 --pp 8 --vpp 3 --micro-batch 1 \
	--global-batch 1536 --recompute selective --sequence-parallel
one gpt3-interleaved-full $T --model gpt3-175b --system dgx-a100 --gpus 1024 --tp 8 --pp 8 --vpp 3 --micro-batch 1 \
	--global-batch 1536 --recompute selective --sequence-parallel --full
one l405-full $T --model llama-3-405b --system dgx-h100 --gpus 16384 --tp 8 --pp 16 --micro-batch 1 \
	--global-batch 2048 --seq 8192 --sequence-parallel --full
one l405-uneven-vpp $T --model llama-3-405b --system dgx-h100 --gpus 16384 --tp 8 --pp 16 --vpp 4 --micro-batch 1 \
	--global-batch 2048 --seq 8192 --sequence-parallel
one l70-interleaved $T --model llama-3-70b --system dgx-h100 --gpus 64 --tp 8 --pp 4 --vpp 2 --micro-batch 1 \
	--global-batch 64 --recompute selective --sequence-parallel
one gpt3-zb $T --model gpt3-175b --system dgx-a100 --gpus 128 --tp 8 --pp 8 --micro-batch 1 --global-batch 64 \
	--schedule zb-h1
one gpt3-zb-full $T --model gpt3-175b --system dgx-a100 --gpus 128 --tp 8 --pp 8 --micro-batch 1 --global-batch 64 \
	--schedule zb-h1 --full
one gpt17-gpipe $T --model gpt-1.7b --system dgx-a100 --gpus 32 --tp 2 --pp 4 --micro-batch 2 --global-batch 64 \
	--schedule gpipe --recompute full --no-overlap-grad-reduce
one l8-cp $T --model llama-3-8b --system dgx-h100 --gpus 32 --tp 2 --cp 4 --micro-batch 1 --global-batch 32 \
	--seq 32768 --sequence-parallel
one l8-cp-full $T --model llama-3-8b --system dgx-h100 --gpus 32 --tp 2 --cp 4 --pp 2 --micro-batch 1 \
	--global-batch 32 --seq 32768 --full
one mixtral-ep $T --model mixtral-8x7b --system dgx-h100 --gpus 32 --tp 2 --pp 2 --ep 8 --micro-batch 1 \
	--global-batch 64 --zero 1
one mixtral-ep-full $T --model mixtral-8x7b --system dgx-h100 --gpus 32 --tp 2 --pp 2 --ep 8 --micro-batch 1 \
	--global-batch 64 --zero 1 --full --moe-imbalance 1.3
one dsv3-ep $T --model deepseek-v3 --system dgx-h100 --gpus 1024 --tp 8 --pp 8 --ep 16 --micro-batch 1 \
	--global-batch 512 --dtype fp8 --recompute full
one gpt2-zero3 $T --model gpt2-xl --system dgx-a100 --gpus 16 --zero 3 --micro-batch 4 --global-batch 128
one gpt2-fsdp-full $T --model gpt2-xl --system dgx-a100 --gpus 16 --zero 3 --fsdp --micro-batch 4 --global-batch 128 \
	--recompute full --full
one gpt2-zero2-full $T --model gpt2-xl --system aws-p4d --gpus 16 --zero 2 --micro-batch 2 --global-batch 64 --full
one gpt17-straggler $T --model gpt-1.7b --system dgx-a100 --gpus 32 --tp 2 --pp 4 --micro-batch 1 --global-batch 32 \
	--full --straggler 5:1.5
one l70-gpn $T --model llama-3-70b --system dgx-h100 --gpus 64 --tp 4 --pp 4 --micro-batch 1 --global-batch 128 \
	--gpus-per-node 4 --zero 1 --bucket-mb 100
one resnet50 $T --model resnet-50 --system dgx-a100 --gpus 16 --micro-batch 32 --global-batch 512 --dtype fp16
one resnet50-full $T --model resnet-50 --system gcp-a2-highgpu-8g --gpus 32 --micro-batch 32 --global-batch 1024 --full
one vgg16 $T --model vgg-16 --system dgx-v100 --gpus 8 --micro-batch 16 --global-batch 256 --dtype fp16
one table-gpt3 simulate train --model gpt3-175b --system dgx-a100 --gpus 128 --tp 8 --pp 8 --micro-batch 1 \
	--global-batch 64
one infer-r152 simulate infer --model resnet-152 --system dgx-a100 --batch 8192 --pp 4 --json
one plan-l70 plan train --model llama-3-70b --system dgx-h100 --gpus 64 --global-batch 512 --jobs 1 --json
one plan-gpt3 plan train --model gpt3-175b --system dgx-a100 --gpus 1024 --global-batch 1536 --jobs 2 --json
one plan-l8 plan train --model llama-3-8b --system dgx-h100 --gpus 16 --global-batch 128 --top 5 --json
one plan-mixtral plan train --model mixtral-8x7b --system dgx-h100 --gpus 32 --global-batch 256 --json
one plan-resnet plan train --model resnet-50 --system dgx-a100 --gpus 16 --global-batch 512 --json
one plan-range plan train --model llama-3-70b --system dgx-h100 --gpus 64..256 --global-batch 512 --top 3
one validate validate --json
S="simulate serve --json"
one serve-l70 $S --model llama-3-70b --system dgx-h100 --tp 4 --replicas 2 --rate 100 --duration 600 --output-len 256
one serve-l8 $S --model llama-3-8b --system dgx-a100 --tp 1 --rate 20 --duration 60
one serve-mixtral $S --model mixtral-8x7b --system dgx-h100 --tp 2 --rate 10 --duration 60
one plan-serve-l8 plan serve --model llama-3-8b --rate 5 --slo-ttft-p99 500 --slo-tpot-p99 50 --json
one plan-serve-l70 plan serve --model llama-3-70b --rate 100 --slo-ttft-p99 500 --slo-tpot-p99 50 --weights bf16,int4 \
	--jobs 2 --json
"$PARAPLAN" simulate train --model gpt-1.7b --system dgx-a100 --gpus 16 --tp 2 --pp 4 --micro-batch 1 \
	--global-batch 16 --full --trace "$OUT/trace.json" >/dev/null 2>&1

[ -n "$REF" ] || exit 0
bad=0
for f in "$REF"/*; do
	n=$(basename "$f")
	if ! cmp -s "$f" "$OUT/$n"; then
		echo "differs: $n"
		bad=1
	fi
done
[ $bad = 0 ] && echo "all $(ls "$REF" | wc -l) outputs identical"
exit $bad
