/*
 * replay.c -- the host half of 'paraplan replay': reading a plan document, lowering a rank's op
 * list into a launch program, the communicators and how every rank joins them, packing an op
 * list for MPI.  Built everywhere (no CUDA here), so everything a replay decides before it
 * touches a GPU is tested on machines without one; calibrate/replay_gpu.c executes the program.
 *
 * Lowering keeps what the simulator priced: a GEMM keeps its shape and dtype (fractional MoE
 * token counts round to the nearest whole row), a memory-bound kernel its bytes, a collective its
 * group, op and nccl-tests size.  Flash attention, which cuBLAS does not provide, becomes GEMM
 * pairs of the same FLOPs: per chunk of queries, scores = Q K^T and context = P V over the keys a
 * causal mask leaves (half of them: the half the cost model counts), and five products of the
 * same sizes backward (scores again, dV, dP, dQ, dK: 2.5 x the forward when the head dims of
 * Q/K and V agree).  The score chunks go through memory where a fused kernel keeps them on chip:
 * the replayed attention is a GEMM-rate proxy, not FlashAttention (docs/replay.md).
 */
#include "config.h"
#include "calibrate/cal.h"
#include "common/json.h"
#include "common/pp.h"

#include <cJSON.h>
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the plan document --------------------------------------------------------------------- */

typedef struct pctx {
	const char *name;   /* the file, for messages */
	const char *prefix; /* "winner.config." or "config." */
	char *err;
	size_t errlen;
} pctx;

static int
bad(const pctx *x, const char *field, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int
bad(const pctx *x, const char *field, const char *fmt, ...)
{
	char msg[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return pp_err(x->err, x->errlen, PP_EUSAGE, "%s: %s%s %s", x->name, x->prefix, field, msg);
}

static void
describe(const cJSON *v, char *buf, size_t n)
{
	if (v == NULL)
		snprintf(buf, n, "nothing");
	else if (cJSON_IsNumber(v))
		snprintf(buf, n, "%.17g", v->valuedouble);
	else if (cJSON_IsString(v))
		snprintf(buf, n, "\"%.60s\"", v->valuestring);
	else if (cJSON_IsBool(v))
		snprintf(buf, n, "%s", cJSON_IsTrue(v) ? "true" : "false");
	else if (cJSON_IsNull(v))
		snprintf(buf, n, "null");
	else
		snprintf(buf, n, "%s", cJSON_IsArray(v) ? "an array" : "an object");
}

/* An integer field in [lo, hi]; absent: *out keeps its value when optional. */
static int
get_int(const pctx *x, const cJSON *o, const char *field, bool required, int64_t lo, int64_t hi, int64_t *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, field);
	if (v == NULL && !required)
		return 0;
	char d[96];
	describe(v, d, sizeof d);
	if (v == NULL)
		return bad(x, field, "is missing (an integer from %lld to %lld)", (long long)lo, (long long)hi);
	double f = cJSON_IsNumber(v) ? v->valuedouble : NAN;
	if (!isfinite(f) || f != floor(f) || f < (double)lo || f > (double)hi)
		return bad(x, field, "must be an integer from %lld to %lld, got %s", (long long)lo, (long long)hi, d);
	*out = (int64_t)f;
	return 0;
}

static int
get_num(const pctx *x, const cJSON *o, const char *field, double lo, double hi, double *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, field);
	if (v == NULL)
		return 0;
	char d[96];
	describe(v, d, sizeof d);
	double f = cJSON_IsNumber(v) ? v->valuedouble : NAN;
	if (!isfinite(f) || f < lo || f > hi)
		return bad(x, field, "must be a number from %g to %g, got %s", lo, hi, d);
	*out = f;
	return 0;
}

static int
get_bool(const pctx *x, const cJSON *o, const char *field, bool required, bool *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, field);
	if (v == NULL && !required)
		return 0;
	char d[96];
	describe(v, d, sizeof d);
	if (!cJSON_IsBool(v))
		return bad(x, field, "must be true or false, got %s", d);
	*out = cJSON_IsTrue(v);
	return 0;
}

static int
get_str(const pctx *x, const cJSON *o, const char *field, const char **out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, field);
	char d[96];
	describe(v, d, sizeof d);
	if (!cJSON_IsString(v) || v->valuestring[0] == '\0')
		return bad(x, field, "must be a non-empty string, got %s", d);
	*out = v->valuestring;
	return 0;
}

/* An optional field naming a value of a choice parameter (fp8_recipe, ep_dispatch, zero3_gather): its value
 * into *out, which stays as it is when the field is absent. */
static int
get_choice(const pctx *x, const cJSON *o, const char *field, hw_pkey key, int *out)
{
	if (cJSON_GetObjectItemCaseSensitive(o, field) == NULL)
		return 0;
	const char *s;
	int rc = get_str(x, o, field, &s);
	if (rc != 0)
		return rc;
	const hw_pdef *d = hw_pdef_get(key);
	double v;
	if (hw_pdef_choice(d, s, &v) == 0) {
		*out = (int)v;
		return 0;
	}
	pp_str names = {0};
	for (int i = 0; d->names[i] != NULL; i++)
		pp_str_addf(&names, "%s%s", i == 0 ? "" : d->names[i + 1] == NULL ? " or " : ", ", d->names[i]);
	rc = bad(x, field, "must be %s, got \"%s\"", names.buf ? names.buf : "", s);
	pp_str_free(&names);
	return rc;
}

static int
parse_cfg(const pctx *x, const cJSON *o, sim_train_cfg *c)
{
	sim_train_cfg_init(c);
	int64_t v;
	int rc;
#define INT_FIELD(name, lo, hi, dst)                                                               \
	do {                                                                                       \
		if ((rc = get_int(x, o, name, true, lo, hi, &v)) != 0)                             \
			return rc;                                                                 \
		dst = v;                                                                           \
	} while (0)
	INT_FIELD("gpus", 1, 1 << 24, c->gpus);
	INT_FIELD("tp", 1, 1 << 24, c->tp);
	INT_FIELD("pp", 1, 1 << 24, c->pp);
	INT_FIELD("dp", 1, 1 << 24, c->dp);
	INT_FIELD("cp", 1, 1 << 24, c->cp);
	INT_FIELD("ep", 1, 1 << 24, c->ep);
	/* the MoE layers' TP degree: absent in plans written before parallel folding (the default
	 * then, tp where it fits, is what they ran) */
	v = 0;
	if ((rc = get_int(x, o, "etp", false, 0, 1 << 24, &v)) != 0)
		return rc;
	c->etp = (int)v;
	INT_FIELD("vpp", 1, 1 << 16, c->vpp);
	INT_FIELD("zero", 0, 3, c->zero);
	/* hybrid sharding's shard group: absent, ZeRO shards over every data-parallel rank */
	v = 0;
	if ((rc = get_int(x, o, "dp_shard", false, 0, 1 << 24, &v)) != 0)
		return rc;
	c->dp_shard = (int)v;
	INT_FIELD("micro_batch", 1, INT64_C(1) << 40, c->micro_batch);
	INT_FIELD("global_batch", 1, INT64_C(1) << 40, c->global_batch);
	INT_FIELD("seq", 0, 1 << 24, c->seq);
#undef INT_FIELD
	const char *s;
	if ((rc = get_str(x, o, "schedule", &s)) != 0)
		return rc;
	if (sim_schedule_parse(s, &c->schedule) != 0)
		return bad(x, "schedule", "must be gpipe, 1f1b, interleaved or zb-h1, got \"%s\"", s);
	if ((rc = get_str(x, o, "recompute", &s)) != 0)
		return rc;
	if (sim_recompute_parse(s, &c->recompute) != 0)
		return bad(x, "recompute", "must be none, selective, full or op, got \"%s\"", s);
	if ((rc = get_str(x, o, "dtype", &s)) != 0)
		return rc;
	if (hw_dtype_parse(s, &c->dtype) != 0)
		return bad(x, "dtype", "must be bf16, fp16, fp8, tf32 or fp32, got \"%s\"", s);
	if ((rc = get_str(x, o, "attention", &s)) != 0)
		return rc;
	if (sim_attention_parse(s, &c->attention) != 0)
		return bad(x, "attention", "must be flash2, flash3 or unfused, got \"%s\"", s);
	int dispatch = HW_EP_ALLTOALL;
	if ((rc = get_choice(x, o, "fp8_recipe", HW_P_FW_FP8_RECIPE, &c->fp8_recipe)) != 0 ||
	    (rc = get_choice(x, o, "ep_dispatch", HW_P_FW_EP_DISPATCH, &dispatch)) != 0 ||
	    (rc = get_choice(x, o, "zero3_gather", HW_P_FW_ZERO3_GATHER, &c->zero3_gather)) != 0)
		return rc;
	c->ep_deepep = dispatch == HW_EP_DEEPEP;
	if ((rc = get_bool(x, o, "sequence_parallel", true, &c->sequence_parallel)) != 0 ||
	    (rc = get_bool(x, o, "fsdp", false, &c->fsdp)) != 0 ||
	    (rc = get_bool(x, o, "zero3_regather", false, &c->zero3_regather)) != 0 ||
	    (rc = get_bool(x, o, "zero3_prefetch", false, &c->zero3_prefetch)) != 0 ||
	    (rc = get_bool(x, o, "dp_one_stream", false, &c->dp_one_stream)) != 0 ||
	    (rc = get_bool(x, o, "offload_optimizer", false, &c->offload_optimizer)) != 0 ||
	    (rc = get_bool(x, o, "tp_comm_overlap", false, &c->tp_comm_overlap)) != 0 ||
	    (rc = get_bool(x, o, "tp_wgrad_overlap", false, &c->tp_wgrad_overlap)) != 0 ||
	    (rc = get_bool(x, o, "overlap_grad_reduce", false, &c->overlap_grad_reduce)) != 0 ||
	    (rc = get_bool(x, o, "overlap_param_gather", false, &c->overlap_param_gather)) != 0 ||
	    (rc = get_bool(x, o, "pp_scatter_gather", false, &c->pp_scatter_gather)) != 0)
		return rc;
	v = 0;
	if ((rc = get_int(x, o, "grad_reduce_bytes", false, 2, 4, &v)) != 0)
		return rc;
	if (v == 3)
		return bad(x, "grad_reduce_bytes", "must be 2 or 4, got 3");
	c->grad_reduce_bytes = (int)v;
	if ((rc = get_num(x, o, "bucket_bytes", 0, 1e15, &c->bucket_bytes)) != 0 ||
	    (rc = get_num(x, o, "moe_imbalance", 1, 64, &c->moe_imbalance)) != 0 ||
	    (rc = get_num(x, o, "moe_capacity", 0, 1e6, &c->moe_capacity)) != 0)
		return rc;
	v = 0;
	if ((rc = get_int(x, o, "first_stage_layers", false, 0, 1 << 20, &v)) != 0)
		return rc;
	c->first_stage_layers = (int)v;
	v = 0;
	if ((rc = get_int(x, o, "last_stage_layers", false, 0, 1 << 20, &v)) != 0)
		return rc;
	c->last_stage_layers = (int)v;
	int64_t mp = (int64_t)c->tp * c->pp * c->dp * c->cp;
	if (mp != c->gpus)
		return pp_err(x->err, x->errlen, PP_EUSAGE, "%s: %stp x pp x dp x cp (%d x %d x %d x %d) must equal %sgpus (%d)",
			      x->name, x->prefix, c->tp, c->pp, c->dp, c->cp, x->prefix, c->gpus);
	return 0;
}

int
cal_replay_plan_parse(const char *name, const char *text, cal_replay_plan *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof *out);
	cJSON *doc = NULL;
	char why[512];
	int prc = pp_json_parse(text, strlen(text), name, 0, &doc, why, sizeof why);
	if (prc != 0)
		return pp_err(err, errlen, prc == PP_ENOMEM ? prc : PP_EUSAGE,
			      "%s (expected the --json output of 'paraplan plan train' or 'paraplan simulate train')", why);
	pctx x = {name, "", err, errlen};
	int rc = 0;
	const char *kind = NULL, *mspec = NULL, *system = NULL;
	if (!cJSON_IsObject(doc)) {
		rc = pp_err(err, errlen, PP_EUSAGE, "%s: expected a JSON object (a plan or simulation document)", name);
		goto out;
	}
	const cJSON *k = cJSON_GetObjectItemCaseSensitive(doc, "kind");
	if (!cJSON_IsString(k)) {
		rc = pp_err(err, errlen, PP_EUSAGE,
			    "%s: \"kind\" is missing: expected the --json output of 'paraplan plan train' (\"plan-train\") or "
			    "'paraplan simulate train' (\"train\")",
			    name);
		goto out;
	}
	kind = k->valuestring;
	if (strcmp(kind, "plan-train") != 0 && strcmp(kind, "train") != 0) {
		rc = pp_err(err, errlen, PP_EUSAGE,
			    "%s: \"kind\" is \"%.40s\": replay takes a training plan (\"plan-train\") or a training simulation "
			    "(\"train\")",
			    name, kind);
		goto out;
	}
	if ((rc = get_str(&x, doc, "model", &mspec)) != 0 || (rc = get_str(&x, doc, "system", &system)) != 0)
		goto out;
	if (!pp_strlcpy(out->model, mspec, sizeof out->model) || !pp_strlcpy(out->system, system, sizeof out->system)) {
		rc = pp_err(err, errlen, PP_EUSAGE, "%s: \"model\" or \"system\" is too long", name);
		goto out;
	}
	pp_strlcpy(out->kind, kind, sizeof out->kind);
	const cJSON *holder = doc, *cfg;
	if (!strcmp(kind, "plan-train")) {
		holder = cJSON_GetObjectItemCaseSensitive(doc, "winner");
		if (!cJSON_IsObject(holder)) {
			rc = pp_err(err, errlen, PP_EUSAGE, "%s: the plan has no \"winner\" (no layout fits): nothing to replay", name);
			goto out;
		}
		x.prefix = "winner.config.";
	} else {
		x.prefix = "config.";
	}
	cfg = cJSON_GetObjectItemCaseSensitive(holder, "config");
	if (!cJSON_IsObject(cfg)) {
		rc = pp_err(err, errlen, PP_EUSAGE, "%s: %s is missing or not an object", name,
			    !strcmp(kind, "plan-train") ? "winner.config" : "config");
		goto out;
	}
	if ((rc = parse_cfg(&x, cfg, &out->cfg)) != 0)
		goto out;
	/* the profile's name: looked up when the plan is simulated (cal_replay_simulate) */
	if (cJSON_GetObjectItemCaseSensitive(cfg, "framework") != NULL) {
		const char *fw;
		if ((rc = get_str(&x, cfg, "framework", &fw)) != 0)
			goto out;
		bool ok = fw[0] != '\0' && strlen(fw) < sizeof out->framework;
		for (const char *q = fw; ok && *q; q++)
			ok = islower((unsigned char)*q) || isdigit((unsigned char)*q) || *q == '-' || *q == '_' || *q == '.';
		if (!ok) {
			rc = bad(&x, "framework", "must be a framework profile's name (lower-case letters, digits, '-', '_', '.')");
			goto out;
		}
		pp_strlcpy(out->framework, fw, sizeof out->framework);
	}
	const cJSON *st = cJSON_GetObjectItemCaseSensitive(holder, "step_time_s");
	if (cJSON_IsNumber(st) && st->valuedouble > 0 && isfinite(st->valuedouble))
		out->predicted_s = st->valuedouble;
out:
	cJSON_Delete(doc);
	return rc;
}

int
cal_replay_plan_read(const char *path, cal_replay_plan *out, char *err, size_t errlen)
{
	char *text = NULL;
	int rc = pp_read_text(path, (size_t)256 << 20, &text, NULL, err, errlen);
	if (rc != 0) {
		free(text);
		return rc == PP_ENOMEM ? rc : PP_EUSAGE;
	}
	rc = cal_replay_plan_parse(path, text, out, err, errlen);
	free(text);
	return rc;
}

char *
cal_replay_plan_json(const cal_replay_plan *p)
{
	const sim_train_cfg *c = &p->cfg;
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "kind", "train");
	cJSON_AddStringToObject(o, "model", p->model);
	cJSON_AddStringToObject(o, "system", p->system);
	cJSON *x = cJSON_AddObjectToObject(o, "config");
	cJSON_AddNumberToObject(x, "gpus", c->gpus);
	cJSON_AddNumberToObject(x, "tp", c->tp);
	cJSON_AddNumberToObject(x, "pp", c->pp);
	cJSON_AddNumberToObject(x, "dp", c->dp);
	cJSON_AddNumberToObject(x, "cp", c->cp);
	cJSON_AddNumberToObject(x, "ep", c->ep);
	if (c->etp > 0) /* given, not the default */
		cJSON_AddNumberToObject(x, "etp", c->etp);
	cJSON_AddNumberToObject(x, "vpp", c->vpp);
	cJSON_AddNumberToObject(x, "zero", c->zero);
	if (c->dp_shard > 0)
		cJSON_AddNumberToObject(x, "dp_shard", c->dp_shard);
	cJSON_AddBoolToObject(x, "fsdp", c->fsdp);
	if (c->offload_optimizer)
		cJSON_AddBoolToObject(x, "offload_optimizer", true);
	if (c->tp_comm_overlap)
		cJSON_AddBoolToObject(x, "tp_comm_overlap", true);
	if (c->tp_wgrad_overlap && c->tp > 1)
		cJSON_AddBoolToObject(x, "tp_wgrad_overlap", true);
	if (c->ep_deepep)
		cJSON_AddStringToObject(x, "ep_dispatch", "deepep");
	if (c->zero >= 3 && c->zero3_gather != HW_Z3_LAYER)
		cJSON_AddStringToObject(x, "zero3_gather", hw_pdef_choice_name(hw_pdef_get(HW_P_FW_ZERO3_GATHER), c->zero3_gather));
	if (c->zero >= 3 && c->zero3_regather)
		cJSON_AddBoolToObject(x, "zero3_regather", true);
	if (c->zero >= 3 && !c->zero3_prefetch)
		cJSON_AddBoolToObject(x, "zero3_prefetch", false);
	if (c->zero >= 2 && c->dp_one_stream)
		cJSON_AddBoolToObject(x, "dp_one_stream", true);
	if (p->framework[0])
		cJSON_AddStringToObject(x, "framework", p->framework);
	cJSON_AddStringToObject(x, "schedule", sim_schedule_name(c->schedule));
	cJSON_AddNumberToObject(x, "micro_batch", (double)c->micro_batch);
	cJSON_AddNumberToObject(x, "global_batch", (double)c->global_batch);
	cJSON_AddNumberToObject(x, "seq", (double)c->seq);
	cJSON_AddStringToObject(x, "recompute", sim_recompute_name(c->recompute));
	cJSON_AddBoolToObject(x, "sequence_parallel", c->sequence_parallel);
	cJSON_AddStringToObject(x, "dtype", hw_dtype_name(c->dtype));
	if (c->dtype == HW_FP8)
		cJSON_AddStringToObject(x, "fp8_recipe", hw_pdef_choice_name(hw_pdef_get(HW_P_FW_FP8_RECIPE), c->fp8_recipe));
	cJSON_AddStringToObject(x, "attention", sim_attention_name(c->attention));
	cJSON_AddBoolToObject(x, "overlap_grad_reduce", c->overlap_grad_reduce);
	if (c->grad_reduce_bytes > 0 || c->grad_reduce != HW_GR_DTYPE) /* given, or the framework's */
		cJSON_AddNumberToObject(x, "grad_reduce_bytes", sim_grad_bytes(c));
	cJSON_AddBoolToObject(x, "overlap_param_gather", c->overlap_param_gather);
	cJSON_AddNumberToObject(x, "bucket_bytes", c->bucket_bytes);
	cJSON_AddBoolToObject(x, "pp_scatter_gather", c->pp_scatter_gather);
	cJSON_AddNumberToObject(x, "moe_imbalance", c->moe_imbalance);
	cJSON_AddNumberToObject(x, "moe_capacity", c->moe_capacity);
	cJSON_AddNumberToObject(x, "first_stage_layers", c->first_stage_layers);
	cJSON_AddNumberToObject(x, "last_stage_layers", c->last_stage_layers);
	if (p->predicted_s > 0)
		cJSON_AddNumberToObject(o, "step_time_s", p->predicted_s);
	char *s = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	return s;
}

/* A plan's configuration as a replay simulates it: the symmetric mode (every rank's list is its
 * stage representative's, tests/check_replay.c), no trace, no straggler. */
static sim_train_cfg
replay_cfg(const cal_replay_plan *p)
{
	sim_train_cfg c = p->cfg;
	c.full = false;
	c.trace = false;
	c.record_ops = false;
	c.straggler = 1.0;
	c.straggler_rank = -1;
	return c;
}

int
cal_replay_simulate(hw_db *db, const model *m, const hw_cost *cost, const cal_replay_plan *p, hw_profile **fw,
		    sim_train_result **out, char *err, size_t errlen)
{
	*out = NULL;
	*fw = NULL;
	int rc = p->framework[0] ? hw_profile_find(db, HW_SCOPE_FRAMEWORK, p->framework, fw, err, errlen) : 0;
	if (rc != 0)
		return rc == PP_ENOTFOUND ? PP_EUSAGE : rc;
	/* the profile's fitted rates and host time; what the framework runs and overlaps is the
	 * document's (parse_cfg read it), not the profile's defaults */
	sim_train_cfg c = replay_cfg(p);
	c.fw = *fw;
	c.record_ops = true;
	return sim_train(m, cost, &c, out, err, errlen);
}

int
cal_replay_kernels_s(const model *m, const hw_cost *cost, const cal_replay_plan *p, double *out, char *err,
		     size_t errlen)
{
	*out = 0.0;
	sim_train_cfg c = replay_cfg(p);
	c.fw = NULL;
	c.attn_proxy = true;
	sim_train_result *r;
	int rc = sim_train(m, cost, &c, &r, err, errlen);
	if (rc != 0)
		return rc;
	*out = sim_train_metrics(r)->step_time_s;
	sim_train_result_free(r);
	return 0;
}

/* ---- the split schedule -------------------------------------------------------------------- */

static const sim_group coll_groups[] = {SIM_G_TP, SIM_G_CP, SIM_G_EP, SIM_G_DP, SIM_G_EDP, SIM_G_EMB, SIM_G_ETP,
					 SIM_G_DPR};
#define NCOLLGROUPS (sizeof coll_groups / sizeof coll_groups[0])

/* The stage a pipeline link leads to, or -1 when there is no such link. */
static int
link_to(const sim_train_cfg *c, int dir, int from)
{
	int p = c->pp, to = dir == 0 ? from + 1 : from - 1;
	if (p <= 1)
		return -1;
	if (to >= 0 && to < p)
		return to;
	/* the interleaved schedule passes the last stage's chunk on to the first */
	return c->vpp > 1 ? (to + p) % p : -1;
}

int
cal_replay_split_keys(const sim_train_cfg *c, cal_split_key **keys, size_t *n)
{
	size_t cap = NCOLLGROUPS * SIM_NSTREAMS + 2 * (size_t)(c->pp > 0 ? c->pp : 1);
	cal_split_key *k = calloc(cap, sizeof *k);
	if (k == NULL)
		return PP_ENOMEM;
	size_t m = 0;
	for (size_t g = 0; g < NCOLLGROUPS; g++)
		for (int s = 0; s < SIM_NSTREAMS; s++)
			k[m++] = (cal_split_key){.group = coll_groups[g], .stream = s};
	for (int dir = 0; dir < 2; dir++)
		for (int a = 0; a < c->pp; a++) {
			int b = link_to(c, dir, a);
			if (b >= 0)
				k[m++] = (cal_split_key){.link = true, .group = SIM_G_PP, .dir = dir, .from_stage = a, .to_stage = b};
		}
	*keys = k;
	*n = m;
	return 0;
}

static int
key_of_group(sim_group g, int stream)
{
	for (size_t i = 0; i < NCOLLGROUPS; i++)
		if (coll_groups[i] == g)
			return (int)i * SIM_NSTREAMS + stream;
	return -1;
}

static int
key_of_link(const sim_train_cfg *c, int dir, int from)
{
	int k = (int)NCOLLGROUPS * SIM_NSTREAMS;
	for (int d = 0; d < 2; d++)
		for (int a = 0; a < c->pp; a++) {
			if (link_to(c, d, a) < 0)
				continue;
			if (d == dir && a == from)
				return k;
			k++;
		}
	return -1;
}

/* ---- lowering ------------------------------------------------------------------------------ */

int
cal_replay_in_bytes(hw_dtype t)
{
	return t == HW_FP8 ? 1 : t == HW_FP32 || t == HW_TF32 ? 4 : 2;
}

static int
in_bytes(hw_dtype t)
{
	return t == HW_FP8 ? 1 : t == HW_FP32 || t == HW_TF32 ? 4 : 2;
}

static int
out_bytes(hw_dtype t)
{
	return t == HW_FP8 ? 2 : in_bytes(t); /* fp8 GEMMs write bf16, as calibration measures them */
}

int64_t
cal_replay_buffer_dim(hw_dtype t, int64_t v)
{
	return t == HW_FP8 ? (v + 15) / 16 * 16 : v;
}

typedef struct lctx {
	cal_replay_prog *p;
	const sim_train_cfg *c;
	size_t lcap, scap, wcap, ccap, wtcap;
	bool oom;
} lctx;

void
cal_replay_prog_free(cal_replay_prog *p)
{
	if (p == NULL)
		return;
	for (size_t i = 0; i < p->ncomms; i++)
		free(p->comms[i].members);
	free(p->comms);
	free(p->pops);
	free(p->launches);
	free(p->waits);
	free(p->shapes);
	free(p->weights);
	free(p);
}

static cal_launch *
launch(lctx *x, cal_lkind kind)
{
	cal_replay_prog *p = x->p;
	if (PP_GROW(p->launches, x->lcap, p->nlaunches + 1) != 0) {
		x->oom = true;
		return NULL;
	}
	cal_launch *l = &p->launches[p->nlaunches++];
	memset(l, 0, sizeof *l);
	l->kind = kind;
	l->shape = l->weight = l->comm = -1;
	return l;
}

static int32_t
shape_id(lctx *x, int64_t m, int64_t n, int64_t k, int64_t batch, hw_dtype t)
{
	cal_replay_prog *p = x->p;
	for (size_t i = 0; i < p->nshapes; i++) {
		const cal_shape *s = &p->shapes[i];
		if (s->m == m && s->n == n && s->k == k && s->batch == batch && s->dtype == t)
			return (int32_t)i;
	}
	if (PP_GROW(p->shapes, x->scap, p->nshapes + 1) != 0) {
		x->oom = true;
		return -1;
	}
	p->shapes[p->nshapes] = (cal_shape){m, n, k, batch, t};
	return (int32_t)p->nshapes++;
}

static int32_t
weight_id(lctx *x, int64_t layer, sim_weight w, int64_t bytes)
{
	cal_replay_prog *p = x->p;
	for (size_t i = 0; i < p->nweights; i++)
		if (p->weights[i].layer == layer && p->weights[i].w == w) {
			if (bytes > p->weights[i].bytes)
				p->weights[i].bytes = bytes;
			return (int32_t)i;
		}
	if (PP_GROW(p->weights, x->wtcap, p->nweights + 1) != 0) {
		x->oom = true;
		return -1;
	}
	p->weights[p->nweights] = (cal_weight){layer, w, bytes, (int)p->nweights};
	return (int32_t)p->nweights++;
}

/* The operand set of an input element size (cal_replay_prog.operand_bytes). */
static int
operand_set(hw_dtype t)
{
	int b = in_bytes(t);
	return b == 1 ? 0 : b == 2 ? 1 : 2;
}

static void
operand(cal_replay_prog *p, hw_dtype t, int which, int64_t bytes)
{
	int64_t *o = &p->operand_bytes[operand_set(t)][which];
	if (bytes > *o)
		*o = bytes;
}

/* One GEMM launch; w (>= 0) is the weight it multiplies (B) or whose gradient it writes (C). */
static void
gemm(lctx *x, int64_t m, int64_t n, int64_t k, int64_t batch, hw_dtype t, int32_t w, bool wout)
{
	cal_launch *l = launch(x, CAL_L_GEMM);
	if (l == NULL)
		return;
	l->shape = shape_id(x, m, n, k, batch, t);
	l->weight = w;
	l->weight_out = wout;
	l->flops = 2.0 * (double)m * (double)n * (double)k * (double)batch;
	cal_replay_prog *p = x->p;
	p->gemm_flops += l->flops;
	p->ngemm++;
	int ib = in_bytes(t), ob = out_bytes(t);
	int64_t bm = cal_replay_buffer_dim(t, m), bn = cal_replay_buffer_dim(t, n), bk = cal_replay_buffer_dim(t, k);
	operand(p, t, 0, bm * bk * batch * ib);
	if (w < 0 || wout)
		operand(p, t, 1, bk * bn * batch * ib);
	if (w < 0 || !wout)
		operand(p, t, 2, bm * bn * batch * ob);
}

typedef struct proxy_ctx {
	lctx *x;
	hw_dtype t;
} proxy_ctx;

static void
proxy_gemm(void *arg, int64_t m, int64_t n, int64_t k, int64_t batch)
{
	proxy_ctx *a = arg;
	gemm(a->x, m, n, k, batch, a->t, -1, false);
}

/* Attention as the GEMMs that stand for it (sim_attn_proxy), counted apart. */
static void
attention(lctx *x, const hw_kernel *k)
{
	double before = x->p->gemm_flops;
	proxy_ctx a = {x, k->dtype};
	sim_attn_proxy(k, proxy_gemm, &a);
	x->p->attn_flops += x->p->gemm_flops - before;
}

static void
memop(lctx *x, double bytes)
{
	int64_t b = sim_whole(bytes);
	cal_launch *l = launch(x, CAL_L_MEM);
	if (l == NULL)
		return;
	l->bytes = b;
	x->p->mem_bytes += (double)b;
	x->p->nmem++;
	if (b > x->p->mem_bytes_max)
		x->p->mem_bytes_max = b;
}

static int
cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return x < y ? -1 : x > y;
}

/* The communicator of split key `key` (made on first use), members given (any order). */
static int32_t
comm_id(lctx *x, int key, sim_group g, int stream, const int *members, int n)
{
	cal_replay_prog *p = x->p;
	for (size_t i = 0; i < p->ncomms; i++)
		if (p->comms[i].key == key)
			return (int32_t)i;
	if (PP_GROW(p->comms, x->ccap, p->ncomms + 1) != 0) {
		x->oom = true;
		return -1;
	}
	cal_comm *cm = &p->comms[p->ncomms];
	memset(cm, 0, sizeof *cm);
	cm->members = malloc((size_t)n * sizeof *cm->members);
	if (cm->members == NULL) {
		x->oom = true;
		return -1;
	}
	memcpy(cm->members, members, (size_t)n * sizeof *members);
	qsort(cm->members, (size_t)n, sizeof *members, cmp_int);
	cm->key = key;
	cm->group = g;
	cm->stream = stream;
	cm->size = n;
	cm->me = -1;
	for (int i = 0; i < n; i++)
		if (cm->members[i] == p->rank)
			cm->me = i;
	cm->color = cm->members[0];
	return (int32_t)p->ncomms++;
}

static int32_t
group_comm(lctx *x, sim_group g, int stream)
{
	int n = sim_group_size(x->c, g);
	int *mem = malloc((size_t)n * sizeof *mem);
	if (mem == NULL) {
		x->oom = true;
		return -1;
	}
	sim_group_members(x->c, g, x->p->rank, mem, n);
	int32_t id = comm_id(x, key_of_group(g, stream), g, stream, mem, n);
	free(mem);
	return id;
}

static void
comm_bytes(lctx *x, int32_t comm, int64_t send, int64_t recv)
{
	if (comm < 0)
		return;
	cal_comm *cm = &x->p->comms[comm];
	if (send > cm->send_bytes)
		cm->send_bytes = send;
	if (recv > cm->recv_bytes)
		cm->recv_bytes = recv;
}

static int
collective(lctx *x, const sim_rop *op, char *err, size_t errlen)
{
	int n = op->group_size, elem = op->elem_bytes > 0 ? op->elem_bytes : 2;
	int32_t cm = group_comm(x, op->group, op->stream);
	if (cm < 0)
		return PP_ENOMEM;
	int64_t size = sim_whole(op->bytes);
	if (size < (int64_t)n * elem)
		size = (int64_t)n * elem; /* at least one element per rank */
	if (op->coll == HW_SEND_RECV) {
		/* the ring of context parallelism: the K/V chunks pass around the group in n - 1 steps */
		cal_launch *l = launch(x, CAL_L_RING);
		if (l == NULL)
			return PP_ENOMEM;
		l->comm = cm;
		l->coll = op->coll;
		l->elem = elem;
		l->steps = n - 1;
		l->count = size / elem / (n - 1 > 0 ? n - 1 : 1);
		if (l->count < 1)
			l->count = 1;
		l->bytes = l->count * elem * l->steps;
		comm_bytes(x, cm, l->count * elem, l->count * elem);
		x->p->ncoll++;
		return 0;
	}
	cal_coll_layout L;
	if (cal_coll_layout_get(op->coll, size, n, elem, &L) != 0)
		return pp_err(err, errlen, PP_EINPUT, "rank %d: a %s of %g bytes over %d ranks has no layout", x->p->rank,
			      hw_coll_name(op->coll), op->bytes, n);
	cal_launch *l = launch(x, op->coll == HW_ALL_TO_ALL ? CAL_L_ALLTOALL : CAL_L_COLL);
	if (l == NULL)
		return PP_ENOMEM;
	l->comm = cm;
	l->coll = op->coll;
	l->elem = elem;
	l->bytes = L.bytes;
	switch (op->coll) {
	case HW_ALL_REDUCE:
	case HW_ALL_GATHER:
		l->count = L.send_count;
		break;
	case HW_REDUCE_SCATTER:
		l->count = L.recv_count;
		break;
	case HW_ALL_TO_ALL:
		l->count = L.chunk;
		break;
	default:
		return pp_err(err, errlen, PP_EINPUT, "rank %d: the op list holds a %s, which replay does not run", x->p->rank,
			      hw_coll_name(op->coll));
	}
	comm_bytes(x, cm, L.send_count * elem, L.recv_count * elem);
	x->p->ncoll++;
	return 0;
}

static int
p2p(lctx *x, const sim_rop *op)
{
	bool send = op->kind == SIM_OP_SEND;
	int dir = op->stream == SIM_S_PP_SEND_FWD || op->stream == SIM_S_PP_RECV_FWD ? 0 : 1;
	int from = send ? x->p->stage : op->peer_stage;
	int members[2] = {x->p->rank, op->peer};
	int32_t cm = comm_id(x, key_of_link(x->c, dir, from), SIM_G_PP, op->stream, members, 2);
	if (cm < 0)
		return PP_ENOMEM;
	int elem = op->elem_bytes > 0 ? op->elem_bytes : 2;
	cal_launch *l = launch(x, send ? CAL_L_SEND : CAL_L_RECV);
	if (l == NULL)
		return PP_ENOMEM;
	l->comm = cm;
	l->coll = HW_SEND_RECV;
	l->elem = elem;
	l->count = sim_whole(op->bytes) / elem;
	if (l->count < 1)
		l->count = 1;
	l->bytes = l->count * elem;
	l->peer = 1 - x->p->comms[cm].me;
	comm_bytes(x, cm, send ? l->bytes : 0, send ? 0 : l->bytes);
	if (send)
		x->p->nsend++;
	else
		x->p->nrecv++;
	if (op->tp_gather && x->c->tp > 1) {
		/* Megatron's scatter/gather: each TP rank received its slice; they all-gather it */
		int64_t count = l->count; /* l moves when the next launch grows the array */
		int32_t tc = group_comm(x, SIM_G_TP, op->stream);
		cal_launch *g = launch(x, CAL_L_COLL);
		if (tc < 0 || g == NULL)
			return PP_ENOMEM;
		g->comm = tc;
		g->coll = HW_ALL_GATHER;
		g->elem = elem;
		g->count = count;
		g->bytes = count * elem * x->c->tp;
		comm_bytes(x, tc, g->count * elem, g->bytes);
		x->p->ncoll++;
	}
	return 0;
}

int
cal_replay_lower(const sim_rank_ops *o, const sim_train_cfg *c, cal_replay_prog **out, char *err, size_t errlen)
{
	*out = NULL;
	cal_replay_prog *p = calloc(1, sizeof *p);
	int32_t *event_of = calloc(o->nops ? o->nops : 1, sizeof *event_of);
	if (p == NULL || event_of == NULL) {
		free(p);
		free(event_of);
		return pp_err(err, errlen, PP_ENOMEM, "out of memory");
	}
	lctx x = {.p = p, .c = c};
	p->rank = o->rank;
	p->ranks = o->ranks;
	p->stage = o->co.pp;
	int rc = 0;
	/* an event for every op another stream waits for */
	for (size_t i = 0; i < o->nops; i++)
		event_of[i] = -1;
	for (size_t d = 0; d < o->ndeps; d++)
		if (event_of[o->deps[d]] < 0)
			event_of[o->deps[d]] = p->nevents++;
	p->pops = calloc(o->nops ? o->nops : 1, sizeof *p->pops);
	p->waits = malloc((o->ndeps ? o->ndeps : 1) * sizeof *p->waits);
	if (p->pops == NULL || p->waits == NULL) {
		rc = PP_ENOMEM;
		goto out;
	}
	p->npops = o->nops;
	for (size_t i = 0; i < o->nops && rc == 0 && !x.oom; i++) {
		const sim_rop *op = &o->ops[i];
		cal_pop *q = &p->pops[i];
		q->stream = op->stream;
		q->op = i;
		q->event = event_of[i];
		q->w0 = p->nwaits;
		for (size_t d = op->d0; d < op->d0 + op->nd; d++)
			p->waits[p->nwaits++] = event_of[o->deps[d]];
		q->nw = p->nwaits - q->w0;
		q->l0 = p->nlaunches;
		switch (op->kind) {
		case SIM_OP_COMPUTE:
			p->sim_flops += op->flops;
			for (size_t k = op->k0; k < op->k0 + op->nk; k++) {
				const sim_kernel *sk = &o->kernels[k];
				const hw_kernel *kk = &sk->hk;
				if (kk->kind == HW_K_GEMM) {
					int64_t m = sim_whole(kk->m), n = sim_whole(kk->n), kd = sim_whole(kk->k), b = sim_whole(kk->batch);
					int32_t w = -1;
					bool wout = sk->pass == SIM_PASS_WGRAD;
					if (sk->weight != SIM_W_NONE && sk->pass != SIM_PASS_BMM) {
						int64_t pm = cal_replay_buffer_dim(kk->dtype, m), pn = cal_replay_buffer_dim(kk->dtype, n),
							pk = cal_replay_buffer_dim(kk->dtype, kd);
						int64_t elems = (wout ? pm * pn : pk * pn) * b;
						int bytes = in_bytes(kk->dtype) > out_bytes(kk->dtype) ? in_bytes(kk->dtype)
												 : out_bytes(kk->dtype);
						w = weight_id(&x, sk->layer, sk->weight, elems * bytes);
					}
					gemm(&x, m, n, kd, b, kk->dtype, w, wout);
				} else if (kk->kind == HW_K_ATTN) {
					attention(&x, kk);
				} else {
					memop(&x, hw_kernel_bytes(kk));
				}
			}
			break;
		case SIM_OP_COLL:
			rc = collective(&x, op, err, errlen);
			break;
		case SIM_OP_SEND:
		case SIM_OP_RECV:
			rc = p2p(&x, op);
			break;
		default:
			break; /* a mark: its event is all it is */
		}
		q->nl = p->nlaunches - q->l0;
	}
	p->nslots = (int)p->nweights;
out:
	free(event_of);
	if (rc == 0 && x.oom)
		rc = PP_ENOMEM;
	if (rc != 0) {
		if (rc == PP_ENOMEM)
			pp_err(err, errlen, PP_ENOMEM, "out of memory");
		cal_replay_prog_free(p);
		return rc;
	}
	for (size_t i = 0; i < p->ncomms; i++)
		if (p->comms[i].me < 0) {
			int r = p->rank;
			cal_replay_prog_free(p);
			return pp_err(err, errlen, PP_EINPUT, "rank %d is not a member of its own communicator", r);
		}
	*out = p;
	return 0;
}

int64_t
cal_replay_place_weights(cal_replay_prog *p, int64_t budget)
{
	int64_t total = 0, largest = 0;
	for (size_t i = 0; i < p->nweights; i++) {
		total += 2 * p->weights[i].bytes; /* the weight and its gradient */
		if (p->weights[i].bytes > largest)
			largest = p->weights[i].bytes;
	}
	if (total <= budget || p->nweights <= 2) {
		p->nslots = (int)p->nweights;
		p->slot_bytes = 0;
		for (size_t i = 0; i < p->nweights; i++)
			p->weights[i].slot = (int)i;
		return total;
	}
	int64_t k = largest > 0 ? budget / (2 * largest) : 2;
	if (k < 2)
		k = 2;
	if (k > (int64_t)p->nweights)
		k = (int64_t)p->nweights;
	p->nslots = (int)k;
	p->slot_bytes = largest;
	for (size_t i = 0; i < p->nweights; i++)
		p->weights[i].slot = (int)(i % (size_t)k);
	return 2 * k * largest;
}

int64_t
cal_replay_other_bytes(const cal_replay_prog *p)
{
	int64_t b = 0;
	for (int set = 0; set < 3; set++)
		b += p->operand_bytes[set][0] + p->operand_bytes[set][1] + p->operand_bytes[set][2];
	if (p->nmem > 0)
		b += CAL_REPLAY_MEM_RING_BYTES;
	for (size_t i = 0; i < p->ncomms; i++)
		b += p->comms[i].send_bytes + p->comms[i].recv_bytes;
	return b;
}

cJSON *
cal_replay_prog_json(const cal_replay_prog *p)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "rank", p->rank);
	cJSON_AddNumberToObject(o, "ops", (double)p->npops);
	cJSON_AddNumberToObject(o, "launches", (double)p->nlaunches);
	cJSON_AddNumberToObject(o, "gemms", (double)p->ngemm);
	cJSON_AddNumberToObject(o, "gemm_shapes", (double)p->nshapes);
	cJSON_AddNumberToObject(o, "memory_kernels", (double)p->nmem);
	cJSON_AddNumberToObject(o, "collectives", (double)p->ncoll);
	cJSON_AddNumberToObject(o, "sends", (double)p->nsend);
	cJSON_AddNumberToObject(o, "recvs", (double)p->nrecv);
	cJSON_AddNumberToObject(o, "events", p->nevents);
	cJSON_AddNumberToObject(o, "waits", (double)p->nwaits);
	cJSON_AddNumberToObject(o, "gemm_flops", p->gemm_flops);
	cJSON_AddNumberToObject(o, "attention_flops", p->attn_flops);
	cJSON_AddNumberToObject(o, "simulated_flops", p->sim_flops);
	cJSON_AddNumberToObject(o, "memory_bytes", p->mem_bytes);
	cJSON_AddNumberToObject(o, "weights", (double)p->nweights);
	int64_t wb = 0;
	for (size_t i = 0; i < p->nweights; i++)
		wb += p->weights[i].bytes;
	cJSON_AddNumberToObject(o, "weight_bytes", (double)wb);
	cJSON_AddNumberToObject(o, "other_bytes", (double)cal_replay_other_bytes(p));
	cJSON *cs = cJSON_AddArrayToObject(o, "communicators");
	for (size_t i = 0; i < p->ncomms; i++) {
		const cal_comm *c = &p->comms[i];
		cJSON *x = cJSON_CreateObject();
		cJSON_AddStringToObject(x, "group", sim_group_name(c->group));
		cJSON_AddStringToObject(x, "stream", sim_stream_name(c->stream));
		cJSON_AddItemToObject(x, "members", cJSON_CreateIntArray(c->members, c->size));
		cJSON_AddNumberToObject(x, "me", c->me);
		cJSON_AddNumberToObject(x, "split_key", c->key);
		cJSON_AddNumberToObject(x, "color", c->color);
		cJSON_AddItemToArray(cs, x);
	}
	return o;
}

/* ---- one list for every rank of a stage ----------------------------------------------------- */

void
cal_replay_rebase(sim_rank_ops *o, const sim_train_cfg *c, int rank)
{
	o->rank = rank;
	sim_rank_coords(c, rank, &o->co);
	int stride = c->tp * c->cp * c->dp;
	for (size_t i = 0; i < o->nops; i++)
		if (o->ops[i].kind == SIM_OP_SEND || o->ops[i].kind == SIM_OP_RECV)
			o->ops[i].peer = rank + (o->ops[i].peer_stage - o->co.pp) * stride;
}

typedef struct pack_hdr {
	uint64_t magic;
	int32_t rank, ranks;
	sim_coords co;
	uint64_t nops, nkernels, ndeps;
	int64_t step_ps;
} pack_hdr;

#define PACK_MAGIC UINT64_C(0x70617261706c6e31) /* "paraplan1" */

int
cal_replay_pack(const sim_rank_ops *o, void **buf, size_t *len)
{
	pack_hdr h = {PACK_MAGIC, o->rank, o->ranks, o->co, o->nops, o->nkernels, o->ndeps, o->step_ps};
	size_t n = sizeof h + o->nops * sizeof *o->ops + o->nkernels * sizeof *o->kernels + o->ndeps * sizeof *o->deps;
	char *b = malloc(n);
	if (b == NULL)
		return PP_ENOMEM;
	char *p = b;
	memcpy(p, &h, sizeof h);
	p += sizeof h;
	memcpy(p, o->ops, o->nops * sizeof *o->ops);
	p += o->nops * sizeof *o->ops;
	memcpy(p, o->kernels, o->nkernels * sizeof *o->kernels);
	p += o->nkernels * sizeof *o->kernels;
	memcpy(p, o->deps, o->ndeps * sizeof *o->deps);
	*buf = b;
	*len = n;
	return 0;
}

int
cal_replay_unpack(const void *buf, size_t len, sim_rank_ops **out, char *err, size_t errlen)
{
	*out = NULL;
	pack_hdr h;
	if (len < sizeof h)
		return pp_err(err, errlen, PP_EINPUT, "a packed op list of %zu bytes is too short", len);
	memcpy(&h, buf, sizeof h);
	size_t need = sizeof h;
	if (h.magic != PACK_MAGIC || h.nops > len || h.nkernels > len || h.ndeps > len)
		return pp_err(err, errlen, PP_EINPUT, "not a packed op list (another paraplan build on some rank?)");
	need += h.nops * sizeof(sim_rop) + h.nkernels * sizeof(sim_kernel) + h.ndeps * sizeof(size_t);
	if (need != len)
		return pp_err(err, errlen, PP_EINPUT, "a packed op list of %zu bytes should have %zu", len, need);
	sim_rank_ops *o = calloc(1, sizeof *o);
	if (o == NULL)
		return pp_err(err, errlen, PP_ENOMEM, "out of memory");
	o->rank = h.rank;
	o->ranks = h.ranks;
	o->co = h.co;
	o->step_ps = h.step_ps;
	o->nops = h.nops;
	o->nkernels = h.nkernels;
	o->ndeps = h.ndeps;
	o->ops = malloc(h.nops ? h.nops * sizeof *o->ops : 1);
	o->kernels = malloc(h.nkernels ? h.nkernels * sizeof *o->kernels : 1);
	o->deps = malloc(h.ndeps ? h.ndeps * sizeof *o->deps : 1);
	if (o->ops == NULL || o->kernels == NULL || o->deps == NULL) {
		sim_rank_ops_free(o);
		return pp_err(err, errlen, PP_ENOMEM, "out of memory");
	}
	const char *p = (const char *)buf + sizeof h;
	memcpy(o->ops, p, o->nops * sizeof *o->ops);
	p += o->nops * sizeof *o->ops;
	memcpy(o->kernels, p, o->nkernels * sizeof *o->kernels);
	p += o->nkernels * sizeof *o->kernels;
	memcpy(o->deps, p, o->ndeps * sizeof *o->deps);
	/* a list that points outside itself would send the executor astray: check it */
	for (size_t i = 0; i < o->nops; i++) {
		const sim_rop *op = &o->ops[i];
		bool ok = op->stream >= 0 && op->stream < SIM_NSTREAMS && op->k0 <= o->nkernels && op->nk <= o->nkernels - op->k0 &&
			  op->d0 <= o->ndeps && op->nd <= o->ndeps - op->d0;
		for (size_t d = op->d0; ok && d < op->d0 + op->nd; d++)
			ok = o->deps[d] < i;
		if (!ok) {
			sim_rank_ops_free(o);
			return pp_err(err, errlen, PP_EINPUT, "a packed op list is inconsistent at op %zu", i);
		}
	}
	*out = o;
	return 0;
}

/* ---- the launcher's view of this process ---------------------------------------------------- */

bool
cal_launched_tasks(int *ntasks, int *rank)
{
	static const char *const sizes[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "MPI_LOCALNRANKS",
					    "SLURM_STEP_NUM_TASKS"};
	static const char *const ranks[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"};
	int n = 1, r = 0;
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		const char *v = getenv(sizes[i]);
		if (v != NULL && atoi(v) > 0) {
			n = atoi(v);
			break;
		}
	}
	for (size_t i = 0; i < sizeof ranks / sizeof ranks[0]; i++) {
		const char *v = getenv(ranks[i]);
		if (v != NULL && atoi(v) >= 0) {
			r = atoi(v);
			if (n == 1 && strcmp(ranks[i], "SLURM_PROCID") != 0)
				n = 2; /* a PMI launch without a size variable: treat as MPI */
			break;
		}
	}
	if (ntasks)
		*ntasks = n;
	if (rank)
		*rank = r;
	return n > 1;
}
