/* common.h - result codes and the one-line error buffer shared by every module.
 *
 * A function that can fail returns a sim_rc and, on failure, writes one line
 * into a sim_err that names the file, the JSON key and the fix.  The CLI
 * prints that line on stderr and maps the code to an exit status
 * (SIM_EINVAL -> 2, anything else -> 1). */
#ifndef HEPTASIM_COMMON_H
#define HEPTASIM_COMMON_H

#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "sim_limits.h"

typedef enum sim_rc {
    SIM_OK = 0,
    SIM_EINVAL,   /* bad user input: file, key, value, flag */
    SIM_EIO,      /* file cannot be read or written */
    SIM_ENOMEM,   /* allocation failed */
    SIM_EOOM,     /* the strategy does not fit in device memory */
    SIM_EINTERNAL,/* simulation failed (deadlock, engine error) */
    SIM_EINTR     /* stopped by a signal (SIGINT, SIGTERM, SIGHUP): sim_signal_caught says which */
} sim_rc;

typedef struct sim_err {
    char msg[SIM_ERR_LEN];
} sim_err;

/* Lowercase phrase for a result code ("invalid input", ...). Never NULL. */
const char *sim_strerror(sim_rc rc);

/* Format msg into err (if err is not NULL) and return rc, so callers can
 * write `return sim_fail(err, SIM_EINVAL, "%s: '%s': ...", file, key)`. */
sim_rc sim_fail(sim_err *err, sim_rc rc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Exit status for a result code: 0 ok, 2 bad input, 128 + the signal for
 * SIM_EINTR (130 SIGINT, 143 SIGTERM), 1 anything else. */
int sim_exit_status(sim_rc rc);

/* The signal that stopped the command (0: none).  Set from the signal
 * handlers of sim_signals_catch; read it after the work returned. */
int sim_signal_caught(void);

/* From now on SIGINT, SIGTERM and SIGHUP only record that they came
 * (sim_signal_caught) instead of ending the process, so that work in
 * progress can stop cleanly: child processes stopped and reaped, finished
 * records kept.  The handler does nothing else (no library code in a
 * handler).  catch leaves the three signals blocked (*old gets the previous
 * mask: pass it to ppoll, where they are delivered); sim_signals_restore
 * records one still pending, then puts the default actions and *old back;
 * sim_signals_default puts the default actions back and unblocks them (in
 * a child process, before it runs anything). */
void sim_signals_catch(sigset_t *old);
void sim_signals_default(void);
void sim_signals_restore(const sigset_t *old);

/* Name of a caught signal ("SIGINT"), "signal N" for others (static). */
const char *sim_signal_name(int sig);

/* Allocation that never returns NULL: prints a line and exits 1 when the
 * machine is out of memory (there is nothing sensible to recover). */
void *sim_xcalloc(size_t n, size_t size);
void *sim_xrealloc(void *p, size_t size);
char *sim_xstrdup(const char *s);

/* Copy src into dst of capacity cap, always NUL-terminated. */
void sim_strlcpy(char *dst, const char *src, size_t cap);

/* Append item to the comma-separated list in out ("a, b"), as far as cap
 * allows; out starts as "". */
void sim_list_add(char *out, size_t cap, const char *item);

/* The names of an enum that users write (command-line values, JSON
 * strings): one row per value, in the order messages list them.  Each
 * table lives beside its enum, with a _Static_assert on its length. */
typedef struct sim_enum_name {
    int value;
    const char *name;
} sim_enum_name;

/* The name of value in the n rows of t; "?" when no row has it. */
const char *sim_enum_name_of(const sim_enum_name *t, int n, int value);

/* The value named text in the n rows of t; -1 when none is. */
int sim_enum_value(const sim_enum_name *t, int n, const char *text);

/* The names of the n rows of t joined into out: with quoted, "'a', 'b' or
 * 'c'" (for a message); else "a|b|c" (an option's argument). */
void sim_enum_names_text(const sim_enum_name *t, int n, bool quoted, char *out, size_t cap);

/* Wall-clock seconds from a monotonic clock (for timing the simulator
 * itself, never a simulated figure). */
double sim_now_s(void);

/* {================================================ progress (progress.c) */

/* The process's progress reporter, for commands that run long: a line
 * redrawn in place on stderr when terminal is set, and a line per report
 * appended to log when not NULL (the caller opens and closes it).  Off
 * (every call below a no-op) until begun with either; label starts every
 * line ("heptasim run").  Never writes stdout. */
void sim_progress_begin(const char *label, bool terminal, FILE *log);
bool sim_progress_on(void);
/* Wall seconds since sim_progress_begin. */
double sim_progress_wall_s(void);
/* One report, printf-style: dropped when the previous one is less than a
 * second of wall time old, unless force. */
void sim_progress_report(bool force, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "done/total WHAT, R running, W wall, about L left": a report of counts,
 * the time left from the rate since since_s (sim_now_s() when the counted
 * work began); W is the command's wall time. */
void sim_progress_counts(bool force, const char *what, int done, int total, int running, double since_s);
/* Erase the terminal's line (before other text goes to stderr); the next
 * report draws it again. */
void sim_progress_clear(void);
/* Erase the line, flush the log, turn the reporter off. */
void sim_progress_end(void);
/* A duration for people: "4.2 s", "3m07s", "1h02m", "more than 99 h". */
void sim_duration(double s, char *out, size_t cap);

/* }================================================ */

/* Read the whole file at path into *out, NUL-terminated (the caller
 * frees it), its length in *len (the bytes may hold NULs).  Refuses with
 * one line that says what the path is: a name longer than SIM_MAX_PATH, a
 * missing file, a dangling symbolic link, a symbolic link loop, a
 * directory, anything that is not a regular file (a FIFO, a device such as
 * /dev/zero, a socket; never opened, so a FIFO cannot block), a file of
 * more than max_bytes (what: "a config file", in the message), a read
 * error.  Returns SIM_OK or SIM_EINVAL (the file is bad input). */
sim_rc sim_read_file(const char *path, size_t max_bytes, const char *what, char **out, size_t *len, sim_err *err);

/* Checks that text[0..len) is text heptasim can echo into JSON and HTML:
 * no NUL byte and valid UTF-8 (no overlong forms, surrogates or code
 * points above U+10FFFF).  Returns the offset of the first bad byte, or
 * len when all is well; *line (when not NULL) gets its 1-based line and
 * *why a short phrase ("a NUL byte", "invalid UTF-8"). */
size_t sim_text_check(const char *text, size_t len, int *line, const char **why);

/* Replaces, in place, every byte of s that is not part of valid UTF-8
 * with '?' (for text from a file name, which may hold any byte). */
void sim_utf8_scrub(char *s);

/* sim_read_file, then sim_text_check: a bad byte fails with
 * "<path>: line N: a NUL byte at byte B (...)" or "... invalid UTF-8 ...". */
sim_rc sim_read_text(const char *path, size_t max_bytes, const char *what, char **out, sim_err *err);

/* {======================================================== output files */

/* An output file written whole or not at all (output.c).  The text goes to
 * a temporary file in the directory of path, which replaces path only when
 * every write succeeded: a failure never leaves a truncated file, and an
 * earlier file at path stays as it was.  "-" is stdout, written directly; a
 * write error there names "stdout".  A path that exists and is not a
 * regular file (/dev/null, a FIFO, a symbolic link) is written in place.
 * Every result file goes through one: JSON documents (rpt_write_json_doc),
 * HTML reports, traces, platform dumps, merged records. */
typedef struct sim_out {
    FILE *f;          /* write here between sim_out_open and commit/discard */
    char *path;       /* where the file goes (owned) */
    char *tmp;        /* the temporary file, NULL when written in place (owned) */
    const char *what; /* the document, for messages: "JSON result", "trace" (static) */
} sim_out;

/* Opens the file of path: the temporary beside it.  what names the document
 * in messages.  Returns SIM_OK, or SIM_EIO "<path>: cannot write the <what>:
 * <reason> (check the directory exists and is writable)" with nothing
 * created. */
sim_rc sim_out_open(sim_out *o, const char *path, const char *what, sim_err *err);

/* Flushes and closes the file of o and moves the temporary to its path.
 * Returns SIM_OK, or SIM_EIO "<path or stdout>: cannot write the <what>:
 * <reason> (check free space and permissions)" after removing the
 * temporary.  o is released either way. */
sim_rc sim_out_commit(sim_out *o, sim_err *err);

/* Closes the file of o and removes the temporary: path is left as it was.
 * Releases o; a zeroed o (never opened) is a no-op. */
void sim_out_discard(sim_out *o);

/* Whether sim_out_open could create path: SIM_OK, or SIM_EIO with its
 * message.  Creates nothing; for checking an output before a long run. */
sim_rc sim_out_check(const char *path, const char *what, sim_err *err);

/* }======================================================== output files */

/* {=============================================================== units */

/* The one formatting of figures for people, in every text summary, table
 * and HTML report (JSON and CSV carry base units: bytes, seconds).  Sizes,
 * memory and traffic alike, are in binary units ("1.5 GiB", "312 MiB",
 * "2.0 TiB", "0 B"); times take the unit that fits ("812 ms", "1.23 s",
 * "45.6 us", "0 s"); counts have thousands separators ("1,234,567", "-"
 * for a value that is not finite).  Each writes at most cap bytes to out
 * and returns out. */
char *sim_fmt_bytes(double bytes, char *out, size_t cap);
char *sim_fmt_time(double s, char *out, size_t cap);
char *sim_fmt_count(double v, char *out, size_t cap);

/* }=============================================================== units */

/* Units used throughout: seconds, bytes, FLOPs (not FLOP/s unless named
 * _flops_per_s). */
#define SIM_GIB (1024.0 * 1024.0 * 1024.0)
/* Bytes of one FP8 element (E4M3 or E5M2): FP8 GEMM operands, saved
 * inputs and weight copies. */
#define SIM_FP8_BYTES 1.0

#endif
