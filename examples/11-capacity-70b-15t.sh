#!/bin/sh
# 11. Capacity planning: GPUs and days to train Llama-3-70B on 15T tokens on H100 vs B200, rent
#     vs buy, as a report with charts.
. "$(dirname "$0")/lib.sh"
say "Llama-3-70B, 15T tokens within 90 days, 2048 sequences of 8192 tokens per step, on DGX H100
or DGX B200 nodes; rent at every listed price, or buy (4-year life, \$0.09/kWh, PUE 1.3).  The
days count failures at Llama 3's interruption rate, with checkpoints at the optimal interval."
P="plan train --model llama-3-70b --tokens 15T --days 90 --global-batch 2048 --systems dgx-h100,dgx-b200"
ask capacity-70b $P
# the report reads the plan as a JSON document
if [ -n "${EXAMPLES_JSON:-}" ]; then
	doc="$EXAMPLES_JSON/capacity-70b.json"
	out="$EXAMPLES_JSON/report-70b"
else
	tmp=$(mktemp -d)
	doc="$tmp/capacity-70b.json"
	out=${REPORT_DIR:-paraplan-report-70b}
	paraplan $P --json >"$doc"
fi
paraplan report --from "$doc" --out "$out" --format all --title "Llama-3-70B on 15T tokens: H100 or B200"
say "Open $out/report.html (or read $out/report.md): GPUs and days per system, the cost to rent at
each listed price and to own, the comparison chart, and the assumptions behind every number."
