# tests/lib.sh -- helpers for the command-line tests (sourced).
# $PARAPLAN is the binary under test; every test runs with an in-memory database unless it
# sets PARAPLAN_DB itself, and writes only under $TMPD (in the build tree).
set -u
: "${PARAPLAN:=./paraplan}"
: "${top_srcdir:=.}"
TMPD=$(mktemp -d "${TMPDIR:-/tmp}/paraplan-test.XXXXXX")
trap 'rm -rf "$TMPD"' EXIT
failures=0
njson=0
mkdir "$TMPD/json"

# keep_json ARGS... : keeps the last run's stdout when it is a JSON document, for the scan of
# every number at finish
keep_json() {
	case $(head -c 1 "$TMPD/out" 2>/dev/null) in
	'{' | '[')
		njson=$((njson + 1))
		cp "$TMPD/out" "$TMPD/json/$njson.json"
		printf '%s\n' "$*" >"$TMPD/json/$njson.cmd"
		;;
	esac
}

fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

# run EXPECTED_STATUS CMD... : runs paraplan, keeps stdout in $TMPD/out and stderr in $TMPD/err
run() {
	want=$1; shift
	"$PARAPLAN" "$@" >"$TMPD/out" 2>"$TMPD/err"
	got=$?
	keep_json "$@"
	if [ "$got" != "$want" ]; then
		fail "paraplan $* exited $got, expected $want"
		sed 's/^/  stderr: /' "$TMPD/err" >&2
	fi
}

# expect_out TEXT / expect_err TEXT : fixed-string match in the last run's stdout / stderr
expect_out() { grep -qF -- "$1" "$TMPD/out" || fail "stdout lacks \"$1\""; }
expect_err() { grep -qF -- "$1" "$TMPD/err" || fail "stderr lacks \"$1\""; }
expect_no_out() { [ ! -s "$TMPD/out" ] || fail "stdout is not empty"; }

# json_check FILE PYEXPR : the JSON file parses and the Python expression (over d) is true
json_check() {
	python3 - "$1" "$2" <<'PY' || fail "json check failed: $2"
import json, math, sys
d = json.load(open(sys.argv[1]))
def finite(x):
    if isinstance(x, float): return math.isfinite(x)
    if isinstance(x, dict): return all(finite(v) for v in x.values())
    if isinstance(x, list): return all(finite(v) for v in x)
    return True
assert finite(d), "non-finite number"
assert eval(sys.argv[2]), sys.argv[2]
PY
}

# Every number of every JSON document the script's commands printed is finite.  cJSON prints
# NaN and infinities as null, and paraplan never prints a null of its own, so a null is a
# number gone wrong; the message names the command and the field.
scan_json() {
	[ "$njson" -gt 0 ] || return 0
	python3 - "$TMPD/json" <<'PY' || fail "a JSON output holds a non-finite number (see above)"
import json, math, os, sys
d = sys.argv[1]
bad = 0
def walk(x, path, cmd):
    global bad
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        print("non-finite number at %s in the output of: paraplan %s" % (path or "/", cmd), file=sys.stderr)
        bad += 1
    elif isinstance(x, dict):
        for k, v in x.items():
            walk(v, path + "/" + k, cmd)
    elif isinstance(x, list):
        for i, v in enumerate(x):
            walk(v, "%s[%d]" % (path, i), cmd)
n = 0
for f in sorted(os.listdir(d)):
    if not f.endswith(".json"):
        continue
    cmd = open(os.path.join(d, f[:-5] + ".cmd")).read().strip()
    try:
        doc = json.load(open(os.path.join(d, f)), parse_constant=lambda c: float(c))
    except ValueError:
        continue  # a table that happens to start with a bracket
    n += 1
    walk(doc, "", cmd)
sys.exit(1 if bad else 0)
PY
}

finish() {
	scan_json
	if [ "$failures" -ne 0 ]; then
		echo "$failures failure(s)" >&2
		exit 1
	fi
	exit 0
}
