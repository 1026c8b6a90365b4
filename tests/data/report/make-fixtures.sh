#!/bin/sh
# make-fixtures.sh -- how the report fixtures in this directory were made (run from the build
# directory with the paraplan under test; PARAPLAN_DB=:memory: gives the shipped defaults).
# They are inputs of tests/check_report.c and tests/cli_report*.sh, which compare the report
# with them; regenerate them when a document's format changes.
set -e
P=${PARAPLAN:-./paraplan}
D=${1:-.}
export PARAPLAN_DB=:memory:
$P plan train --model llama-3-8b --system dgx-h100 --gpus 8..32 --global-batch 256 --top 5 --jobs 2 --json >"$D/plan-train-h100.json"
$P plan train --model llama-3-8b --system dgx-a100 --gpus 16 --global-batch 256 --top 5 --jobs 2 --json >"$D/plan-train-a100.json"
$P simulate train --model llama-3-8b --system dgx-h100 --gpus 16 --tp 2 --pp 2 --micro-batch 1 --global-batch 16 \
	--json --trace "$D/sim-train-trace.json" >"$D/sim-train.json"
for r in 2 4 8; do
	$P simulate serve --model llama-3-8b --system dgx-h100 --tp 1 --rate $r --duration 30 --slo-ttft-p99 500 \
		--slo-tpot-p99 40 --json >"$D/serve-r$r.json"
done
$P plan serve --model llama-3-8b --rate 10 --slo-ttft-p99 500 --slo-tpot-p99 40 --systems dgx-h100,dgx-a100 \
	--duration 20 --top 4 --jobs 2 --json >"$D/plan-serve.json"
$P plan train --model llama-3-8b --tokens 100G --days 7 --global-batch 256 --systems dgx-a100,dgx-h100 --jobs 2 \
	--json >"$D/capacity.json"
$P validate --set korthikanti --json >"$D/validate.json"
