/*
 * fuzz.h -- fuzz targets: one function per parser of input that people hand paraplan, fed
 * arbitrary bytes.
 *
 * A target lives in tests/fuzz/fuzz_<name>.c and defines
 *     int fuzz_<name>(const uint8_t *data, size_t size);
 * It parses the bytes (never assuming a terminating NUL) and, when the parser accepts them,
 * checks what came back against the invariants the module's header promises (finite numbers,
 * positive sizes, ordered rows); a broken invariant aborts with FUZZ_CHECK's message.  When the
 * parser refuses the bytes it must say why (a non-empty message).  Targets return 0.
 *
 * Each target is built two ways:
 *   tests/fuzz/replay      (make check) all targets in one program; runs every file of
 *                          tests/fuzz/corpus/<name>/ (seeds: real files) and
 *                          tests/fuzz/regress/<name>/ (inputs that once crashed) through its
 *                          target, under whatever sanitizer or valgrind the build uses;
 *   tests/fuzz/fuzz-<name> (make fuzz) clang -fsanitize=fuzzer,address,undefined around one
 *                          target (tests/fuzz/libfuzzer.c), run by tests/fuzz/run.sh.
 *
 * Adding a parser takes: tests/fuzz/fuzz_<name>.c, X(<name>) in FUZZ_TARGETS below, the file in
 * tests_fuzz_replay_SOURCES (Makefile.am) and a few real inputs in tests/fuzz/corpus/<name>/.
 */
#ifndef PP_FUZZ_H
#define PP_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

struct cJSON;
struct hw_db;

#define FUZZ_TARGETS(X)                                                                            \
	X(csv)               /* common/csv.c: the RFC 4180 reader under every CSV input */       \
	X(model)             /* models/: paraplan model JSON (transformers and CNN layer lists) */ \
	X(hf_config)         /* models/: Hugging Face config.json */                            \
	X(trace)             /* sim/serve.c: serving request traces, CSV and JSONL */           \
	X(validate_training) /* sim/validate.c: training validation CSV rows */                 \
	X(validate_serving)  /* sim/validate.c: serving validation CSV rows */              \
	X(nccl_tests)        /* calibrate/nccltests.c: nccl-tests logs ('import nccl-tests') */ \
	X(report)            /* reports/: plan, simulate and validate JSON documents, traces */   \
	X(replay_plan)       /* calibrate/replay.c: the plan documents 'paraplan replay' takes */ \
	X(db_open)           /* hardware/db.c: a database from outside: schema version, damage */

#define FUZZ_DECLARE(name) int fuzz_##name(const uint8_t *data, size_t size);
FUZZ_TARGETS(FUZZ_DECLARE)
#undef FUZZ_DECLARE

/* Aborts (a crash to libFuzzer and to the replay test) when an invariant does not hold. */
#define FUZZ_CHECK(cond)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: fuzz check failed: %s\n", __FILE__, __LINE__, #cond);   \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

/* fuzzutil.c: helpers the targets share. */
/* Every number in the tree is finite (cJSON prints NaN and infinities as null). */
void fuzz_check_json_finite(const struct cJSON *doc);
/* A loaded model's derived quantities are finite and of the right sign. */
struct model;
void fuzz_check_model(const struct model *m);
/* The bytes as a NUL-terminated text, for parsers that take one (free it). */
char *fuzz_text(const uint8_t *data, size_t size);
/* The in-memory hardware database with the defaults, opened once per process. */
struct hw_db *fuzz_db(void);

#endif
