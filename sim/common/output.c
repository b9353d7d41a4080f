/* output.c - output files written whole or not at all: a temporary file
 * beside the target, renamed over it once every write succeeded.
 *
 * rename(2) within one directory replaces the target atomically, so a
 * reader sees the old file or the new one, never a part.  The temporary
 * (".<name>.XXXXXX", made by mkstemp) gets the mode a plain fopen would
 * give the file (0666 less the umask).  A file that may not be written
 * (no write permission) is refused as fopen would refuse it, though
 * rename could replace it. */
#include "common.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static sim_rc open_failed(const char *path, const char *what, int e, sim_err *err)
{
    return sim_fail(err, SIM_EIO, "%s: cannot write the %s: %s (check the directory exists and is writable)", path,
                    what, strerror(e));
}

/* The directory part of path ("." when none) into a new string. */
static char *dir_of(const char *path)
{
    char *dir = sim_xstrdup(path);
    char *slash = strrchr(dir, '/');
    if (!slash)
        strcpy(dir, ".");
    else if (slash == dir)
        dir[1] = '\0';
    else
        *slash = '\0';
    return dir;
}

/* What writing path means: 0 a new file or one replaced by the temporary,
 * 1 in place (it exists and is not a regular file), or -1 with *e set when
 * it cannot be written (a directory, a file without write permission). */
static int kind_of(const char *path, int *e)
{
    struct stat st;
    if (lstat(path, &st) != 0) return 0;
    if (S_ISDIR(st.st_mode)) {
        *e = EISDIR;
        return -1;
    }
    if (access(path, W_OK) != 0) {
        *e = errno;
        return -1;
    }
    return S_ISREG(st.st_mode) ? 0 : 1;
}

sim_rc sim_out_open(sim_out *o, const char *path, const char *what, sim_err *err)
{
    memset(o, 0, sizeof *o);
    o->what = what;
    if (strcmp(path, "-") == 0) {
        o->f = stdout;
        o->path = sim_xstrdup("stdout");
        return SIM_OK;
    }
    int e = 0, kind = kind_of(path, &e);
    if (kind < 0) return open_failed(path, what, e, err);
    if (kind == 1) {
        o->f = fopen(path, "w");
        if (!o->f) return open_failed(path, what, errno, err);
        o->path = sim_xstrdup(path);
        return SIM_OK;
    }
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    size_t dlen = (size_t)(base - path), cap = strlen(path) + 16;
    char *tmp = sim_xcalloc(1, cap);
    snprintf(tmp, cap, "%.*s.%s.XXXXXX", (int)dlen, path, base);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        e = errno;
        free(tmp);
        return open_failed(path, what, e, err);
    }
    mode_t mask = umask(0);
    umask(mask);
    (void)fchmod(fd, 0666 & ~mask);
    o->f = fdopen(fd, "w");
    if (!o->f) {
        e = errno;
        close(fd);
        unlink(tmp);
        free(tmp);
        return open_failed(path, what, e, err);
    }
    o->path = sim_xstrdup(path);
    o->tmp = tmp;
    return SIM_OK;
}

static void release(sim_out *o)
{
    free(o->path);
    free(o->tmp);
    memset(o, 0, sizeof *o);
}

sim_rc sim_out_commit(sim_out *o, sim_err *err)
{
    int e = ferror(o->f) ? EIO : 0;
    if ((o->f == stdout ? fflush(o->f) : fclose(o->f)) != 0) e = errno ? errno : EIO;
    if (e == 0 && o->tmp && rename(o->tmp, o->path) != 0) e = errno;
    if (e != 0 && o->tmp) unlink(o->tmp);
    sim_rc rc = SIM_OK;
    if (e != 0)
        rc = sim_fail(err, SIM_EIO, "%s: cannot write the %s: %s (check free space and permissions)", o->path,
                      o->what, strerror(e));
    release(o);
    return rc;
}

void sim_out_discard(sim_out *o)
{
    if (!o->f) return;
    if (o->f == stdout)
        fflush(stdout);
    else
        fclose(o->f);
    if (o->tmp) unlink(o->tmp);
    release(o);
}

sim_rc sim_out_check(const char *path, const char *what, sim_err *err)
{
    if (strcmp(path, "-") == 0) return SIM_OK;
    int e = 0, kind = kind_of(path, &e);
    if (kind < 0) return open_failed(path, what, e, err);
    if (kind == 1) return SIM_OK;
    char *dir = dir_of(path);
    int ok = access(dir, W_OK | X_OK) == 0;
    e = errno;
    free(dir);
    return ok ? SIM_OK : open_failed(path, what, e, err);
}
