/*
 * replay.c -- runs the fuzz targets over files, without libFuzzer (see fuzz.h).
 *
 *   replay                  every target over tests/fuzz/corpus/<name>/ and
 *                           tests/fuzz/regress/<name>/ under $top_srcdir (the 'make check' test)
 *   replay --list           the target names, one a line (run.sh builds one fuzzer for each)
 *   replay TARGET FILE...   one target over the given files (to reproduce a crash)
 *
 * Each file is read into a buffer of exactly its size, so a parser that reads past the end is
 * caught by the sanitizer or valgrind the build runs under.  Every target must have a seed
 * corpus, and every corpus or regression directory must belong to a target (a misspelt
 * directory would otherwise be skipped in silence).
 */
#include "config.h"
#include "tests/fuzz/fuzz.h"

#include <dirent.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

typedef struct target {
	const char *name;
	int (*fn)(const uint8_t *, size_t);
} target;

#define FUZZ_ENTRY(name) {#name, fuzz_##name},
static const target targets[] = {FUZZ_TARGETS(FUZZ_ENTRY)};
#undef FUZZ_ENTRY
#define NTARGETS (sizeof targets / sizeof targets[0])

static const target *
find(const char *name)
{
	for (size_t i = 0; i < NTARGETS; i++)
		if (!strcmp(targets[i].name, name))
			return &targets[i];
	return NULL;
}

/* Runs one file through a target; returns 0, or -1 when the file cannot be read. */
static int
run_file(const target *t, const char *path)
{
	FILE *f = fopen(path, "rb");
	if (f == NULL) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	size_t cap = 1 << 16, n = 0;
	uint8_t *buf = malloc(cap);
	size_t got;
	while (buf != NULL && (got = fread(buf + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n == cap) {
			uint8_t *nb = realloc(buf, cap *= 2);
			if (nb == NULL)
				free(buf);
			buf = nb;
		}
	}
	int bad = ferror(f);
	fclose(f);
	if (buf == NULL || bad) {
		free(buf);
		fprintf(stderr, "replay: %s: cannot read\n", path);
		return -1;
	}
	/* exactly n bytes, no terminating NUL: what libFuzzer hands a target */
	uint8_t *exact = malloc(n ? n : 1);
	if (exact == NULL) {
		free(buf);
		return -1;
	}
	memcpy(exact, buf, n);
	free(buf);
	t->fn(exact, n);
	free(exact);
	return 0;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Runs every regular file of dir (sorted, dotfiles skipped); *count gets the number run.
 * A missing directory runs nothing and is not an error here. */
static int
run_dir(const target *t, const char *dir, int *count)
{
	*count = 0;
	DIR *d = opendir(dir);
	if (d == NULL)
		return errno == ENOENT ? 0 : -1;
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		if (n == cap) {
			char **nn = realloc(names, (cap = cap ? 2 * cap : 64) * sizeof *names);
			if (nn == NULL)
				break;
			names = nn;
		}
		names[n++] = strdup(e->d_name);
	}
	closedir(d);
	if (n > 1)
		qsort(names, n, sizeof *names, cmp_str);
	int rc = 0;
	for (size_t i = 0; i < n; i++) {
		char path[4096];
		struct stat st;
		snprintf(path, sizeof path, "%s/%s", dir, names[i]);
		if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
			if (run_file(t, path) != 0)
				rc = -1;
			else
				(*count)++;
		}
		free(names[i]);
	}
	free(names);
	return rc;
}

/* Every directory under base must be named after a target (files such as a README are left alone). */
static int
check_dirs(const char *base)
{
	DIR *d = opendir(base);
	if (d == NULL)
		return 0;
	int rc = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		char path[4096];
		struct stat st;
		snprintf(path, sizeof path, "%s/%s", base, e->d_name);
		if (e->d_name[0] == '.' || stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
			continue;
		if (find(e->d_name) == NULL) {
			fprintf(stderr, "replay: %s/%s belongs to no fuzz target (see tests/fuzz/fuzz.h)\n", base, e->d_name);
			rc = -1;
		}
	}
	closedir(d);
	return rc;
}

int
main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "--list")) {
		for (size_t i = 0; i < NTARGETS; i++)
			printf("%s\n", targets[i].name);
		return 0;
	}
	if (argc >= 2) {
		const target *t = find(argv[1]);
		if (t == NULL) {
			fprintf(stderr, "replay: unknown target \"%s\" (replay --list)\n", argv[1]);
			return 2;
		}
		int rc = 0;
		for (int i = 2; i < argc; i++)
			rc |= run_file(t, argv[i]) != 0;
		return rc;
	}
	const char *src = getenv("top_srcdir");
	if (src == NULL || src[0] == '\0')
		src = ".";
	char corpus[2048], regress[2048];
	snprintf(corpus, sizeof corpus, "%s/tests/fuzz/corpus", src);
	snprintf(regress, sizeof regress, "%s/tests/fuzz/regress", src);
	int rc = check_dirs(corpus) | check_dirs(regress);
	for (size_t i = 0; i < NTARGETS; i++) {
		char dir[4096];
		int nc, nr;
		snprintf(dir, sizeof dir, "%s/%s", corpus, targets[i].name);
		rc |= run_dir(&targets[i], dir, &nc);
		snprintf(dir, sizeof dir, "%s/%s", regress, targets[i].name);
		rc |= run_dir(&targets[i], dir, &nr);
		printf("%-20s %4d seed and %3d regression inputs\n", targets[i].name, nc, nr);
		if (nc == 0) {
			fprintf(stderr, "replay: no seed corpus in %s/%s\n", corpus, targets[i].name);
			rc = -1;
		}
	}
	return rc == 0 ? 0 : 1;
}
