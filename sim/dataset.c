/*
 * dataset.c -- the named length distributions of the datasets published serving results use
 * (the MLPerf Inference LLM benchmarks, ShareGPT as vLLM's benchmark filters it), with each
 * figure's source, and the latency limits of the MLPerf scenarios run on them.
 *
 * A dataset's prompt and output lengths become a gamma distribution with the stated mean and
 * the coefficient of variation of the stated standard deviation, clipped at the dataset's
 * longest sample (the clip lowers the drawn mean by 1% or less for these shapes, measured over
 * 200,000 draws: the tail beyond the longest sample is thin).  A gamma, not the published histogram: the sources
 * give per-sample lengths (from which the mean, deviation and extremes below were computed),
 * and a two-parameter fit keeps the table small; what a run is sensitive to (the mean for
 * throughput, the upper tail for a P99 TTFT) the mean and deviation carry.
 *
 * Sources (fetched 2026-11-25):
 *  [INF]  github.com/mlcommons/inference @ b66003e10e2d: language/<bench>/README.md (the
 *         accuracy targets' "tokens_per_sample": the mean output of the reference run, which a
 *         closed submission must match within 90-110%), the reference SUTs' max_tokens, and
 *         loadgen/mlperf.conf (the Server scenarios' ttft_latency and tpot_latency, ms, at P99).
 *  [SUM]  github.com/openshift-psap/performance-dashboard @ 71007029fb5b:
 *         mlperf-data/summaries/<bench>.csv, the input_length and output_length of every sample
 *         of the official preprocessed datasets (generate_dataset_summaries.py reads the
 *         datasets' tok_input_length/tok_input_len columns); means, deviations and maxima here
 *         computed from those files.  Their output column is the dataset's reference output: it
 *         equals [INF]'s tokens_per_sample for llama3.1-405b (684.68) and mixtral-8x7b (144.84);
 *         for llama2-70b it is GPT-4's answer (218.89) and for deepseek-r1 the reference run's
 *         (4043.45, [INF] states 3886.23), so the output mean there is [INF]'s and only the
 *         shape (CV) is the file's; for llama3.1-8b it is a character count / 4, not used.
 */
#include "config.h"
#include "common/pp.h"
#include "sim/sim.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static const sim_dataset datasets[] = {
	{"mlperf-llama2-70b", "MLPerf llama2-70b: OpenOrca (GPT-4 part), 24576 samples, Llama 2 tokens", 24576,
	 {222.33, 171.5, 1024}, {294.45, 0.787 * 294.45, 1024}, /* output CV of the reference answers: 172.3 / 218.89 */
	 2000, 200, 450, 40,
	 "[SUM] llama2-70b-99.csv: mean 222.33, sd 171.5, max 1021 (seqlen_limit 1024, language/llama2-70b/README.md)",
	 "[INF] language/llama2-70b/README.md: tokens per sample 294.45; max_new_tokens 1024 (SUT.py); shape: "
	 "[SUM]'s reference answers (CV 0.787)"},
	{"mlperf-llama3.1-405b", "MLPerf llama3.1-405b: 8313 samples (long-context QA, math, code), Llama 3 tokens", 8313,
	 {9428.64, 4066.9, 20000}, {684.68, 260.8, 2000},
	 6000, 175, 4500, 80,
	 "[SUM] llama3-1-405b.csv: mean 9428.64, sd 4066.9, max 19988",
	 "[INF] language/llama3.1-405b/README.md: tokens_per_sample 684.68 (= [SUM]'s mean; sd 260.8); max_tokens 2000 "
	 "(SUT_VLLM.py)"},
	{"mlperf-llama3.1-8b", "MLPerf llama3.1-8b: CNN/DailyMail validation, 13368 samples, Llama 3 tokens", 13368,
	 {870.73, 430.1, 2540}, {0, 0, 128},
	 2000, 100, 500, 30,
	 "[SUM] llama3-1-8b-datacenter.csv: mean 870.73, sd 430.1, max 2540",
	 "not stated: [INF]'s gen_len (8167644 over 13368 samples) counts characters; max_tokens 128 (SUT_VLLM.py)"},
	{"mlperf-mixtral-8x7b", "MLPerf mixtral-8x7b: OpenOrca, GSM8K and MBXP, 5000 each, Mixtral tokens", 15000,
	 {427.39, 328.6, 2048}, {144.84, 112.7, 1024},
	 2000, 200, 0, 0,
	 "[SUM] mixtral-8x7b.csv: mean 427.39, sd 328.6, max 1948",
	 "[INF] language/mixtral-8x7b/README.md: tokens_per_sample 144.84 (= [SUM]'s mean; sd 112.7); max_new_tokens "
	 "1024"},
	{"mlperf-deepseek-r1", "MLPerf deepseek-r1: AIME, MATH500, GPQA, MMLU-Pro, LiveCodeBench, 4388 samples", 4388,
	 {803.79, 405.6, 3140}, {3886.23, 1.2526 * 3886.23, 32768}, /* output CV of the reference run: 5064.8 / 4043.45 */
	 2000, 80, 1500, 15,
	 "[SUM] deepseek-r1.csv: mean 803.79, sd 405.6, max 3140 (MAX_ISL 3136 + 4 template tokens, "
	 "language/deepseek-r1/utils/backend_registry.py)",
	 "[INF] language/deepseek-r1/README.md: mean-output-tok-len 3886.2274; shape and max 32768: [SUM]'s reference "
	 "outputs (CV 1.253)"},
	{"sharegpt", "ShareGPT as vLLM's benchmark_serving filters it (1000 prompts)", 1000,
	 {229.711, 0, 0}, {203.068, 0, 0},
	 0, 0, 0, 0,
	 "vLLM PR #18566: 229,711 prompt tokens over 1000 prompts (no deviation stated: fixed at the mean)",
	 "vLLM PR #18566: 203,068 output tokens over 1000 prompts (no deviation stated: fixed at the mean)"},
};

#define NDATASETS (sizeof datasets / sizeof datasets[0])

size_t
sim_dataset_count(void)
{
	return NDATASETS;
}

const sim_dataset *
sim_dataset_at(size_t i)
{
	return i < NDATASETS ? &datasets[i] : NULL;
}

const sim_dataset *
sim_dataset_find(const char *name)
{
	if (name == NULL)
		return NULL;
	if (!strncmp(name, "dataset:", 8))
		name += 8;
	for (size_t i = 0; i < NDATASETS; i++)
		if (!strcmp(name, datasets[i].name))
			return &datasets[i];
	return NULL;
}

int
sim_dataset_dist(const sim_dataset *d, bool output, sim_dist *out, char *err, size_t errlen)
{
	const sim_dataset_len *l = output ? &d->output : &d->prompt;
	memset(out, 0, sizeof *out);
	if (!(l->mean > 0))
		return pp_err(err, errlen, PP_EUSAGE, "dataset \"%s\": its mean %s length is %s", d->name,
			      output ? "output" : "prompt", output ? d->output_source : d->prompt_source);
	out->mean = l->mean;
	if (!(l->sd > 0)) {
		out->kind = SIM_DIST_FIXED;
		out->mean = round(l->mean);
		return 0;
	}
	double cv = l->sd / l->mean;
	out->kind = SIM_DIST_GAMMA;
	out->a = 1.0 / (cv * cv); /* shape */
	out->b = l->mean / out->a; /* scale */
	out->max = (double)l->max;
	return 0;
}

int
sim_dist_parse_len(const char *s, bool output, sim_dist *out, char *err, size_t errlen)
{
	const sim_dataset *d = sim_dataset_find(s);
	if (d != NULL)
		return sim_dataset_dist(d, output, out, err, errlen);
	/* a name that is neither a dataset nor a distribution: say which datasets there are */
	static const char *const kinds[] = {"uniform", "lognormal", "exponential", "gamma", NULL};
	bool named = !strncmp(s, "dataset:", 8) || (isalpha((unsigned char)s[0]) && strchr(s, ':') == NULL);
	for (size_t i = 0; kinds[i] != NULL && named; i++)
		named = strncmp(s, kinds[i], strlen(kinds[i])) != 0;
	if (!named)
		return sim_dist_parse(s, out, err, errlen);
	pp_str names = {0};
	for (size_t i = 0; i < NDATASETS; i++)
		pp_str_addf(&names, "%s%s", i ? ", " : "", datasets[i].name);
	int rc = pp_err(err, errlen, PP_EUSAGE, "unknown dataset \"%.60s\" (a length, a distribution such as "
				   "gamma:mean=M,cv=C, or one of: %s)",
			!strncmp(s, "dataset:", 8) ? s + 8 : s, names.buf ? names.buf : "");
	pp_str_free(&names);
	return rc;
}
