#!/bin/sh
# MLPerf Inference workloads from the command line: the named datasets, MLPerf rows translated by
# 'validate' (the dataset's lengths, the run's own tokens per sample, Server runs at their rate,
# P99 latencies), and 'plan serve --scenario' with its refusals naming the flag.
. "$top_srcdir/tests/lib.sh"

F="$top_srcdir/tests/data/mlperf/serving.csv"

# the help lists every dataset by name
run 0 simulate serve --help
for n in mlperf-llama2-70b mlperf-llama3.1-405b mlperf-llama3.1-8b mlperf-mixtral-8x7b mlperf-deepseek-r1 sharegpt; do
	grep -qF -- "$n" "$TMPD/out" "$TMPD/err" || fail "simulate serve --help does not list $n"
done
run 0 plan serve --help
grep -qF -- "mlperf-deepseek-r1" "$TMPD/out" "$TMPD/err" || fail "plan serve --help does not list the datasets"

# a dataset as lengths; one without a stated output mean, and an unknown one, refused naming the flag
run 0 simulate serve --model llama-3-8b --system dgx-h100 --tp 1 --rate 2 --requests 50 \
	--prompt-len mlperf-llama3.1-8b --output-len dataset:mlperf-llama2-70b --json
json_check "$TMPD/out" "d['simulation']['completed'] == 50"
run 2 simulate serve --model llama-3-8b --system dgx-h100 --tp 1 --rate 2 --output-len mlperf-llama3.1-8b
expect_err "--output-len"
expect_err "not stated"
run 2 simulate serve --model llama-3-8b --system dgx-h100 --tp 1 --rate 2 --prompt-len dataset:openorca
expect_err "--prompt-len"
expect_err "mlperf-llama2-70b"

# validate: a Server run's six rows and an Offline run's two predicted, the unknown dataset skipped
run 0 validate --set serving --data "$F" --json
json_check "$TMPD/out" "d['overall']['rows'] == 8 and len(d['skipped']) == 1 and 'not stated' in d['skipped'][0]['reason']"
# A Server run that keeps up completes what arrives: 20/s x 600 / (600 + E2E) with E2E under 30 s
json_check "$TMPD/out" "[0.95 * 20 <= r['predicted'] <= 20 for r in d['rows'] if r['metric'] == 'requests/s' and 'Server' in r['source']] == [True]"
# its output mean is the run's own tokens per sample, 5000 / 20 = 250, not the dataset's 294.45
# (the drawn mean of 2400 requests: within 4%)
json_check "$TMPD/out" "(lambda p: abs(p['output tokens/s'] / p['requests/s'] / 250 - 1) < 0.04)({r['metric']: r['predicted'] for r in d['rows'] if 'Server' in r['source']})"
json_check "$TMPD/out" "(lambda p: p['TTFT p99'] >= p['TTFT mean'] > 0 and p['TPOT p99'] >= p['TPOT mean'] > 0)({r['metric']: r['predicted'] for r in d['rows'] if 'Server' in r['source']})"
json_check "$TMPD/out" "all(\"tokens per sample\" in r['assumptions'] for r in d['rows'])"

# a row that states no precision runs at the one its submission's other scenarios state (the
# same result directory), exactly as if it stated it, and says so; where they state two, none
run 0 validate --set serving --data "$top_srcdir/tests/data/mlperf/blank-precision.csv" --json
json_check "$TMPD/out" "len(d['rows']) == 6 and not d['skipped']"
json_check "$TMPD/out" "(lambda r: r[3]['assumptions'].startswith('precision not stated: FP8 weights; KV cache FP8, as the submission') and r[3]['predicted'] == r[4]['predicted'] != r[7]['predicted'])({x['line']: x for x in d['rows']})"
json_check "$TMPD/out" "(lambda r: 'precision' not in r[2]['assumptions'] + r[7]['assumptions'] and r[7]['predicted'] == r[6]['predicted'])({x['line']: x for x in d['rows']})"

# a stated PP degree: replicas of tp x pp GPUs, a batch in each stage (about what as many
# GPUs in replicas of one stage serve); a blank one is 1; one that is not a degree is skipped
run 0 validate --set serving --data "$top_srcdir/tests/data/mlperf/pipeline.csv" --json
json_check "$TMPD/out" "(lambda r: r[2]['config']['pp'] == 2 and r[2]['config']['dp'] == 4 and r[3]['config']['pp'] == 1 and r[3]['config']['dp'] == 8 and 0.97 < r[2]['predicted'] / r[3]['predicted'] <= 1.0)({x['line']: x for x in d['rows']})"
json_check "$TMPD/out" "sorted(x['line'] for x in d['skipped']) == [4, 5] and all('PP degree' in x['reason'] for x in d['skipped'])"

# plan serve --scenario: one deployment, the highest rate within MLPerf's limits
P="plan serve --model llama-3-8b --system dgx-h100 --tp 1"
run 0 $P --scenario server --dataset mlperf-llama3.1-8b --output-len 128 --duration 60 --json
json_check "$TMPD/out" "d['scenario'] == 'server' and d['limits']['ttft_p99_s'] == 2.0 and d['limits']['tpot_p99_s'] == 0.1"
json_check "$TMPD/out" "0 < d['rate'] <= 1.2 * d['offline']['requests_per_s'] and d['at_rate']['ttft_p99_s'] <= 2.0 and d['at_rate']['tpot_p99_s'] <= 0.1 and not d['at_rate']['saturated']"
cp "$TMPD/out" "$TMPD/server.json"
run 0 $P --scenario interactive --dataset mlperf-llama3.1-8b --output-len 128 --duration 60 --json
json_check "$TMPD/out" "d['limits']['ttft_p99_s'] == 0.5 and d['limits']['tpot_p99_s'] == 0.03"
# the tighter limits pass a lower rate (or the same, within the tolerance)
python3 -c "import json,sys; a=json.load(open('$TMPD/server.json')); b=json.load(open('$TMPD/out')); sys.exit(0 if b['rate'] <= a['rate'] * 1.01 else 1)" ||
	fail "interactive passes a higher rate than server"
# Offline: the first query, grown to --duration seconds at the rate it reached
run 0 $P --scenario offline --dataset mlperf-llama3.1-8b --output-len 128 --requests 500 --duration 1
expect_out "offline (500 requests at once)"
run 0 $P --scenario offline --dataset mlperf-llama3.1-8b --output-len 128 --requests 500 --json
json_check "$TMPD/out" "d['offline_requests'] > 500 and abs(d['offline_requests'] / (600 * d['rate']) - 1) < 0.2"
# an Offline batch that runs the engine worse than arrivals do (vLLM admitting 1,024 sequences a
# replica into a KV cache that holds a fraction of them preempts and recomputes): the search's
# bound of 1.2x the Offline throughput passes, and is doubled until a rate fails
run 0 plan serve --model llama-3-70b --system hgx-h200 --tp 1 --replicas 8 --engine vllm --weights fp8 --scenario server \
	--dataset mlperf-llama2-70b --duration 60 --json
json_check "$TMPD/out" "d['rate'] > 1.2 * d['offline']['requests_per_s'] and d['evaluations'] > 2 and not d['at_rate']['saturated'] and d['at_rate']['tpot_p99_s'] <= 0.2"
# seeded: the same search twice gives the same answer byte for byte
run 0 $P --scenario server --dataset mlperf-llama3.1-8b --output-len 128 --duration 60 --json
cmp -s "$TMPD/out" "$TMPD/server.json" || fail "the same scenario search gave different output"

# refusals: exit 2 naming the flag
run 2 $P --scenario server --dataset mlperf-llama3.1-8b --output-len 128 --rate 5
expect_err "--rate"
run 2 $P --scenario busy
expect_err "--scenario"
run 2 plan serve --model llama-3-8b --system dgx-h100 --scenario server --slo-ttft-p99 500 --slo-tpot-p99 50
expect_err "--tp"
run 2 plan serve --model llama-3-8b --systems dgx-h100 --tp 1 --scenario server --slo-ttft-p99 500 --slo-tpot-p99 50
expect_err "--systems"
run 2 plan serve --model llama-3-8b --rate 5 --slo-ttft-p99 500 --slo-tpot-p99 50 --tp 2
expect_err "--tp applies to --scenario"
run 2 $P --scenario server
expect_err "--slo-ttft-p99"
run 2 $P --scenario server --dataset nope
expect_err "--dataset"
run 2 $P --scenario server --dataset mlperf-llama3.1-8b
expect_err "--output-len"
run 2 $P --scenario server --slo-ttft-p99 500 --slo-tpot-p99 50 --tolerance 0.9
expect_err "--tolerance"
finish
