/*
 * pp.h -- the few helpers every paraplan module shares.
 *
 * Error convention (all modules): a fallible call returns 0 on success and a negative PP_E* code
 * on failure, and writes a one-line message into the caller's buffer `err` of `errlen` bytes
 * (lower case, no trailing full stop, naming the file, field or flag at fault).  `err` may be
 * NULL when the caller does not want the message.  The library never prints and never exits.
 *
 * Memory: every pointer returned by a *_new, *_read or *_dup call belongs to the caller and is
 * released with free() unless its header names a *_free function.
 */
#ifndef PP_H
#define PP_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Error codes.  The command line maps PP_EUSAGE to exit status 2 and every other code to 1. */
enum {
	PP_OK = 0,
	PP_EUSAGE = -1,  /* a flag or argument is wrong: the user must change the command line */
	PP_EINPUT = -2,  /* an input file or document is malformed or inconsistent */
	PP_EIO = -3,     /* reading or writing a file failed */
	PP_ENOMEM = -4,  /* out of memory */
	PP_ENOTFOUND = -5, /* a named model, GPU, system or run does not exist */
	PP_EDB = -6,     /* the hardware database refused an operation */
	PP_ENODEV = -7,  /* no GPU (or no CUDA/NCCL build) where one is needed */
	PP_ERANGE = -8,  /* a value or a derived size is out of range (overflow, zero, absurd) */
	PP_EINTR = -9,   /* interrupted by the user (Ctrl-C) */
};

/* Writes a formatted message into err (when err is not NULL) and returns code. */
int pp_err(char *err, size_t errlen, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Checked 64-bit arithmetic: return false (and leave *out untouched) on overflow. */
static inline bool pp_mul64(int64_t a, int64_t b, int64_t *out) { return !__builtin_mul_overflow(a, b, out); }
static inline bool pp_add64(int64_t a, int64_t b, int64_t *out) { return !__builtin_add_overflow(a, b, out); }

/* Grows *pp (an array of elements of size elsz, capacity *cap) to hold at least need elements.
 * Returns 0 or PP_ENOMEM (the array is unchanged on failure). */
int pp_grow(void **pp, size_t *cap, size_t need, size_t elsz);
#define PP_GROW(arr, cap, need) pp_grow((void **)&(arr), &(cap), (need), sizeof *(arr))

/* For a program that runs many simulations one after another (plan, validate): blocks freed
 * stay in the process's heap for the next one instead of going back to the system and being
 * faulted in again, page by page (where the C library allows it; else nothing).  A process-wide
 * choice: programs call it first thing, the library never does. */
void pp_keep_freed_memory(void);

/* Reads a whole file (at most maxlen bytes; larger files are an error) into a NUL-terminated
 * buffer.  *out is owned by the caller.  A regular file larger than maxlen is refused before it
 * is read. */
int pp_read_file(const char *path, size_t maxlen, char **out, size_t *len, char *err, size_t errlen);
/* The same for a text input (a model, a log, a trace, a CSV or JSON document): a NUL byte is
 * refused as soon as it is read ("binary data"), so /dev/zero or a binary file costs one read,
 * not maxlen bytes of memory. */
int pp_read_text(const char *path, size_t maxlen, char **out, size_t *len, char *err, size_t errlen);

/* The one rule for every file paraplan writes (--out, --trace, exports, the files of a report):
 * the target is a new path in an existing directory, or an existing regular file that we may
 * write, which is then replaced.  Anything else is refused with the reason: a symbolic link
 * (the rename would replace the link, and following it would write where the link points), a
 * directory, a device, a FIFO or a socket (run as root, a rename over /dev/full turned it into
 * a plain file), a file we may not write (a rename in a writable folder would replace a
 * read-only file).  `flag` names the option in the message ("--out"), or is NULL.
 * Returns 0, PP_EUSAGE (the path names something we must not replace) or PP_EIO. */
int pp_output_check(const char *flag, const char *path, char *err, size_t errlen);

/* Writes len bytes to path atomically: a temporary file beside it, fsync, rename.  The target
 * must pass pp_output_check (checked again just before the rename); a replaced file keeps its
 * permission bits.  On any failure nothing is left behind and an existing file at path is
 * untouched. */
int pp_write_file_atomic(const char *path, const void *data, size_t len, char *err, size_t errlen);

/* Makes a directory and its parents (like mkdir -p). */
int pp_mkdirs(const char *path, char *err, size_t errlen);

/* A growable NUL-terminated string.  len never counts the NUL; buf is NULL only before the
 * first append.  A failed allocation sets oom and makes later appends no-ops. */
typedef struct pp_str {
	char *buf;
	size_t len, cap;
	bool oom;
} pp_str;
void pp_str_add(pp_str *s, const char *text);
void pp_str_addn(pp_str *s, const char *text, size_t n);
void pp_str_addf(pp_str *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void pp_str_vaddf(pp_str *s, const char *fmt, va_list ap);
char *pp_str_detach(pp_str *s); /* hands buf to the caller ("" when empty); s is reset */
void pp_str_free(pp_str *s);

/* Printable text.  Names and text from files and databases reach terminals, JSON and charts;
 * a terminal runs the escape sequences in them, and JSON must be UTF-8.  The printable form of
 * a text is valid UTF-8 without control characters: each C0 control, DEL and byte that is not
 * part of a valid UTF-8 sequence becomes \xHH (its value), each C1 control and bidirectional
 * override (U+0080..U+009F, U+202A..U+202E, U+2066..U+2069, which reorder or restyle what a
 * terminal shows) becomes \uHHHH.  Everything else, backslashes included, is kept as is.
 * PP_PRINT_LINES keeps newline and tab (a stream of lines rather than one name). */
enum { PP_PRINT_LINES = 1 };
/* Appends the printable form of n bytes of text to s and returns how many bytes it consumed:
 * n, or fewer when `final` is false and the text ends inside what may be an incomplete UTF-8
 * sequence (pass those bytes again with what follows them). */
size_t pp_str_add_printable_n(pp_str *s, const char *text, size_t n, unsigned flags, bool final);
void pp_str_add_printable(pp_str *s, const char *text); /* a whole NUL-terminated name */
/* Whether text is its own printable form. */
bool pp_is_printable(const char *text, unsigned flags);
/* The printable form of text in buf (truncated at a character boundary to fit n bytes). */
const char *pp_printable(const char *text, char *buf, size_t n);

/* Number parsing for flags and fields.  Accept surrounding blanks, reject trailing junk.
 * pp_parse_count accepts the suffixes K, M, G, T, P (powers of 1000) and Ki, Mi, Gi, Ti
 * (powers of 1024), as in "15T" tokens or "4Gi" bytes. */
int pp_parse_i64(const char *s, int64_t *out);
int pp_parse_double(const char *s, double *out);
int pp_parse_count(const char *s, double *out);

/* Copies src into dst of size n, always NUL-terminating; returns false if truncated. */
bool pp_strlcpy(char *dst, const char *src, size_t n);

/* Case-sensitive test that s ends with suffix. */
bool pp_ends_with(const char *s, const char *suffix);

#endif /* PP_H */
