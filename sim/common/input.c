/* input.c - reading an input file whole, with a size cap and a precise
 * message for whatever the path turns out to be, and the text checks
 * (no NUL byte, valid UTF-8) of what is echoed into JSON and HTML. */
#include "common.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* What a path that is not a regular file is, for messages. */
static const char *file_kind(mode_t mode)
{
    if (S_ISDIR(mode)) return "a directory";
    if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISSOCK(mode)) return "a socket";
    return "not a regular file";
}

/* The failure of stat() or open() on path as one line. */
static sim_rc open_failure(const char *path, int e, sim_err *err)
{
    struct stat st;
    if (e == ENOENT && lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
        return sim_fail(err, SIM_EINVAL, "%s: cannot read the file: a symbolic link to a file that does not exist",
                        path);
    if (e == ENOENT || e == ENOTDIR)
        return sim_fail(err, SIM_EINVAL, "%s: cannot read the file: no such file (check the path)", path);
    if (e == ELOOP)
        return sim_fail(err, SIM_EINVAL,
                        "%s: cannot read the file: too many levels of symbolic links (a loop of symbolic links?)",
                        path);
    return sim_fail(err, SIM_EINVAL, "%s: cannot read the file: %s", path, strerror(e));
}

sim_rc sim_read_file(const char *path, size_t max_bytes, const char *what, char **out, size_t *len, sim_err *err)
{
    size_t n = strlen(path);
    if (n == 0) return sim_fail(err, SIM_EINVAL, "heptasim: empty file name");
    if (n > SIM_MAX_PATH)
        return sim_fail(err, SIM_EINVAL,
                        "heptasim: a file name of %zu characters is longer than the %d heptasim takes (use a shorter "
                        "path, or a symbolic link to the file)",
                        n, SIM_MAX_PATH);
    /* stat first: a FIFO or a device is refused without being opened */
    struct stat st;
    if (stat(path, &st) != 0) return open_failure(path, errno, err);
    if (!S_ISREG(st.st_mode))
        return sim_fail(err, SIM_EINVAL, "%s: is %s, not a file heptasim can read (give a regular file)", path,
                        file_kind(st.st_mode));
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) return open_failure(path, errno, err);
    /* it may have been replaced since the stat */
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return sim_fail(err, SIM_EINVAL, "%s: is %s, not a file heptasim can read (give a regular file)", path,
                        file_kind(st.st_mode));
    }
    /* Read up to max_bytes + 1 whatever the size says (files of /proc
     * report 0): one byte more than the cap means too large. */
    size_t cap = 8192, got = 0;
    char *buf = sim_xcalloc(1, cap);
    for (;;) {
        if (got + 1 == cap) {
            if (got > max_bytes) break;
            cap = cap * 2 > max_bytes + 2 ? max_bytes + 2 : cap * 2;
            buf = sim_xrealloc(buf, cap);
        }
        ssize_t r = read(fd, buf + got, cap - 1 - got);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            int e = errno;
            close(fd);
            free(buf);
            return sim_fail(err, SIM_EINVAL, "%s: cannot read the file: %s", path, strerror(e));
        }
        if (r == 0) break;
        got += (size_t)r;
    }
    close(fd);
    if (got > max_bytes) {
        free(buf);
        if (max_bytes >= 1024 * 1024)
            return sim_fail(err, SIM_EINVAL, "%s: larger than %zu MiB, not %s", path, max_bytes >> 20, what);
        return sim_fail(err, SIM_EINVAL, "%s: larger than %zu bytes, not %s", path, max_bytes, what);
    }
    buf[got] = '\0';
    *out = buf;
    if (len) *len = got;
    return SIM_OK;
}

/* Length of the UTF-8 sequence at s (at most n bytes), 0 when invalid
 * (RFC 3629: shortest form, no surrogates, at most U+10FFFF). */
static size_t utf8_sequence(const unsigned char *s, size_t n)
{
    unsigned char c = s[0];
    if (c < 0x80) return 1;
    size_t k;
    uint32_t cp, min;
    if (c >= 0xC2 && c <= 0xDF) {
        k = 2, cp = c & 0x1F, min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
        k = 3, cp = c & 0x0F, min = 0x800;
    } else if (c >= 0xF0 && c <= 0xF4) {
        k = 4, cp = c & 0x07, min = 0x10000;
    } else {
        return 0;
    }
    if (n < k) return 0;
    for (size_t i = 1; i < k; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        cp = cp << 6 | (s[i] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    return k;
}

size_t sim_text_check(const char *text, size_t len, int *line, const char **why)
{
    const unsigned char *s = (const unsigned char *)text;
    int ln = 1;
    for (size_t i = 0; i < len;) {
        size_t k = s[i] ? utf8_sequence(s + i, len - i) : 0;
        if (k == 0) {
            if (line) *line = ln;
            if (why) *why = s[i] ? "invalid UTF-8" : "a NUL byte";
            return i;
        }
        if (s[i] == '\n') ln++;
        i += k;
    }
    if (line) *line = ln;
    if (why) *why = NULL;
    return len;
}

void sim_utf8_scrub(char *s)
{
    size_t n = strlen(s);
    for (size_t i = 0; i < n;) {
        size_t k = utf8_sequence((const unsigned char *)s + i, n - i);
        if (k == 0) {
            s[i++] = '?';
            continue;
        }
        i += k;
    }
}

sim_rc sim_read_text(const char *path, size_t max_bytes, const char *what, char **out, sim_err *err)
{
    char *text = NULL;
    size_t len = 0;
    sim_rc rc = sim_read_file(path, max_bytes, what, &text, &len, err);
    if (rc != SIM_OK) return rc;
    int line;
    const char *why;
    size_t bad = sim_text_check(text, len, &line, &why);
    if (bad < len) {
        free(text);
        return sim_fail(err, SIM_EINVAL, "%s: line %d: %s at byte %zu (%s holds UTF-8 text only; fix or re-save it)",
                        path, line, why, bad + 1, what);
    }
    *out = text;
    return SIM_OK;
}
