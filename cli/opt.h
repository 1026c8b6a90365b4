/*
 * opt.h -- a command's options, declared once in a table (cli/opt.c reads them).
 *
 * Every command declares its options as one table, one line per option -- its name, the value it
 * takes, where the value goes and how it is read, and its help line -- the way tmux's cmd_entry
 * and git's parse-options do.  cli_parse reads argv against the table and cli_help prints the
 * table, so an option cannot be parsed one way and documented another, and no handler writes
 * a getopt switch again.
 *
 * Invariants:
 *  - Options match only in full: "--tp" is never "--tp-across-nodes" (getopt_long's unambiguous
 *    prefixes made a bare "--tp" mean another option).
 *  - An option given twice is refused (the second would otherwise win in silence), unless its
 *    line says CLI_REPEAT.
 *  - A value is "--name VALUE" or "--name=VALUE"; a VALUE that starts with "--" must use '='
 *    (so that a forgotten value is reported as such and does not swallow the next option).
 *  - Operands (arguments that are not options) may come before, between or after options; "--"
 *    ends the options.
 *  - Tables live on the handler's stack (targets are its locals); the parse functions write
 *    only to their target and to err.
 */
#ifndef CLI_OPT_H
#define CLI_OPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct cli_opt cli_opt;

/* Reads val (NULL for a switch) into o->target.  Returns 0, or PP_EUSAGE with a message in err
 * that names the option ("--tp must be ..."). */
typedef int (*cli_opt_fn)(const cli_opt *o, const char *val, char *err, size_t errlen);

enum {
	CLI_REPEAT = 1u << 0, /* may be given more than once (each value is handed to parse) */
};

struct cli_opt {
	const char *name;      /* without "--"; NULL ends the table */
	const char *arg;       /* the value's name in the help ("N", "FILE"); NULL: a switch */
	cli_opt_fn parse;
	void *target;
	double lo, hi;         /* bounds of a number, inclusive */
	const char *help;      /* one line; wrapped by cli_help */
	unsigned flags;        /* CLI_* */
	const void *extra;     /* parse-specific: the names of a choice (NULL-terminated) */
	const cli_opt *group;  /* a shared table spliced in here (name is NULL then) */
};

/* A list of integers, as "4", "2,4,8" or "A..B" (doubling from A to B). */
#define CLI_INTS_MAX 64
typedef struct cli_ints {
	int n;
	int v[CLI_INTS_MAX];
} cli_ints;

/* A list of strings of a repeatable option (--from A --from B) or a comma list (a,b,c). */
#define CLI_STRS_MAX 64
typedef struct cli_strs {
	int n;
	const char *v[CLI_STRS_MAX];
	char buf[1024]; /* the comma list's copy, which v points into */
} cli_strs;

/* The parse functions.  Numbers are checked against [lo, hi]. */
int cli_opt_str(const cli_opt *o, const char *val, char *err, size_t errlen);    /* const char ** */
int cli_opt_set(const cli_opt *o, const char *val, char *err, size_t errlen);    /* bool *: true */
int cli_opt_clear(const cli_opt *o, const char *val, char *err, size_t errlen);  /* bool *: false */
int cli_opt_int(const cli_opt *o, const char *val, char *err, size_t errlen);    /* int * */
int cli_opt_i64(const cli_opt *o, const char *val, char *err, size_t errlen);    /* int64_t * */
int cli_opt_num(const cli_opt *o, const char *val, char *err, size_t errlen);    /* double *, "15T" too */
int cli_opt_ms(const cli_opt *o, const char *val, char *err, size_t errlen);     /* double *: ms given, s kept */
int cli_opt_choice(const cli_opt *o, const char *val, char *err, size_t errlen); /* int *: index in extra */
int cli_opt_ints(const cli_opt *o, const char *val, char *err, size_t errlen);   /* cli_ints * */
int cli_opt_strs(const cli_opt *o, const char *val, char *err, size_t errlen);   /* cli_strs *: append */
int cli_opt_list(const cli_opt *o, const char *val, char *err, size_t errlen);   /* cli_strs *: a,b,c */

/* The compiler checks that a target has the parse function's type: (1 ? p : (T *)0) does not
 * compile (-Werror) when p points to something else. */
#define CLI_TARGET(T, p) ((void *)(1 ? (p) : (T *)0))

/* One line per option.  N: name, A: the value's name, P: the target, LO/HI: bounds, H: help. */
#define OPT_STR(N, A, P, H) {N, A, cli_opt_str, CLI_TARGET(const char *, P), 0, 0, H, 0, NULL, NULL}
#define OPT_SWITCH(N, P, H) {N, NULL, cli_opt_set, CLI_TARGET(bool, P), 0, 0, H, 0, NULL, NULL}
#define OPT_NEGATE(N, P, H) {N, NULL, cli_opt_clear, CLI_TARGET(bool, P), 0, 0, H, 0, NULL, NULL}
#define OPT_INT(N, A, P, LO, HI, H) {N, A, cli_opt_int, CLI_TARGET(int, P), LO, HI, H, 0, NULL, NULL}
#define OPT_I64(N, A, P, LO, HI, H) {N, A, cli_opt_i64, CLI_TARGET(int64_t, P), LO, HI, H, 0, NULL, NULL}
#define OPT_NUM(N, A, P, LO, HI, H) {N, A, cli_opt_num, CLI_TARGET(double, P), LO, HI, H, 0, NULL, NULL}
#define OPT_MS(N, A, P, LO, HI, H) {N, A, cli_opt_ms, CLI_TARGET(double, P), LO, HI, H, 0, NULL, NULL}
#define OPT_CHOICE(N, A, P, NAMES, H) {N, A, cli_opt_choice, CLI_TARGET(int, P), 0, 0, H, 0, NAMES, NULL}
#define OPT_INTS(N, A, P, LO, HI, H) {N, A, cli_opt_ints, CLI_TARGET(cli_ints, P), LO, HI, H, 0, NULL, NULL}
#define OPT_STRS(N, A, P, H) {N, A, cli_opt_strs, CLI_TARGET(cli_strs, P), 0, 0, H, CLI_REPEAT, NULL, NULL}
#define OPT_LIST(N, A, P, H) {N, A, cli_opt_list, CLI_TARGET(cli_strs, P), 0, 0, H, 0, NULL, NULL}
/* An option read by a function of the command's own; P is whatever that function expects. */
#define OPT_FN(N, A, FN, P, H) {N, A, FN, (void *)(P), 0, 0, H, 0, NULL, NULL}
/* A shared table (the common options below, or a command's own group) spliced in. */
#define OPT_GROUP(TABLE) {NULL, NULL, NULL, NULL, 0, 0, NULL, 0, NULL, TABLE}
#define OPT_END {NULL, NULL, NULL, NULL, 0, 0, NULL, 0, NULL, NULL}

/* The options many commands share, with one wording everywhere. */
#define OPT_DB(P) OPT_STR("db", "FILE", P, "the hardware database (default: $PARAPLAN_DB, else ~/.local/share/paraplan/hardware.db)")
#define OPT_JSON(P) OPT_SWITCH("json", P, "print one JSON document on stdout instead of a table")
#define OPT_MODEL(P) OPT_STR("model", "M", P, "a catalog name ('paraplan model list'), a model JSON or a Hugging Face config.json")
#define OPT_SYSTEM(P) OPT_STR("system", "S", P, "a system of the hardware database ('paraplan hw list')")
#define OPT_SYSTEMS(P) OPT_LIST("systems", "S1,S2,...", P, "systems to compare (default: dgx-a100, dgx-h100, hgx-h200, dgx-b200)")

/* What a command says about itself in its --help: the synopsis lines (each printed after
 * "usage: paraplan "), prose, and examples; the options are listed from the table. */
typedef struct cli_cmd {
	const char *name;     /* "plan train": for error messages and the help */
	const char *synopsis; /* lines without "usage: paraplan " */
	const char *about;    /* paragraphs, may be NULL */
	const char *examples; /* lines, may be NULL */
} cli_cmd;

/* Reads argv[1 .. argc) (argv[0] is the command's name) against opts.  Operands go, in order,
 * to operands[0 .. *noperands) (at most max_operands; NULL when the command takes none).
 * Returns CLI_RUN when the command should run; otherwise the exit status the command returns at
 * once: 0 after --help was printed, 2 after a usage error was printed (as cli_usage does). */
enum { CLI_RUN = -1 };
int cli_parse(const cli_cmd *cmd, const cli_opt *opts, int argc, char **argv, char **operands, int max_operands,
	      int *noperands);

/* Prints the command's help: synopsis, about, the options of the table (help lines wrapped),
 * examples. */
void cli_help(const cli_cmd *cmd, const cli_opt *opts, FILE *f);

/* Whether an option of the table was given on the command line of the last cli_parse of that
 * table (by name, without "--"). */
bool cli_given(const cli_opt *opts, const char *name);

#endif
