#!/bin/sh
# Faults of the hardware database: a schema from a newer paraplan, a corrupt or truncated file,
# a read-only file, a database locked by another process's write transaction, a full disk (a
# file size limit), hostile names.  Each gives a clear error; nothing written before is lost;
# the file opens again once the fault is gone.
. "$top_srcdir/tests/lib.sh"
DB=$TMPD/hw.db
run 0 hw list --db "$DB"

# sql FILE SQL... : runs statements with Python's sqlite3 (another SQLite client than paraplan)
sql() {
	python3 - "$@" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1], isolation_level=None)
for s in sys.argv[2:]:
    for row in c.execute(s):
        print(*row)
PY
}
same() { [ "$(cksum <"$1")" = "$2" ] || fail "$1 changed: $3"; }

# ---- a schema from a newer paraplan: refused, untouched, fine once it is this version again --
cp "$DB" "$TMPD/new.db"
version=$(sql "$DB" "PRAGMA user_version")
sql "$TMPD/new.db" "PRAGMA user_version = 99"
sum=$(cksum <"$TMPD/new.db")
run 1 hw list --db "$TMPD/new.db"
expect_err "new.db: schema version 99 was written by a newer paraplan"
expect_no_out
run 1 simulate train --model llama-3-8b --system dgx-h100 --gpus 8 --tp 8 --pp 1 --micro-batch 1 \
	--global-batch 8 --db "$TMPD/new.db"
expect_err "newer paraplan"
same "$TMPD/new.db" "$sum" "a newer schema was modified"
sql "$TMPD/new.db" "PRAGMA user_version = $version"
run 0 hw show dgx-h100 --db "$TMPD/new.db"

# ---- a corrupt file and a truncated one: an error naming the file, the bytes left alone -------
python3 - "$DB" "$TMPD/corrupt.db" "$TMPD/truncated.db" <<'PY'
import sys
data = bytearray(open(sys.argv[1], "rb").read())
bad = data[:]
bad[8192:len(bad) - 8192] = b"\x5a" * (len(bad) - 16384)
open(sys.argv[2], "wb").write(bad)
open(sys.argv[3], "wb").write(data[:len(data) // 2])
PY
for f in corrupt truncated; do
	sum=$(cksum <"$TMPD/$f.db")
	for cmd in "hw list" "hw show dgx-h100" "hw export"; do
		# shellcheck disable=SC2086
		run 1 $cmd --db "$TMPD/$f.db"
		expect_err "$f.db"
		expect_no_out
	done
	same "$TMPD/$f.db" "$sum" "a damaged database was written to"
done

# ---- read-only: reads work, a write says why it cannot; the file is left as it was ---------------
# Root ignores file modes, so as root the commands run as nobody (setpriv), when that works here.
mkdir "$TMPD/ro" && cp "$DB" "$TMPD/ro/ro.db"
chmod 0444 "$TMPD/ro/ro.db"
chmod 0555 "$TMPD/ro"
as_user=
if [ "$(id -u)" = 0 ]; then
	chmod 0755 "$TMPD"
	if setpriv --reuid=65534 --regid=65534 --clear-groups "$PARAPLAN" version >/dev/null 2>&1; then
		as_user="setpriv --reuid=65534 --regid=65534 --clear-groups"
	else
		echo "note: running as root and cannot drop privileges: read-only file test skipped" >&2
		as_user=skip
	fi
fi
if [ "$as_user" != skip ]; then
	sum=$(cksum <"$TMPD/ro/ro.db")
	$as_user "$PARAPLAN" hw show dgx-h100 --db "$TMPD/ro/ro.db" >"$TMPD/out" 2>"$TMPD/err" ||
		fail "reading a read-only database: $(cat "$TMPD/err")"
	grep -q "NVIDIA H100" "$TMPD/out" || fail "reading a read-only database printed no figures"
	$as_user "$PARAPLAN" validate --set serving --fit --engine vllm --max-evals 2 --save --db "$TMPD/ro/ro.db" \
		>"$TMPD/out" 2>"$TMPD/err"
	[ $? = 1 ] || fail "fitting into a read-only database did not exit 1"
	grep -qF "read-only" "$TMPD/err" || fail "fitting into a read-only database: $(cat "$TMPD/err")"
	same "$TMPD/ro/ro.db" "$sum" "a read-only database was written to"
fi
chmod 0755 "$TMPD/ro"

# ---- locked: another process holds a write transaction ------------------------------------------
# hold SECONDS : a second client takes the write lock, writes a row, and commits after SECONDS
hold() {
	rm -f "$TMPD/held"
	python3 - "$DB" "$1" "$TMPD/held" <<'PY' &
import sqlite3, sys, time
c = sqlite3.connect(sys.argv[1], isolation_level=None)
c.execute("BEGIN IMMEDIATE")
c.execute("INSERT OR REPLACE INTO meta(key, value) VALUES('holder', ?)", (sys.argv[2],))
open(sys.argv[3], "w").close()
time.sleep(float(sys.argv[2]))
c.execute("COMMIT")
PY
	holder=$!
	i=0
	while [ ! -e "$TMPD/held" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	[ -e "$TMPD/held" ] || fail "the lock holder did not start"
}
FIT="validate --set serving --fit --engine vllm --max-evals 2 --save --db $DB"
# held longer than paraplan waits (5 s): a clear error, the other writer's row intact
hold 8
# shellcheck disable=SC2086
run 1 $FIT
expect_err "database is locked by another process (try again)"
expect_no_out
wait $holder
[ "$(sql "$DB" "SELECT value FROM meta WHERE key = 'holder'")" = 8 ] || fail "the other writer's row was lost"
[ "$(sql "$DB" "SELECT count(*) FROM param WHERE subject = 'vllm' AND origin = 'fitted' AND shipped = 0")" = 0 ] ||
	fail "a write that failed on the lock left rows"
# held for a moment: paraplan waits for it, then both writes land
hold 1
# shellcheck disable=SC2086
run 0 $FIT
# (the fit lowers its pseudo-Huber loss, which need not lower the MAPE it reports beside it)
json_check "$TMPD/out" "d['fits'][0]['rows'] >= 1 and all(math.isfinite(v) for v in d['fits'][0]['parameters'].values())"
wait $holder
[ "$(sql "$DB" "SELECT value FROM meta WHERE key = 'holder'")" = 1 ] || fail "the other writer's row was lost"
[ "$(sql "$DB" "SELECT count(*) FROM param WHERE subject = 'vllm' AND origin = 'fitted' AND shipped = 0")" = 2 ] ||
	fail "the fit that waited for the lock did not land"

# two writers at once: both finish, the rows are one writer's or the other's, never a mix
cp "$DB" "$TMPD/both.db"
"$PARAPLAN" validate --set serving --fit --engine vllm --max-evals 4 --save --db "$TMPD/both.db" >"$TMPD/a.json" 2>&1 &
a=$!
"$PARAPLAN" validate --set serving --fit --engine vllm --max-evals 8 --save --db "$TMPD/both.db" >"$TMPD/b.json" 2>&1 &
b=$!
wait $a || fail "concurrent writer A failed: $(cat "$TMPD/a.json")"
wait $b || fail "concurrent writer B failed: $(cat "$TMPD/b.json")"
python3 - "$TMPD/both.db" "$TMPD/a.json" "$TMPD/b.json" <<'PY' || fail "concurrent writers left torn rows"
import json, sqlite3, sys
rows = dict(sqlite3.connect(sys.argv[1]).execute(
    "SELECT key, value FROM param WHERE subject = 'vllm' AND origin = 'fitted' AND shipped = 0").fetchall())
fits = [json.load(open(f))["fits"][0]["parameters"] for f in sys.argv[2:]]
assert any(all(abs(rows[k] - v) <= 1e-12 * abs(v) for k, v in p.items()) for p in fits), (rows, fits)
PY

# ---- a full disk: a file size limit stands in (SIGXFSZ ignored, so writes fail with EFBIG) -----
(
	ulimit -f 64
	trap '' XFSZ
	"$PARAPLAN" hw list --db "$TMPD/full.db" >"$TMPD/out" 2>"$TMPD/err"
	echo $? >"$TMPD/status"
)
[ "$(cat "$TMPD/status")" = 1 ] || fail "creating a database on a full disk exited $(cat "$TMPD/status")"
grep -qF "full.db: " "$TMPD/err" || fail "full disk: $(cat "$TMPD/err")"
[ ! -e "$TMPD/full.db" ] || fail "a half-created database was left behind"
[ ! -e "$TMPD/full.db-journal" ] || fail "a journal was left behind"
# an existing database whose defaults need refreshing, on a disk too full for the journal
cp "$DB" "$TMPD/stale.db"
sql "$TMPD/stale.db" "UPDATE meta SET value = 'old' WHERE key = 'defaults_hash'" \
	"INSERT INTO gpu(name, vendor, arch, memory_bytes, hbm_gbps, source) VALUES('lab-gpu', 'x', 'y', 1, 1, 'me')"
sum=$(cksum <"$TMPD/stale.db")
(
	ulimit -f 64
	trap '' XFSZ
	"$PARAPLAN" hw list --db "$TMPD/stale.db" >"$TMPD/out" 2>"$TMPD/err"
	echo $? >"$TMPD/status"
)
[ "$(cat "$TMPD/status")" = 1 ] || fail "refreshing on a full disk exited $(cat "$TMPD/status")"
grep -qF "stale.db: " "$TMPD/err" || fail "refresh on a full disk: $(cat "$TMPD/err")"
same "$TMPD/stale.db" "$sum" "a refresh that failed changed the file"
run 0 hw list --db "$TMPD/stale.db"
[ "$(sql "$TMPD/stale.db" "SELECT value FROM meta WHERE key = 'defaults_hash'")" != old ] ||
	fail "the defaults were not refreshed once there was room"
[ "$(sql "$TMPD/stale.db" "SELECT count(*) FROM gpu WHERE name = 'lab-gpu'")" = 1 ] || fail "the user's GPU was lost"

# ---- hostile names travel as bound parameters ----------------------------------------------------
EVIL="x'); DROP TABLE gpu; --"
n=$(sql "$DB" "SELECT count(*) FROM gpu")
run 2 hw show "$EVIL" --db "$DB"
expect_err "unknown GPU or system \"$EVIL\""
run 2 simulate train --model llama-3-8b --system "$EVIL" --gpus 8 --tp 8 --pp 1 --micro-batch 1 --global-batch 8 \
	--db "$DB"
expect_err "unknown system \"$EVIL\""
run 2 plan train --model llama-3-8b --system "$EVIL" --gpus 8 --global-batch 8 --db "$DB"
expect_err "unknown system \"$EVIL\""
run 2 simulate serve --model llama-3-8b --system "$EVIL" --tp 1 --rate 1 --db "$DB"
expect_err "unknown system \"$EVIL\""
"$PARAPLAN" validate --set serving --fit --engine "$EVIL" --save --db "$DB" >/dev/null 2>&1
[ "$(sql "$DB" "SELECT count(*) FROM gpu")" = "$n" ] || fail "the gpu table changed"
run 0 hw show h100-sxm --db "$DB"
finish
