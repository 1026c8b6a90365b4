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

#include <stdbool.h>
#include <stdio.h>

#include "common/pp.h"
#include "hardware/hw.h"

struct cJSON;

typedef struct cmd_entry {
	const char *name;
	int (*run)(int argc, char **argv); /* argv[0] is the command name */
	const char *summary;
} cmd_entry;

extern const cmd_entry cli_commands[];

int cmd_help(int argc, char **argv);
int cmd_version(int argc, char **argv);
int cmd_hw(int argc, char **argv);
int cmd_model(int argc, char **argv);
int cmd_simulate(int argc, char **argv);
int cmd_plan(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_calibrate(int argc, char **argv);
int cmd_replay(int argc, char **argv);
int cmd_import(int argc, char **argv);
int cmd_validate(int argc, char **argv);

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
/* getopt_long(argc, argv, ":h", opts, ...) that also refuses an option given twice ("--tp 8 ...
 * --tp 4" would otherwise keep the last in silence): the second returns CLI_OPT_AGAIN, which
 * cli_bad_option reports.  seen has CLI_OPT_MAX flags, zeroed before the first call. */
enum { CLI_OPT_MAX = 1024, CLI_OPT_AGAIN = 0x7ffe };
struct option;
int cli_getopt(int argc, char **argv, const struct option *opts, unsigned char *seen);
/* Reports getopt_long's '?' (unknown option) or ':' (missing value) for the option just seen
 * (optstring must start with ':'), or cli_getopt's CLI_OPT_AGAIN; returns 2. */
int cli_bad_option(const char *cmd, int c, char **argv);
/* Maps a library return code to an exit status (PP_EUSAGE -> 2, other failures -> 1). */
int cli_status(int rc);
/* Reports a failed library call (its message) and returns the exit status for it. */
int cli_fail(int rc, const char *msg);

/* Opens the hardware database (--db value or NULL) and prints its notice, if any. */
int cli_open_db(const char *path, unsigned flags, hw_db **out);

/* Writes a JSON document to stdout, followed by a newline. */
void cli_print_json(const struct cJSON *doc);
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
