/*
 * cmd_import.c -- 'paraplan import nccl-tests': measurements made elsewhere into the database.
 */
#include "config.h"
#include "calibrate/cal.h"
#include "cli/cli.h"

#include <cJSON.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static const char about_text[] =
	"Reads the output of nccl-tests (all_reduce_perf, all_gather_perf, reduce_scatter_perf,\n"
	"alltoall_perf, broadcast_perf, reduce_perf, sendrecv_perf) and stores every row, out-of-place\n"
	"and in-place, as one calibration run of kind 'import' for system S.  The cost model then\n"
	"uses these bus-bandwidth curves for S before any fitted or datasheet figure.\n"
	"\n"
	"Both table layouts (with and without 'root'/'#wrong'), srun -l and mpirun --tag-output line\n"
	"prefixes, several tests per file and log lines between rows are understood.  Each row is\n"
	"checked: algbw must equal size/time and busbw must equal algbw times nccl-tests' bus factor\n"
	"for the op and rank count; any error stores nothing.\n";

static const char examples_text[] =
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

/* Whether the GPU name a log prints ("NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-40GB", "AMD
 * Instinct MI300X") can be the database's GPU ("h100-sxm", "a100-sxm4-80gb", "mi300x"): its model
 * (the first part of the database name) is a word of the log's name, and a memory size or form
 * factor (sxm*, pcie, nvl) that both name agrees.  Names are matched as lower-case words. */
static bool
gpu_matches(const char *log_name, const char *db_name)
{
	char a[128], b[128];
	size_t n = 0;
	for (const char *p = log_name; *p && n + 1 < sizeof a; p++)
		a[n++] = isalnum((unsigned char)*p) ? (char)tolower((unsigned char)*p) : ' ';
	a[n] = '\0';
	n = 0;
	for (const char *p = db_name; *p && n + 1 < sizeof b; p++)
		b[n++] = isalnum((unsigned char)*p) ? (char)tolower((unsigned char)*p) : ' ';
	b[n] = '\0';
	char *lw[16], *dw[16];
	int nl = 0, nd = 0;
	for (char *t = strtok(a, " "); t && nl < 16; t = strtok(NULL, " "))
		lw[nl++] = t;
	for (char *t = strtok(b, " "); t && nd < 16; t = strtok(NULL, " "))
		dw[nd++] = t;
	if (nd == 0)
		return true;
	bool same_model = false;
	for (int i = 0; i < nl; i++)
		same_model |= !strcmp(lw[i], dw[0]);
	if (!same_model)
		return false;
	/* a detail both names give must agree */
	for (int i = 1; i < nd; i++) {
		size_t L = strlen(dw[i]);
		bool mem = L > 2 && !strcmp(dw[i] + L - 2, "gb") && isdigit((unsigned char)dw[i][0]);
		bool form = !strncmp(dw[i], "sxm", 3) || !strcmp(dw[i], "pcie") || !strcmp(dw[i], "nvl");
		if (!mem && !form)
			continue;
		for (int j = 0; j < nl; j++) {
			size_t M = strlen(lw[j]);
			bool lmem = M > 2 && !strcmp(lw[j] + M - 2, "gb") && isdigit((unsigned char)lw[j][0]);
			bool lform = !strncmp(lw[j], "sxm", 3) || !strcmp(lw[j], "pcie") || !strcmp(lw[j], "nvl");
			if ((mem && lmem && strcmp(lw[j], dw[i]) != 0) || (form && lform && strncmp(lw[j], dw[i], 3) != 0))
				return false;
		}
	}
	return true;
}

static int import_run(char **ops, int nops, const char *system, const char *db_path, const char *note, const char *op_s,
		      long long nodes, long long gpn, long long ranks, bool json);

int
cmd_import(int argc, char **argv)
{
	static const cli_cmd cmd = {"import",
				    "import nccl-tests --system S [--nodes N --gpus-per-node G] [--ranks R]\n"
				    "                         [--op OP] [--note TEXT] [--json] [--db FILE] FILE...\n",
				    about_text, examples_text};
	const char *system = NULL, *db_path = NULL, *note = NULL, *op_s = NULL;
	int nodes = 0, gpn = 0, ranks = 0;
	bool json = false;
	const cli_opt opts[] = {
		OPT_STR("system", "S", &system, "the system the logs were measured on (see 'paraplan hw list')"),
		OPT_INT("nodes", "N", &nodes, 1, 1 << 20,
			"nodes of the test (default: the hosts of the device list, else ranks / G, else ranks / the "
			"system's GPUs per node)"),
		OPT_INT("gpus-per-node", "G", &gpn, 1, 1 << 16, "GPUs per node of the test"),
		OPT_INT("ranks", "R", &ranks, 1, 1 << 22, "GPUs in the test, for files without the '# Using devices' list"),
		OPT_STR("op", "OP", &op_s,
			"the collective, for files that do not say (all_reduce, all_gather, reduce_scatter, alltoall, "
			"broadcast, reduce, sendrecv); by default it is read from the '# Collective test starting' line, a "
			"*_perf command line or the file name"),
		OPT_STR("note", "TEXT", &note, "a note stored with the run (default: the file names)"),
		OPT_SWITCH("json", &json, "print what was stored as JSON"),
		OPT_DB(&db_path),
		OPT_END,
	};
	char **ops = calloc((size_t)argc + 1, sizeof *ops);
	if (ops == NULL)
		return cli_fail(PP_ENOMEM, "out of memory");
	int nops, st = cli_parse(&cmd, opts, argc, argv, ops, argc, &nops);
	if (st == CLI_RUN)
		st = import_run(ops, nops, system, db_path, note, op_s, nodes, gpn, ranks, json);
	free(ops);
	return st;
}

static int
import_run(char **ops, int nops, const char *system, const char *db_path, const char *note, const char *op_s,
	   long long nodes, long long gpn, long long ranks, bool json)
{
	if (nops == 0)
		return cli_usage("import", "missing what to import (nccl-tests)");
	if (strcmp(ops[0], "nccl-tests") != 0)
		return cli_usage("import", "unknown source \"%s\" (expected nccl-tests)", ops[0]);
	if (system == NULL)
		return cli_usage("import", "--system is required (the system the logs were measured on)");
	if (nops < 2)
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
	for (int i = 1; i < nops && rc == 0; i++)
		rc = cal_nccl_read(log, ops[i], &o, err, sizeof err);
	/* Logs of another GPU than the system's are most likely a wrong --system: say so (the
	 * import goes on: a renamed or unlisted GPU model is not an error). */
	for (size_t i = 0; rc == 0 && i < cal_nccl_nblocks(log); i++) {
		cal_nccl_block b;
		cal_nccl_block_get(log, i, &b);
		if (b.gpu_name != NULL && b.gpu_name[0] != '\0' && !gpu_matches(b.gpu_name, sys.gpu.name)) {
			fprintf(stderr, "warning: %s:%d: the log's GPUs are \"%s\", but %s has %s: is --system right?\n", b.file,
				b.line, b.gpu_name, system, sys.gpu.name);
			break;
		}
	}
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
			cli_print_json(sum, "paraplan.import-nccl-tests/1");
		else
			print_summary(sum, system, (double)run_id);
		cJSON_Delete(sum);
	}
	cal_nccl_free(log);
	hw_close(db);
	return status;
}
