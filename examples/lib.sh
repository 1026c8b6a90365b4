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
# launch NAME FILE ARGS... runs 'paraplan ARGS', which ends in --export KIND, and writes the
# launch configuration to $EXPORT_DIR/FILE (default paraplan-exports/; in EXAMPLES_JSON, when
# set, as NAME.<FILE's extension>, for the tests to check against the programs' flag lists); it
# prints the ranked table and the file's first lines.
launch() {
	name=$1
	file=$2
	shift 2
	if [ -n "${EXAMPLES_JSON:-}" ]; then
		paraplan "$@" --out "$EXAMPLES_JSON/$name.${file##*.}" >/dev/null
	else
		dir=${EXPORT_DIR:-paraplan-exports}
		mkdir -p "$dir"
		printf '\n$ paraplan %s --out %s/%s\n' "$*" "$dir" "$file"
		paraplan "$@" --out "$dir/$file"
		printf '\n%s/%s (first lines):\n' "$dir" "$file"
		head -n 12 "$dir/$file"
	fi
}
say() {
	[ -n "${EXAMPLES_JSON:-}" ] || printf '\n%s\n' "$*"
}
