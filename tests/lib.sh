# tests/lib.sh -- helpers for the command-line tests (sourced).
# $PARAPLAN is the binary under test; every test runs with an in-memory database unless it
# sets PARAPLAN_DB itself, and writes only under $TMPD (in the build tree).
set -u
: "${PARAPLAN:=./paraplan}"
: "${top_srcdir:=.}"
TMPD=$(mktemp -d "${TMPDIR:-/tmp}/paraplan-test.XXXXXX")
trap 'rm -rf "$TMPD"' EXIT
failures=0

fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

# run EXPECTED_STATUS CMD... : runs paraplan, keeps stdout in $TMPD/out and stderr in $TMPD/err
run() {
	want=$1; shift
	"$PARAPLAN" "$@" >"$TMPD/out" 2>"$TMPD/err"
	got=$?
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

finish() {
	if [ "$failures" -ne 0 ]; then
		echo "$failures failure(s)" >&2
		exit 1
	fi
	exit 0
}
