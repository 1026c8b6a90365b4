/*
 * profile.c -- software profiles: a training framework or a serving engine as a named object
 * found in the database, like a VFS found by name.  A profile row says what it is (version,
 * description, source) and may name a base profile whose parameters it inherits; its
 * parameters are param rows of scope 'framework' or 'engine' whose subject is its name, read
 * through the registry (hardware/params.c): a key the profile does not set comes from its base,
 * else from the registry's default.
 *
 * A loaded profile is a plain value in memory: fits set its parameters there (hw_profile_set)
 * and only a saved fit writes the database.
 */
#include "config.h"
#include "hardware/hw_int.h"

#include <cJSON.h>
#include <stdlib.h>
#include <string.h>

/* A base chain longer than this is a loop or a mistake. */
#define MAX_DEPTH 4

struct hw_profile {
	hw_pscope kind;
	char name[48], base[48], root[48], version[128];
	char chain[MAX_DEPTH][48]; /* root first, then down to the profile itself */
	int depth;
	char description[200], source[300];
	hw_pval p[HW_NPKEYS]; /* the keys of its scope */
	bool set[HW_NPKEYS];  /* set by the profile or a base (not the registry's default) */
};

static bool
kind_ok(hw_pscope kind)
{
	return kind == HW_SCOPE_FRAMEWORK || kind == HW_SCOPE_ENGINE;
}

/* The profile row of (kind, name): 0, PP_ENOTFOUND, or an error. */
static int
read_row(hw_db *db, hw_pscope kind, const char *name, hw_profile *p, char *err, size_t errlen)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db->sql,
			       "SELECT name, coalesce(base, ''), version, description, source FROM profile WHERE kind = ? AND name = ?",
			       -1, &st, NULL) != SQLITE_OK)
		return hw_sqlerr(db, err, errlen, "reading profiles");
	sqlite3_bind_text(st, 1, hw_scope_name(kind), -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 2, name, -1, SQLITE_TRANSIENT);
	int rc = PP_ENOTFOUND;
	if (sqlite3_step(st) == SQLITE_ROW) {
		pp_strlcpy(p->name, hw_col_text(st, 0), sizeof p->name);
		pp_strlcpy(p->base, hw_col_text(st, 1), sizeof p->base);
		pp_strlcpy(p->version, hw_col_text(st, 2), sizeof p->version);
		pp_strlcpy(p->description, hw_col_text(st, 3), sizeof p->description);
		pp_strlcpy(p->source, hw_col_text(st, 4), sizeof p->source);
		rc = 0;
	}
	sqlite3_finalize(st);
	return rc;
}

int
hw_profile_names(hw_db *db, hw_pscope kind, char ***names, size_t *n, char *err, size_t errlen)
{
	*names = NULL;
	*n = 0;
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db->sql, "SELECT name FROM profile WHERE kind = ? ORDER BY name", -1, &st, NULL) != SQLITE_OK)
		return hw_sqlerr(db, err, errlen, "reading profiles");
	sqlite3_bind_text(st, 1, hw_scope_name(kind), -1, SQLITE_TRANSIENT);
	pp_str all = {0};
	size_t count = 0;
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *s = hw_col_text(st, 0);
		pp_str_addn(&all, s, strlen(s) + 1);
		count++;
	}
	sqlite3_finalize(st);
	/* one block: the pointers, then the names */
	char **v = malloc((count + 1) * sizeof *v + (all.len ? all.len : 1));
	if (v == NULL) {
		pp_str_free(&all);
		return pp_err(err, errlen, PP_ENOMEM, "out of memory");
	}
	char *text = (char *)(v + count + 1);
	if (all.len)
		memcpy(text, all.buf, all.len);
	for (size_t i = 0; i < count; i++) {
		v[i] = text;
		text += strlen(text) + 1;
	}
	v[count] = NULL;
	pp_str_free(&all);
	*names = v;
	*n = count;
	return 0;
}

/* Names of the profiles of a kind, "a, b, c", for a message. */
static void
known(hw_db *db, hw_pscope kind, char *buf, size_t n)
{
	char **names;
	size_t cnt;
	buf[0] = '\0';
	if (hw_profile_names(db, kind, &names, &cnt, NULL, 0) != 0)
		return;
	pp_str s = {0};
	for (size_t i = 0; i < cnt; i++)
		pp_str_addf(&s, "%s%s", i ? ", " : "", names[i]);
	pp_strlcpy(buf, s.buf ? s.buf : "none", n);
	pp_str_free(&s);
	free(names);
}

int
hw_profile_find(hw_db *db, hw_pscope kind, const char *name, hw_profile **out, char *err, size_t errlen)
{
	return hw_profile_load(db, kind, name, 0, out, err, errlen);
}

int
hw_profile_load(hw_db *db, hw_pscope kind, const char *name, unsigned flags, hw_profile **out, char *err,
		size_t errlen)
{
	*out = NULL;
	if (!kind_ok(kind))
		return pp_err(err, errlen, PP_EUSAGE, "profiles are frameworks or engines, not %s", hw_scope_name(kind));
	hw_profile *p = calloc(1, sizeof *p);
	if (p == NULL)
		return pp_err(err, errlen, PP_ENOMEM, "out of memory");
	p->kind = kind;
	/* The chain from the profile to its root, read root first so that each profile's own rows
	 * override what it inherits. */
	char chain[MAX_DEPTH][48], want[48];
	int depth = 0;
	if (!pp_strlcpy(want, name, sizeof want)) { /* longer than any profile's name: cut, it could name another */
		free(p);
		return pp_err(err, errlen, PP_EUSAGE, "unknown %s \"%.64s...\" (a name is at most %zu characters)",
			      hw_scope_name(kind), name, sizeof want - 1);
	}
	for (;;) {
		hw_profile row;
		memset(&row, 0, sizeof row);
		int rc = read_row(db, kind, want, &row, err, errlen);
		if (rc == PP_ENOTFOUND) {
			char names[512];
			known(db, kind, names, sizeof names);
			if (depth == 0)
				rc = pp_err(err, errlen, PP_EUSAGE, "unknown %s \"%s\" (known: %s)", hw_scope_name(kind), want, names);
			else
				rc = pp_err(err, errlen, PP_EINPUT, "%s \"%s\" inherits from \"%s\", which does not exist",
					    hw_scope_name(kind), chain[depth - 1], want);
		}
		if (rc != 0) {
			free(p);
			return rc;
		}
		if (depth == 0)
			*p = row, p->kind = kind;
		for (int i = 0; i < depth; i++)
			if (!strcmp(chain[i], row.name)) {
				free(p);
				return pp_err(err, errlen, PP_EINPUT, "%s \"%s\": its base profiles form a loop", hw_scope_name(kind),
					      name);
			}
		if (depth == MAX_DEPTH) {
			free(p);
			return pp_err(err, errlen, PP_EINPUT, "%s \"%s\": more than %d levels of base profiles",
				      hw_scope_name(kind), name, MAX_DEPTH);
		}
		pp_strlcpy(chain[depth++], row.name, sizeof chain[0]);
		if (row.base[0] == '\0')
			break;
		pp_strlcpy(want, row.base, sizeof want);
	}
	pp_strlcpy(p->root, chain[depth - 1], sizeof p->root);
	p->depth = depth;
	for (int d = 0; d < depth; d++)
		pp_strlcpy(p->chain[d], chain[depth - 1 - d], sizeof p->chain[d]);
	for (int k = 0; k < HW_NPKEYS; k++)
		p->set[k] = false;
	for (int d = depth - 1; d >= 0; d--) {
		hw_pval vals[HW_NPKEYS];
		bool have[HW_NPKEYS];
		int rc = hw_load_scope(db, kind, chain[d], (flags & HW_PROFILE_DEFAULTS) ? HW_LOAD_NO_FITS : 0, vals, have, err,
				       errlen);
		if (rc != 0) {
			free(p);
			return rc;
		}
		for (int k = 0; k < HW_NPKEYS; k++) {
			if (hw_pdef_get((hw_pkey)k)->scope != kind)
				continue;
			if (have[k] || !p->set[k]) {
				p->p[k] = vals[k];
				p->set[k] = have[k] || p->set[k];
			}
		}
	}
	*out = p;
	return 0;
}

hw_profile *
hw_profile_dup(const hw_profile *p)
{
	hw_profile *q = malloc(sizeof *q);
	if (q != NULL)
		memcpy(q, p, sizeof *q);
	return q;
}

void
hw_profile_free(hw_profile *p)
{
	free(p);
}

hw_pscope
hw_profile_kind(const hw_profile *p)
{
	return p->kind;
}

const char *
hw_profile_name(const hw_profile *p)
{
	return p->name;
}

const char *
hw_profile_root(const hw_profile *p)
{
	return p->root;
}

const char *
hw_profile_ancestor(const hw_profile *p, int level)
{
	if (level < 0)
		level = 0;
	return p->chain[level < p->depth ? level : p->depth - 1];
}

const char *
hw_profile_version(const hw_profile *p)
{
	return p->version;
}

double
hw_profile_get(const hw_profile *p, hw_pkey k)
{
	const hw_pdef *d = hw_pdef_get(k);
	if (d == NULL || d->scope != p->kind)
		return 0.0;
	return p->p[k].v;
}

hw_prov
hw_profile_prov(const hw_profile *p, hw_pkey k)
{
	const hw_pdef *d = hw_pdef_get(k);
	return d != NULL && d->scope == p->kind ? p->p[k].prov : HW_PROV_DATASHEET;
}

int
hw_profile_set(hw_profile *p, hw_pkey k, double v, char *err, size_t errlen)
{
	const hw_pdef *d = hw_pdef_get(k);
	if (d == NULL || d->scope != p->kind)
		return pp_err(err, errlen, PP_EUSAGE, "not a %s parameter", hw_scope_name(p->kind));
	int rc = hw_pdef_check(hw_scope_name(d->scope), d->key, v, err, errlen);
	if (rc != 0)
		return rc;
	p->p[k].v = v;
	p->p[k].prov = HW_PROV_FITTED;
	pp_strlcpy(p->p[k].origin, "fitted", sizeof p->p[k].origin);
	pp_strlcpy(p->p[k].method, "set in memory", sizeof p->p[k].method);
	p->set[k] = true;
	return 0;
}

cJSON *
hw_profile_describe(const hw_profile *p)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "kind", hw_scope_name(p->kind));
	cJSON_AddStringToObject(o, "name", p->name);
	if (p->base[0])
		cJSON_AddStringToObject(o, "base", p->base);
	cJSON_AddStringToObject(o, "version", p->version);
	cJSON_AddStringToObject(o, "description", p->description);
	cJSON_AddStringToObject(o, "source", p->source);
	cJSON *arr = cJSON_AddArrayToObject(o, "parameters");
	for (int k = 0; k < HW_NPKEYS; k++) {
		const hw_pdef *d = hw_pdef_get((hw_pkey)k);
		if (d->scope != p->kind)
			continue;
		cJSON *x = cJSON_CreateObject();
		cJSON_AddStringToObject(x, "key", d->key);
		if (d->names != NULL)
			cJSON_AddStringToObject(x, "value", hw_pdef_choice_name(d, p->p[k].v));
		else
			cJSON_AddNumberToObject(x, "value", p->p[k].v);
		cJSON_AddStringToObject(x, "unit", d->unit);
		cJSON_AddStringToObject(x, "provenance", hw_prov_name(p->p[k].prov));
		cJSON_AddStringToObject(x, "origin", p->p[k].origin);
		cJSON_AddStringToObject(x, "method", p->p[k].method);
		cJSON_AddStringToObject(x, "what", d->what);
		cJSON_AddItemToArray(arr, x);
	}
	return o;
}
