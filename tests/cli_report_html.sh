#!/bin/sh
# 'paraplan report' read back: the HTML is well-formed, every image and linked file exists and
# is not empty, and every number shown equals the one in the document it came from
# (tests/report_check.py).  On the fixtures, on documents made now by this paraplan (so a
# change in a document's format shows here), and without gnuplot.  Needs python3.
. "$top_srcdir/tests/lib.sh"
command -v python3 >/dev/null 2>&1 || { echo "python3 not found: skipped"; exit 77; }
F="$top_srcdir/tests/data/report"
check() { python3 "$top_srcdir/tests/report_check.py" "$@" || fail "report_check $*"; }

set -- "$F/plan-train-h100.json" "$F/plan-train-a100.json" "$F/sim-train.json" "$F/sim-train-trace.json" \
	"$F/serve-r2.json" "$F/serve-r4.json" "$F/serve-r8.json" "$F/plan-serve.json" "$F/capacity.json" "$F/validate.json"
args=""
for f in "$@"; do args="$args --from $f"; done
run 0 report $args --out "$TMPD/fixtures" --tokens 15T
check "$TMPD/fixtures" "$@"
PARAPLAN_GNUPLOT= run 0 report $args --out "$TMPD/nognuplot" --currency EUR:0.92
check "$TMPD/nognuplot" "$@"

# documents made now
D="$TMPD/docs"
mkdir -p "$D"
"$PARAPLAN" plan train --model gpt2-xl --system dgx-a100 --gpus 8,16 --global-batch 64 --top 3 --json >"$D/a.json" &&
"$PARAPLAN" plan train --model gpt2-xl --system dgx-h100 --gpus 8 --global-batch 64 --top 3 --json >"$D/h.json" &&
"$PARAPLAN" simulate train --model gpt2-xl --system dgx-h100 --gpus 8 --tp 1 --pp 2 --micro-batch 1 --global-batch 16 \
	--json --trace "$D/t.json" >"$D/s.json" &&
"$PARAPLAN" simulate serve --model gpt2-xl --system dgx-a100 --tp 1 --rate 4 --requests 60 --slo-ttft-p99 300 \
	--slo-tpot-p99 30 --json >"$D/v.json" &&
"$PARAPLAN" plan train --model gpt2-xl --tokens 1e9 --days 1 --global-batch 64 --systems dgx-a100,dgx-h100 \
	--json >"$D/c.json" || fail "making the documents failed"
run 0 report --from "$D/a.json" --from "$D/h.json" --from "$D/s.json" --trace "$D/t.json" --from "$D/v.json" \
	--from "$D/c.json" --out "$TMPD/fresh" --title "gpt2-xl: a test"
check "$TMPD/fresh" "$D/a.json" "$D/h.json" "$D/s.json" "$D/t.json" "$D/v.json" "$D/c.json"
grep -q '<title>gpt2-xl: a test</title>' "$TMPD/fresh/report.html" || fail "--title not used"
finish
