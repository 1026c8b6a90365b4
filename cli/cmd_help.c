/*
 * cmd_help.c -- 'paraplan help [COMMAND]': the list of commands, or one command's usage.
 */
#include "config.h"
#include "cli/cli.h"

#include <string.h>

int
cmd_help(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "--help") != 0 && strcmp(argv[1], "-h") != 0) {
		for (const cmd_entry *c = cli_commands; c->name != NULL; c++) {
			if (strcmp(c->name, argv[1]) != 0)
				continue;
			char *args[] = {argv[1], "--help", NULL};
			return c->run(2, args);
		}
		return cli_usage("help", "unknown command \"%s\"", argv[1]);
	}
	printf("usage: paraplan COMMAND [OPTIONS]\n\n"
	       "paraplan simulates parallel training and serving of large models against a database\n"
	       "of measured and datasheet hardware figures, and plans configurations with it.\n\n"
	       "Commands:\n");
	for (const cmd_entry *c = cli_commands; c->name != NULL; c++)
		printf("  %-10s %s\n", c->name, c->summary);
	printf("\nEvery command takes --help.  Common options: --db FILE (hardware database; also\n"
	       "PARAPLAN_DB), --json (one JSON document on stdout).\n"
	       "Exit status: 0 success, 1 failed run, 2 usage error.\n\n"
	       "Example:\n  paraplan model show llama-3-70b\n  paraplan hw show dgx-h100\n");
	return 0;
}
