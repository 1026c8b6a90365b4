/*
 * cli.h -- what the command files share: the command table's entry type, error reporting with
 * the exit-status convention, opening the hardware database, and rendering results (an
 * aligned table for people, JSON for programs).
 *
 * Exit status: 0 success, 1 a failed run, 2 a usage error.  Results go to stdout, messages to
 * stderr.
 */
#ifndef CLI_H
#define CLI_H

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>

#include "cli/opt.h"
#include "common/pp.h"
#include "hardware/hw.h"
#include "sim/sim.h"

struct cJSON;

typedef struct cmd_entry {
	const char *name;
	int (*run)(int argc, char **argv); /* argv[0] is the command name */
	const char *summary;
} cmd_entry;

extern const cmd_entry cli_commands[];

int cmd_help(int argc, char **argv);
void cli_print_usage(FILE *f);
int cmd_version(int argc, char **argv);
int cmd_hw(int argc, char **argv);
int cmd_model(int argc, char **argv);
int cmd_simulate(int argc, char **argv);
int cmd_plan(int argc, char **argv);
int cmd_plan_train(int argc, char **argv);
int cmd_plan_serve(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_calibrate(int argc, char **argv);
int cmd_replay(int argc, char **argv);
int cmd_import(int argc, char **argv);
int cmd_validate(int argc, char **argv);

/* Terminal safety: every byte the program prints on stdout and stderr passes through a filter
 * that writes the printable form of the text (pp_str_add_printable_n with PP_PRINT_LINES), so
 * a name from a file or a database can never send escape sequences or invalid UTF-8 to a
 * terminal, whichever printf it reaches.  cli_output_start installs it (first thing in main);
 * cli_output_finish flushes it and returns nonzero when stdout could not be written.  cli_tty
 * is the unfiltered stderr, for the progress line's own \r and erase-line sequence only. */
void cli_output_start(void);
int cli_output_finish(void);
extern FILE *cli_tty;

/* Prints "error: <message>" to stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints "error: <message>" and a pointer to the command's --help; returns 2. */
int cli_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A command of workloads ('paraplan plan train ...'): runs the one argv[1] names with argv
 * shifted by one, prints usage for --help (to stderr and 2 when nothing is named), and names
 * the workloads it knows when argv[1] is none of them.  subs ends with a NULL name. */
typedef struct cli_sub {
	const char *name;
	int (*run)(int argc, char **argv);
} cli_sub;
int cli_dispatch(const char *cmd, const char *usage, const cli_sub *subs, int argc, char **argv);
/* Progress of a long search on stderr (cli.c).  On a terminal, a bar redrawn in place and wiped
 * at the end; elsewhere (CI, a pipe into tee) a line every few seconds with the counts and an
 * estimate of the time left, so that a long run is not silent.  cli_progress_cb has the
 * signature of the planner's progress callbacks. */
typedef struct cli_progress {
	bool tty;
	double t0, last;       /* monotonic seconds: start, last line printed */
	double interval_s;     /* between lines when not a terminal */
	int lines;
	const char *what;      /* "layouts", "deployments" */
} cli_progress;
void cli_progress_init(cli_progress *p, const char *what);
void cli_progress_cb(void *arg, size_t done, size_t total);
void cli_progress_end(cli_progress *p);
double cli_now_s(void);
/* Ctrl-C stops a search: the first sets the flag returned (the search then returns its best so
 * far), a second ends the program.  cli_sigint_release restores the default. */
volatile sig_atomic_t *cli_sigint_catch(void);
void cli_sigint_release(void);

/* Maps a library return code to an exit status (PP_EUSAGE -> 2, other failures -> 1). */
int cli_status(int rc);
/* Reports a failed library call (its message) and returns the exit status for it. */
int cli_fail(int rc, const char *msg);

/* Option parse functions for paraplan's own value kinds (see cli/opt.h). */
int cli_opt_dtype(const cli_opt *o, const char *val, char *err, size_t errlen);     /* hw_dtype * */
int cli_opt_schedule(const cli_opt *o, const char *val, char *err, size_t errlen);  /* sim_schedule * */
int cli_opt_recompute(const cli_opt *o, const char *val, char *err, size_t errlen); /* sim_recompute * */
int cli_opt_dist(const cli_opt *o, const char *val, char *err, size_t errlen);      /* sim_dist * */
#define OPT_DTYPE(N, A, P, H) {N, A, cli_opt_dtype, CLI_TARGET(hw_dtype, P), 0, 0, H, 0, NULL, NULL}
#define OPT_SCHEDULE(N, A, P, H) {N, A, cli_opt_schedule, CLI_TARGET(sim_schedule, P), 0, 0, H, 0, NULL, NULL}
#define OPT_RECOMPUTE(N, A, P, H) {N, A, cli_opt_recompute, CLI_TARGET(sim_recompute, P), 0, 0, H, 0, NULL, NULL}
int cli_opt_lora_modules(const cli_opt *o, const char *val, char *err, size_t errlen); /* unsigned * (SIM_LORA_*) */
int cli_opt_base_dtype(const cli_opt *o, const char *val, char *err, size_t errlen);   /* bool *: nf4 */
/* The fine-tuning options of 'simulate train' and 'plan train' (docs/finetune-goodput.md):
 * int *rank, unsigned *modules, bool *nf4, int64_t *sample_len. */
#define OPT_FINETUNE(R, M, Q, S)                                                                             \
	OPT_INT("lora-rank", "R", R, 1, 65536, "fine-tune with LoRA adapters of rank R on a frozen base"),       \
	OPT_FN("lora-modules", "LIST", cli_opt_lora_modules, M,                                                  \
	       "the adapted projections: q,k,v,o,gate,up,down, attn, mlp or all (default all)"),                 \
	OPT_FN("base-dtype", "D", cli_opt_base_dtype, Q,                                                         \
	       "the frozen base's weights: the training dtype (default) or nf4 (QLoRA: 4-bit NormalFloat with "  \
	       "double quantization, dequantized before each GEMM)"),                                            \
	OPT_I64("sample-len", "L", S, 1, 1 << 24,                                                                \
		"packed sequences: samples of L tokens packed into each sequence, attention masked per sample")
#define OPT_DIST(N, A, P, H) {N, A, cli_opt_dist, CLI_TARGET(sim_dist, P), 0, 0, H, 0, NULL, NULL}
/* Prefix caching and speculative decoding of a serving run (simulate serve, plan serve): the
 * options, and the check that --spec comes with both of its numbers (no default acceptance: it
 * depends on the draft and the traffic) and they without it; cli_usage's status or 0. */
#define OPT_SERVE_FEATURES(HIT, SPEC, K, A)                                                                   \
	OPT_NUM("prefix-hit", "R", HIT, 0.0, 0.99,                                                             \
		"share of each prompt found in the prefix cache (whole blocks; not computed again)"),          \
	OPT_CHOICE("spec", "METHOD", SPEC, sim_spec_names,                                                     \
		   "speculative decoding: ngram (prompt lookup, no GPU work) or eagle (a one-layer draft head)"), \
	OPT_INT("spec-tokens", "K", K, 1, SIM_SPEC_MAX_TOKENS, "tokens proposed per decode step"),            \
	OPT_NUM("spec-accept", "A", A, 0.0, 1.0,                                                               \
		"probability that each proposed token is accepted (measure it on your traffic)")
int cli_spec_check(const char *cmd, const cli_opt *opts, int spec);
/* --chunked-prefill MODE into an int (sim_chunked_names' index). */
#define OPT_CHUNKED(P)                                                                                       \
	OPT_CHOICE("chunked-prefill", "MODE", P, sim_chunked_names,                                          \
		   "engine (default: as the engine runs), on (prompts in chunks beside the decodes) or off (whole " \
		   "prompts)")
/* The largest --seed: 2^53, the largest integer a JSON number (a double) holds exactly, so that
 * the seed a result prints reproduces it. */
#define SEED_MAX 9007199254740992.0
/* A file the command will write (--out FILE, --trace FILE): the path is held, when it is read,
 * to the rule every written file follows (pp_output_check: a new path or a regular file we may
 * write), so a refusal comes before any work. */
int cli_opt_out(const cli_opt *o, const char *val, char *err, size_t errlen);       /* const char ** */
#define OPT_OUT(N, A, P, H) {N, A, cli_opt_out, CLI_TARGET(const char *, P), 0, 0, H, 0, NULL, NULL}

/* model_load, then what the model's loader could not model (model_warnings) on stderr, a
 * "warning: " line each; returns model_load's code. */
struct model;
int cli_load_model(const char *spec, struct model **out, char *err, size_t errlen);

/* Opens the hardware database (--db value or NULL) and prints its notice, if any. */
int cli_open_db(const char *path, unsigned flags, hw_db **out);

/* Writes a JSON document to stdout, followed by a newline.  Every document paraplan writes says
 * what it is and in which version of its format, "schema": "paraplan.<kind>/<N>" (docs/json.md
 * lists them); this puts it first in doc unless doc has one.  A change of a document's keys or
 * their meaning is a new N, which 'report' and 'replay' learn to read beside the old one. */
void cli_print_json(struct cJSON *doc, const char *schema);
/* An array as a document: {"<key>": arr} (takes arr). */
struct cJSON *cli_wrap(const char *key, struct cJSON *arr);
/* A member of a JSON object: its string ("" when absent or not a string), its number (0). */
const char *cli_str(const struct cJSON *o, const char *key);
double cli_num(const struct cJSON *o, const char *key);

/* Strict number parsing of a flag's value, with an error naming the flag. */
int cli_int(const char *cmd, const char *flag, const char *val, long long min, long long max, long long *out);
int cli_double(const char *cmd, const char *flag, const char *val, double min, double max, double *out);

/* An aligned text table. */
typedef struct cli_table cli_table;
cli_table *cli_table_new(int ncols, const char *const *headers, const char *align /* 'l'/'r' per column */);
void cli_table_add(cli_table *t, ...); /* ncols const char * values */
void cli_table_addf(cli_table *t, int col, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void cli_table_print(const cli_table *t, FILE *f);
void cli_table_free(cli_table *t);

/* Human formatting into a caller buffer: 1.23 GiB, 456 MB/s, 12.3 ms ... */
const char *cli_bytes(double bytes, char *buf, size_t n);     /* binary units */
const char *cli_si(double v, const char *unit, char *buf, size_t n); /* decimal prefixes */
const char *cli_seconds(double s, char *buf, size_t n);
const char *cli_count(double v, char *buf, size_t n);          /* 8.03B, 70.6B, 25.6M */

#endif
