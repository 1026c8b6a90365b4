/*
 * main.c -- the paraplan command table and dispatch.  Each command lives in cli/cmd_<name>.c
 * with its own options, usage and handler; this file only finds it.
 */
#include "config.h"
#include "cli/cli.h"
#include "common/pp.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

const cmd_entry cli_commands[] = {
	{"simulate", cmd_simulate, "predict one training step, serving deployment or CNN inference batch"},
	{"plan", cmd_plan, "search configurations and rank them by time, cost or SLO"},
	{"report", cmd_report, "turn results into cost, capacity and comparison reports"},
	{"validate", cmd_validate, "compare predictions with published measurements"},
	{"calibrate", cmd_calibrate, "measure GPUs and collectives into the hardware database, fit the cost model"},
	{"replay", cmd_replay, "run a plan's op graph on GPUs and compare with the prediction"},
	{"import", cmd_import, "import measurements made elsewhere (nccl-tests logs)"},
	{"hw", cmd_hw, "list, show and export the hardware database"},
	{"model", cmd_model, "list and show models and their derived quantities"},
	{"help", cmd_help, "show help for paraplan or one command"},
	{"version", cmd_version, "print the version"},
	{NULL, NULL, NULL},
};

static int
dispatch(int argc, char **argv)
{
	if (argc < 2) {
		/* a bare 'paraplan' is a command line that does nothing: usage, and the usage status */
		cli_print_usage(stderr);
		return 2;
	}
	const char *name = argv[1];
	if (!strcmp(name, "--help") || !strcmp(name, "-h"))
		return cmd_help(1, argv);
	if (!strcmp(name, "--version"))
		return cmd_version(1, argv);
	for (const cmd_entry *c = cli_commands; c->name != NULL; c++)
		if (strcmp(c->name, name) == 0)
			return c->run(argc - 1, argv + 1);
	cli_error("unknown command \"%s\"", name);
	fprintf(stderr, "(see 'paraplan help' for the commands)\n");
	return 2;
}

int
main(int argc, char **argv)
{
	pp_keep_freed_memory();
	/* Everything printed goes through the terminal-safe filter (cli.h). */
	cli_output_start();
	int status = dispatch(argc, argv);
	/* A result that did not reach stdout (a full disk, a closed pipe) is a failed run, not a
	 * silent success with half a table. */
	if (cli_output_finish() != 0) {
		int e = errno;
		fprintf(stderr, "error: cannot write the output: %s\n", strerror(e ? e : EIO));
		return status ? status : 1;
	}
	return status;
}
