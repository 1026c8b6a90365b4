# examples/lib.sh -- sourced by the examples (run them from the repository root, with the
# built paraplan on PATH: PATH=$PWD:$PATH sh examples/01-mnist-dp.sh).
#
# ask NAME ARGS... runs 'paraplan ARGS' and prints its answer.  With EXAMPLES_JSON=DIR set
# (the tests set it) it runs 'paraplan ARGS --json' instead and keeps the document in
# DIR/NAME.json, so that a test can check the answer's shape and bounds.
set -eu
ask() {
	name=$1
	shift
	if [ -n "${EXAMPLES_JSON:-}" ]; then
		paraplan "$@" --json >"$EXAMPLES_JSON/$name.json"
	else
		printf '\n$ paraplan %s\n' "$*"
		paraplan "$@"
	fi
}
say() {
	[ -n "${EXAMPLES_JSON:-}" ] || printf '\n%s\n' "$*"
}
