/*
 * cmd_plan.c -- 'paraplan plan WORKLOAD': finds the workload's command (plan train in
 * cmd_plan_train.c, plan serve in cmd_plan_serve.c) and runs it.
 */
#include "config.h"
#include "cli/cli.h"

static const char usage_top[] =
	"usage: paraplan plan train ...   (see 'paraplan plan train --help')\n"
	"       paraplan plan serve ...   (see 'paraplan plan serve --help')\n";

int
cmd_plan(int argc, char **argv)
{
	static const cli_sub subs[] = {{"train", cmd_plan_train}, {"serve", cmd_plan_serve}, {NULL, NULL}};
	return cli_dispatch("plan", usage_top, subs, argc, argv);
}
