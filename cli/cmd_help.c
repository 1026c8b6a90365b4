/*
 * cmd_help.c -- 'paraplan help [COMMAND]': the list of commands, or one command's usage.
 */
#include "config.h"
#include "cli/cli.h"

#include <string.h>

/* The list of commands, to stdout for 'paraplan help', to stderr for a bare 'paraplan'. */
void
cli_print_usage(FILE *f)
{
	fprintf(f, "usage: paraplan COMMAND [OPTIONS]\n\n"
	       "paraplan simulates parallel training and serving of large models against a database\n"
	       "of measured and datasheet hardware figures, and plans configurations with it.\n\n"
	       "Commands:\n");
	for (const cmd_entry *c = cli_commands; c->name != NULL; c++)
		fprintf(f, "  %-10s %s\n", c->name, c->summary);
	fprintf(f, "\nEvery command takes --help ('paraplan help COMMAND [WORKLOAD]' says the same).  Most\n"
	       "take --db FILE (the hardware database; also PARAPLAN_DB) and --json (one JSON document\n"
	       "on stdout).  Options match only in full.\n"
	       "Exit status: 0 success, 1 failed run, 2 usage error.\n\n"
	       "Example:\n  paraplan model show llama-3-70b\n  paraplan hw show dgx-h100\n"
		"  paraplan help plan train\n");
}

/* 'paraplan help COMMAND [WORKLOAD]' runs 'paraplan COMMAND [WORKLOAD] --help'. */
int
cmd_help(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		cli_print_usage(stdout);
		return 0;
	}
	if (argc > 3)
		return cli_usage("help", "unexpected argument \"%s\"", argv[3]);
	for (const cmd_entry *c = cli_commands; c->name != NULL; c++) {
		if (strcmp(c->name, argv[1]) != 0)
			continue;
		char *args[] = {argv[1], argc > 2 ? argv[2] : "--help", "--help", NULL};
		return c->run(argc > 2 ? 3 : 2, args);
	}
	return cli_usage("help", "unknown command \"%s\"", argv[1]);
}
