/*
 * cost.c -- the cost arithmetic behind every dollar figure: renting (GPU-hours times a price),
 * owning (purchase amortized linearly over a life, plus energy: node power x PUE x price per
 * kWh), dollars per million tokens and per month.  Capacity planning, serving plans and the
 * reports all go through these few lines, so a report's total always equals the planner's.
 *
 * hardware.md 5.3 works the owning example: an H100 node at 10.2 kW, PUE 1.3 and $0.09/kWh
 * costs about $1.19 per node-hour in energy; a $300k node over 4 years about $8.56 per
 * node-hour in amortization.
 */
#include "config.h"
#include "planner/plan.h"

double
plan_rent_usd(double usd_per_gpu_hour, double gpus, double hours)
{
	return usd_per_gpu_hour * gpus * hours;
}

double
plan_usd_per_mtok(double usd, double tokens)
{
	return tokens > 0 ? usd / (tokens / 1e6) : 0.0;
}

double
plan_own_usd(const plan_own *o, double gpus, double hours, double *amortized_usd, double *energy_usd)
{
	double am = 0.0, en = 0.0;
	if (o->usd_per_gpu > 0 && o->life_years > 0)
		am = o->usd_per_gpu * gpus * hours / (o->life_years * PLAN_HOURS_PER_YEAR);
	if (o->node_power_kw > 0 && o->gpus_per_node > 0)
		en = o->node_power_kw * (gpus / o->gpus_per_node) * o->pue * o->usd_per_kwh * hours;
	if (amortized_usd != NULL)
		*amortized_usd = am;
	if (energy_usd != NULL)
		*energy_usd = en;
	return am + en;
}
