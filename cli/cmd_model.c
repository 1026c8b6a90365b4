/*
 * cmd_model.c -- 'paraplan model list|show': the model catalog and derived quantities.
 */
#include "config.h"
#include "cli/cli.h"
#include "models/model.h"

#include <cJSON.h>
#include <string.h>

static const char about_text[] =
	"MODEL is a catalog name (see 'model list'), a path to a paraplan model JSON file\n"
	"(docs/model-format.md) or a path to a Hugging Face config.json (llama, mistral,\n"
	"mixtral, qwen2, gpt2, gpt_neox, bert, deepseek_v2/v3).\n"
	"\n"
	"'show' prints the dimensions and derived quantities: parameters (total, active per\n"
	"token, embedding), FLOPs per token (forward and training, attention counted over the\n"
	"full sequence as Narayanan 2021 and Korthikanti 2022 do), weight and KV-cache bytes;\n"
	"for a CNN, every layer with its output shape, parameters and FLOPs.\n";

static const char examples_text[] =
	"  paraplan model list\n"
	"  paraplan model show llama-3-70b\n"
	"  paraplan model show ./config.json --json\n";

static int
list(bool json)
{
	char err[512];
	cJSON *arr = cJSON_CreateArray();
	const char *h[] = {"model", "family", "kind", "params", "active", "layers", "hidden", "source"};
	cli_table *t = cli_table_new(8, h, "lllrrrrl");
	int status = 0;
	for (size_t i = 0; i < model_catalog_count(); i++) {
		model *m;
		int rc = model_load(model_catalog_name(i), &m, err, sizeof err);
		if (rc != 0) {
			status = cli_fail(rc, err);
			continue;
		}
		char a[32], b[32];
		const model_tf *tf = model_transformer(m);
		cJSON *x = cJSON_CreateObject();
		cJSON_AddStringToObject(x, "name", model_name(m));
		cJSON_AddStringToObject(x, "family", model_family(m));
		cJSON_AddStringToObject(x, "kind", tf ? "transformer" : "cnn");
		cJSON_AddNumberToObject(x, "params", model_params(m));
		cJSON_AddNumberToObject(x, "params_active", model_params_active(m));
		cJSON_AddItemToArray(arr, x);
		cli_table_addf(t, 0, "%s", model_name(m));
		cli_table_addf(t, 1, "%s", model_family(m));
		cli_table_addf(t, 2, "%s", tf ? (tf->experts ? "moe" : "dense") : "cnn");
		cli_table_addf(t, 3, "%s", cli_count(model_params(m), a, sizeof a));
		cli_table_addf(t, 4, "%s", cli_count(model_params_active(m), b, sizeof b));
		if (tf) {
			cli_table_addf(t, 5, "%lld", (long long)tf->layers);
			cli_table_addf(t, 6, "%lld", (long long)tf->hidden);
		} else {
			const model_layer *l;
			cli_table_addf(t, 5, "%zu", model_layers(m, &l));
			cli_table_addf(t, 6, "-");
		}
		cli_table_addf(t, 7, "%s", model_source(m));
		model_free(m);
	}
	if (json)
		cli_print_json(arr = cli_wrap("models", arr), "paraplan.model-list/1");
	else
		cli_table_print(t, stdout);
	cli_table_free(t);
	cJSON_Delete(arr);
	return status;
}

static void
print_show(const model *m, const cJSON *doc)
{
	char a[32], b[32];
	printf("%s (%s, %s)\n", cli_str(doc, "name"), cli_str(doc, "family"), cli_str(doc, "kind"));
	if (cli_str(doc, "source")[0])
		printf("source: %s\n", cli_str(doc, "source"));
	putchar('\n');
	const char *h[] = {"quantity", "value"};
	cli_table *t = cli_table_new(2, h, "lr");
	cli_table_addf(t, 0, "parameters");
	cli_table_addf(t, 1, "%s (%.0f)", cli_count(cli_num(doc, "params"), a, sizeof a), cli_num(doc, "params"));
	const model_tf *tf = model_transformer(m);
	if (tf == NULL) {
		int64_t c, hh, w;
		model_cnn_input(m, &c, &hh, &w);
		cli_table_addf(t, 0, "input");
		cli_table_addf(t, 1, "%lldx%lldx%lld", (long long)c, (long long)hh, (long long)w);
		cli_table_addf(t, 0, "forward FLOPs per sample");
		cli_table_addf(t, 1, "%s", cli_si(cli_num(doc, "fwd_flops_per_sample"), "FLOP", a, sizeof a));
		cli_table_addf(t, 0, "training FLOPs per sample");
		cli_table_addf(t, 1, "%s", cli_si(cli_num(doc, "train_flops_per_sample"), "FLOP", a, sizeof a));
		cli_table_print(t, stdout);
		cli_table_free(t);
		putchar('\n');
		const char *lh[] = {"layer", "type", "output", "params", "fwd FLOPs"};
		t = cli_table_new(5, lh, "llrrr");
		const cJSON *l;
		cJSON_ArrayForEach(l, cJSON_GetObjectItemCaseSensitive(doc, "layers"))
		{
			cli_table_addf(t, 0, "%s", cli_str(l, "name"));
			cli_table_addf(t, 1, "%s", cli_str(l, "type"));
			cli_table_addf(t, 2, "%s", cli_str(l, "output"));
			cli_table_addf(t, 3, "%.0f", cli_num(l, "params"));
			cli_table_addf(t, 4, "%s", cli_num(l, "fwd_flops") > 0 ? cli_si(cli_num(l, "fwd_flops"), "FLOP", a, sizeof a) : "-");
		}
		cli_table_print(t, stdout);
		cli_table_free(t);
		return;
	}
	cli_table_addf(t, 0, "active parameters per token");
	cli_table_addf(t, 1, "%s", cli_count(cli_num(doc, "params_active"), a, sizeof a));
	cli_table_addf(t, 0, "embedding parameters");
	cli_table_addf(t, 1, "%s", cli_count(cli_num(doc, "params_embedding"), a, sizeof a));
	cli_table_addf(t, 0, "layers x hidden");
	cli_table_addf(t, 1, "%lld x %lld", (long long)tf->layers, (long long)tf->hidden);
	cli_table_addf(t, 0, "heads / kv heads / head dim");
	cli_table_addf(t, 1, "%lld / %lld / %lld", (long long)tf->heads, (long long)tf->kv_heads, (long long)tf->head_dim);
	if (tf->ffn) {
		cli_table_addf(t, 0, "MLP");
		cli_table_addf(t, 1, "%s, %lld wide", model_mlp_name(tf->mlp), (long long)tf->ffn);
	}
	if (tf->experts) {
		cli_table_addf(t, 0, "experts");
		cli_table_addf(t, 1, "%lld routed (top %lld) + %lld shared, %lld wide; %lld dense layers first",
			       (long long)tf->experts, (long long)tf->top_k, (long long)tf->shared_experts,
			       (long long)tf->expert_ffn, (long long)tf->dense_layers);
	}
	if (tf->kv_lora_rank) {
		cli_table_addf(t, 0, "attention");
		cli_table_addf(t, 1, "MLA, kv rank %lld, q rank %lld", (long long)tf->kv_lora_rank, (long long)tf->q_lora_rank);
	}
	if (tf->window > 0) {
		cli_table_addf(t, 0, "sliding window");
		if (tf->window_global > 0)
			cli_table_addf(t, 1, "%lld tokens; one layer in %lld attends to the whole context", (long long)tf->window,
				       (long long)tf->window_global);
		else
			cli_table_addf(t, 1, "%lld tokens, every layer", (long long)tf->window);
	}
	cli_table_addf(t, 0, "vocabulary");
	cli_table_addf(t, 1, "%lld%s", (long long)tf->vocab, tf->tied_embeddings ? " (tied embeddings)" : "");
	cli_table_addf(t, 0, "sequence length");
	cli_table_addf(t, 1, "%lld", (long long)tf->seq);
	cli_table_addf(t, 0, "forward FLOPs per token");
	cli_table_addf(t, 1, "%s", cli_si(cli_num(doc, "fwd_flops_per_token"), "FLOP", a, sizeof a));
	cli_table_addf(t, 0, "training FLOPs per token");
	cli_table_addf(t, 1, "%s", cli_si(cli_num(doc, "train_flops_per_token"), "FLOP", a, sizeof a));
	cli_table_addf(t, 0, "weights (bf16)");
	cli_table_addf(t, 1, "%s", cli_bytes(cli_num(doc, "weight_bytes_bf16"), a, sizeof a));
	cli_table_addf(t, 0, "published weights");
	cli_table_addf(t, 1, "%s%s", model_weights_name(tf->weights),
		       tf->weights != MODEL_WEIGHTS_16BIT ? " (what serving runs unless --weights says)" : "");
	cli_table_addf(t, 0, "KV cache per token (bf16)");
	cli_table_addf(t, 1, "%s", cli_bytes(cli_num(doc, "kv_cache_bytes_per_token_bf16"), b, sizeof b));
	cli_table_print(t, stdout);
	cli_table_free(t);
}

int
cmd_model(int argc, char **argv)
{
	static const cli_cmd cmd = {"model", "model list [--json]\nmodel show MODEL [--json]\n", about_text, examples_text};
	bool json = false;
	const cli_opt opts[] = {
		OPT_JSON(&json),
		OPT_END,
	};
	char *ops[3];
	int nops, st;
	if ((st = cli_parse(&cmd, opts, argc, argv, ops, 3, &nops)) != CLI_RUN)
		return st;
	if (nops == 0)
		return cli_usage("model", "missing subcommand (list or show)");
	const char *sub = ops[0];
	int nargs = nops - 1;
	if (!strcmp(sub, "list")) {
		if (nargs != 0)
			return cli_usage("model", "'model list' takes no arguments");
		return list(json);
	}
	if (strcmp(sub, "show") != 0)
		return cli_usage("model", "unknown subcommand \"%s\" (expected list or show)", sub);
	if (nargs != 1)
		return cli_usage("model", "'model show' takes one MODEL (a catalog name or a path)");
	char err[512];
	model *m;
	int rc = cli_load_model(ops[1], &m, err, sizeof err);
	if (rc != 0)
		return cli_fail(rc == PP_ENOTFOUND ? PP_EUSAGE : rc, err);
	cJSON *doc = model_to_json(m);
	if (json)
		cli_print_json(doc, "paraplan.model/1");
	else
		print_show(m, doc);
	cJSON_Delete(doc);
	model_free(m);
	return 0;
}
