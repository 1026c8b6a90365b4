#!/bin/sh
# Bad input: malformed, hostile and absurd files and flags.  Each gets a clear message that names
# the file, field or flag, exit status 1 (bad input) or 2 (bad command line), nothing on stdout,
# no output file, and never a crash or a hang (every command runs under a time limit).
. "$top_srcdir/tests/lib.sh"
BAD=$top_srcdir/tests/data/bad

# run_bad STATUS NEEDLE ARGS... : the command fails with STATUS in under 60 s, prints nothing on
# stdout, and its message contains NEEDLE
run_bad() {
	want=$1 needle=$2
	shift 2
	timeout 60 "$PARAPLAN" "$@" >"$TMPD/out" 2>"$TMPD/err"
	got=$?
	if [ "$got" != "$want" ]; then
		fail "paraplan $* exited $got, expected $want"
		sed 's/^/  stderr: /' "$TMPD/err" >&2
		return
	fi
	[ -s "$TMPD/out" ] && fail "paraplan $*: output on stdout after a failure"
	grep -qF -- "$needle" "$TMPD/err" || fail "paraplan $*: stderr lacks \"$needle\": $(head -c 300 "$TMPD/err")"
	grep -q '^error: ' "$TMPD/err" || fail "paraplan $*: no \"error: \" line"
}

# ---- model files: every message names the file and the field ----------------------------------
while IFS='|' read -r file needle; do
	[ -n "$file" ] || continue
	run_bad 1 "$needle" model show "$BAD/model/$file"
	grep -qF "$file" "$TMPD/err" || fail "model/$file: the message does not name the file"
done <<'CASES'
truncated.json|not valid JSON
trailing-comma.json|not valid JSON
wrong-type.json|"layers" must be an integer, got a string
boolean-dimension.json|"hidden" must be an integer, got a boolean
nan.json|not valid JSON near 'NaN
infinity.json|"seq" must be an integer, got inf
fractional.json|"layers" must be an integer, got 2.5
zero-layers.json|"layers" must be a positive integer, got 0
negative-hidden.json|"hidden" must be a positive integer, got -64
layers-2e63.json|"layers" must be between 1 and 65536, got 9223372036854775808
heads-not-dividing.json|"heads" (5) must divide "hidden" (64)
kv-heads-not-dividing.json|"kv_heads" (3) must divide "heads" (8)
moe-top-k-above-experts.json|"moe.top_k" must be between 1 and "moe.experts" (4), got 5
unknown-kind.json|"kind" must be one of transformer, cnn, got "rnn"
unknown-architecture.json|model_type "mamba" is not supported
hf-zero-heads.json|"num_attention_heads" must be a positive integer, got 0
hf-string-size.json|"n_embd" must be an integer, got a string
top-level-array.json|expected a JSON object at the top level
name-too-long.json|"name" must be 1 to 63 characters
empty.json|empty file
binary.json|binary data
cnn-blocks-1048576.json|expand to more than 100000 primitive layers
cnn-fc-overflow.json|layer "fc0": its parameter count overflows 64 bits
cnn-no-parameters.json|no trainable parameters
cnn-kernel-too-big.json|layer "conv0": kernel 9 does not fit the 8x8 input
hf-zero-experts.json|"num_local_experts" must be a positive integer, got 0
hf-zero-kv-heads.json|"num_key_value_heads" must be a positive integer, got 0
hf-zero-kv-lora-rank.json|"kv_lora_rank" must be a positive integer, got 0
hf-zero-moe-layer-freq.json|"moe_layer_freq" must be a positive integer, got 0
hf-conflicting-experts.json|"n_routed_experts" (256) and "num_experts" (64) give different expert counts
hf-shared-expert-truncated.json|"shared_expert_intermediate_size" (1000) must be a whole number of experts' width
trailing-text.json|trailing-text.json:18:1: text after the JSON document
duplicate-key.json|"layers" is given twice in the object at the top level
CASES

# the same loader behind simulate and plan
run_bad 1 '"layers" must be a positive integer' simulate train --model "$BAD/model/zero-layers.json" \
	--system dgx-h100 --gpus 8 --tp 8 --pp 1 --micro-batch 1 --global-batch 8
run_bad 1 'model_type "mamba" is not supported' plan train --model "$BAD/model/unknown-architecture.json" \
	--system dgx-h100 --gpus 8 --global-batch 8
# a file too large to be a model, nesting deeper than the JSON parser follows, a directory
head -c 17000000 /dev/zero | tr '\0' ' ' >"$TMPD/huge.json"
run_bad 1 "huge.json: file is larger than" model show "$TMPD/huge.json"
python3 -c "print('[' * 100000 + ']' * 100000)" >"$TMPD/deep.json"
run_bad 1 "deep.json:1:1001: not valid JSON" model show "$TMPD/deep.json"
run_bad 1 "is a directory" model show "$BAD/model"
run_bad 2 "cannot open" model show "$TMPD/no-such.json"

# ---- request traces ------------------------------------------------------------------------------
run_bad 2 "--arrival trace:FILE needs the trace file's path" simulate serve --model llama-3-8b --system dgx-h100 \
	--tp 1 --rate 1 --arrival trace:
while IFS='|' read -r file needle; do
	[ -n "$file" ] || continue
	run_bad 1 "$needle" simulate serve --model llama-3-8b --system dgx-h100 --tp 1 --rate 1 \
		--arrival "trace:$BAD/trace/$file"
done <<'CASES'
empty.csv|empty.csv: the header must name arrival_s, prompt_tokens and output_tokens
header-only.csv|header-only.csv: no requests in the trace
missing-column.csv|missing-column.csv: the header must name arrival_s
decreasing.csv|decreasing.csv:4: arrival times must not decrease
negative-arrival.csv|negative-arrival.csv:2: arrival must be from 0 to 1e9 s
arrival-1e300.csv|arrival-1e300.csv:3: arrival must be from 0 to 1e9 s
nan-arrival.csv|nan-arrival.csv:2: expected numbers
infinite-arrival.csv|infinite-arrival.csv:2: expected numbers
prompt-too-long.csv|prompt-too-long.csv:2: arrival must be from 0 to 1e9 s and prompt/output tokens integers from 1 to 10000000
fractional-tokens.csv|fractional-tokens.csv:2:
zero-output.csv|zero-output.csv:2:
extra-field.csv|extra-field.csv:3: 4 fields where the header names 3
unterminated-quote.csv|unterminated-quote.csv:2: unterminated quoted field
bad-line.jsonl|bad-line.jsonl:3: expected a JSON object
trailing-junk.jsonl|trailing-junk.jsonl:1:60: text after the JSON document
truncated.jsonl|truncated.jsonl:1:40: not valid JSON
binary.csv|binary.csv: binary data
CASES

# ---- validation CSV ------------------------------------------------------------------------------
run_bad 1 'empty.csv: missing column "source"' validate --data "$BAD/validate/empty.csv"
run_bad 1 'missing-column.csv: missing column "num_gpus"' validate --data "$BAD/validate/missing-column.csv"
run_bad 1 "binary.csv: binary data" validate --data "$BAD/validate/binary.csv"
run_bad 2 "cannot open" validate --data "$TMPD/no-such.csv"
# a column named twice: which copy counts would be a guess
{ head -1 "$BAD/validate/absurd-values.csv" | sed 's/$/,measured_value/'; sed -n 2p "$BAD/validate/absurd-values.csv" | sed 's/$/,1/'; } \
	>"$TMPD/twice.csv"
run_bad 1 'twice.csv:1: column "measured_value" is given twice' validate --data "$TMPD/twice.csv"
# absurd rows are skipped with their reason; the run itself succeeds
run 0 validate --data "$BAD/validate/absurd-values.csv" --json
json_check "$TMPD/out" "{s['model']: s['reason'] for s in d['skipped']}['huge-gpus'].startswith('the GPU count is out of range')"
json_check "$TMPD/out" "{s['model']: s['reason'] for s in d['skipped']}['huge-batch'] == 'the batch size is out of range'"
json_check "$TMPD/out" "'must be between 1 and 65536' in {s['model']: s['reason'] for s in d['skipped']}['huge-layers']"
json_check "$TMPD/out" "{s['model']: s['reason'] for s in d['skipped']}['nan-value'] == 'the measured value is not a positive number'"
# a stated count that is not a whole number from 1 is a mistake, not an unstated value; a value
# in another unit than its metric's would be scored off by the factor
json_check "$TMPD/out" "{s['model']: s['reason'] for s in d['skipped']}['typo-batch'] == 'the global_batch \"128x\" is not a whole number from 1'"
json_check "$TMPD/out" "{s['model']: s['reason'] for s in d['skipped']}['zero-tp'] == 'the tp \"0\" is not a whole number from 1'"
json_check "$TMPD/out" "{s['model']: s['reason'] for s in d['skipped']}['odd-unit'].startswith('the unit \"parsecs\" is not one of')"
# a measured value no run reports, an MFU above 100%, a recompute or precision the simulator does
# not know: skipped with the reason, not scored (the MAPE once printed 305 digits) or run on a default
for why in "tiny-value|is outside 1e-6 to 1e9" "huge-value|is outside 1e-6 to 1e9" "mfu-150|MFU is above 100%" \
	"odd-recompute|the recompute is not one the simulator runs" "odd-precision|the precision is not one the simulator runs"; do
	json_check "$TMPD/out" "'''${why#*|}''' in {s['model']: s['reason'] for s in d['skipped']}['${why%%|*}']"
done
run 0 validate --set serving --data "$BAD/validate/serving-absurd.csv" --json
json_check "$TMPD/out" "len([s for s in d['skipped'] if s['source'] == 'x']) == 3 and all('out of range' in s['reason'] or 'from 1 to 100000' in s['reason'] for s in d['skipped'] if s['source'] == 'x')"
# a GPU count that wraps or leaves GPUs over, a unit not the metric's, an engine setting out of
# its range, a count that is not whole: each skipped with its reason, not run on a default
for why in "gpus-wrap|the GPU count \"4294967297\" is not a whole number" \
	"gpus-odd|the 3 GPUs are not a whole number of TP 2 x PP 1 replicas" \
	"ttft-in-s|the unit \"s\" is not one of the metric's (ms)" \
	"memory-5|the stated gpu_memory_utilization 5 is not above 0.1" \
	"seqs-huge|the stated max_num_seqs 999999999999 is not a whole number from 1 to 1048576" \
	"conc-float|is not a batch, a concurrency from 1 to 100000 or a rate"; do
	json_check "$TMPD/out" "'''${why#*|}''' in {s['source']: s['reason'] for s in d['skipped']}['${why%%|*}']"
done
# (the one row predicted is the concurrency of 100,000: at the limit, not past it)
[ "$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['overall']['rows'])" "$TMPD/out")" = 1 ] ||
	fail "a hostile serving row was predicted"

# ---- flags out of range, malformed, repeated or missing their value -----------------------------
# the seed is exact in the JSON up to 2^53 (a double holds no larger integer), and refused above
run_bad 2 "--seed must be an integer from 0 to 9007199254740992" simulate serve --model llama-3-8b \
	--system dgx-h100 --tp 1 --rate 5 --requests 20 --seed 9007199254740993
run 0 simulate serve --model llama-3-8b --system dgx-h100 --tp 1 --rate 5 --requests 20 --json --seed 9007199254740992
json_check "$TMPD/out" "d['config']['seed'] == 9007199254740992"
run_bad 2 "--gpus must be an integer from 1 to" simulate train --model llama-3-8b --system dgx-h100 --gpus 99999999999999999
T="simulate train --model llama-3-8b --system dgx-h100 --pp 1 --micro-batch 1"
# shellcheck disable=SC2086
{
run_bad 2 "--gpus must be an integer from 1 to 16777216, got \"1000000000\"" $T --tp 8 --global-batch 8 --gpus 1000000000
run_bad 2 "--gpus must be an integer from 1 to 16777216, got \"0\"" $T --tp 8 --global-batch 8 --gpus 0
run_bad 2 "--gpus must be an integer from 1 to 16777216, got \"-8\"" $T --tp 8 --global-batch 8 --gpus -8
run_bad 2 "--gpus must be an integer" $T --tp 8 --global-batch 8 --gpus 8x
run_bad 2 "--gpus must be an integer" $T --tp 8 --global-batch 8 --gpus 1e3
run_bad 2 "--global-batch must be an integer" $T --gpus 8 --tp 8 --global-batch 9223372036854775808
run_bad 2 "--seq must be an integer" $T --gpus 8 --tp 8 --global-batch 8 --seq 9223372036854775807
run_bad 2 "--tp must be an integer from 1" $T --gpus 8 --global-batch 8 --tp 0
run_bad 2 "--zero must be an integer from 0 to 3" $T --gpus 8 --tp 8 --global-batch 8 --zero 4
run_bad 2 "--bucket-mb must be a number" $T --gpus 8 --tp 8 --global-batch 8 --bucket-mb 1e400
run_bad 2 "--bucket-mb must be a number" $T --gpus 8 --tp 8 --global-batch 8 --bucket-mb nan
run_bad 2 'option "--tp" is given more than once' $T --gpus 8 --tp 8 --tp 4 --global-batch 8
run_bad 2 'option "--model" is given more than once' $T --model gpt3-175b --gpus 8 --tp 8 --global-batch 8
run_bad 2 'option "--json" is given more than once' $T --gpus 8 --tp 8 --global-batch 8 --json --json
run_bad 2 'option "--tp" needs a value' $T --gpus 8 --global-batch 8 --tp
run_bad 2 "attention heads (32) must be divisible by tp (3)" $T --gpus 3 --tp 3 --global-batch 3
# MoE parallel folding: etp x ep must tile a stage's ranks; etp alone changes nothing
X="simulate train --model mixtral-8x7b --system dgx-h100 --micro-batch 1 --seq 1024"
run_bad 2 "etp x ep (2 x 8) must divide tp x cp x dp (2 x 1 x 4)" $X --gpus 8 --tp 2 --ep 8 --etp 2 --global-batch 8
run_bad 2 "--etp (1) other than tp (2) needs expert parallelism" $X --gpus 8 --tp 2 --etp 1 --global-batch 8
run_bad 2 "--etp needs a mixture-of-experts model" $T --gpus 8 --tp 2 --etp 4 --global-batch 8
run_bad 2 "expert width (14336) must be divisible by etp (3)" $X --gpus 6 --tp 2 --ep 2 --etp 3 --global-batch 6
# a hybrid model's Mamba-2 mixers split heads and groups over TP, and have no context parallelism
H="simulate train --model nemotron-h-56b --system dgx-h100 --micro-batch 1 --global-batch 1 --seq 1024"
run_bad 2 "Mamba heads (256) and groups (8) must be divisible by tp (16)" $H --gpus 16 --tp 16
run_bad 2 "context parallelism of Mamba layers is not modelled" $H --gpus 16 --tp 8 --cp 2
# absurd but well-formed sizes: refused before any work, not simulated for hours
run_bad 2 "micro-batches per step is more than the simulator handles" $T --gpus 8 --tp 8 --global-batch 1099511627776
run_bad 2 "the op graph would need more than" simulate train --model llama-3-8b --system dgx-h100 --gpus 65536 \
	--tp 8 --pp 1 --micro-batch 1 --global-batch 65536 --full
}
S="simulate serve --model llama-3-8b --system dgx-h100 --tp 1"
# shellcheck disable=SC2086
{
run_bad 2 "--rate must be a number" $S --rate nan
run_bad 2 "--rate must be a number" $S --rate inf
run_bad 2 "--rate must be a number" $S --rate -1
run_bad 2 "--rate must be a number" $S --rate 1e12
run_bad 2 "the run must have from 1 to 10000000 requests" $S --rate 1e6 --duration 100
run_bad 2 "--requests must be an integer from 1 to 10000000" $S --rate 1 --requests 100000000
run_bad 2 "expected uniform:min=A,max=B with 1 <= A <= B" $S --rate 1 --prompt-len uniform:min=5,max=1
run_bad 2 "--prompt-len" $S --rate 1 --prompt-len lognormal:mean=nan,sigma=1
run_bad 2 'option "--rate" is given more than once' $S --rate 1 --rate 2
}
run_bad 2 "--gpus" plan train --model llama-3-8b --system dgx-h100 --gpus 0 --global-batch 8
run_bad 2 'option "--system" is given more than once' plan train --model llama-3-8b --system dgx-h100 \
	--system dgx-a100 --gpus 8 --global-batch 8
run_bad 2 'option "--set" is given more than once' validate --set training --set serving
run_bad 2 "--max-mape must be a number" validate --max-mape -1
run_bad 2 'option "--db" is given more than once' hw list --db "$TMPD/a.db" --db "$TMPD/b.db"
run_bad 2 "RUN_A must be an integer" hw diff 0 1
run_bad 2 "--db needs a value, got an empty one" hw list --db ""

# ---- output that cannot be written: no file, no partial file, exit 1 ---------------------------
run_bad 1 "cannot create" simulate train --model llama-3-8b --system dgx-h100 --gpus 8 --tp 8 --pp 1 \
	--micro-batch 1 --global-batch 8 --trace "$TMPD/no/such/dir/t.json"
mkdir "$TMPD/small"
(
	# a file size limit stands in for a full disk; SIGXFSZ ignored, so write() reports EFBIG
	ulimit -f 16
	trap '' XFSZ
	"$PARAPLAN" simulate train --model llama-3-8b --system dgx-h100 --gpus 8 --tp 8 --pp 1 --micro-batch 1 \
		--global-batch 8 --trace "$TMPD/small/t.json" >"$TMPD/out" 2>"$TMPD/err"
	echo $? >"$TMPD/status"
)
[ "$(cat "$TMPD/status")" = 1 ] || fail "trace on a full disk: exit $(cat "$TMPD/status"), expected 1"
grep -qF "t.json: write failed" "$TMPD/err" || fail "trace on a full disk: $(cat "$TMPD/err")"
[ -z "$(ls -A "$TMPD/small")" ] || fail "trace on a full disk left files: $(ls "$TMPD/small")"
# results that cannot reach stdout are a failure, not a silent success
if [ -w /dev/full ]; then
	"$PARAPLAN" model list >/dev/full 2>"$TMPD/err"
	[ $? = 1 ] || fail "model list > /dev/full did not exit 1"
	grep -qF "cannot write the output" "$TMPD/err" || fail "model list > /dev/full: $(cat "$TMPD/err")"
fi
finish
