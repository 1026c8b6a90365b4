#!/bin/sh
# 'hw export' and 'hw import': a system's measurements and calibration runs move between
# databases intact -- runs under new ids with every row, fits with them -- or the import is
# refused as a whole (a run already there, a parameter fitted to another value, a system the
# target does not know).
. "$top_srcdir/tests/lib.sh"

awk -v d="$TMPD" '/^## BEGIN/ { n++; f = d "/block" n ".log"; next } /^## END/ { f = ""; next } f { print > f }' \
	"$top_srcdir/tests/data/nccl-tests-samples.txt"
A="$TMPD/a.db" B="$TMPD/b.db"
# A: an H100 system's import and fit, and an A100 system's import (run 2)
run 0 import nccl-tests --system gcp-a3-mega --op all_reduce --db "$A" "$TMPD/block5.log"
run 0 import nccl-tests --system dgx-a100 --op all_reduce --nodes 4 --gpus-per-node 8 --db "$A" "$TMPD/block1.log"
run 0 calibrate --fit --system gcp-a3-mega --db "$A"
# B already has a run 1 of its own (the SQL export collided with it: UNIQUE, or rows on the wrong run)
run 0 import nccl-tests --system aws-p5 --op all_reduce --ranks 16 --db "$B" "$TMPD/block3.log"

run 0 hw export --system gcp-a3-mega --db "$A" --out "$TMPD/a3.json"
json_check "$TMPD/a3.json" "d['schema'] == 'paraplan.hw-export/1' and d['system'] == 'gcp-a3-mega' and len(d['runs']) == 1 and len(d['runs'][0]['coll_meas']) == 62 and len(d['runs'][0]['param']) > 0 and 'id' not in d['runs'][0]['cal_run']"
# --json changes nothing: the export is one JSON document either way
run 0 hw export --system gcp-a3-mega --db "$A" --json
cmp -s "$TMPD/out" "$TMPD/a3.json" || fail "hw export --json differs from hw export --out"
run 0 hw import "$TMPD/a3.json" --db "$B" --dry-run
expect_out "would import $TMPD/a3.json: 1 calibration run(s)"
run 0 hw calibrations --db "$B" --json
json_check "$TMPD/out" "len(d['runs']) == 1"
run 0 hw import "$TMPD/a3.json" --db "$B" --json
json_check "$TMPD/out" "d['schema'] == 'paraplan.hw-import/1' and d['runs'] == 1"
# the run arrived whole, under a new id, beside B's own run 1
run 0 hw calibrations --db "$B" --json
json_check "$TMPD/out" "[(r['id'], r['system'], r['collective_rows']) for r in d['runs']] == [(2, 'gcp-a3-mega', 62), (1, 'aws-p5', 64)]"
run 0 hw show gcp-a3-mega --db "$B" --json
json_check "$TMPD/out" "any(p['origin'] == 'fitted' for p in d['cost_model']['parameters'])"
# the same runs again: refused, nothing written
run 1 hw import "$TMPD/a3.json" --db "$B"
expect_err "the calibration run of gcp-a3-mega started"
expect_err "is already in this database as run 2: nothing was imported"
# everything of A into B: its gcp-a3-mega run is there already, so none of it (not the A100 run either)
run 0 hw export --db "$A" --out "$TMPD/all.json"
run 1 hw import "$TMPD/all.json" --db "$B"
run 0 hw calibrations --db "$B" --json
json_check "$TMPD/out" "len(d['runs']) == 2"
# into a fresh database: every run, every row
run 0 hw import "$TMPD/all.json" --db "$TMPD/c.db"
run 0 hw calibrations --db "$TMPD/c.db" --json
json_check "$TMPD/out" "sorted((r['system'], r['collective_rows']) for r in d['runs']) == [('dgx-a100', 26), ('gcp-a3-mega', 62)]"
# a parameter fitted to another value in the target refuses the import whole
run 0 import nccl-tests --system gcp-a3-mega --op all_reduce --ranks 16 --db "$TMPD/d.db" "$TMPD/block3.log"
run 0 calibrate --fit --system gcp-a3-mega --db "$TMPD/d.db"
run 1 hw import "$TMPD/a3.json" --db "$TMPD/d.db"
expect_err "is in this database with other values"
run 0 hw calibrations --db "$TMPD/d.db" --json
json_check "$TMPD/out" "len(d['runs']) == 1"
# hostile files: another document, a newer schema, a column this database does not know
run 0 model show llama-3-8b --json
cp "$TMPD/out" "$TMPD/model.json"
run 1 hw import "$TMPD/model.json" --db "$TMPD/c.db"
expect_err "a paraplan.model/1 document; 'hw import' reads paraplan.hw-export/1"
sed 's/"database_schema":	[0-9]*/"database_schema":	99/' "$TMPD/a3.json" > "$TMPD/newer.json"
run 1 hw import "$TMPD/newer.json" --db "$TMPD/e.db"
expect_err "written from a database of schema 99"
sed 's/"started":/"startedx":/' "$TMPD/a3.json" > "$TMPD/col.json"
run 1 hw import "$TMPD/col.json" --db "$TMPD/e.db"
expect_err "table \"cal_run\" has no column \"startedx\""
run 2 hw import --db "$TMPD/e.db"
run 2 hw export --dry-run
expect_err "--dry-run applies to 'hw import' only"
run 2 hw export --system nope
expect_err "unknown system \"nope\""
finish
