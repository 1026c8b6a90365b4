/*
 * cmd_import.c -- 'paraplan import nccl-tests': measurements made elsewhere into the database.
 */
#include "config.h"
#include "calibrate/cal.h"
#include "cli/cli.h"

#include <cJSON.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
	"usage: paraplan import nccl-tests --system S [--nodes N --gpus-per-node G] [--ranks R]\n"
	"                                  [--op OP] [--note TEXT] [--json] [--db FILE] FILE...\n"
	"\n"
	"Reads the output of nccl-tests (all_reduce_perf, all_gather_perf, reduce_scatter_perf,\n"
	"alltoall_perf, broadcast_perf, reduce_perf, sendrecv_perf) and stores every row, out-of-place\n"
	"and in-place, as one calibration run of kind 'import' for system S.  The cost model then\n"
	"uses these bus-bandwidth curves for S before any fitted or datasheet figure.\n"
	"\n"
	"Both table layouts (with and without 'root'/'#wrong'), srun -l and mpirun --tag-output line\n"
	"prefixes, several tests per file and log lines between rows are understood.  Each row is\n"
	"checked: algbw must equal size/time and busbw must equal algbw times nccl-tests' bus factor\n"
	"for the op and rank count; any error stores nothing.\n"
	"\n"
	"  --system S          the system the logs were measured on (see 'paraplan hw list')\n"
	"  --op OP             the collective, for files that do not say (all_reduce, all_gather,\n"
	"                      reduce_scatter, alltoall, broadcast, reduce, sendrecv); by default it is\n"
	"                      read from the '# Collective test starting' line, a *_perf command\n"
	"                      line or the file name\n"
	"  --ranks R           GPUs in the test, for files without the '# Using devices' list\n"
	"  --nodes N           nodes of the test (default: the hosts of the device list, else\n"
	"  --gpus-per-node G   ranks / G, else ranks / the system's GPUs per node)\n"
	"  --note TEXT         a note stored with the run (default: the file names)\n"
	"  --json              print what was stored as JSON\n"
	"  --db FILE           the hardware database (default: $PARAPLAN_DB, else the user's)\n"
	"\n"
	"Examples:\n"
	"  paraplan import nccl-tests --system dgx-h100 all_reduce_perf.log all_gather_perf.log\n"
	"  paraplan import nccl-tests --system aws-p5 --nodes 2 --gpus-per-node 8 --op all_reduce slurm-123.out\n"
	"  paraplan hw calibrations        # the run appears here; 'paraplan calibrate --fit' fits it\n";

static void
print_summary(const cJSON *sum, const char *system, double run_id)
{
	char a[32], b[32];
	const char *h[] = {"op", "ranks", "nodes", "rows", "in-place", "sizes", "peak busbw"};
	cli_table *t = cli_table_new(7, h, "lrrrrlr");
	const cJSON *g;
	double rows = 0;
	cJSON_ArrayForEach(g, cJSON_GetObjectItem(sum, "groups"))
	{
		cli_table_addf(t, 0, "%s", cJSON_GetObjectItem(g, "op")->valuestring);
		cli_table_addf(t, 1, "%d", cJSON_GetObjectItem(g, "ranks")->valueint);
		cli_table_addf(t, 2, "%d", cJSON_GetObjectItem(g, "nodes")->valueint);
		cli_table_addf(t, 3, "%.0f", cJSON_GetObjectItem(g, "rows")->valuedouble);
		cli_table_addf(t, 4, "%.0f", cJSON_GetObjectItem(g, "in_place_rows")->valuedouble);
		cli_table_addf(t, 5, "%s .. %s", cli_bytes(cJSON_GetObjectItem(g, "min_bytes")->valuedouble, a, sizeof a),
			       cli_bytes(cJSON_GetObjectItem(g, "max_bytes")->valuedouble, b, sizeof b));
		cli_table_addf(t, 6, "%.2f GB/s", cJSON_GetObjectItem(g, "peak_busbw_gbps")->valuedouble);
		rows += cJSON_GetObjectItem(g, "rows")->valuedouble;
	}
	cli_table_print(t, stdout);
	cli_table_free(t);
	const cJSON *x;
	cJSON_ArrayForEach(x, cJSON_GetObjectItem(sum, "blocks"))
	{
		printf("  %s:%d: %s (%s), %d ranks on %d node%s (%s)", cJSON_GetObjectItem(x, "file")->valuestring,
		       cJSON_GetObjectItem(x, "line")->valueint, cJSON_GetObjectItem(x, "op")->valuestring,
		       cJSON_GetObjectItem(x, "op_from")->valuestring, cJSON_GetObjectItem(x, "ranks")->valueint,
		       cJSON_GetObjectItem(x, "nodes")->valueint, cJSON_GetObjectItem(x, "nodes")->valueint == 1 ? "" : "s",
		       cJSON_GetObjectItem(x, "ranks_from")->valuestring);
		double sk = cJSON_GetObjectItem(x, "skipped")->valuedouble;
		if (sk > 0)
			printf(", %.0f half-row%s skipped (size 0 or N/A)", sk, sk == 1 ? "" : "s");
		putchar('\n');
	}
	printf("stored %.0f rows as run %.0f (import) for %s\n", rows, run_id, system);
}

int
cmd_import(int argc, char **argv)
{
	static const struct option opts[] = {
		{"system", required_argument, NULL, 's'}, {"nodes", required_argument, NULL, 'n'},
		{"gpus-per-node", required_argument, NULL, 'g'}, {"ranks", required_argument, NULL, 'r'},
		{"op", required_argument, NULL, 'o'}, {"note", required_argument, NULL, 'N'},
		{"json", no_argument, NULL, 'j'}, {"db", required_argument, NULL, 'd'},
		{"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0},
	};
	const char *system = NULL, *db_path = NULL, *note = NULL, *op_s = NULL;
	long long nodes = 0, gpn = 0, ranks = 0;
	bool json = false;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			system = optarg;
			break;
		case 'n':
			if (cli_int("import", "--nodes", optarg, 1, 1 << 20, &nodes) != 0)
				return 2;
			break;
		case 'g':
			if (cli_int("import", "--gpus-per-node", optarg, 1, 1 << 16, &gpn) != 0)
				return 2;
			break;
		case 'r':
			if (cli_int("import", "--ranks", optarg, 1, 1 << 22, &ranks) != 0)
				return 2;
			break;
		case 'o':
			op_s = optarg;
			break;
		case 'N':
			note = optarg;
			break;
		case 'j':
			json = true;
			break;
		case 'd':
			db_path = optarg;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			return cli_bad_option("import", c, argv);
		}
	}
	if (optind >= argc)
		return cli_usage("import", "missing what to import (nccl-tests)");
	if (strcmp(argv[optind], "nccl-tests") != 0)
		return cli_usage("import", "unknown source \"%s\" (expected nccl-tests)", argv[optind]);
	optind++;
	if (system == NULL)
		return cli_usage("import", "--system is required (the system the logs were measured on)");
	if (optind >= argc)
		return cli_usage("import", "no files to import");
	cal_nccl_opts o = {.op = -1};
	if (op_s != NULL) {
		char name[40];
		pp_strlcpy(name, op_s, sizeof name);
		size_t l = strlen(name);
		if (l > 5 && !strcmp(name + l - 5, "_perf"))
			name[l - 5] = '\0';
		hw_coll op;
		if (hw_coll_parse(name, &op) != 0)
			return cli_usage("import",
					 "--op \"%s\" is not a collective (all_reduce, all_gather, reduce_scatter, alltoall, "
					 "broadcast, reduce, sendrecv)",
					 op_s);
		o.op = (int)op;
	}
	if (nodes > 0 && gpn > 0) {
		if (ranks > 0 && ranks != nodes * gpn)
			return cli_usage("import", "--ranks %lld disagrees with --nodes %lld x --gpus-per-node %lld", ranks, nodes,
					 gpn);
		ranks = nodes * gpn;
	}
	if (ranks > 0 && nodes > ranks)
		return cli_usage("import", "--nodes %lld is more than the %lld ranks", nodes, ranks);
	o.ranks = (int)ranks;
	o.nodes = (int)nodes;
	o.gpus_per_node = (int)gpn;

	hw_db *db;
	int rc = cli_open_db(db_path, 0, &db);
	if (rc != 0)
		return rc;
	char err[1024] = "";
	hw_system sys;
	rc = hw_system_get(db, system, &sys, err, sizeof err);
	if (rc != 0) {
		hw_close(db);
		if (rc == PP_ENOTFOUND)
			return cli_usage("import", "%s", err);
		return cli_fail(rc, err);
	}
	o.node_size = sys.gpus_per_node;
	cal_nccl *log = cal_nccl_new();
	if (log == NULL) {
		hw_close(db);
		return cli_fail(PP_ENOMEM, "out of memory");
	}
	for (int i = optind; i < argc && rc == 0; i++)
		rc = cal_nccl_read(log, argv[i], &o, err, sizeof err);
	int64_t run_id = 0;
	if (rc == 0)
		rc = cal_nccl_store(log, db, system, note, &run_id, err, sizeof err);
	int status = 0;
	if (rc != 0) {
		status = cli_fail(rc, err);
	} else {
		cJSON *sum = cal_nccl_summary(log);
		cJSON_AddStringToObject(sum, "system", system);
		cJSON_AddNumberToObject(sum, "run_id", (double)run_id);
		if (json)
			cli_print_json(sum);
		else
			print_summary(sum, system, (double)run_id);
		cJSON_Delete(sum);
	}
	cal_nccl_free(log);
	hw_close(db);
	return status;
}
