/*
 * main.c -- the paraplan command table and dispatch.  Each command lives in cli/cmd_<name>.c
 * with its own options, usage and handler; this file only finds it.
 */
#include "config.h"
#include "cli/cli.h"

#include <stdio.h>
#include <string.h>

const cmd_entry cli_commands[] = {
	{"simulate", cmd_simulate, "predict one training (or serving) configuration", true},
	{"plan", cmd_plan, "search configurations and rank them by time, cost or SLO", true},
	{"report", NULL, "turn results into cost, capacity and comparison reports", false},
	{"validate", cmd_validate, "compare predictions with published measurements", true},
	{"calibrate", cmd_calibrate, "measure GPUs and collectives into the hardware database, fit the cost model", true},
	{"replay", cmd_replay, "run a plan's op graph on GPUs and compare with the prediction", true},
	{"import", cmd_import, "import measurements made elsewhere (nccl-tests logs)", true},
	{"hw", cmd_hw, "list, show and export the hardware database", true},
	{"model", cmd_model, "list and show models and their derived quantities", true},
	{"help", cmd_help, "show help for paraplan or one command", true},
	{"version", cmd_version, "print the version", true},
	{NULL, NULL, NULL, false},
};

int
main(int argc, char **argv)
{
	if (argc < 2)
		return cmd_help(1, argv);
	const char *name = argv[1];
	if (!strcmp(name, "--help") || !strcmp(name, "-h"))
		return cmd_help(1, argv);
	if (!strcmp(name, "--version"))
		return cmd_version(1, argv);
	for (const cmd_entry *c = cli_commands; c->name != NULL; c++) {
		if (strcmp(c->name, name) != 0)
			continue;
		if (!c->built) {
			cli_error("'paraplan %s' is not built yet (%s); see 'paraplan help'", name, c->summary);
			return 1;
		}
		return c->run(argc - 1, argv + 1);
	}
	cli_error("unknown command \"%s\"", name);
	fprintf(stderr, "(see 'paraplan help' for the commands)\n");
	return 2;
}
