/*
 * pp.c -- shared helpers: error messages, growable arrays and strings, whole-file reads,
 * atomic writes, number parsing.  See pp.h for the conventions.
 */
#include "config.h"
#include "common/pp.h"

#include <errno.h>
#include <fcntl.h>
#ifdef HAVE_MALLOC_H
#include <malloc.h>
#endif
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int
pp_err(char *err, size_t errlen, int code, const char *fmt, ...)
{
	if (err != NULL && errlen > 0) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return code;
}

/* glibc serves a block of 128 KiB or more from its own mapping and unmaps it on free, raising
 * that threshold only as far as the largest block freed so far; and it gives the heap's free top
 * back past 128 KiB.  A simulation's op graph is a few arrays of some MiB, so each of the 16
 * simulations of 'plan train' faulted its pages in anew: 84,000 page faults and 0.2 s of system
 * time in a 0.98 s search of a 70B model's layouts, 15,500 faults and 0.83 s with the blocks
 * kept.  Blocks up to 32 MiB (glibc's largest threshold on 64-bit) come from the heap, and up to
 * 256 MiB of free heap is kept: what one simulation frees, the next one reuses. */
void
pp_keep_freed_memory(void)
{
#if defined(HAVE_MALLOPT) && defined(M_MMAP_THRESHOLD) && defined(M_TRIM_THRESHOLD)
	mallopt(M_MMAP_THRESHOLD, 32 << 20);
	mallopt(M_TRIM_THRESHOLD, 256 << 20);
#endif
}

int
pp_grow(void **pp, size_t *cap, size_t need, size_t elsz)
{
	if (need <= *cap)
		return 0;
	size_t ncap = *cap ? *cap : 8;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2)
			return PP_ENOMEM;
		ncap *= 2;
	}
	if (elsz != 0 && ncap > SIZE_MAX / elsz)
		return PP_ENOMEM;
	void *p = realloc(*pp, ncap * elsz);
	if (p == NULL)
		return PP_ENOMEM;
	*pp = p;
	*cap = ncap;
	return 0;
}

static const char *kind_of(mode_t m);

static int
read_all(const char *path, size_t maxlen, bool text, char **out, size_t *len, char *err, size_t errlen)
{
	*out = NULL;
	if (len)
		*len = 0;
	/* opened without blocking, so that a FIFO named here (in a plan, say) is refused below
	 * rather than waited on for a writer */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return pp_err(err, errlen, errno == ENOENT ? PP_ENOTFOUND : PP_EIO,
			      "%s: cannot open: %s", path, strerror(errno));
	struct stat st;
	if (fstat(fd, &st) != 0) {
		int e = errno;
		close(fd);
		return pp_err(err, errlen, PP_EIO, "%s: cannot open: %s", path, strerror(e));
	}
	if (S_ISDIR(st.st_mode)) {
		close(fd);
		return pp_err(err, errlen, PP_EINPUT, "%s: is a directory, expected a file", path);
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return pp_err(err, errlen, PP_EINPUT, "%s: is %s, expected a regular file", path, kind_of(st.st_mode));
	}
	if ((uint64_t)st.st_size > (uint64_t)maxlen) {
		close(fd);
		return pp_err(err, errlen, PP_EINPUT, "%s: file is larger than %zu bytes", path, maxlen);
	}
	int fl = fcntl(fd, F_GETFL);
	FILE *f = fl == -1 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) == -1 ? NULL : fdopen(fd, "rb");
	if (f == NULL) {
		int e = errno;
		close(fd);
		return pp_err(err, errlen, PP_EIO, "%s: cannot open: %s", path, strerror(e));
	}
	size_t cap = 0, n = 0;
	char *buf = NULL;
	for (;;) {
		if (PP_GROW(buf, cap, n + 65536 + 1) != 0) {
			free(buf);
			fclose(f);
			return pp_err(err, errlen, PP_ENOMEM, "%s: out of memory", path);
		}
		size_t got = fread(buf + n, 1, cap - n - 1, f);
		const char *nul = text ? memchr(buf + n, '\0', got) : NULL;
		if (nul != NULL) {
			size_t at = (size_t)(nul - buf);
			free(buf);
			fclose(f);
			return pp_err(err, errlen, PP_EINPUT, "%s: binary data (a NUL byte at byte %zu), expected text", path, at);
		}
		n += got;
		if (n > maxlen) {
			free(buf);
			fclose(f);
			return pp_err(err, errlen, PP_EINPUT, "%s: file is larger than %zu bytes", path, maxlen);
		}
		if (got == 0)
			break;
	}
	if (ferror(f)) {
		int e = errno;
		free(buf);
		fclose(f);
		return pp_err(err, errlen, PP_EIO, "%s: read error: %s", path, strerror(e));
	}
	fclose(f);
	buf[n] = '\0';
	*out = buf;
	if (len)
		*len = n;
	return 0;
}

static const char *
kind_of(mode_t m)
{
	if (S_ISLNK(m))
		return "a symbolic link";
	if (S_ISDIR(m))
		return "a directory";
	if (S_ISCHR(m))
		return "a character device";
	if (S_ISBLK(m))
		return "a block device";
	if (S_ISFIFO(m))
		return "a FIFO";
	if (S_ISSOCK(m))
		return "a socket";
	return "not a regular file";
}

/* pp_output_check, also telling whether the target exists (and its status when it does). */
static int
output_target(const char *flag, const char *path, struct stat *st, bool *exists, char *err, size_t errlen)
{
	const char *f = flag ? flag : "", *sp = flag ? " " : "";
	*exists = false;
	if (path == NULL || path[0] == '\0')
		return pp_err(err, errlen, PP_EUSAGE, "%s%sthe output path is empty", f, sp);
	/* lstat, not stat: the last component must itself be the file we replace */
	if (lstat(path, st) != 0) {
		if (errno == ENOENT)
			return 0; /* a new file (a missing directory is reported when it is created) */
		return pp_err(err, errlen, PP_EIO, "%s%s%s: %s", f, sp, path, strerror(errno));
	}
	*exists = true;
	if (!S_ISREG(st->st_mode))
		return pp_err(err, errlen, PP_EUSAGE,
			      "%s%s%s is %s: paraplan writes only a new file or replaces a regular file (choose another path)",
			      f, sp, path, kind_of(st->st_mode));
	/* the effective ids decide, as they would for open(O_WRONLY) */
	if (faccessat(AT_FDCWD, path, W_OK, AT_EACCESS) != 0)
		return pp_err(err, errlen, PP_EUSAGE,
			      "%s%s%s exists and may not be written (%s): paraplan replaces only a file it may write "
			      "(remove it or choose another path)",
			      f, sp, path, strerror(errno));
	return 0;
}

int
pp_output_check(const char *flag, const char *path, char *err, size_t errlen)
{
	struct stat st;
	bool exists;
	return output_target(flag, path, &st, &exists, err, errlen);
}

int
pp_read_file(const char *path, size_t maxlen, char **out, size_t *len, char *err, size_t errlen)
{
	return read_all(path, maxlen, false, out, len, err, errlen);
}

int
pp_read_text(const char *path, size_t maxlen, char **out, size_t *len, char *err, size_t errlen)
{
	return read_all(path, maxlen, true, out, len, err, errlen);
}

int
pp_write_file_atomic(const char *path, const void *data, size_t len, char *err, size_t errlen)
{
	struct stat st;
	bool exists;
	int rc = output_target(NULL, path, &st, &exists, err, errlen);
	if (rc != 0)
		return rc;
	size_t plen = strlen(path);
	char *tmp = malloc(plen + 16);
	if (tmp == NULL)
		return pp_err(err, errlen, PP_ENOMEM, "%s: out of memory", path);
	snprintf(tmp, plen + 16, "%s.tmpXXXXXX", path);
	int fd = mkstemp(tmp);
	if (fd < 0) {
		int e = errno;
		free(tmp);
		return pp_err(err, errlen, PP_EIO, "%s: cannot create: %s", path, strerror(e));
	}
	const char *p = data;
	size_t left = len;
	while (left > 0) {
		ssize_t w = write(fd, p, left);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			int e = errno;
			close(fd);
			unlink(tmp);
			free(tmp);
			return pp_err(err, errlen, PP_EIO, "%s: write failed: %s", path, strerror(e));
		}
		p += w;
		left -= (size_t)w;
	}
	/* mkstemp makes the file 0600; a report or export should be readable like any file, and a
	 * replaced file keeps the permissions its owner gave it. */
	mode_t um = umask(0);
	umask(um);
	(void)fchmod(fd, exists ? st.st_mode & 0777 : 0666 & ~um);
	if (fsync(fd) != 0 && errno != EINVAL) {
		int e = errno;
		close(fd);
		unlink(tmp);
		free(tmp);
		return pp_err(err, errlen, PP_EIO, "%s: fsync failed: %s", path, strerror(e));
	}
	/* Look again just before the rename: what appeared at path meanwhile obeys the same rule
	 * (this narrows the window; rename(2) offers no "replace only a regular file"). */
	if (close(fd) != 0 || (rc = output_target(NULL, path, &st, &exists, err, errlen)) != 0 || rename(tmp, path) != 0) {
		int e = errno;
		unlink(tmp);
		free(tmp);
		return rc != 0 ? rc : pp_err(err, errlen, PP_EIO, "%s: cannot write: %s", path, strerror(e));
	}
	free(tmp);
	return 0;
}

int
pp_mkdirs(const char *path, char *err, size_t errlen)
{
	size_t n = strlen(path);
	char *p = malloc(n + 1);
	if (p == NULL)
		return pp_err(err, errlen, PP_ENOMEM, "out of memory");
	memcpy(p, path, n + 1);
	for (size_t i = 1; i <= n; i++) {
		if (p[i] != '/' && p[i] != '\0')
			continue;
		char c = p[i];
		p[i] = '\0';
		if (mkdir(p, 0777) != 0 && errno != EEXIST) {
			int e = errno;
			int rc = pp_err(err, errlen, PP_EIO, "%s: cannot create directory: %s", p, strerror(e));
			free(p);
			return rc;
		}
		p[i] = c;
	}
	struct stat st;
	int rc = 0;
	if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
		rc = pp_err(err, errlen, PP_EIO, "%s: not a directory", path);
	free(p);
	return rc;
}

void
pp_str_addn(pp_str *s, const char *text, size_t n)
{
	if (s->oom)
		return;
	if (PP_GROW(s->buf, s->cap, s->len + n + 1) != 0) {
		s->oom = true;
		return;
	}
	memcpy(s->buf + s->len, text, n);
	s->len += n;
	s->buf[s->len] = '\0';
}

void
pp_str_add(pp_str *s, const char *text)
{
	pp_str_addn(s, text, strlen(text));
}

void
pp_str_vaddf(pp_str *s, const char *fmt, va_list ap)
{
	if (s->oom)
		return;
	va_list cp;
	va_copy(cp, ap);
	int n = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	if (n < 0)
		return;
	if (PP_GROW(s->buf, s->cap, s->len + (size_t)n + 1) != 0) {
		s->oom = true;
		return;
	}
	vsnprintf(s->buf + s->len, (size_t)n + 1, fmt, ap);
	s->len += (size_t)n;
}

void
pp_str_addf(pp_str *s, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	pp_str_vaddf(s, fmt, ap);
	va_end(ap);
}

char *
pp_str_detach(pp_str *s)
{
	char *b = s->buf;
	if (b == NULL && !s->oom)
		b = calloc(1, 1);
	if (s->oom) {
		free(s->buf);
		b = NULL;
	}
	s->buf = NULL;
	s->len = s->cap = 0;
	s->oom = false;
	return b;
}

void
pp_str_free(pp_str *s)
{
	free(s->buf);
	s->buf = NULL;
	s->len = s->cap = 0;
	s->oom = false;
}

/* ---- printable text ------------------------------------------------------------------------ */

/* Length of the valid UTF-8 sequence at t (n bytes available) and its code point; 0 when the
 * bytes there are not one (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF),
 * -1 when they may be the start of one that n cuts short. */
static int
utf8_seq(const unsigned char *t, size_t n, uint32_t *cp)
{
	unsigned char c = t[0];
	int len;
	unsigned char lo = 0x80, hi = 0xBF;
	if (c < 0x80) {
		*cp = c;
		return 1;
	} else if (c >= 0xC2 && c <= 0xDF) {
		len = 2;
		*cp = c & 0x1F;
	} else if (c >= 0xE0 && c <= 0xEF) {
		len = 3;
		*cp = c & 0x0F;
		if (c == 0xE0)
			lo = 0xA0;
		else if (c == 0xED)
			hi = 0x9F;
	} else if (c >= 0xF0 && c <= 0xF4) {
		len = 4;
		*cp = c & 0x07;
		if (c == 0xF0)
			lo = 0x90;
		else if (c == 0xF4)
			hi = 0x8F;
	} else {
		return 0;
	}
	for (int i = 1; i < len; i++) {
		if ((size_t)i >= n)
			return -1;
		unsigned char b = t[i];
		if (b < (i == 1 ? lo : 0x80) || b > (i == 1 ? hi : 0xBF))
			return 0;
		*cp = (*cp << 6) | (b & 0x3F);
	}
	return len;
}

static bool
cp_shown(uint32_t cp, unsigned flags)
{
	if (cp == '\n' || cp == '\t')
		return (flags & PP_PRINT_LINES) != 0;
	if (cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp <= 0x9F))
		return false;
	return !((cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069));
}

size_t
pp_str_add_printable_n(pp_str *s, const char *text, size_t n, unsigned flags, bool final)
{
	const unsigned char *t = (const unsigned char *)text;
	size_t i = 0, run = 0; /* run: bytes from i - run on that are shown as they are */
	while (i < n) {
		uint32_t cp = 0;
		int len = utf8_seq(t + i, n - i, &cp);
		if (len < 0 && !final)
			break;
		if (len > 0 && cp_shown(cp, flags)) {
			i += (size_t)len;
			run += (size_t)len;
			continue;
		}
		pp_str_addn(s, text + i - run, run);
		run = 0;
		if (len > 1) {
			pp_str_addf(s, "\\u%04x", (unsigned)cp);
			i += (size_t)len;
		} else {
			pp_str_addf(s, "\\x%02x", t[i]);
			i++;
		}
	}
	pp_str_addn(s, text + i - run, run);
	return i;
}

void
pp_str_add_printable(pp_str *s, const char *text)
{
	pp_str_add_printable_n(s, text, strlen(text), 0, true);
}

bool
pp_is_printable(const char *text, unsigned flags)
{
	const unsigned char *t = (const unsigned char *)text;
	size_t n = strlen(text);
	for (size_t i = 0; i < n;) {
		uint32_t cp;
		int len = utf8_seq(t + i, n - i, &cp);
		if (len <= 0 || !cp_shown(cp, flags))
			return false;
		i += (size_t)len;
	}
	return true;
}

const char *
pp_printable(const char *text, char *buf, size_t n)
{
	if (n == 0)
		return buf;
	pp_str s = {0};
	pp_str_add_printable(&s, text ? text : "");
	size_t len = s.len < n ? s.len : n - 1;
	/* cut at a UTF-8 character boundary */
	while (len > 0 && len < s.len && (((unsigned char)s.buf[len] & 0xC0) == 0x80))
		len--;
	if (s.buf != NULL)
		memcpy(buf, s.buf, len);
	buf[len] = '\0';
	pp_str_free(&s);
	return buf;
}

static const char *
skip_blanks(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

int
pp_parse_i64(const char *s, int64_t *out)
{
	if (s == NULL)
		return PP_EUSAGE;
	s = skip_blanks(s);
	if (*s == '\0')
		return PP_EUSAGE;
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno == ERANGE)
		return PP_ERANGE;
	if (end == s || *skip_blanks(end) != '\0')
		return PP_EUSAGE;
	*out = (int64_t)v;
	return 0;
}

/* Whether s (blanks skipped) starts as a hexadecimal number, which strtod reads ("0x10" as
 * 16) and no flag or file of ours means: numbers are decimal. */
static bool
hex_number(const char *s)
{
	const char *d = *s == '+' || *s == '-' ? s + 1 : s;
	return d[0] == '0' && (d[1] == 'x' || d[1] == 'X');
}

int
pp_parse_double(const char *s, double *out)
{
	if (s == NULL)
		return PP_EUSAGE;
	s = skip_blanks(s);
	if (*s == '\0')
		return PP_EUSAGE;
	if (hex_number(s))
		return PP_EUSAGE;
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || *skip_blanks(end) != '\0')
		return PP_EUSAGE;
	if (errno == ERANGE || !isfinite(v))
		return PP_ERANGE;
	*out = v;
	return 0;
}

int
pp_parse_count(const char *s, double *out)
{
	if (s == NULL)
		return PP_EUSAGE;
	s = skip_blanks(s);
	if (hex_number(s))
		return PP_EUSAGE;
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s)
		return PP_EUSAGE;
	if (errno == ERANGE || !isfinite(v))
		return PP_ERANGE;
	static const struct { const char *sfx; double mul; } units[] = {
		{"Ki", 1024.0}, {"Mi", 1048576.0}, {"Gi", 1073741824.0}, {"Ti", 1099511627776.0},
		{"K", 1e3}, {"k", 1e3}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12}, {"P", 1e15},
	};
	const char *rest = skip_blanks(end);
	if (*rest != '\0') {
		size_t i;
		for (i = 0; i < sizeof units / sizeof units[0]; i++) {
			size_t n = strlen(units[i].sfx);
			if (strncmp(rest, units[i].sfx, n) == 0 && *skip_blanks(rest + n) == '\0') {
				v *= units[i].mul;
				break;
			}
		}
		if (i == sizeof units / sizeof units[0])
			return PP_EUSAGE;
	}
	if (!isfinite(v))
		return PP_ERANGE;
	*out = v;
	return 0;
}

bool
pp_strlcpy(char *dst, const char *src, size_t n)
{
	if (n == 0)
		return false;
	size_t l = strlen(src);
	if (l >= n) {
		memcpy(dst, src, n - 1);
		dst[n - 1] = '\0';
		return false;
	}
	memcpy(dst, src, l + 1);
	return true;
}

bool
pp_ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && memcmp(s + a - b, suffix, b) == 0;
}
