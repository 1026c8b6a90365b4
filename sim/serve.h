/*
 * serve.h -- the LLM serving simulator (part of the sim module's public interface; sim.h
 * includes it).
 *
 * Each replica runs vLLM's iteration-level loop: every iteration it gives each running
 * sequence one decode token, then spends the rest of its token budget on prefill chunks
 * (chunked prefill) of running and newly admitted sequences, admitting from the waiting queue
 * while the batch has fewer than max_num_seqs sequences and the paged KV cache has blocks for
 * them; when a decode step finds no free block, the most recently admitted sequence is
 * preempted by recomputation (its blocks freed, it re-enters the queue to prefill again).  An
 * iteration's time comes from the cost model: the batched GEMMs over its tokens (weight-bound
 * at small batches), flash attention for prefill by FLOPs and for decode by the KV bytes read,
 * two TP all-reduces per layer, the pipeline transfers; then what the engine adds (sim_engine):
 * a decode iteration padded to its CUDA-graph size, kernel launches of the iterations no graph
 * covers, and the host's scheduling time, in series with the GPU's or overlapped with it.  Replicas sit behind a router; with disaggregation,
 * prefill replicas hand the KV cache over the fabric to decode replicas.
 *
 * Arrivals are Poisson or Gamma (a coefficient of variation for burstiness) at a rate, a
 * batch at time zero, a closed loop of a fixed concurrency, or a trace; prompt and output
 * lengths are fixed or drawn from distributions, all from gsl_rng streams seeded by the
 * configuration (one stream per purpose), so a seed gives the same run byte for byte.
 */
#ifndef SIM_SERVE_H
#define SIM_SERVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hardware/hw.h"
#include "models/model.h"

struct cJSON;

typedef enum sim_dist_kind { SIM_DIST_FIXED, SIM_DIST_UNIFORM, SIM_DIST_LOGNORMAL, SIM_DIST_EXPONENTIAL, SIM_DIST_GAMMA } sim_dist_kind;

/* A length distribution: "512", "uniform:min=100,max=1000", "lognormal:mean=800,sigma=0.6",
 * "exponential:mean=200", "gamma:mean=300,cv=1.5"; any of them may add ",max=N" to clip. */
typedef struct sim_dist {
	sim_dist_kind kind;
	double mean, a, b; /* fixed: mean; uniform: a..b; lognormal: mu, sigma; gamma: shape, scale */
	double max;        /* 0: no clip */
} sim_dist;
int sim_dist_parse(const char *s, sim_dist *out, char *err, size_t errlen);

typedef enum sim_arrival_kind { SIM_ARR_POISSON, SIM_ARR_GAMMA, SIM_ARR_BATCH, SIM_ARR_CLOSED, SIM_ARR_TRACE } sim_arrival_kind;
/* "poisson", "gamma:cv=2", "batch" (every request at time zero), "closed:N" (N outstanding). */
int sim_arrival_parse(const char *s, sim_arrival_kind *kind, double *param, char *err, size_t errlen);

typedef enum sim_router { SIM_ROUTE_ROUND_ROBIN, SIM_ROUTE_LEAST_OUTSTANDING } sim_router;

typedef struct sim_request {
	double arrival_s;
	int64_t prompt, output;
} sim_request;

/* Reads a trace: CSV with a header naming arrival_s (or arrival), prompt_tokens and
 * output_tokens, or JSONL with those keys.  Arrivals must not decrease. */
int sim_trace_load(const char *path, sim_request **out, size_t *n, char *err, size_t errlen);
/* The same from text of len bytes in memory; `origin` names it in messages ("trace.csv:12: ..."). */
int sim_trace_parse(const char *text, size_t len, const char *origin, sim_request **out, size_t *n, char *err,
		    size_t errlen);

/* What a serving engine does, read from its profile (hardware/data/profiles.sql, docs/engines.md):
 * the batch limits it defaults to, how prompts enter the batch, which iterations replay a
 * captured CUDA graph (padded to the next captured size) and what launching the others costs,
 * the host's scheduling time per iteration (a fixed part and a part per running sequence) and
 * whether it overlaps the GPU's work, and the fraction of the GPU's measured kernel rates its
 * kernels reach.  A value, so a configuration carries it whole. */
typedef struct sim_engine {
	char name[48];
	int max_num_seqs;           /* default batch limits (a configuration's 0 takes these) */
	int64_t max_batched_tokens;
	int prefill;                /* HW_EN_PREFILL_CHUNKED, _MIXED or _SEPARATE */
	int64_t graph_max;          /* largest graph-captured iteration, tokens (0: none) */
	int64_t graph_step;         /* captured sizes 1, 2, 4, then multiples of this */
	bool graph_mixed;           /* iterations with prefill tokens replay graphs too */
	double launch_s;            /* host time per kernel launched outside a graph */
	double sched_s, sched_seq_s; /* host time per iteration: fixed, and per running sequence */
	bool overlap;               /* host work overlaps the previous iteration's GPU work */
	int sched_steps;            /* decode steps scheduled at once (multi-step) */
	int attention;              /* HW_FW_ATTN_FLASH2 or HW_FW_ATTN_FLASH3 */
	bool fp8_attention;         /* with an fp8 KV cache, attention computes in fp8 */
	int fp8_scaling;            /* HW_EN_FP8_STATIC, _DYNAMIC or _TOKEN */
	double allreduce_us;        /* one-shot all-reduce latency (0: NCCL's) */
	double kv_reserve;          /* KV room admission keeps for the remaining outputs (fraction) */
	bool decode_gqa;            /* decode attention reads a KV head once per query group, not per head */
	double gemm_scale, attn_scale, decode_scale; /* fractions of the GPU's measured rates */
	double iv[3][2];            /* the 80% intervals' log ratios per sim_iv_kind (NAN: none) */
	double cap[2];              /* the capacity band's log ratios, as iv's throughput (NAN: none) */
} sim_engine;

/* The kinds of prediction an engine's interval covers: output throughput, time to first token,
 * time per output token (inter-token and end-to-end latency too). */
typedef enum { SIM_IV_TPUT, SIM_IV_TTFT, SIM_IV_TPOT } sim_iv_kind;
/* The 80% interval of a predicted value v of that kind, from how far the engine's
 * cross-validated predictions were from the measured ones (err_p10/err_p90 and the ttft_ and
 * tpot_ pairs of its profile): a time's is v e^p10 to v e^p90, the throughput's its inverse.
 * NAN and NAN when the engine has none. */
void sim_serve_interval(const sim_engine *e, sim_iv_kind k, double v, double *lo, double *hi);
/* The engine's speeds at the two ends of the capacity band (cap_err_p10/p90, the throughput
 * errors of every engine's batch and closed-loop runs in the cross-validation): the measured
 * throughput over the predicted, e^-p90 and e^-p10.  false: it has none. */
bool sim_engine_speeds(const sim_engine *e, double f[2]);
/* The interval of a value v of a run that was also simulated on engines of those two speeds
 * (sim_serve_speed), b[0] and b[1] its values there (NULL: not): the hull of those and
 * sim_serve_interval's, since near saturation a latency moves with the capacity much more than
 * in proportion.  The cross-validation measures the coverage of the same hull. */
void sim_serve_interval_banded(const sim_engine *e, sim_iv_kind k, double v, const double b[2], double *lo,
			       double *hi);

/* The registry's defaults (hardware/params.c), named "default". */
void sim_engine_default(sim_engine *e);
/* The engine of a loaded profile (scope HW_SCOPE_ENGINE). */
void sim_engine_from_profile(sim_engine *e, const hw_profile *p);
/* The tokens an iteration of T tokens (with prefill tokens or not) runs at when it replays a
 * captured CUDA graph: T padded to the next captured size; 0 when no graph covers it. */
int64_t sim_engine_graph_tokens(const sim_engine *e, int64_t T, bool prefill);

/* Speculative decoding: proposals by n-gram lookup in the prompt and output so far (a host-side
 * search, no GPU work), or by an EAGLE-style draft head (one decoder layer and the LM head of the
 * target's width, run once per proposed token).  The target verifies the proposals and its own
 * next token in one pass; the proposals are accepted in order until the first rejection. */
typedef enum { SIM_SPEC_OFF, SIM_SPEC_NGRAM, SIM_SPEC_EAGLE } sim_spec_method;
#define SIM_SPEC_MAX_TOKENS 16
/* The methods' names by sim_spec_method ("off", "ngram", "eagle"), NULL-terminated. */
extern const char *const sim_spec_names[];
/* The expected tokens one decode step emits with k proposals each accepted with probability a,
 * in order until the first rejection: 1 + a + a^2 + ... + a^k = (1 - a^(k+1)) / (1 - a)
 * (Leviathan, Kalman and Matias 2023, Eq. 1). */
double sim_spec_expected_tokens(int k, double a);

/* Chunked prefill as a deployment sets it: as its engine runs (SIM_CHUNKED_ENGINE), on (prompts
 * split into chunks that fill the token budget beside the decodes: TensorRT-LLM's
 * enable_chunked_prefill, vLLM V0's --enable-chunked-prefill, SGLang's mixed chunks) or off (an
 * engine that chunks runs whole prompts beside the decodes instead; one that runs prefill-only
 * iterations keeps them). */
typedef enum sim_chunked { SIM_CHUNKED_ENGINE, SIM_CHUNKED_ON, SIM_CHUNKED_OFF } sim_chunked;
/* Their names by sim_chunked ("engine", "on", "off"), NULL-terminated. */
extern const char *const sim_chunked_names[];

typedef struct sim_serve_cfg {
	sim_engine engine;
	sim_chunked chunked;      /* chunked prefill: the engine's way, on or off */
	int tp, pp, replicas;
	int prefill_replicas, decode_replicas; /* disaggregation P:D (0: off) */
	double rate;              /* requests/s over all replicas */
	sim_arrival_kind arrival;
	double arrival_param;     /* gamma: CV; closed: concurrency */
	sim_dist prompt, output;
	int64_t requests;         /* 0: rate x duration */
	double duration_s;
	int max_num_seqs;         /* 0: the engine's default */
	int64_t max_batched_tokens; /* 0: the engine's default */
	int block_size;
	double gpu_memory_utilization;
	hw_dtype weights;         /* bf16, fp8, int8, int4 (weight-only), fp4 (NVFP4: the routed experts in fp4,
				   * the other linear layers in fp8, as NVIDIA's DeepSeek-R1-FP4 checkpoint) */
	hw_dtype kv_dtype;        /* bf16 or fp8 */
	sim_router router;
	/* MoE serving (docs/moe.md, "Serving"): ep > 1 shards the routed experts over ep of the
	 * replica's tp GPUs (tp / ep share each expert by TP) with an all-to-all dispatch and
	 * combine per MoE layer; attention_dp runs attention (and the dense layers) data-parallel,
	 * each of the tp GPUs with the whole attention weights, its own batch and its own KV cache
	 * (max_num_seqs and max_batched_tokens are then per GPU, as TensorRT-LLM's
	 * enable_attention_dp and SGLang's --enable-dp-attention take them).  moe_imbalance: the
	 * busiest expert rank's routed tokens over the mean (>= 1); 0: the statistical floor of
	 * uniform routing for the iteration's tokens (serve.c, moe_imbalance_floor). */
	int ep;
	bool attention_dp;
	double moe_imbalance;
	double slo_ttft_s, slo_tpot_s, slo_e2e_s; /* for goodput; 0: not set */
	uint64_t seed;
	const sim_request *trace; /* SIM_ARR_TRACE */
	size_t ntrace;
	double price;             /* USD per GPU-hour for the cost figures; 0: none */
	bool keep_iterations;     /* record iterations for a trace */
	size_t itl_exact;         /* iterations whose inter-token latency is kept exactly before the rest go
				   * into a histogram (0: 2^20, 16 MB); a knob for tests */
	double prefix_hit;        /* share of each prompt found in the prefix cache, in whole blocks (0: off) */
	sim_spec_method spec;     /* speculative decoding (SIM_SPEC_OFF: none) */
	int spec_tokens;          /* tokens proposed per decode step */
	double spec_accept;       /* probability that each proposed token is accepted */
} sim_serve_cfg;

void sim_serve_cfg_init(sim_serve_cfg *c);
/* The weight format a deployment runs a model in when none is asked for: the one it is published
 * in, as the engines load it -- 16-bit as bf16; FP8 as fp8 where the GPU has FP8 tensor cores,
 * else as 8-bit weight-only (vLLM's Marlin FP8 on Ampere); MXFP4 as fp4 on Blackwell, else as
 * 4-bit weight-only (gpt-oss on Hopper); AWQ/GPTQ as int4. */
hw_dtype sim_serve_released_weights(const model *m, const hw_gpu *g);
/* The same for a format stated outright ("MXFP4" weights): how the engines run it on g. */
hw_dtype sim_serve_weights_as(model_weights w, const hw_gpu *g);

/* How a configuration's prompts enter the batch (HW_EN_PREFILL_*): its engine's way unless
 * chunked says otherwise. */
int sim_serve_prefill(const sim_serve_cfg *c);
/* The longest prompt a configuration's requests can have: its trace's longest, a fixed length,
 * a uniform's upper end or a distribution's clip (max=N, the datasets'); 0 when unbounded. */
int64_t sim_serve_longest_prompt(const sim_serve_cfg *c);
/* The token budget of an iteration: the configuration's, else its engine's default -- raised to
 * the longest prompt when whole prompts join the batch (mixed), as such an engine must be
 * configured (TensorRT-LLM refuses a prompt over max_num_tokens without chunked context). */
int64_t sim_serve_budget(const sim_serve_cfg *c);

/* Memory of one GPU of a replica: weights, activations, KV capacity. */
typedef struct sim_serve_mem {
	double weights, activations, reserve, kv_bytes, capacity;
	int64_t kv_blocks, kv_tokens;
	bool fits;
} sim_serve_mem;
int sim_serve_memory(const model *m, const hw_system *sys, const sim_serve_cfg *c, sim_serve_mem *out, char *err,
		     size_t errlen);

/* Expert parallelism's figures (serve.c; docs/moe.md): the busiest of ep expert ranks' routed
 * tokens over the mean when `tokens` tokens route top_k each uniformly at random (1 for ep 1);
 * the bytes one rank sends in an all-to-all dispatch (or combine) of its `tokens` tokens, top_k
 * copies of hidden elements of elem_bytes each. */
double sim_moe_imbalance_floor(double tokens, int64_t top_k, int ep);
double sim_moe_a2a_bytes(double tokens, int64_t top_k, int64_t hidden, double elem_bytes);

typedef struct sim_pct {
	double mean, p50, p90, p99;
} sim_pct;

/* Mean and GSL quantiles (gsl_stats_quantile_from_sorted_data) of n samples; sorts v. */
sim_pct sim_percentiles(double *v, size_t n);
/* The same over samples d weighted by w: the smallest d whose cumulative weight reaches the
 * quantile (an ITL sample is an iteration's duration, weighted by the decode tokens it
 * produced).  PP_ENOMEM when out of memory. */
int sim_percentiles_weighted(const double *d, const double *w, size_t n, sim_pct *out);

typedef struct sim_serve_metrics {
	sim_pct ttft, tpot, itl, e2e;     /* seconds */
	double requests_per_s, output_tokens_per_s, total_tokens_per_s;
	double output_tokens_per_s_per_gpu;
	double goodput_requests_per_s;    /* meeting every SLO that is set */
	double slo_attainment;            /* share of requests meeting them */
	double kv_utilization_mean, kv_utilization_peak;
	double concurrency_mean;          /* requests in the system (queued or running), time average */
	int64_t preemptions, completed, offered;
	double sim_time_s, makespan_s;
	bool saturated;                   /* the queue grew without bound over the run */
	double usd_per_million_output_tokens, usd_per_million_tokens;
	int gpus;
	int64_t iterations;
	double spec_tokens_per_step;      /* speculation: tokens a decode step emitted, on average (0: off) */
	sim_serve_mem mem;
} sim_serve_metrics;

typedef struct sim_serve_result sim_serve_result;

int sim_serve(const model *m, const hw_cost *cost, const sim_serve_cfg *c, sim_serve_result **out, char *err,
	      size_t errlen);
/* The checks sim_serve makes before it runs: PP_EUSAGE with a message naming the flag or
 * constraint.  Completes c (replicas under disaggregation); *nreq (may be NULL) is the number of
 * requests the run would simulate and *mem (may be NULL) one GPU's memory. */
int sim_serve_check(const model *m, const hw_system *sys, sim_serve_cfg *c, int64_t *nreq, sim_serve_mem *mem,
		    char *err, size_t errlen);
const sim_serve_metrics *sim_serve_get_metrics(const sim_serve_result *r);
/* sim_serve keeping only the metrics: the search loops' and the fits' run. */
int sim_serve_metrics_of(const model *m, const hw_cost *cost, const sim_serve_cfg *c, sim_serve_metrics *out, char *err,
			 size_t errlen);
struct cJSON *sim_serve_json(const sim_serve_result *r);
/* A Chrome/Perfetto trace of the iterations (keep_iterations): one track per replica. */
int sim_serve_trace(const sim_serve_result *r, const char *path, char *err, size_t errlen);
void sim_serve_result_free(sim_serve_result *r);

/* The metrics of run c on an engine f times as fast as the model's (f > 0), the capacity
 * band of an interval: with all durations scaled by 1/f, the run is c's own at 1/f of its
 * arrival rate (a trace's arrival times f times as far apart) seen on a clock f times as fast,
 * so its times are those of that run over f and its rates f times its rates.  A batch or a
 * closed loop has no clock of its own to scale: its metrics are base's, scaled (run again only
 * to count its goodput against SLOs on the faster clock).  The run keeps base's request count
 * and its seed.  base:
 * c's metrics from sim_serve. */
int sim_serve_speed(const model *m, const hw_cost *cost, const sim_serve_cfg *c, const sim_serve_metrics *base,
		    double f, sim_serve_metrics *out, char *err, size_t errlen);
/* An Offline run as MLPerf's LoadGen issues it (c: SIM_ARR_BATCH): every request at once, and at
 * least min_s seconds of them at the rate a first run of c->requests reaches, so the drain at the
 * end weighs what it weighs in a run that long (LoadGen's Offline query holds min_duration's worth
 * of samples at the expected rate).  The router deals the batch out evenly, so one replica is
 * simulated with its share (at most max_per_replica requests) and the rates are its own times the
 * replicas; disaggregated replicas run together.  *requests: the requests the run issued in all. */
#define SIM_SERVE_OFFLINE_MAX_PER_REPLICA 32768 /* past this the drain moves the rate by under 2% */
int sim_serve_offline(const model *m, const hw_cost *cost, const sim_serve_cfg *c, double min_s, int64_t max_per_replica,
		      sim_serve_metrics *out, int64_t *requests, char *err, size_t errlen);
/* The run again on engines as fast as the ends of its engine's capacity interval
 * (sim_engine_speeds, sim_serve_speed), for the intervals sim_serve_json writes; nothing when the
 * engine has no interval. */
int sim_serve_add_band(const model *m, const hw_cost *cost, sim_serve_result *r, char *err, size_t errlen);

/* ---- named datasets (sim/dataset.c) ----------------------------------------------------------
 * The length distributions of the datasets published serving results use, each figure with its
 * source, and the P99 latency limits (ms) of the MLPerf Server and Interactive scenarios on them
 * (0: no such scenario).  A length with mean 0 is not stated in any source we hold. */
typedef struct sim_dataset_len {
	double mean, sd; /* tokens; sd 0: not stated (drawn fixed at the mean) */
	int64_t max;     /* the longest sample (the clip of the drawn lengths) */
} sim_dataset_len;
typedef struct sim_dataset {
	const char *name, *title;
	int64_t samples;
	sim_dataset_len prompt, output;
	double server_ttft_ms, server_tpot_ms, interactive_ttft_ms, interactive_tpot_ms;
	const char *prompt_source, *output_source;
} sim_dataset;
size_t sim_dataset_count(void);
const sim_dataset *sim_dataset_at(size_t i);
/* By name ("mlperf-llama2-70b", or "dataset:mlperf-llama2-70b"); NULL when unknown. */
const sim_dataset *sim_dataset_find(const char *name);
/* The prompt (output false) or output length distribution of a dataset: a gamma with its mean
 * and deviation, clipped at its longest sample; PP_EUSAGE naming the dataset when the length
 * is not stated. */
int sim_dataset_dist(const sim_dataset *d, bool output, sim_dist *out, char *err, size_t errlen);
/* sim_dist_parse, or a dataset's name (as above) for a prompt or an output length. */
int sim_dist_parse_len(const char *s, bool output, sim_dist *out, char *err, size_t errlen);

#endif
