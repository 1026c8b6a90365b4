#!/bin/sh
# 'paraplan simulate serve' and 'paraplan plan serve' from the command line: JSON keys and
# sanity bounds, determinism, traces, usage errors naming the flag, no partial output.
. "$top_srcdir/tests/lib.sh"

S="simulate serve --model llama-3-8b --system dgx-h100 --tp 1"

run 0 $S --rate 5 --duration 20 --json
json_check "$TMPD/out" "all(k in d for k in ('ttft_s','tpot_s','itl_s','e2e_s','requests_per_s','output_tokens_per_s','output_tokens_per_s_per_gpu','goodput_requests_per_s','kv_utilization_mean','preemptions','saturated','usd_per_million_output_tokens','usd_per_million_tokens','memory_per_gpu'))"
json_check "$TMPD/out" "all(d[k]['p50'] <= d[k]['p90'] <= d[k]['p99'] for k in ('ttft_s','tpot_s','itl_s','e2e_s'))"
# 100 requests at 5/s, each 512 + 128 tokens: an 8B model on an H100 keeps up
json_check "$TMPD/out" "d['simulation']['completed'] == 100 and not d['saturated'] and 4 < d['requests_per_s'] < 6.5"
json_check "$TMPD/out" "0.005 < d['ttft_s']['p50'] < 0.2 and 0.003 < d['tpot_s']['p50'] < 0.03"
json_check "$TMPD/out" "d['usd_per_million_output_tokens'] > d['usd_per_million_tokens'] > 0"
cp "$TMPD/out" "$TMPD/first.json"
run 0 $S --rate 5 --duration 20 --json
cmp -s "$TMPD/out" "$TMPD/first.json" || fail "same seed gave different output"
run 0 $S --rate 5 --duration 20 --json --seed 7
cmp -s "$TMPD/out" "$TMPD/first.json" && fail "another seed gave the same output"

# the human table
run 0 $S --rate 5 --duration 20
expect_out "time to first token"
expect_out "P99"

# an engine that runs whole prompts (TensorRT-LLM without chunked context) sizes its token budget
# to the longest prompt, refuses a stated budget below it, and chunks them when told to
run 0 $S --engine trtllm --rate 2 --duration 10 --prompt-len 10000 --output-len 16 --json
json_check "$TMPD/out" "d['config']['max_batched_tokens'] == 10000 and d['config']['prefill'] == 'mixed'"
run 2 $S --engine trtllm --rate 2 --duration 10 --prompt-len 10000 --output-len 16 --max-batched-tokens 8192
expect_err "prompts of up to 10000 tokens exceed the token budget of an iteration (--max-batched-tokens 8192)"
run 0 $S --engine trtllm --rate 2 --duration 10 --prompt-len 10000 --output-len 16 --max-batched-tokens 8192 \
	--chunked-prefill on --json
json_check "$TMPD/out" "d['config']['max_batched_tokens'] == 8192 and d['config']['prefill'] == 'chunked'"
run 0 $S --rate 2 --duration 10 --chunked-prefill off
expect_out "prompts whole beside the decodes"
run 2 $S --rate 2 --duration 10 --chunked-prefill maybe
expect_err "--chunked-prefill"
run 2 $S --engine trtllm --rate 1 --requests 2 --prompt-len 5000000 --output-len 4
expect_err "prompts of up to 5000000 tokens exceed the largest iteration modelled"

# overload is reported as saturated; an SLO gives goodput below throughput
run 0 $S --rate 400 --duration 10 --slo-ttft-p99 200 --json
json_check "$TMPD/out" "d['saturated'] and d['goodput_requests_per_s'] < d['requests_per_s']"
run 0 $S --rate 400 --duration 10
expect_out "SATURATED"

# distributions, Gamma arrivals, quantized weights, disaggregation, replicas
run 0 $S --rate 4 --requests 200 --arrival gamma:cv=3 --prompt-len lognormal:mean=800,sigma=0.6,max=4000 \
	--output-len uniform:min=10,max=300 --weights int4 --kv-dtype fp8 --json
json_check "$TMPD/out" "d['config']['weights'] == 'int4' and d['simulation']['completed'] == 200"
run 0 simulate serve --model llama-3-70b --system dgx-h100 --tp 4 --disaggregate 1:2 --rate 2 --requests 100 --json
json_check "$TMPD/out" "d['config']['gpus'] == 12 and d['simulation']['completed'] == 100"

# a trace replays; the iteration trace is a Chrome trace
printf 'arrival_s,prompt_tokens,output_tokens\n0,100,10\n0.5,2000,50\n1.0,300,20\n' >"$TMPD/req.csv"
run 0 $S --arrival "trace:$TMPD/req.csv" --trace "$TMPD/iters.json" --json
json_check "$TMPD/out" "d['simulation']['completed'] == 3"
json_check "$TMPD/iters.json" "len(d['traceEvents']) >= 50"
printf 'arrival_s,prompt_tokens,output_tokens\n1,100,10\n0.5,2000,50\n' >"$TMPD/bad.csv"
run 1 $S --arrival "trace:$TMPD/bad.csv"
expect_err "bad.csv:3"
run 1 $S --rate 5 --duration 5 --trace "$TMPD/no/such/dir/t.json"
[ ! -e "$TMPD/no/such/dir/t.json" ] || fail "partial trace written"

# usage errors name the flag, exit 2
run 2 $S --rate -3
expect_err "--rate"
run 2 $S --rate 5 --prompt-len lognormal:sigma=-1
expect_err "--prompt-len"
run 2 $S --rate 5 --output-len uniform:min=9,max=3
expect_err "--output-len"
run 2 $S --rate 5 --arrival sometimes
expect_err "--arrival"
run 2 $S --rate 5 --weights fp7
expect_err "--weights"
run 2 $S --rate 5 --disaggregate 2
expect_err "--disaggregate"
run 2 simulate serve --model llama-3-8b --system dgx-h100 --tp 3 --rate 5
expect_err "divisible"
run 2 simulate serve --model llama-3-405b --system dgx-h100 --tp 1 --rate 5
expect_err "does not fit"
run 2 simulate serve --model resnet-50 --system dgx-h100 --tp 1 --rate 5
expect_err "not a language model"
run 2 simulate serve --model nemotron-h-56b --system dgx-h100 --tp 8 --rate 5
expect_err "hybrid Mamba/attention model: serving it is not modelled yet"

# plan serve: a small search, its JSON and table
P="plan serve --model llama-3-8b --systems dgx-h100 --slo-ttft-p99 500 --slo-tpot-p99 50 --duration 20"
run 0 $P --rate 20 --json
json_check "$TMPD/out" "len(d['deployments']) > 0 and all(k in d['deployments'][0] for k in ('system','tp','pp','weights','disaggregation','replicas','gpus','usd_per_hour','usd_per_million_output_tokens','ttft_p99_s','tpot_p99_s','headroom'))"
json_check "$TMPD/out" "all(x['ttft_p99_s'] <= 0.5 and x['tpot_p99_s'] <= 0.05 and x['headroom'] >= 0 for x in d['deployments'])"
json_check "$TMPD/out" "[x['usd_per_hour'] for x in d['deployments']] == sorted(x['usd_per_hour'] for x in d['deployments'])"
cp "$TMPD/out" "$TMPD/plan1.json"
run 0 $P --rate 20 --json --jobs 1
cmp -s "$TMPD/out" "$TMPD/plan1.json" || fail "plan serve differs between 1 and all jobs"
# N+2: two more replicas than N+0 for the same unified layout
run 0 $P --rate 20 --failures 2 --no-disaggregate --json
json_check "$TMPD/out" "d['failures_tolerated'] == 2 and all(x['spares'] == 2 and x['disaggregation'] == 'off' for x in d['deployments'])"
# spares from an availability: a replica of g GPUs is down u = x/(1+x) of the time, x = rate g
# hours; the fewest K with P(at most K of N+K down) >= A, recomputed here from the binomial sum
run 0 $P --rate 20 --no-disaggregate --availability 0.9999 --failure-rate 0.001 --repair-hours 4 --json
json_check "$TMPD/out" "d['availability']['target'] == 0.9999 and len(d['deployments']) > 0"
json_check "$TMPD/out" "all((lambda n, g, k: (lambda u: k == min(j for j in range(50) if sum(math.comb(n + j, i) * u**i * (1 - u)**(n + j - i) for i in range(j + 1)) >= 0.9999))((0.004 * g) / (1 + 0.004 * g)))(x['replicas'] - x['spares'], x['tp'] * x['pp'], x['spares']) and x['spares'] >= 1 and x['availability'] >= 0.9999 for x in d['deployments'])"
run 0 $P --rate 20 --no-disaggregate --availability 0.9999 --failure-rate 0.001 --repair-hours 4
expect_out "spares for 0.9999 availability"
run 2 $P --rate 20 --availability 0.999 --failures 1
expect_err "not both"
run 2 $P --rate 20 --repair-hours 2
expect_err "apply to --availability"
run 2 $P --rate 20 --availability 1.5
run 0 $P --rate 20
expect_out "headroom"
# nothing meets an impossible SLO: exit 1 and say so
run 1 plan serve --model llama-3-8b --systems dgx-h100 --slo-ttft-p99 0.5 --slo-tpot-p99 0.5 --duration 20 --rate 20
expect_err "no deployment"
run 2 $P
expect_err "--rate"
run 2 plan serve --model llama-3-8b --rate 5 --slo-ttft-p99 500
expect_err "--slo-tpot-p99"
run 2 plan serve --model llama-3-8b --slo-ttft-p99 500 --slo-tpot-p99 50 --rate 5 --systems nowhere
expect_err "nowhere"

# engines: named in the output, their batch defaults in force, an unknown one named with the known
run 0 $S --rate 5 --duration 5 --engine sglang --json
json_check "$TMPD/out" "d['config']['engine'] == 'sglang' and d['config']['max_num_seqs'] == 1024"
run 0 $S --rate 5 --duration 5 --engine trtllm --max-num-seqs 64 --json
json_check "$TMPD/out" "d['config']['engine'] == 'trtllm' and d['config']['max_num_seqs'] == 64 and d['config']['max_batched_tokens'] == 8192"
run 2 $S --rate 5 --engine tgi
expect_err 'unknown engine "tgi"'
run 0 plan serve --model llama-3-8b --rate 5 --slo-ttft-p99 500 --slo-tpot-p99 50 --systems dgx-h100 --duration 10 --engine trtllm --top 1 --json
json_check "$TMPD/out" "d['deployments'][0]['engine'] == 'trtllm'"
# validation under one engine for every row, and the serving cross-validation's folds
run 0 validate --set serving --engine trtllm --json
json_check "$TMPD/out" "d['overall']['rows'] == 8 and all(r['engine'] == 'trtllm' for r in d['rows']) and [e['engine'] for e in d['engines']] == ['trtllm']"
run 2 validate --set serving --cross-validate --engine vllm
expect_err "drop --engine"
run 0 validate --set serving --cross-validate --max-evals 2 --json --db "$TMPD/xv.db"
json_check "$TMPD/out" "d['kind'] == 'validate-cross' and d['overall']['rows'] == 8 and len(d['folds']) == 3 and sorted(e['engine'] for e in d['engines']) == ['trtllm-v0', 'vllm']"
# the bundled TensorRT-LLM rows (0.5, before XQA) run as trtllm-v0, which inherits trtllm's
# fitted values and is not fitted itself: no fold fits trtllm
json_check "$TMPD/out" "all(r['engine'] == 'trtllm-v0' for r in d['rows'] if r['source'].startswith('TensorRT-LLM v0.5'))"
json_check "$TMPD/out" "all(f['engine'] != 'trtllm' for fo in d['folds'] if fo['family'].startswith('TensorRT') for f in fo['fits'])"
# a row that states no TP runs at the TP (of 1, 2, 4 over its 4 GPUs) that serves its workload
# best, as simulate serve computes each: an offline batch the highest output tokens/s, an online
# rate the shortest mean end-to-end latency; a stated TP stands
run 0 validate --set serving --data "$top_srcdir/tests/data/serving-tp/rows.csv" --json
cp "$TMPD/out" "$TMPD/tp.json"
for t in 1 2 4; do
	run 0 simulate serve --model llama-2-7b --system dgx-h100 --tp $t --replicas $((4 / t)) --engine vllm \
		--arrival batch --requests 1000 --prompt-len 500 --output-len 200 --json
	cp "$TMPD/out" "$TMPD/tp-batch-$t.json"
	run 0 simulate serve --model llama-2-7b --system dgx-h100 --tp $t --replicas $((4 / t)) --engine vllm \
		--rate 20 --requests 1000 --prompt-len 500 --output-len 200 --json
	cp "$TMPD/out" "$TMPD/tp-rate-$t.json"
done
python3 - "$TMPD" <<'PY' || fail "a row without a TP does not run at the best TP simulate serve finds"
import json, sys
t = sys.argv[1]
v = json.load(open(t + "/tp.json"))["rows"]
b = {k: json.load(open("%s/tp-batch-%d.json" % (t, k))) for k in (1, 2, 4)}
o = {k: json.load(open("%s/tp-rate-%d.json" % (t, k))) for k in (1, 2, 4)}
kb = max(b, key=lambda k: b[k]["output_tokens_per_s"])
ko = min((k for k in o if not o[k]["saturated"]), key=lambda k: o[k]["e2e_s"]["mean"])
assert len(v) == 3, v
assert v[0]["config"]["tp"] == kb and v[0]["config"]["dp"] == 4 // kb, v[0]["config"]
assert abs(v[0]["predicted"] / b[kb]["output_tokens_per_s"] - 1) < 1e-9
assert "TP not stated: TP %d x %d" % (kb, 4 // kb) in v[0]["assumptions"], v[0]["assumptions"]
assert v[1]["config"]["tp"] == ko and abs(v[1]["predicted"] / (1e3 * o[ko]["ttft_s"]["mean"]) - 1) < 1e-9
assert v[2]["config"]["tp"] == 4 and abs(v[2]["predicted"] / (1e3 * o[4]["ttft_s"]["mean"]) - 1) < 1e-9
assert "TP not stated" not in v[2]["assumptions"]
# the fixture tells the criteria apart: the batch's best and the rate's best differ
assert kb != ko, (kb, ko)
PY
# without --weights, plan serve tries the model as it is published on each system's GPU:
# gpt-oss's MXFP4 as 4-bit weight-only kernels on H100 and as fp4 on B200; --weights still rules
run 0 plan serve --model gpt-oss-20b --systems dgx-h100,dgx-b200 --rate 5 --slo-ttft-p99 2000 --slo-tpot-p99 100 \
	--duration 10 --no-disaggregate --top 4 --json
json_check "$TMPD/out" "sorted(set((x['system'], x['weights']) for x in d['deployments'] + d['rejected'])) == [('dgx-b200', 'fp4'), ('dgx-h100', 'int4')]"
run 0 plan serve --model gpt-oss-20b --systems dgx-h100 --rate 5 --slo-ttft-p99 2000 --slo-tpot-p99 100 \
	--duration 10 --no-disaggregate --top 2 --weights bf16 --json
json_check "$TMPD/out" "all(x['weights'] == 'bf16' for x in d['deployments'] + d['rejected'])"
# simulate serve says where the format came from when it took the published one
run 0 simulate serve --model gpt-oss-20b --system dgx-h100 --tp 1 --rate 2 --requests 20
expect_out "int4 weights (published as mxfp4), bf16 KV cache"
run 0 simulate serve --model gpt-oss-20b --system dgx-h100 --tp 1 --rate 2 --requests 20 --weights int4
expect_out ", int4 weights, bf16 KV cache"
# and so does --scenario, which takes fp4 too: gpt-oss-20b on a B200 runs as --weights fp4, not bf16
for w in "" fp4 bf16; do
	# shellcheck disable=SC2086
	run 0 plan serve --model gpt-oss-20b --system dgx-b200 --tp 1 --scenario offline --prompt-len 1000 \
		--output-len 200 ${w:+--weights $w} --json
	cp "$TMPD/out" "$TMPD/scen-w$w.json"
done
json_check "$TMPD/scen-w.json" "d['offline'] == json.load(open('$TMPD/scen-wfp4.json'))['offline']"
json_check "$TMPD/scen-w.json" "d['offline']['output_tokens_per_s'] > 1.1 * json.load(open('$TMPD/scen-wbf16.json'))['offline']['output_tokens_per_s']"
# prefix caching and speculative decoding: stated rates, refused without them or out of range
S="simulate serve --model llama-3-8b --system dgx-h100 --tp 1 --rate 4 --requests 100"
run 0 $S --prefix-hit 0.5 --spec eagle --spec-tokens 3 --spec-accept 0.7 --json
python3 -c "
import json, sys; d = json.load(open('$TMPD/out'))
sp = d['config']['speculative']
assert d['config']['prefix_hit'] == 0.5 and sp['method'] == 'eagle' and sp['tokens'] == 3
assert abs(sp['expected_tokens_per_step'] - 2.533) < 1e-9 and 1 < d['spec_tokens_per_step'] <= 4, d" ||
	fail "speculation or prefix caching missing from the JSON"
run 2 $S --spec ngram --spec-tokens 3
expect_err "--spec-accept"
run 2 $S --spec-accept 0.5
expect_err "apply to --spec"
run 2 $S --spec medusa --spec-tokens 3 --spec-accept 0.5
expect_err "--spec"
run 2 $S --spec ngram --spec-tokens 17 --spec-accept 0.5
expect_err "--spec-tokens"
run 2 $S --prefix-hit 1
expect_err "--prefix-hit"
run 2 $S --prompt-len mlperf-nope
expect_err 'unknown dataset "mlperf-nope"'
expect_err "mlperf-llama2-70b"
run 2 $S --prompt-len gamma
expect_err "gamma:mean=M,cv=C"
finish
