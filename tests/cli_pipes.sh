#!/bin/sh
# Every JSON document paraplan writes says what it is, "schema": "paraplan.<kind>/<N>" as its
# first key, and 'report' reads the live output of every command whose kind it documents --
# from a file or from a pipe (--from -) -- and refuses the others by their schema.
. "$top_srcdir/tests/lib.sh"

awk -v d="$TMPD" '/^## BEGIN/ { n++; f = d "/block" n ".log"; next } /^## END/ { f = ""; next } f { print > f }' \
	"$top_srcdir/tests/data/nccl-tests-samples.txt"
DB="$TMPD/hw.db"
n=0

# schema FILE KIND : the document's first key is "schema" and it is paraplan.KIND/N
schema() {
	python3 - "$1" "$2" <<'PY' || fail "$1: no \"schema\": \"paraplan.$2/N\" as the first key"
import json, re, sys
d = json.load(open(sys.argv[1]))
k = next(iter(d))
assert k == 'schema' and re.fullmatch(r'paraplan\.%s/[1-9][0-9]*' % re.escape(sys.argv[2]), d['schema']), (k, d.get('schema'))
PY
}

# reads KIND CMD... : CMD's --json output has schema KIND, and 'report' reads it through a pipe
reads() {
	kind=$1; shift
	n=$((n + 1))
	run 0 "$@"
	schema "$TMPD/out" "$kind"
	"$PARAPLAN" report --from - --out "$TMPD/r$n" --format md <"$TMPD/out" >"$TMPD/rep.out" 2>"$TMPD/rep.err" ||
		fail "paraplan $* | paraplan report --from - failed: $(cat "$TMPD/rep.err")"
	[ -s "$TMPD/r$n/report.md" ] || fail "no report from: paraplan $*"
}

# refuses KIND CMD... : CMD's output has schema KIND, and 'report' says it does not read that kind
refuses() {
	kind=$1; shift
	run 0 "$@"
	schema "$TMPD/out" "$kind"
	cp "$TMPD/out" "$TMPD/doc.json"
	run 1 report --from "$TMPD/doc.json" --out "$TMPD/none" --format md
	expect_err "a paraplan.$kind/1 document"
	[ ! -e "$TMPD/none" ] || fail "report wrote something for a $kind document"
}

reads train simulate train --model llama-3-8b --system dgx-h100 --gpus 8 --tp 8 --pp 1 --micro-batch 1 --global-batch 8 --json
reads serve simulate serve --model llama-3-8b --system dgx-h100 --tp 1 --rate 2 --duration 20 --json
reads plan-train plan train --model llama-3-8b --system dgx-h100 --gpus 8..16 --global-batch 64 --top 2 --json
reads plan-capacity plan train --model gpt2-xl --tokens 1e9 --days 1 --global-batch 64 --systems dgx-a100 --json
# the pipe the issue found broken: plan serve writes a unit's capacity (plan-serve/2)
reads plan-serve plan serve --model llama-3-8b --system dgx-h100 --rate 5 --slo-ttft-p99 500 --slo-tpot-p99 50 --duration 30 --json
json_check "$TMPD/out" "d['schema'] == 'paraplan.plan-serve/2' and 'capacity_per_unit' in d['deployments'][0]"
grep -q "Req/s per unit" "$TMPD/r$n/report.md" || fail "the serving report does not show the capacity per unit"
reads validate validate --set korthikanti --json
# a training trace: a file of its own, with its schema; the report reads it beside its simulation
run 0 simulate train --model llama-3-8b --system dgx-h100 --gpus 8 --tp 8 --pp 1 --micro-batch 1 --global-batch 8 \
	--trace "$TMPD/trace.json" --json
cp "$TMPD/out" "$TMPD/step.json"
schema "$TMPD/trace.json" trace
run 0 report --from "$TMPD/step.json" --from "$TMPD/trace.json" --out "$TMPD/rt" --format md

# the commands whose documents a report does not read: named by their schema
refuses infer simulate infer --model resnet-50 --system dgx-a100 --batch 64 --json
refuses model model show llama-3-8b --json
refuses model-list model list --json
refuses hw-list hw list --json
refuses hw-show hw show dgx-h100 --json
run 0 import nccl-tests --system gcp-a3-mega --op all_reduce --db "$DB" "$TMPD/block5.log"
run 0 import nccl-tests --system gcp-a3-mega --op all_reduce --ranks 16 --db "$DB" "$TMPD/block3.log"
refuses import-nccl-tests import nccl-tests --system dgx-a100 --op all_reduce --ranks 32 --json --db "$DB" "$TMPD/block1.log"
refuses hw-calibrations hw calibrations --json --db "$DB"
refuses hw-validations hw validations --json --db "$DB"
refuses hw-diff hw diff 1 2 --json --db "$DB"
refuses hw-export hw export --json --db "$DB"
refuses calibrate-fit calibrate --fit --system gcp-a3-mega --json --db "$DB"
run 0 plan train --model llama-3-8b --system dgx-h100 --gpus 8 --global-batch 64 --top 1 --json
cp "$TMPD/out" "$TMPD/plan.json"
refuses replay-dry-run replay --plan "$TMPD/plan.json" --dry-run --json

# documents of older versions still read: a plan-serve/1 (capacity_per_replica) without a schema
run 0 report --from "$top_srcdir/tests/data/report/plan-serve.json" --out "$TMPD/old" --format md
grep -q "Req/s per replica" "$TMPD/old/report.md" || fail "a plan-serve/1 document lost its column"
# a newer version than this paraplan reads, a schema that is not paraplan's, two standard inputs
run 0 plan serve --model llama-3-8b --system dgx-h100 --rate 5 --slo-ttft-p99 500 --slo-tpot-p99 50 --duration 30 --json
cp "$TMPD/out" "$TMPD/serve.json"
sed 's|"paraplan.plan-serve/2"|"paraplan.plan-serve/3"|' "$TMPD/serve.json" >"$TMPD/v3.json"
run 1 report --from "$TMPD/v3.json" --out "$TMPD/v3" --format md
expect_err "a paraplan.plan-serve/3 document, written by a newer paraplan: this one reads versions 1 to 2"
sed 's|"paraplan.plan-serve/2"|"other.thing/1"|' "$TMPD/serve.json" >"$TMPD/other.json"
run 1 report --from "$TMPD/other.json" --out "$TMPD/other" --format md
expect_err "\"/schema\" must be \"paraplan.<kind>/<version>\""
run 2 report --from - --from - --out "$TMPD/two"
expect_err "--from - (standard input) may be given once"
finish
