#!/bin/sh
# Exports that launch what was planned: every flag, key and field an export writes exists in the
# program at the version its header names (tests/data/flags/, checked by tests/export_check.py),
# every argument the program requires is there, the layout is the ranked one, and what a
# framework cannot express is refused with the reason.
. "$top_srcdir/tests/lib.sh"
FL="$top_srcdir/tests/data/flags"
check() { python3 "$top_srcdir/tests/export_check.py" "$1" "$2" "$FL" || fail "the $1 export does not pass its flag lists"; }
arg() { grep -q -- "$1" "$2" || fail "$2 lacks $1"; }
noarg() { ! grep -q -- "$1" "$2" || fail "$2 has $1"; }
JSONW="d['counts'][0]['candidates'][0]['config']"

# every target, on a dense model
P="plan train --model llama-3-70b --system dgx-h100 --gpus 64 --global-batch 512"
for k in megatron slurm deepspeed torchtitan nemo torchrun; do
	# shellcheck disable=SC2086
	run 0 $P --export $k --out "$TMPD/$k.out"
	expect_out "layouts enumerated"
	case $k in torchrun) check megatron "$TMPD/$k.out" ;; *) check $k "$TMPD/$k.out" ;; esac
done
# the layout written is the one ranked: the same command's JSON winner
# shellcheck disable=SC2086
run 0 $P --json
w=$(python3 -c "import json,sys; c=json.load(open(sys.argv[1]))['counts'][0]['candidates'][0]['config']; print(c['tp'], c['pp'], c['cp'], c['zero'])" "$TMPD/out")
set -- $w
arg "--tensor-model-parallel-size $1" "$TMPD/megatron.out"
arg "--pipeline-model-parallel-size $2" "$TMPD/megatron.out"
# Llama 3's RoPE base, the context, and what Megatron-LM requires to start at all
arg "--rotary-base 500000" "$TMPD/megatron.out"
arg "--max-position-embeddings 8192" "$TMPD/megatron.out"
arg '--tokenizer-model "$TOKENIZER_MODEL"' "$TMPD/megatron.out"
arg ': "${DATA_PATH:?' "$TMPD/megatron.out"
# the placeholders stop the script before it launches anything
env -i PATH="$PATH" bash "$TMPD/megatron.out" >"$TMPD/ph.out" 2>"$TMPD/ph.err" && fail "the script ran with its placeholders unset"
grep -q "MEGATRON_LM is a placeholder" "$TMPD/ph.err" || fail "an unset placeholder is not named: $(cat "$TMPD/ph.err")"

# ZeRO-3 is Megatron-FSDP's optim_grads_params, not the distributed optimizer (ZeRO-1)
run 0 plan train --model llama-3-8b --system dgx-h100 --gpus 16 --global-batch 128 --zero 3 --export megatron
cp "$TMPD/out" "$TMPD/z3.sh"
check megatron "$TMPD/z3.sh"
arg "--use-megatron-fsdp" "$TMPD/z3.sh"
arg "--data-parallel-sharding-strategy optim_grads_params" "$TMPD/z3.sh"
noarg "--use-distributed-optimizer" "$TMPD/z3.sh"
run 0 plan train --model llama-3-8b --system dgx-h100 --gpus 16 --global-batch 128 --zero 1 --export megatron
arg "--use-distributed-optimizer" "$TMPD/out"

# DeepSeek-V3: MLA, a shared expert, 2048-wide experts, three dense layers
run 0 plan train --model deepseek-v3 --system dgx-h100 --gpus 512 --global-batch 4096 --export megatron
cp "$TMPD/out" "$TMPD/dsv3.sh"
check megatron "$TMPD/dsv3.sh"
arg "--multi-latent-attention" "$TMPD/dsv3.sh"
arg "--kv-lora-rank 512" "$TMPD/dsv3.sh"
arg "--moe-ffn-hidden-size 2048" "$TMPD/dsv3.sh"
arg "--moe-shared-expert-intermediate-size 2048" "$TMPD/dsv3.sh"
arg "--moe-layer-freq '\[0,0,0,1,1," "$TMPD/dsv3.sh"
# MoE parallel folding: EP 8 on tp 2 x dp 4 takes the experts' TP down to 1 (Megatron-Core's default
# is tp, so the export says it)
run 0 plan train --model qwen3-30b-a3b --system dgx-h100 --gpus 8 --global-batch 64 --tp 2 --pp 1 --ep 8 --export megatron
cp "$TMPD/out" "$TMPD/fold.sh"
check megatron "$TMPD/fold.sh"
arg "--expert-model-parallel-size 8" "$TMPD/fold.sh"
arg "--expert-tensor-parallel-size 1" "$TMPD/fold.sh"
run 0 plan train --model deepseek-v3 --system dgx-h100 --gpus 512 --global-batch 4096 --export nemo
check nemo "$TMPD/out"
arg "DeepSeekModelProvider(" "$TMPD/out"

# gpt-oss's sliding window (128 tokens, every other layer): Transformer Engine's window counts the
# tokens before the query, and every 2nd layer attends to the whole context
run 0 plan train --model gpt-oss-20b --system dgx-h100 --gpus 8 --global-batch 64 --export megatron
cp "$TMPD/out" "$TMPD/swa.sh"
check megatron "$TMPD/swa.sh"
arg "--window-size 127,0" "$TMPD/swa.sh"
arg "--window-attn-skip-freq 2" "$TMPD/swa.sh"
run 0 plan train --model gpt-oss-20b --system dgx-h100 --gpus 8 --global-batch 64 --export nemo
check nemo "$TMPD/out"
arg "window_size=(127, 0)" "$TMPD/out"
arg "window_attn_skip_freq=2" "$TMPD/out"
run 0 plan train --model llama-3-8b --system dgx-h100 --gpus 8 --global-batch 64 --export megatron
noarg "--window-size" "$TMPD/out"

# --gpus-per-node: two nodes of 4 GPUs are 4 SLURM nodes for 16 GPUs
run 0 plan train --model llama-3-8b --system dgx-h100 --gpus 16 --gpus-per-node 4 --global-batch 128 --export slurm
cp "$TMPD/out" "$TMPD/gpn.sh"
check slurm "$TMPD/gpn.sh"
arg "#SBATCH --nodes=4" "$TMPD/gpn.sh"
arg "#SBATCH --gpus-per-node=4" "$TMPD/gpn.sh"
arg "torchrun --nnodes 4 --nproc-per-node 4" "$TMPD/gpn.sh"

# a model file's name reaches sbatch only as letters, digits, '.', '_' and '-': a name with
# blanks or quotes would add #SBATCH options of its own
python3 -c "
import json, sys
m = json.load(open(sys.argv[1]))
m['name'] = \"x --output=/tmp/clobbered --chdir='/tmp'\"
json.dump(m, open(sys.argv[2], 'w'))" "$top_srcdir/models/catalog/llama-3-8b.json" "$TMPD/inj.json"
run 0 plan train --model "$TMPD/inj.json" --system dgx-h100 --gpus 8 --global-batch 64 --export slurm
arg "#SBATCH --job-name=x_--output__tmp_clobbered_--chdir___tmp_$" "$TMPD/out"
[ "$(grep -c '^#SBATCH' "$TMPD/out")" = 5 ] || fail "the job name added #SBATCH lines"

# a sweep exports every point: to stdout one after another, or to a file each
run 0 plan train --model llama-3-8b --system dgx-h100 --gpus 8..32 --global-batch 256 --export slurm
[ "$(grep -c '^#SBATCH --nodes=' "$TMPD/out")" = 3 ] || fail "a sweep of 3 counts did not export 3 scripts"
arg "# ---- 32 GPUs ----" "$TMPD/out"
run 0 plan train --model llama-3-8b --system dgx-h100 --gpus 8..32 --global-batch 256 --export slurm --out "$TMPD/sweep.sh"
for n in 8 16 32; do
	[ -s "$TMPD/sweep-${n}gpus.sh" ] || fail "no export for $n GPUs"
	check slurm "$TMPD/sweep-${n}gpus.sh"
done
arg "#SBATCH --nodes=4" "$TMPD/sweep-32gpus.sh"

# DeepSpeed: the JSON and the launcher's layout; the TP it assumed is in the launcher's arguments
run 0 plan train --model llama-3-8b --system dgx-h100 --gpus 16 --global-batch 128 --tp 2 --export deepspeed
cp "$TMPD/out" "$TMPD/ds.sh"
check deepspeed "$TMPD/ds.sh"
arg "--tensor-model-parallel-size 2" "$TMPD/ds.sh"
# Llama 3 405B's uneven pipeline: Megatron states it; torchtitan with its less-layers keys
run 0 plan train --model llama-3-405b --system dgx-h100 --gpus 1024 --global-batch 1024 --pp 16 --tp 8 --export megatron
check megatron "$TMPD/out"
run 0 plan train --model llama-3-405b --system dgx-h100 --gpus 1024 --global-batch 1024 --pp 16 --tp 8 --vpp 1 --export torchtitan
cp "$TMPD/out" "$TMPD/405.toml"
check torchtitan "$TMPD/405.toml"
arg "pipeline_parallel_first_stage_less_layers = 1" "$TMPD/405.toml"

# the 2025 MoE models of the catalog: Llama 4's alternating MoE layers and shared expert,
# gpt-oss's QKV biases, Kimi K2's MLA and 384 experts; torchtitan's llama4 and qwen3 flavors
run 0 plan train --model llama-4-maverick --system dgx-h100 --gpus 256 --global-batch 1024 --export megatron
check megatron "$TMPD/out"
arg "--moe-layer-freq '\[0,1,0,1," "$TMPD/out"
arg "--moe-shared-expert-intermediate-size 8192" "$TMPD/out"
arg "--ffn-hidden-size 16384" "$TMPD/out"
run 0 plan train --model gpt-oss-120b --system dgx-h100 --gpus 64 --global-batch 512 --export megatron
check megatron "$TMPD/out"
arg "--add-qkv-bias" "$TMPD/out"
arg "--num-experts 128" "$TMPD/out"
run 0 plan train --model kimi-k2 --system dgx-h100 --gpus 512 --global-batch 4096 --export nemo
check nemo "$TMPD/out"
run 0 plan train --model llama-4-scout --system dgx-h100 --gpus 64 --global-batch 512 --export torchtitan
check torchtitan "$TMPD/out"
arg 'flavor = "17bx16e"' "$TMPD/out"
run 0 plan train --model qwen3-30b-a3b --system dgx-h100 --gpus 32 --global-batch 512 --export torchtitan
check torchtitan "$TMPD/out"
arg 'flavor = "30B-A3B"' "$TMPD/out"

# the gradients are reduced in the precision the plan priced, whatever each program's default:
# Megatron-LM fp32 for bf16 unless told, Megatron-Core's DDP config bf16 unless told, DeepSpeed its
# optimizer's, torchtitan 0.2.1 fp32 only
P8="plan train --model llama-3-8b --system dgx-h100 --gpus 16 --global-batch 128"
# shellcheck disable=SC2086
run 0 $P8 --zero 1 --export megatron
noarg "--grad-reduce-in-bf16" "$TMPD/out"
# shellcheck disable=SC2086
run 0 $P8 --zero 3 --export megatron
arg "--grad-reduce-in-bf16" "$TMPD/out"
# shellcheck disable=SC2086
run 0 $P8 --zero 1 --export nemo
arg "grad_reduce_in_fp32=True," "$TMPD/out"
# shellcheck disable=SC2086
run 0 $P8 --zero 1 --dtype fp8 --export nemo
arg "grad_reduce_in_fp32=False," "$TMPD/out"
# shellcheck disable=SC2086
run 0 $P8 --zero 1 --export deepspeed
arg '"communication_data_type":	"fp32"' "$TMPD/out"
# shellcheck disable=SC2086
run 0 $P8 --zero 3 --export deepspeed
arg '"communication_data_type":	"bf16"' "$TMPD/out"
# shellcheck disable=SC2086
run 0 $P8 --export torchtitan
arg 'mixed_precision_reduce = "float32"' "$TMPD/out"
# shellcheck disable=SC2086
run 2 $P8 --dtype fp8 --zero 0 --framework megatron --export torchtitan
expect_err "torchtitan 0.2.1 reduces gradients in float32 only"

# hybrid sharding: each program's own words for shard groups of 8 data-parallel ranks replicated
# over the rest (Megatron's distributed-optimizer instances, FSDP2's replicate x shard degrees,
# MiCS), and a refusal where MiCS cannot group the ranks
PH="plan train --model llama-3-8b --system dgx-h100 --gpus 64 --global-batch 512 --tp 1 --pp 1 --cp 1 --zero 3 --dp-shard 8"
# shellcheck disable=SC2086
run 0 $PH --json
python3 -c "import json,sys; c=json.load(open(sys.argv[1]))['counts'][0]['candidates'][0]['config']; sys.exit(0 if (c['dp_shard'], c['dp_replicas']) == (8, 8) else 1)" "$TMPD/out" ||
	fail "the ranked layout is not sharded over 8 ranks with 8 replicas"
for k in megatron nemo torchtitan deepspeed; do
	# shellcheck disable=SC2086
	run 0 $PH --framework $([ $k = nemo ] && echo megatron || echo $k) --export $k --out "$TMPD/h-$k.out"
	check $k "$TMPD/h-$k.out"
done
arg "--num-distributed-optimizer-instances 8" "$TMPD/h-megatron.out"
arg "ZeRO-3 sharded over 8 data-parallel ranks x 8 replicas" "$TMPD/h-megatron.out"
arg "num_distributed_optimizer_instances=8," "$TMPD/h-nemo.out"
arg "data_parallel_replicate_degree = 8" "$TMPD/h-torchtitan.out"
arg "data_parallel_shard_degree = 8" "$TMPD/h-torchtitan.out"
arg '"mics_shard_size":	8' "$TMPD/h-deepspeed.out"
# shellcheck disable=SC2086
# sharded over the whole data-parallel group: no replicas, no instances
run 0 $P8 --zero 3 --dp-shard 16 --export megatron
noarg "--num-distributed-optimizer-instances" "$TMPD/out"
run 2 plan train --model llama-3-8b --system dgx-h100 --gpus 64 --global-batch 512 --tp 2 --pp 1 --cp 1 --zero 3 \
	--dp-shard 4 --framework deepspeed --export deepspeed
expect_err "MiCS groups consecutive ranks of the whole job"
run 2 plan train --model llama-3-8b --system dgx-h100 --gpus 64 --global-batch 512 --tp 1 --pp 1 --zero 1 \
	--dp-shard 8 --framework deepspeed --export deepspeed
expect_err "hybrid sharding with ZeRO-1"

# refusals: what the framework cannot express, with the reason
run 2 plan train --model llama-3-8b --system dgx-h100 --gpus 16 --global-batch 128 --pp 2 --schedule zb-h1 --export megatron
expect_err "does not run the zb-h1 pipeline schedule"
run 2 plan train --model llama-3-8b --system dgx-h100 --gpus 16 --global-batch 128 --pp 2 --schedule gpipe \
	--framework torchtitan --export megatron
expect_err "--export megatron cannot launch the ranked layout: it uses the gpipe pipeline schedule, which Megatron-LM (Megatron-Core 0.15) does not run"
run 2 plan train --model mistral-7b --system dgx-h100 --gpus 16 --global-batch 128 --export torchtitan
expect_err "torchtitan 0.2.1 trains only the models it defines"
run 2 plan train --model llama-3-8b --system dgx-h100 --gpus 16 --global-batch 128 --cp 2 --framework megatron --export deepspeed
expect_err "which DeepSpeed with Megatron-DeepSpeed does not run"
run 2 plan train --model resnet-50 --system dgx-a100 --gpus 8 --global-batch 256 --export megatron
expect_err "this is a CNN"

# serving: the engines' serve commands with TP/PP, quantization, KV dtype and batch limits
S="plan serve --model llama-3-70b --system dgx-h100 --rate 5 --slo-ttft-p99 2000 --slo-tpot-p99 100 --duration 30 --no-disaggregate"
for e in vllm sglang trtllm; do
	# shellcheck disable=SC2086
	run 0 $S --weights fp8 --export $e --out "$TMPD/$e.sh"
	check $e "$TMPD/$e.sh"
done
# --out is checked before the search: a folder is refused at once, naming the flag
mkdir -p "$TMPD/outdir"
# shellcheck disable=SC2086
run 2 $S --weights fp8 --export vllm --out "$TMPD/outdir"
expect_err "--out"
[ ! -s "$TMPD/out" ] || fail "plan serve searched before refusing its --out: $(head -c 200 "$TMPD/out")"
# TensorRT-LLM's chunked context as planned: off by default (whole prompts), on when asked; vLLM
# V1 always chunks, so a plan of whole prompts is refused there
noarg "--enable_chunked_prefill" "$TMPD/trtllm.sh"
# shellcheck disable=SC2086
run 0 $S --weights fp8 --chunked-prefill on --export trtllm
check trtllm "$TMPD/out"
arg "--enable_chunked_prefill" "$TMPD/out"
# shellcheck disable=SC2086
run 2 $S --weights fp8 --chunked-prefill off --export vllm
expect_err "it was planned with whole-prompt prefill"
# shellcheck disable=SC2086
run 0 $S --weights fp8 --json
json_check "$TMPD/out" "d['deployments'][0]['weights'] == 'fp8'"
tp=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['deployments'][0]['tp'])" "$TMPD/out")
arg "--tensor-parallel-size $tp" "$TMPD/vllm.sh"
arg "--quantization fp8" "$TMPD/vllm.sh"
arg "--tp-size $tp" "$TMPD/sglang.sh"
arg "--tp_size $tp" "$TMPD/trtllm.sh"
# speculative decoding as planned: vLLM's draft options of the stated version; an EAGLE head is a
# placeholder to fill; the engines whose forms are not written refuse rather than drop it
SP="plan serve --model llama-3-8b --rate 5 --slo-ttft-p99 500 --slo-tpot-p99 50 --systems dgx-h100 --top 2"
run 0 $SP --spec ngram --spec-tokens 3 --spec-accept 0.7 --export vllm --out "$TMPD/spec-ngram.sh"
check vllm "$TMPD/spec-ngram.sh"
grep -qF -- '--speculative-model "[ngram]" --num-speculative-tokens 3' "$TMPD/spec-ngram.sh" ||
	fail "the n-gram export lacks its draft options"
run 0 $SP --spec eagle --spec-tokens 4 --spec-accept 0.7 --export vllm --out "$TMPD/spec-eagle.sh"
check vllm "$TMPD/spec-eagle.sh"
grep -qF -- '--speculative-model "$DRAFT" --num-speculative-tokens 4' "$TMPD/spec-eagle.sh" ||
	fail "the EAGLE export lacks its draft options"
grep -q 'DRAFT:?DRAFT is a placeholder' "$TMPD/spec-eagle.sh" || fail "the EAGLE export does not ask for its draft head"
run 2 $SP --spec ngram --spec-tokens 3 --spec-accept 0.7 --export sglang
expect_err "does not write speculative decoding yet"
run 2 plan serve --model llama-3-8b --rate 5 --slo-ttft-p99 500 --slo-tpot-p99 50 --export tgi
expect_err "--export must be vllm, sglang or trtllm"
finish
