#!/bin/sh
# Issue 16: hostile files and absurd numbers from the command line.  No command writes through
# a symlink or over a device, FIFO, socket or a file it may not write; no string from a file
# reaches gnuplot as script text; a database from outside is refused when its schema version is
# unknown or its pages are damaged; impossible results are refused, not printed.
. "$top_srcdir/tests/lib.sh"

# run_bad STATUS NEEDLE ARGS... : fails with STATUS within 60 s, nothing on stdout, NEEDLE in
# the message
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
	grep -qF -- "$needle" "$TMPD/err" || fail "paraplan $*: stderr lacks \"$needle\": $(head -c 400 "$TMPD/err")"
}

# kind PATH : what the path is now (ls -ld's type letter, or "missing")
kind() { if [ -e "$1" ] || [ -L "$1" ]; then ls -ld "$1" | cut -c1; else echo missing; fi; }

# ---- 1. outputs: one rule for --out, --trace, hw export, report --out ---------------------------
O=$TMPD/outputs
mkdir "$O"
echo target >"$O/target"
ln -s target "$O/link"
ln -s nowhere "$O/dangling"
mkfifo "$O/fifo"
mkdir "$O/dir"
python3 -c "import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])" "$O/sock"
# a device of our own (mknod needs root); /dev is never handed to the command under test
mknod "$O/null" c 1 3 2>/dev/null || true
SIM="--model llama-3-8b --system dgx-h100"
for t in link dangling fifo dir sock null; do
	[ -e "$O/$t" ] || [ -L "$O/$t" ] || continue
	before=$(kind "$O/$t")
	run_bad 2 "$O/$t is a" hw export --out "$O/$t"
	run_bad 2 "--out $O/$t is a" plan train $SIM --gpus 8 --global-batch 64 --export megatron --out "$O/$t"
	run_bad 2 "--trace $O/$t is a" simulate train $SIM --gpus 8 --tp 8 --pp 1 --micro-batch 1 \
		--global-batch 8 --trace "$O/$t"
	run_bad 2 "--trace $O/$t is a" simulate serve $SIM --tp 1 --rate 1 --requests 5 --trace "$O/$t"
	run_bad 2 "--trace $O/$t is a" simulate infer --model resnet-50 --system dgx-a100 --batch 64 --trace "$O/$t"
	[ "$t" = dir ] || run_bad 2 "is not a directory" report --from "$top_srcdir/tests/data/report/sim-train.json" \
		--out "$O/$t"
	[ "$(kind "$O/$t")" = "$before" ] || fail "$t is now of type $(kind "$O/$t"), was $before"
done
[ "$(cat "$O/target")" = target ] || fail "the symlink's target was written"
[ -z "$(ls "$O" | grep '\.tmp')" ] || fail "temporary files left behind: $(ls "$O")"
# a new path and an existing regular file are written; the file keeps its mode
run 0 hw export --out "$O/new.sql"
[ -s "$O/new.sql" ] || fail "hw export --out a new path wrote nothing"
chmod 0640 "$O/new.sql"
run 0 simulate train $SIM --gpus 8 --tp 8 --pp 1 --micro-batch 1 --global-batch 8 --trace "$O/new.sql"
grep -q traceEvents "$O/new.sql" || fail "an existing regular file was not replaced by the trace"
[ "$(stat -c %a "$O/new.sql")" = 640 ] || fail "the replaced file lost its mode: $(stat -c %a "$O/new.sql")"
# a read-only file in a writable folder: refused for a user who may not write it (as root, run
# as nobody when that works here)
as_user=
if [ "$(id -u)" = 0 ]; then
	chmod 0755 "$TMPD"
	chmod 0777 "$O"
	if setpriv --reuid=65534 --regid=65534 --clear-groups "$PARAPLAN" version >/dev/null 2>&1; then
		as_user="setpriv --reuid=65534 --regid=65534 --clear-groups"
	else
		as_user=skip
	fi
fi
if [ "$as_user" != skip ]; then
	echo keep >"$O/ro.sql"
	chmod 0444 "$O/ro.sql"
	$as_user "$PARAPLAN" hw export --out "$O/ro.sql" >"$TMPD/out" 2>"$TMPD/err"
	[ $? = 2 ] || fail "hw export over a read-only file did not exit 2: $(cat "$TMPD/err")"
	grep -qF "may not be written" "$TMPD/err" || fail "read-only file: $(cat "$TMPD/err")"
	[ "$(cat "$O/ro.sql")" = keep ] || fail "a read-only file was replaced"
fi

# ---- 2. strings from files never run in gnuplot, never reach a terminal raw ----------------------
# Every string of every report fixture gets the payload (backquotes, system(), @macro, $datablock,
# quotes, backslashes, newlines, '#', escape sequences, a bidi override, invalid UTF-8).
python3 - "$top_srcdir/tests/data/report" "$TMPD/poison" <<'PY'
import json, os, sys
src, dst = sys.argv[1], sys.argv[2]
payload = ' x`touch PWNED` @m "q\' \\ $data system("touch PWNED2") `touch PWNED3`\n#n\\\n\r\x1b[31m\u202e'
def walk(x):
    items = x.items() if isinstance(x, dict) else enumerate(x) if isinstance(x, list) else []
    for k, v in list(items):
        if isinstance(v, str) and k not in ('kind', 'ph'):
            x[k] = v + payload
        else:
            walk(v)
os.makedirs(dst)
for f in sorted(os.listdir(src)):
    if f.endswith('.json'):
        d = json.load(open(os.path.join(src, f)))
        walk(d)
        # and a byte that is not UTF-8 after every bidi override
        open(os.path.join(dst, f), 'wb').write(json.dumps(d).encode().replace(b'\\u202e', b'\\u202e\xff'))
PY
P=$TMPD/poison
for f in plan-train-h100 plan-train-a100 sim-train serve-r2 plan-serve capacity validate; do
	run 0 report --from "$P/$f.json" --out "$TMPD/rp-$f"
done
run 0 report --from "$P/plan-train-h100.json" --from "$P/plan-train-a100.json" --from "$P/sim-train.json" \
	--trace "$P/sim-train-trace.json" --from "$P/serve-r2.json" --from "$P/serve-r4.json" --from "$P/serve-r8.json" \
	--from "$P/plan-serve.json" --from "$P/capacity.json" --from "$P/validate.json" --out "$TMPD/rp-all"
[ -z "$(find "$TMPD" -name 'PWNED*')" ] || fail "gnuplot ran a command from a document: $(find "$TMPD" -name 'PWNED*')"
# nothing raw in what the report wrote for people and programs: no ESC, valid UTF-8
python3 - $(find "$TMPD"/rp-* -name '*.md' -o -name '*.html' -o -name '*.csv' -o -name '*.gp' -o -name '*.dat') <<'PY' ||
import sys
bad = 0
for f in sys.argv[1:]:
    b = open(f, 'rb').read()
    try:
        b.decode('utf-8')
        assert b'\x1b' not in b and b'\xc2\x9b' not in b and '\u202e'.encode() not in b
    except (UnicodeDecodeError, AssertionError):
        print("%s holds an escape sequence or invalid UTF-8" % f, file=sys.stderr)
        bad += 1
sys.exit(1 if bad else 0)
PY
	fail "a report file holds an escape sequence or invalid UTF-8"
# and the same names on the terminal and in --json: printable (a model file with such a name is
# refused outright; the database and other documents are printed through one filter)
python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
d['name'] = 'm\x1b[31mred\u202e\n'
json.dump(d, open(sys.argv[2], 'w'))
" "$top_srcdir/models/catalog/llama-3-8b.json" "$TMPD/esc-model.json"
run_bad 1 '"name" must be printable UTF-8 text (no control characters), got "m\x1b[31mred\u202e\x0a"' \
	model show "$TMPD/esc-model.json"
run 0 report --from "$P/sim-train.json" --out "$TMPD/rp-tty"
for f in out err; do
	python3 -c "
import sys
b = open(sys.argv[1], 'rb').read()
b.decode('utf-8')
assert b'\x1b' not in b and '\u202e'.encode() not in b
" "$TMPD/$f" || fail "report printed an escape sequence or invalid UTF-8 on std$f"
done

# ---- 3, 4. a database from outside: unknown schema versions and damaged pages -------------------
D=$TMPD/db
mkdir "$D"
PARAPLAN_DB="$D/fresh.db" "$PARAPLAN" hw list >/dev/null 2>&1 || fail "cannot make a fresh database"
for v in -1 -3 -100000 -2147483648 2147483647; do
	cp "$D/fresh.db" "$D/v.db"
	python3 -c "
import sqlite3, sys
c = sqlite3.connect(sys.argv[1]); c.execute('PRAGMA user_version = %d' % int(sys.argv[2])); c.commit()
" "$D/v.db" "$v"
	sum=$(cksum <"$D/v.db")
	for cmd in "hw list" "hw export" "import nccl-tests --system dgx-h100 $top_srcdir/tests/data/nccl-tests-samples.txt"; do
		run_bad 1 "schema version $v " $cmd --db "$D/v.db"
	done
	[ "$(cksum <"$D/v.db")" = "$sum" ] || fail "user_version $v: the file was changed"
	[ ! -e "$D/v.db-journal" ] || fail "user_version $v: a journal was left"
done
# 8 KiB of garbage in the middle of a fresh database: said plainly, with the path, nothing written
cp "$D/fresh.db" "$D/dmg.db"
python3 -c "
import sys
f = open(sys.argv[1], 'r+b'); n = f.seek(0, 2); f.seek(n // 2); f.write(bytes((i * 151 + 3) & 255 for i in range(8192)))
" "$D/dmg.db"
sum=$(cksum <"$D/dmg.db")
run_bad 1 "$D/dmg.db: the hardware database file is damaged" hw list --db "$D/dmg.db"
run_bad 1 "$D/dmg.db: the hardware database file is damaged" import nccl-tests --system dgx-h100 \
	"$top_srcdir/tests/data/nccl-tests-samples.txt" --db "$D/dmg.db"
[ "$(cksum <"$D/dmg.db")" = "$sum" ] || fail "a damaged database was written to"
# a database path that is a device or a FIFO: refused, no journal beside it
mkfifo "$D/fifo.db"
PARAPLAN_DB="$D/fifo.db" run_bad 2 "fifo.db: is a FIFO, expected a database file" hw list
[ ! -e "$D/fifo.db-journal" ] || fail "a journal beside a FIFO"
# a FIFO read as a model, a plan, a CSV or a trace (or named as the model inside a plan): refused
# at once, not waited on for a writer
run_bad 1 "fifo.db: is a FIFO, expected a regular file" model show "$D/fifo.db"
run_bad 2 "fifo.db: is a FIFO, expected a regular file" replay --plan "$D/fifo.db" --dry-run
run_bad 1 "fifo.db: is a FIFO, expected a regular file" validate --data "$D/fifo.db"
run_bad 1 "fifo.db: is a FIFO, expected a regular file" simulate serve --model llama-3-8b --system dgx-h100 \
	--tp 1 --arrival "trace:$D/fifo.db"
run 0 plan train --model llama-3-8b --system dgx-h100 --gpus 8 --global-batch 64 --json
python3 -c "
import json, sys
d = json.load(open(sys.argv[1])); d['model'] = sys.argv[2]; json.dump(d, open(sys.argv[3], 'w'))" \
	"$TMPD/out" "$D/fifo.db" "$D/fifo-plan.json"
run_bad 2 "fifo.db: is a FIFO, expected a regular file" replay --plan "$D/fifo-plan.json" --dry-run
if [ -e "$O/null" ]; then
	PARAPLAN_DB="$O/null" run_bad 2 "null: is a character device, expected a database file" hw list
	[ ! -e "$O/null-journal" ] || fail "a journal beside a device"
fi

# ---- 5. the engine's clock: refused before it wraps; no MFU above 100%, no negative time ----------
# (the old clock printed an MFU of 151.7% at 262,144 sequences and negative step times at the others)
for mbgb in 16:262144 16:131072 64:1048576 256:4194304; do
	run_bad 1 "the simulated time passed 53 days" simulate train --model gpt-1t --system dgx-h100 --gpus 1 --tp 1 \
		--pp 1 --micro-batch ${mbgb%:*} --global-batch ${mbgb#*:} --seq 8192 --json
done
# what is printed is possible: a long but representable step (14.5 hours)
run 0 simulate train --model gpt-1t --system dgx-h100 --gpus 1 --tp 1 --pp 1 --micro-batch 1 --global-batch 2048 --json
json_check "$TMPD/out" "d['step_time_s'] > 3600 and 0 < d['mfu'] <= 1 and d['hfu'] <= 1"

# ---- 6. nccl-tests rows outside what the system can do ---------------------------------------------
# all_reduce on 8 ranks of dgx-h100 (500 GB/s per GPU each way): 1e300 us was "consistent" at
# 0.00 GB/s; 18,790 GB/s of bus bandwidth is more than NVLink and the NICs carry
nccl_row() { # TIME_US ALGBW BUSBW
	printf '# Collective test starting: all_reduce_perf\n# nThread 1 nGpus 8\n#\n'
	printf '#  size count type redop root time algbw busbw #wrong time algbw busbw #wrong\n'
	printf '   1073741824  268435456  float  sum  -1  %s  %s  %s  0  %s  %s  %s  0\n' "$1" "$2" "$3" "$1" "$2" "$3"
}
nccl_row 1e300 0.00 0.00 >"$TMPD/slow.log"
run_bad 1 "slow.log:5: out-of-place all_reduce of 1073741824 B in 1e+300 us is slower than dgx-h100's links" \
	import nccl-tests --system dgx-h100 "$TMPD/slow.log"
nccl_row 100.0 10737.42 18790.48 >"$TMPD/fast.log"
run_bad 1 "fast.log:5: out-of-place all_reduce of 1073741824 B at 1.879e+04 GB/s bus bandwidth" \
	import nccl-tests --system dgx-h100 "$TMPD/fast.log"
printf '# Collective test starting: all_reduce_perf\n# nThread 1 nGpus 8\n#\n#  size count type redop root time algbw busbw #wrong time algbw busbw #wrong\n           0             0     float     sum      -1     0.10    0.00    0.00      0     0.09    0.00    0.00      0\n' >"$TMPD/zeros.log"
run_bad 1 "zeros.log: nothing to import: all 2 half-rows were skipped" import nccl-tests --system dgx-h100 "$TMPD/zeros.log"

# ---- 10. a large device list is linear; /dev/zero is refused before it is read -------------------
python3 - "$TMPD/ranks.log" <<'PY'
import sys
with open(sys.argv[1], 'w') as f:
    f.write('# Collective test starting: all_reduce_perf\n# nThread 1 nGpus 1\n#\n# Using devices\n')
    for r in range(400000):
        f.write('#  Rank %6d Group  0 Pid %6d on node%05d device  %d [0x%02x] NVIDIA H100 80GB HBM3\n' % (r, r, r // 8, r % 8, r % 8))
    f.write('#\n#  size count type redop root time algbw busbw #wrong time algbw busbw #wrong\n')
    f.write('   8  2  float  sum  -1  100.0  0.00  0.00  0  100.0  0.00  0.00  0\n')
PY
# (a linear search of the hosts took 61 s)
timeout 20 "$PARAPLAN" import nccl-tests --system dgx-h100 "$TMPD/ranks.log" --json >"$TMPD/out" 2>"$TMPD/err" ||
	fail "400,000 ranks not imported in 20 s: $(cat "$TMPD/err")"
json_check "$TMPD/out" "d['blocks'][0]['ranks'] == 400000 and d['blocks'][0]['nodes'] == 50000"
# /dev/zero is refused before its first read, as a device, in a few MB (it once buffered 1 GiB):
# the peak resident memory of each command, from getrusage
for cmd in "import nccl-tests --system dgx-h100 /dev/zero" "model show /dev/zero" \
	"report --from /dev/zero --out $TMPD/zero-report" "validate --data /dev/zero"; do
	python3 - "$PARAPLAN" $cmd >"$TMPD/out" 2>"$TMPD/err" <<'PY'
import resource, subprocess, sys
def rss(args):
    # peak resident memory (MB) of one run, in a child of its own so that runs do not mix
    code = ("import resource,subprocess,sys; p = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, "
            "stderr=subprocess.PIPE, timeout=30); sys.stderr.write(p.stderr.decode(errors='replace')); "
            "print(p.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)")
    out = subprocess.run([sys.executable, "-c", code] + args, stdout=subprocess.PIPE, timeout=60).stdout.split()
    return int(out[0]), float(out[1])
_, base = rss([sys.argv[1], "version"])
code, mb = rss(sys.argv[1:])
assert code == 1, "exit %d" % code
assert mb - base < 64, "%.0f MB resident, %.0f MB more than 'paraplan version'" % (mb, mb - base)
PY
	[ $? = 0 ] || fail "$cmd: $(tail -3 "$TMPD/err")"
	grep -qF "/dev/zero: is a character device, expected a regular file" "$TMPD/err" || fail "$cmd: $(cat "$TMPD/err")"
done

# ---- 7. a report of impossible numbers is refused; --max-mape over no rows fails ------------------
R=$top_srcdir/tests/data/report
for change in "step_time_s=-1" "step_time_s=0" "tokens_per_s=-5" "mfu=1.8"; do
	python3 -c "
import json, sys
d = json.load(open(sys.argv[1])); k, v = sys.argv[2].split('='); d[k] = float(v)
json.dump(d, open(sys.argv[3], 'w'))
" "$R/sim-train.json" "$change" "$TMPD/impossible.json"
	run_bad 1 "impossible.json: \"/${change%=*}\" must be" report --from "$TMPD/impossible.json" --out "$TMPD/rep-impossible"
	[ ! -e "$TMPD/rep-impossible" ] || fail "$change: a report was written"
done
python3 -c "
import json, sys
d = json.load(open(sys.argv[1])); del d['winner']; json.dump(d, open(sys.argv[2], 'w'))
" "$R/plan-train-h100.json" "$TMPD/nowinner.json"
run_bad 1 'nowinner.json: "/winner" is missing' report --from "$TMPD/nowinner.json" --out "$TMPD/rep-nowinner"
# (the table of skipped rows is still printed: it says why)
run 1 validate --data "$top_srcdir/tests/data/bad/validate/all-skipped.csv" --max-mape 1
expect_err "(or no row was predicted)"
expect_out "0 of 5 rows predicted"
# the straggler's message names the flag that exists
run_bad 2 "--straggler RANK:FACTOR: the rank (99) must be below --gpus (8)" simulate train --model llama-3-8b \
	--system dgx-h100 --gpus 8 --tp 8 --pp 1 --micro-batch 1 --global-batch 8 --full --straggler 99:2

# ---- 9. simulate serve's memory does not grow with the output tokens ------------------------------
# one request in flight at a time, 1,000 tokens each: an ITL sample per token; 1.5 and 6 million
# tokens (the ITL samples alone took about 20 bytes a token: 90 MB more)
python3 - "$PARAPLAN" <<'PY' || fail "simulate serve's memory grows with its output tokens"
import resource, subprocess, sys
def rss(n):
    code = ("import resource,subprocess,sys; p = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, timeout=300); "
            "print(p.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)")
    args = [sys.argv[1], "simulate", "serve", "--model", "llama-3-8b", "--system", "dgx-h100", "--tp", "1",
            "--rate", "0.01", "--requests", str(n), "--output-len", "1000", "--prompt-len", "100"]
    out = subprocess.run([sys.executable, "-c", code] + args, stdout=subprocess.PIPE, timeout=600).stdout.split()
    assert out[0] == b"0", "exit " + out[0].decode()
    return float(out[1])
small, big = rss(1500), rss(6000)
print("resident: %.0f MB for 1.5M tokens, %.0f MB for 6M" % (small, big), file=sys.stderr)
assert big - small < 16, "%.0f MB more for 4.5 million more tokens" % (big - small)
PY

# ---- 11. a scaling curve says which counts have no layout, and is a result when others do ---------
# (--gpus 1..100000 ended "no layout fits" with exit 1 although 2 to 65,536 GPUs plan fine; the
# whole range to 2^24 took 172 s and 4 GB)
timeout 120 "$PARAPLAN" plan train --model llama-3-8b --system dgx-h100 --gpus 1..16777216 --global-batch 512 --json \
	>"$TMPD/out" 2>"$TMPD/err"
[ $? = 0 ] || fail "plan train --gpus 1..16777216: $(tail -3 "$TMPD/err")"
keep_json plan train --gpus 1..16777216
grep -qF "notice: no layout on some of the 25 GPU counts (1, 524288, 1048576, 2097152, 4194304, 8388608, 16777216 GPUs)" \
	"$TMPD/err" || fail "the counts without a layout are not named: $(tail -2 "$TMPD/err")"
json_check "$TMPD/out" "[len(c['candidates']) > 0 for c in d['counts']] == [False] + [True] * 18 + [False] * 6"
# a count whose layouts fit but cannot be simulated says so, not that nothing fits
run 1 plan train --model llama-3-8b --system dgx-h100 --gpus 16 --global-batch 16777216
expect_out "no layout: those that fit could not be simulated: 1048576 micro-batches per step is more than the simulator handles"

# ---- smaller: names from a database, empty list items, byte order marks ---------------------------
# a GPU and a system whose names carry an escape sequence, a bidi override and a byte that is not
# UTF-8: the table and --json print their printable form
cp "$D/fresh.db" "$D/names.db"
python3 - "$D/names.db" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
cols = [r[1] for r in c.execute("PRAGMA table_info(system)")]
row = list(c.execute("SELECT * FROM system WHERE name = 'dgx-h100'").fetchone())
i = cols.index('name')
row[i] = b'evil\x1b[31m\xe2\x80\xae\xff'  # stored as TEXT (CAST) with its bytes as they are
marks = ",".join("CAST(? AS TEXT)" if k == i else "?" for k in range(len(cols)))
c.execute("INSERT INTO system(%s) VALUES(%s)" % (",".join(cols), marks), row)
c.commit()
PY
for j in "" --json; do
	run 0 hw list $j --db "$D/names.db"
	python3 -c "
import sys
b = open(sys.argv[1], 'rb').read()
b.decode('utf-8')
assert b'\x1b' not in b and '\u202e'.encode() not in b, 'raw'
assert b'evil\\\\x1b[31m\\\\u202e\\\\xff' in b or b'evil\\\\\\\\x1b[31m\\\\\\\\u202e\\\\\\\\xff' in b, 'escaped form missing'
" "$TMPD/out" || fail "hw list $j printed a name from the database raw"
done
# empty items of a list flag
run_bad 2 '--systems must be a comma list' plan train --model llama-3-8b --tokens 1T --days 30 --global-batch 512 --systems ,
run_bad 2 '--dtype must be a comma list' plan train --model llama-3-8b --system dgx-h100 --gpus 8 --global-batch 64 \
	--dtype ,,,
# a byte order mark (spreadsheets write one) is read by every text reader, as by the model reader
printf '\357\273\277arrival_s,prompt_tokens,output_tokens\n0,10,10\n1,10,10\n' >"$TMPD/bom.csv"
run 0 simulate serve --model llama-3-8b --system dgx-h100 --tp 1 --arrival "trace:$TMPD/bom.csv" --json
json_check "$TMPD/out" "d['simulation']['completed'] == 2"
{ printf '\357\273\277'; cat "$top_srcdir/tests/data/bad/validate/absurd-values.csv"; } >"$TMPD/bom-validate.csv"
run 0 validate --data "$TMPD/bom-validate.csv" --json
{ printf '\357\273\277'; cat "$top_srcdir/models/catalog/llama-3-8b.json"; } >"$TMPD/bom-model.json"
run 0 model show "$TMPD/bom-model.json"
{ printf '\357\273\277'; nccl_row 2000.0 536.87 939.52; } >"$TMPD/bom-nccl.log"
run 0 import nccl-tests --system dgx-h100 "$TMPD/bom-nccl.log"

finish
