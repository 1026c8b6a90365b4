#!/bin/sh
# run.sh -- build the libFuzzer harnesses and run each fuzz target for a while.
#
#   tests/fuzz/run.sh [-s SRCDIR] [-b BUILDDIR] [-j JOBS] [SECONDS [TARGET...]]
#
# SRCDIR is a source tree that has not been configured in place (make fuzz passes a copy of the
# distributed sources, variant-src); BUILDDIR (default build-fuzz) is configured there with
# clang, -fsanitize=fuzzer-no-link,address,undefined, and keeps what the fuzzers learn in
# BUILDDIR/fuzz-corpus/<target>/ from run to run.  Each target runs SECONDS (default 20) seeded
# with tests/fuzz/corpus/<target>/ and tests/fuzz/regress/<target>/; a crash, a leak, a
# sanitizer report, a timeout (FUZZ_TIMEOUT, default 10 s per input) or more than FUZZ_RSS_MB
# (default 2048) of memory fails the run and leaves the input in BUILDDIR/fuzz-crashes/.
# JOBS > 1 runs that many fuzzing processes per target (libFuzzer -fork).
# Prints one line per target: executions, corpus size, result.  Exit status: 0 all clean,
# 1 a target failed, 77 no clang with libFuzzer here (install clang and libclang-rt-dev:
# ./bootstrap does).
set -u
src=
build=build-fuzz
jobs=1
while [ $# -gt 0 ]; do
	case $1 in
	-s) src=$2; shift 2 ;;
	-b) build=$2; shift 2 ;;
	-j) jobs=$2; shift 2 ;;
	-h|--help) sed -n '2,20p' "$0"; exit 0 ;;
	*) break ;;
	esac
done
secs=${1:-20}
[ $# -gt 0 ] && shift
[ -n "$src" ] || src=$(cd "$(dirname "$0")/../.." && pwd)
src=$(cd "$src" && pwd)
CC_FUZZ=${CC_FUZZ:-clang}

if [ -f "$src/config.status" ]; then
	echo "run.sh: $src is configured in place; give a clean copy with -s (make fuzz does)" >&2
	exit 1
fi
# Can this compiler build a fuzzer at all?
probe=$(mktemp -d "${TMPDIR:-/tmp}/fuzzprobe.XXXXXX")
printf '#include <stdint.h>\n#include <stddef.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }\n' > "$probe/p.c"
if ! "$CC_FUZZ" -fsanitize=fuzzer,address,undefined "$probe/p.c" -o "$probe/p" >/dev/null 2>&1; then
	rm -rf "$probe"
	echo "run.sh: $CC_FUZZ cannot build a libFuzzer program: install clang and libclang-rt-dev (./bootstrap does)" >&2
	exit 77
fi
rm -rf "$probe"

mkdir -p "$build" || exit 1
build=$(cd "$build" && pwd)
# A Makefile older than the sources' Makefile.in or configure: configure afresh (a Makefile.am
# that gained files makes config.status fail on the old dependency fragments), keeping what the
# fuzzers learned.
if [ -f "$build/Makefile" ] && { [ "$src/Makefile.in" -nt "$build/Makefile" ] || [ "$src/configure" -nt "$build/Makefile" ]; }; then
	find "$build" -mindepth 1 -maxdepth 1 ! -name fuzz-corpus ! -name fuzz-crashes -exec rm -rf {} +
fi
san="-O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all"
if [ ! -f "$build/Makefile" ]; then
	(cd "$build" && "$src/configure" -q CC="$CC_FUZZ" CFLAGS="$san" LDFLAGS="-fsanitize=address,undefined") || exit 1
fi
make -s -C "$build" fuzz-targets || exit 1

# The targets to run: those named, else all that replay lists.
if [ $# -gt 0 ]; then targets=$*; else targets=$("$build/tests/fuzz/replay" --list); fi
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1}"
status=0
printf '%-20s %12s %8s  %s\n' target executions corpus result
for t in $targets; do
	bin=$build/tests/fuzz/fuzz-$t
	[ -x "$bin" ] || { echo "run.sh: no fuzzer for target $t" >&2; status=1; continue; }
	mkdir -p "$build/fuzz-corpus/$t" "$build/fuzz-crashes"
	dict=
	[ -f "$src/tests/fuzz/dict/$t.dict" ] && dict="-dict=$src/tests/fuzz/dict/$t.dict"
	seeds="$src/tests/fuzz/corpus/$t"
	[ -d "$src/tests/fuzz/regress/$t" ] && seeds="$seeds $src/tests/fuzz/regress/$t"
	par=
	[ "$jobs" -gt 1 ] && par="-fork=$jobs -ignore_crashes=0"
	log=$build/fuzz-$t.log
	# shellcheck disable=SC2086
	"$bin" -max_total_time="$secs" -timeout="${FUZZ_TIMEOUT:-10}" -rss_limit_mb="${FUZZ_RSS_MB:-2048}" \
		-max_len="${FUZZ_MAX_LEN:-8192}" -print_final_stats=1 $dict $par \
		-artifact_prefix="$build/fuzz-crashes/$t-" "$build/fuzz-corpus/$t" $seeds >"$log" 2>&1
	rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	[ -n "$execs" ] || execs=$(sed -n 's/.*#\([0-9][0-9]*\).*DONE.*/\1/p' "$log" | tail -1)
	ncorp=$(find "$build/fuzz-corpus/$t" -type f | wc -l)
	if [ $rc -eq 0 ]; then
		result=ok
	else
		result="FAILED (exit $rc): see $log and $build/fuzz-crashes/"
		status=1
	fi
	printf '%-20s %12s %8s  %s\n' "$t" "${execs:-?}" "$ncorp" "$result"
	if [ $rc -ne 0 ]; then
		grep -m 5 -E 'ERROR|runtime error|fuzz check failed|Test unit written' "$log" | sed 's/^/    /' >&2
	fi
done
exit $status
