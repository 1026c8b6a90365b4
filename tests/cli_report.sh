#!/bin/sh
# 'paraplan report' from the command line: what it writes, that the same inputs give the same
# bytes, tables only without gnuplot, and that bad or mismatched input and bad flags give a
# clear error and leave no report, not even part of one.
. "$top_srcdir/tests/lib.sh"
F="$top_srcdir/tests/data/report"
ALL="--from $F/plan-train-h100.json --from $F/plan-train-a100.json --from $F/sim-train.json --trace $F/sim-train-trace.json
     --from $F/serve-r2.json --from $F/serve-r4.json --from $F/serve-r8.json --from $F/plan-serve.json
     --from $F/capacity.json --from $F/validate.json"

# everything at once; charts when gnuplot is here
run 0 report $ALL --out "$TMPD/r1" --tokens 100G
expect_out "report written to $TMPD/r1"
for f in report.html report.md manifest.txt tables/inputs.csv tables/d1-cost.csv tables/d3-memory.csv \
	tables/comparison.csv tables/d10-validation.csv charts/d3-memory.dat charts/d3-memory.gp charts/d4-timeline.dat \
	charts/sweep1.dat charts/cost-by-system.dat; do
	[ -s "$TMPD/r1/$f" ] || fail "$f missing or empty"
done
grep -q 'Hardware comparison' "$TMPD/r1/report.html" || fail "no comparison section"
grep -q 'data-src="10:/overall/mape"' "$TMPD/r1/report.html" || fail "the validation MAPE is not shown"
# charts are expected where the report finds gnuplot: $PARAPLAN_GNUPLOT when set (empty: none)
if [ -n "${PARAPLAN_GNUPLOT+set}" ]; then
	[ -n "$PARAPLAN_GNUPLOT" ] && command -v "$PARAPLAN_GNUPLOT" >/dev/null 2>&1 && drawn=yes || drawn=no
else
	command -v gnuplot >/dev/null 2>&1 && drawn=yes || drawn=no
fi
if [ $drawn = no ]; then
	expect_err "tables only"
else
	for c in d1-scaling d1-pareto d3-memory d4-timeline d8-serving sweep1 cost-by-system; do
		[ -s "$TMPD/r1/charts/$c.svg" ] || fail "charts/$c.svg not drawn"
		[ -s "$TMPD/r1/charts/$c.png" ] || fail "charts/$c.png not drawn"
		head -c 4 "$TMPD/r1/charts/$c.png" | grep -q PNG || fail "charts/$c.png is not a PNG"
		grep -q "charts/$c.png" "$TMPD/r1/report.md" || fail "report.md does not show $c"
	done
	grep -q 'src="data:image/svg+xml;base64,' "$TMPD/r1/report.html" || fail "no chart embedded in the HTML"
fi
# the chart data: one block per series, as many as each chart draws
series() { grep -c '^# series: ' "$TMPD/r1/charts/$1.dat"; }
[ "$(series d3-memory)" = 8 ] || fail "memory chart: $(series d3-memory) series, expected 7 parts and the capacity"
[ "$(series d1-scaling)" = 3 ] || fail "scaling chart: $(series d1-scaling) series"
[ "$(series d1-pareto)" = 2 ] || fail "pareto chart: $(series d1-pareto) series"
[ "$(series cost-by-system)" = 3 ] || fail "cost chart: $(series cost-by-system) series"
[ "$(series sweep1)" = 8 ] || fail "latency sweep: $(series sweep1) series"
[ "$(series d8-serving)" = 3 ] || fail "SLO chart: $(series d8-serving) series"
# four stages of the simulated step: four rows in each memory series
[ "$(awk '/^# series: weights/{on=1;next} /^$/{on=0} on' "$TMPD/r1/charts/d3-memory.dat" | wc -l)" = 2 ] ||
	fail "memory chart: weights has not one row per pipeline stage"

# the same inputs give the same bytes; an earlier report is replaced whole
run 0 report $ALL --out "$TMPD/r2" --tokens 100G
diff -r "$TMPD/r1" "$TMPD/r2" >/dev/null || fail "two runs differ"
run 0 report --from "$F/plan-train-h100.json" --out "$TMPD/r2" --format csv
[ ! -e "$TMPD/r2/report.html" ] || fail "the earlier report's files survived its replacement"
[ -s "$TMPD/r2/tables/d1-cost.csv" ] || fail "csv format wrote no tables"
ls "$TMPD" | grep -q 'tmp-\|old-' && fail "temporary directories left beside the report"
# a directory with a manifest.txt is replaced only if it holds nothing else than what its manifest
# lists: the user's files beside a report, or a manifest.txt of the user's own, are left as they are
echo notes >"$TMPD/r2/charts/mine.txt"
run 2 report --from "$F/sim-train.json" --out "$TMPD/r2" --format md
expect_err "holds charts/mine.txt, which its manifest.txt does not list"
[ -s "$TMPD/r2/tables/d1-cost.csv" ] || fail "a refused report still replaced the earlier one"
rm "$TMPD/r2/charts/mine.txt"
mkdir "$TMPD/r2/sub"
run 2 report --from "$F/sim-train.json" --out "$TMPD/r2" --format md
expect_err "holds sub, which"
rmdir "$TMPD/r2/sub"
run 0 report --from "$F/sim-train.json" --out "$TMPD/r2" --format md
mkdir "$TMPD/own"
echo notes >"$TMPD/own/manifest.txt"
echo thesis >"$TMPD/own/thesis.tex"
run 2 report --from "$F/sim-train.json" --out "$TMPD/own"
expect_err "is not an earlier report"
[ "$(cat "$TMPD/own/thesis.tex")" = thesis ] || fail "a directory of the user's own was replaced"

# no gnuplot: tables only, with a notice, and the charts' data and scripts
PARAPLAN_GNUPLOT="$TMPD/no-such-gnuplot" run 0 report $ALL --out "$TMPD/r3"
expect_err "was not found: the report has tables only"
[ ! -e "$TMPD/r3/charts/d3-memory.svg" ] || fail "a chart was drawn without gnuplot"
[ -s "$TMPD/r3/charts/d3-memory.gp" ] || fail "the chart script is missing without gnuplot"
grep -q 'Chart not drawn' "$TMPD/r3/report.html" || fail "the HTML does not say the charts are missing"
grep -q 'tables only' "$TMPD/r3/report.html" || fail "the HTML has no notice"
# a gnuplot that fails: that chart is left out with a notice, the report is still written
printf '#!/bin/sh\necho "line 1: broken" >&2\nexit 1\n' >"$TMPD/bad-gnuplot"
chmod +x "$TMPD/bad-gnuplot"
PARAPLAN_GNUPLOT="$TMPD/bad-gnuplot" run 0 report --from "$F/sim-train.json" --out "$TMPD/r4"
expect_err "could not draw"
expect_err "line 1: broken"

# currency: every amount converted, the rate stated
run 0 report --from "$F/plan-train-h100.json" --out "$TMPD/eur" --currency EUR:0.5 --format csv
head -1 "$TMPD/eur/tables/d1-cost.csv" | grep -q 'eur_per_gpu_hour' || fail "CSV header does not name the currency"
run 0 report --from "$F/plan-train-h100.json" --out "$TMPD/usd" --format csv
a=$(sed -n 2p "$TMPD/usd/tables/d1-cost.csv" | cut -d, -f4)
b=$(sed -n 2p "$TMPD/eur/tables/d1-cost.csv" | cut -d, -f4)
[ "$(awk -v a="$a" -v b="$b" 'BEGIN { print (b == a * 0.5) ? "ok" : "no" }')" = ok ] || fail "EUR:0.5 of $a is not $b"

# bad input: exit 1, the file and field named, nothing written
bad() { # NAME EXPECTED-MESSAGE ARGS...
	name=$1; msg=$2; shift 2
	run 1 report "$@" --out "$TMPD/bad-$name"
	expect_err "$msg"
	[ ! -e "$TMPD/bad-$name" ] || fail "$name: a partial report was written"
}
printf '{"kind": "plan-train", "model": ' >"$TMPD/trunc.json"
bad trunc "trunc.json:1:33: not valid JSON (unexpected end of file)" --from "$TMPD/trunc.json"
sed 's/"step_time_s"/"step_time"/' "$F/sim-train.json" >"$TMPD/nostep.json"
bad nostep '"/step_time_s" is missing' --from "$TMPD/nostep.json"
sed 's/"mfu":[^,]*/"mfu": "high"/' "$F/sim-train.json" >"$TMPD/mfu.json"
bad mistyped '"/mfu" must be a number' --from "$TMPD/mfu.json"
echo '{"kind": "benchmark"}' >"$TMPD/kind.json"
bad kind '"benchmark" is not a kind of paraplan document' --from "$TMPD/kind.json"
echo '[1, 2]' >"$TMPD/array.json"
bad array 'expected a JSON object' --from "$TMPD/array.json"
echo '{"rows": []}' >"$TMPD/nokind.json"
bad nokind 'no "schema" field: not a paraplan result' --from "$TMPD/nokind.json"
sed 's/"llama-3-8b"/"llama-3-70b"/' "$F/serve-r2.json" >"$TMPD/other-model.json"
bad model 'a report covers one model' --from "$F/sim-train.json" --from "$TMPD/other-model.json"
sed 's/"step_time_s":[^,]*/"step_time_s": 1.5/' "$F/sim-train.json" >"$TMPD/other-step.json"
bad trace 'matches no simulation given' --from "$TMPD/other-step.json" --trace "$F/sim-train-trace.json"
bad missing 'no-such.json' --from "$TMPD/no-such.json"
"$PARAPLAN" simulate serve --model llama-3-8b --system dgx-h100 --tp 1 --rate 2 --requests 20 --trace "$TMPD/serve-trace.json" \
	>/dev/null || fail "simulate serve --trace failed"
bad serving-trace 'a serving trace' --from "$F/serve-r2.json" --trace "$TMPD/serve-trace.json"
ls "$TMPD" | grep -q 'bad-.*tmp-' && fail "temporary directories left after a failure"

# usage: exit 2
run 2 report --out "$TMPD/u1"
expect_err "--from is required"
run 2 report --from "$F/sim-train.json"
expect_err "--out is required"
run 2 report --from "$F/sim-train.json" --out "$TMPD/u2" --format pdf
expect_err "--format must be"
run 2 report --from "$F/sim-train.json" --out "$TMPD/u3" --currency EUR
expect_err "needs its rate"
run 2 report --from "$F/sim-train.json" --from "$F/sim-train.json" --out "$TMPD/u4"
expect_err "given twice"
mkdir "$TMPD/mine" && echo keep >"$TMPD/mine/notes.txt"
run 2 report --from "$F/sim-train.json" --out "$TMPD/mine"
expect_err "is not an earlier report"
[ "$(cat "$TMPD/mine/notes.txt")" = keep ] || fail "a directory of other files was touched"
# the 80% interval of a step time: two rows of the speed table, a column of the ranking, error
# bars on the time-cost chart; a document from before intervals gets none of them
run 0 plan train --model llama-3-8b --system dgx-h100 --gpus 16 --global-batch 128 --top 4 --json
cp "$TMPD/out" "$TMPD/plan-iv.json"
# three significant digits as the report writes them, trailing zeros kept (6.10 s)
lo=$(python3 -c "import json; print(('%#.3g' % json.load(open('$TMPD/plan-iv.json'))['counts'][0]['candidates'][0]['step_time_interval_s'][0]).rstrip('.'))")
run 0 report --from "$TMPD/plan-iv.json" --out "$TMPD/iv"
grep -q "^| step time, low end | $lo s |" "$TMPD/iv/report.md" || fail "the report lacks the winner's interval ($lo s): $(grep 'low end' "$TMPD/iv/report.md")"
grep -q "| 80% interval |" "$TMPD/iv/report.md" || fail "the ranking lacks the interval column"
grep -q "xerrorbars" "$TMPD/iv/charts/"*pareto.gp || fail "the time-cost chart has no error bars"
python3 -c "
import json; d = json.load(open('$TMPD/plan-iv.json'))
d['counts'][0]['candidates'][1]['step_time_interval_s'].reverse()
json.dump(d, open('$TMPD/plan-iv-inverted.json', 'w'))"
run 1 report --from "$TMPD/plan-iv-inverted.json" --out "$TMPD/iv-inverted"
expect_err "its low end must not pass its high end"
[ -e "$TMPD/iv-inverted" ] && fail "a refused report left $TMPD/iv-inverted behind"
run 0 report --from "$F/plan-train-h100.json" --out "$TMPD/noiv"
grep -q "low end" "$TMPD/noiv/report.md" && fail "a plan without intervals got interval rows"
grep -q "xerrorbars" "$TMPD/noiv/charts/"*pareto.gp && fail "a plan without intervals got error bars"
# serving: the P99 bars against the SLO carry the engine's 80% intervals; a batch run's
# throughput its interval rows; a plan from before intervals gets no bars
run 0 plan serve --model llama-3-8b --rate 20 --slo-ttft-p99 500 --slo-tpot-p99 50 --systems dgx-h100 --top 3 --json
cp "$TMPD/out" "$TMPD/serve-iv.json"
python3 -c "
import json; d = json.load(open('$TMPD/serve-iv.json'))['deployments'][0]
lo, hi = d['capacity_per_unit_interval']; u = d['units_interval']
assert lo < d['capacity_per_unit'] < hi and u[0] <= d['units'] <= u[1], d" || fail "a plan's capacity interval does not hold its prediction"
run 0 report --from "$TMPD/serve-iv.json" --out "$TMPD/siv"
grep -q "yerrorbars" "$TMPD/siv/charts/"*.gp || fail "the serving plan's P99 chart has no error bars"
python3 -c "
import json; d = json.load(open('$TMPD/serve-iv.json'))
d['deployments'][1]['ttft_p99_interval_s'].reverse()
json.dump(d, open('$TMPD/serve-iv-inverted.json', 'w'))"
run 1 report --from "$TMPD/serve-iv-inverted.json" --out "$TMPD/siv-inverted"
expect_err "its low end must not pass its high end"
python3 -c "
import json; d = json.load(open('$TMPD/serve-iv.json'))
for x in d['deployments']:
    for k in [k for k in x if k.endswith('_interval_s') or k.endswith('_interval')]: del x[k]
json.dump(d, open('$TMPD/serve-noiv.json', 'w'))"
run 0 report --from "$TMPD/serve-noiv.json" --out "$TMPD/snoiv"
grep -q "yerrorbars" "$TMPD/snoiv/charts/"*.gp && fail "a serving plan without intervals got error bars"
run 0 simulate serve --model llama-3-8b --system dgx-h100 --tp 1 --arrival batch --requests 200 --json
cp "$TMPD/out" "$TMPD/sim-serve-iv.json"
run 0 report --from "$TMPD/sim-serve-iv.json" --out "$TMPD/ssiv"
grep -q "output tokens/s, low end" "$TMPD/ssiv/report.md" || fail "a batch run's report lacks its throughput interval"
run 0 simulate serve --model llama-3-8b --system dgx-h100 --tp 1 --rate 2 --requests 200 --json
# an open-loop run's throughput interval takes in the capacity band's runs (docs/validation.md)
json_check "$TMPD/out" "(lambda v, iv: iv[0] <= v <= iv[1])(d['output_tokens_per_s'], d['output_tokens_per_s_interval'])"
run 0 report --help
expect_out "usage: paraplan report"
finish
