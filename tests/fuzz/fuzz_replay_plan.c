/*
 * fuzz_replay_plan.c -- calibrate/replay.c, the reader of the plan and simulation documents that
 * 'paraplan replay' and 'plan train --validate' take.  Seeds: --json output of 'plan train' and
 * 'simulate train'.  What the reader accepts names a model and a system, states a layout whose
 * tp x pp x dp x cp equals its GPU count, and writes back as a finite JSON document that reads
 * again as the same layout.
 */
#include "config.h"
#include "tests/fuzz/fuzz.h"

#include "calibrate/cal.h"

#include <cJSON.h>
#include <math.h>
#include <string.h>

int
fuzz_replay_plan(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size);
	cal_replay_plan p;
	char err[512] = "";
	if (cal_replay_plan_parse("plan.json", text, &p, err, sizeof err) != 0) {
		FUZZ_CHECK(err[0] != '\0');
	} else {
		FUZZ_CHECK(p.model[0] != '\0' && p.system[0] != '\0');
		FUZZ_CHECK(!strcmp(p.kind, "plan-train") || !strcmp(p.kind, "train"));
		FUZZ_CHECK(p.cfg.tp >= 1 && p.cfg.pp >= 1 && p.cfg.dp >= 1 && p.cfg.cp >= 1);
		FUZZ_CHECK((int64_t)p.cfg.tp * p.cfg.pp * p.cfg.dp * p.cfg.cp == p.cfg.gpus);
		FUZZ_CHECK(isfinite(p.predicted_s) && p.predicted_s >= 0);
		char *back = cal_replay_plan_json(&p);
		FUZZ_CHECK(back != NULL);
		cJSON *doc = cJSON_Parse(back);
		FUZZ_CHECK(doc != NULL);
		fuzz_check_json_finite(doc);
		cJSON_Delete(doc);
		/* what it writes back reads again as the same layout */
		cal_replay_plan q;
		FUZZ_CHECK(cal_replay_plan_parse("back.json", back, &q, err, sizeof err) == 0);
		FUZZ_CHECK(q.cfg.gpus == p.cfg.gpus && q.cfg.tp == p.cfg.tp && q.cfg.pp == p.cfg.pp &&
			   q.cfg.dp == p.cfg.dp && q.cfg.cp == p.cfg.cp && q.cfg.micro_batch == p.cfg.micro_batch);
		FUZZ_CHECK(!strcmp(q.model, p.model) && !strcmp(q.system, p.system));
		FUZZ_CHECK(!strcmp(q.framework, p.framework) && q.cfg.ep_deepep == p.cfg.ep_deepep);
		free(back);
	}
	free(text);
	return 0;
}
