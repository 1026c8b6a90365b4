#!/bin/sh
# The examples in examples/ run end to end and their answers have the right shape and lie in
# sane bounds (physics, not pasted output).
. "$top_srcdir/tests/lib.sh"

PATH="$(dirname "$PARAPLAN"):$PATH"
export PATH
J="$TMPD/json"
mkdir -p "$J"
for ex in "$top_srcdir"/examples/[0-9]*.sh; do
	name=$(basename "$ex" .sh)
	( cd "$top_srcdir" && EXAMPLES_JSON="$J" sh "examples/$name.sh" ) >"$TMPD/ex.out" 2>&1 || {
		fail "$name exited non-zero"
		sed 's/^/  /' "$TMPD/ex.out" >&2
	}
done

py() {
	python3 - "$J" "$1" <<'PY' || fail "$1"
import json, os, sys
d = lambda n: json.load(open(os.path.join(sys.argv[1], n + ".json")))
assert eval(sys.argv[2]), sys.argv[2]
PY
}

# 1. two GPUs are faster than one, by less than 2x
py "1.2 < d('mnist-2gpu')['samples_per_s'] / d('mnist-1gpu')['samples_per_s'] <= 2.0"
py "d('mnist-2gpu')['exposed_comm_s'] > d('mnist-1gpu')['exposed_comm_s'] == 0"
# 2. ResNet-50: A100 fp16 throughput per GPU, efficiency bounds, the slow network scales worse
py "1000 < d('resnet50-dgx-1')['samples_per_s'] < 4000"
py "all(0.8 < d('resnet50-dgx-%d' % g)['samples_per_s'] / g / d('resnet50-dgx-1')['samples_per_s'] <= 1.0 for g in (4, 8, 32, 256))"
py "d('resnet50-gcp-256')['samples_per_s'] < d('resnet50-dgx-256')['samples_per_s']"
py "d('resnet50-gcp-bucket-1000')['exposed_comm_s'] > d('resnet50-gcp-bucket-25')['exposed_comm_s']"
# 3. overlap hides communication
py "d('bert-no-overlap')['exposed_comm_s'] > 2 * d('bert-default')['exposed_comm_s'] and d('bert-no-overlap')['step_time_s'] > d('bert-default')['step_time_s']"
# 4. sharding lowers memory, step by step; DDP does not fit a 24 GB GPU, ZeRO-3 does
py "[d('gpt2-' + k)['memory'][0]['peak_bytes'] for k in ('ddp', 'zero1', 'zero2', 'zero3')] == sorted([d('gpt2-' + k)['memory'][0]['peak_bytes'] for k in ('ddp', 'zero1', 'zero2', 'zero3')], reverse=True)"
py "not d('gpt2-ddp')['fits'] and d('gpt2-zero3')['fits'] and d('gpt2-fsdp-recompute')['fits']"
py "d('gpt2-zero3')['step_time_s'] >= d('gpt2-zero2')['step_time_s'] and d('gpt2-ddp')['step_time_s'] > d('gpt2-zero1')['step_time_s']"
# 5. the 10B model: not on one GPU; the plan's winner fits 8 GPUs with TP inside the 4-GPU node
py "not d('gpt10b-1gpu')['fits']"
py "(lambda w: w['tp'] * w['pp'] * w['dp'] * w['cp'] == 8 and w['tp'] <= 4)(d('gpt10b-plan')['winner']['config'])"
# 6. 100B: the bubble shrinks with more micro-batches, near (p-1)/(m+p-1)
py "[d('gpt100b-tp8pp8-m%d' % m)['bubble_fraction'] for m in (8, 16, 32, 64, 128)] == sorted([d('gpt100b-tp8pp8-m%d' % m)['bubble_fraction'] for m in (8, 16, 32, 64, 128)], reverse=True)"
py "abs(d('gpt100b-tp8pp8-m8')['bubble_fraction'] - 7 / 15) < 0.1 and abs(d('gpt100b-tp8pp8-m128')['bubble_fraction'] - 7 / 135) < 0.05"
py "len(d('gpt100b-plan')['counts'][0]['candidates']) >= 5"
# 7. TP lowers the time per token; replicas of TP 1 serve more when overloaded
py "d('llama7b-tp1')['tpot_s']['mean'] > d('llama7b-tp2')['tpot_s']['mean'] > d('llama7b-tp4')['tpot_s']['mean']"
py "d('llama7b-tp1-load')['output_tokens_per_s'] > d('llama7b-tp4-load')['output_tokens_per_s']"
# 8. every deployment meets the SLO at the rate, cheapest first, int4 and bf16 both present
py "(lambda x: len(x) > 0 and all(r['ttft_p99_s'] <= 0.5 and r['tpot_p99_s'] <= 0.05 for r in x) and [r['usd_per_hour'] for r in x] == sorted(r['usd_per_hour'] for r in x))(d('llama70b-slo')['deployments'])"
py "set(r['weights'] for r in d('llama70b-slo')['deployments']) == {'bf16', 'int4'}"
# 9. N+1 and N+2: the N+0 winner's layout among them with one and two more replicas (the
# cheapest at each K may be another layout)
py "(lambda a: all(any((x['system'], x['tp'], x['pp'], x['weights']) == (a['system'], a['tp'], a['pp'], a['weights']) and x['replicas'] == a['replicas'] + k and x['spares'] == k and x['gpus'] == a['gpus'] + k * a['tp'] * a['pp'] for x in d('gpt175b-n%d' % k)['deployments']) for k in (1, 2)))(d('gpt175b-n0')['deployments'][0])"
# 10. the batch does not fit one T4 at once; four stages do; four replicas beat the pipeline
py "not d('r152-one-gpu')['fits'] and d('r152-pp4')['fits'] and d('r152-one-gpu-mb512')['fits']"
py "d('r152-4-replicas')['images_per_s'] > d('r152-pp4')['images_per_s'] > d('r152-one-gpu-mb512')['images_per_s']"
# 11. the capacity plan: B200 needs fewer GPUs than H100 for the same deadline; the report is written
py "(lambda s: all(x['feasible'] and x['days'] <= 90 for x in s) and s[1]['gpus'] < s[0]['gpus'])(d('capacity-70b')['systems'])"
[ -s "$J/report-70b/report.html" ] && [ -s "$J/report-70b/report.md" ] || fail "example 11 wrote no report"
# 12. fine-tuning: full fine-tuning of 1.56B does not fit a 16 GB T4 and LoRA does; a 70B LoRA
# on one node and a 70B QLoRA on one GPU fit
py "not d('ft-gpt2xl-full')['memory'][0]['fits'] and d('ft-gpt2xl-lora')['memory'][0]['fits']"
py "d('ft-70b-lora-node')['winner']['config']['lora_rank'] == 16 and d('ft-70b-qlora-gpu')['memory'][0]['fits']"
py "d('ft-70b-qlora-gpu')['finetune']['method'] == 'qlora'"
# 13. DeepSeek-R1: every ranked deployment meets the SLO, no fp4 on the H200, and attention-DP
# holds more weights a GPU than TP 8 (the attention weights whole)
py "len(d('deepseek-r1-slo')['deployments']) > 0 and all(x['tpot_p99_s'] <= 0.08 and x['ttft_p99_s'] <= 2.0 for x in d('deepseek-r1-slo')['deployments'])"
py "all(x['weights'] != 'fp4' for x in d('deepseek-r1-slo')['deployments'] + d('deepseek-r1-slo')['rejected'] if x['system'] == 'hgx-h200')"
py "any(x['ep'] > 1 and x['attention_dp'] for x in d('deepseek-r1-slo')['deployments'])"
py "d('deepseek-r1-ep8')['memory_per_gpu']['weights_bytes'] > d('deepseek-r1-tp8')['memory_per_gpu']['weights_bytes']"
# the launch configurations of examples 5, 6, 8 and 9: every flag in the programs' lists, and the
# layout the example's own plan ranked
FL="$top_srcdir/tests/data/flags"
for x in "slurm gpt10b-slurm.sh" "megatron gpt100b-megatron.sh" "nemo gpt100b-nemo.py" "vllm llama70b-vllm.sh" \
	"sglang gpt175b-sglang.sh"; do
	set -- $x
	[ -s "$J/$2" ] || { fail "no $2"; continue; }
	python3 "$top_srcdir/tests/export_check.py" "$1" "$J/$2" "$FL" || fail "$2 does not pass the $1 flag lists"
done
grep -q "#SBATCH --nodes=2" "$J/gpt10b-slurm.sh" && grep -q "#SBATCH --gpus-per-node=4" "$J/gpt10b-slurm.sh" ||
	fail "example 5's SLURM script is not two nodes of 4 GPUs"
py "(lambda w: ('--tensor-model-parallel-size %d ' % w['tp']) in open(os.path.join(sys.argv[1], 'gpt100b-megatron.sh')).read() and ('--pipeline-model-parallel-size %d ' % w['pp']) in open(os.path.join(sys.argv[1], 'gpt100b-megatron.sh')).read())(d('gpt100b-plan')['winner']['config'])"
py "('--tp-size %d ' % d('gpt175b-n2')['deployments'][0]['tp']) in open(os.path.join(sys.argv[1], 'gpt175b-sglang.sh')).read()"
finish
