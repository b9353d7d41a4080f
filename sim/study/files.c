/* files.c - the folder of a study: created with its parents, the copies
 * of its inputs (inputs/), the command that regenerates it (command.txt). */
#define _DEFAULT_SOURCE /* mkdir */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"

sim_rc stdy_join(char *out, size_t cap, const char *dir, const char *name, sim_err *err)
{
    if ((size_t)snprintf(out, cap, "%s/%s", dir, name) >= cap)
        return sim_fail(err, SIM_EINVAL, "heptasim study: %s/%s: path too long (use a shorter --out)", dir, name);
    return SIM_OK;
}

sim_rc stdy_mkdir_p(const char *dir, sim_err *err)
{
    char buf[CFG_PATH_LEN];
    sim_strlcpy(buf, dir, sizeof buf);
    for (char *p = buf + 1;; p++) {
        bool last = *p == '\0';
        if (*p == '/' || last) {
            *p = '\0';
            if (mkdir(buf, 0777) != 0 && errno != EEXIST)
                return sim_fail(err, SIM_EIO, "heptasim study: cannot create the folder %s: %s (check --out)", buf,
                                strerror(errno));
            if (last) break;
            *p = '/';
        }
    }
    struct stat s;
    if (stat(dir, &s) != 0 || !S_ISDIR(s.st_mode))
        return sim_fail(err, SIM_EIO, "heptasim study: %s is not a folder (give another --out)", dir);
    return SIM_OK;
}

/* A copy of file src at dst. */
static sim_rc copy_file(const char *src, const char *dst, sim_err *err)
{
    char *buf = NULL;
    size_t len = 0;
    sim_rc rc = sim_read_file(src, CFG_MAX_FILE_BYTES, "input file", &buf, &len, err);
    sim_out o;
    if (rc == SIM_OK) rc = sim_out_open(&o, dst, "copy of an input", err);
    if (rc == SIM_OK) {
        if (fwrite(buf, 1, len, o.f) != len) {
            sim_out_discard(&o);
            rc = sim_fail(err, SIM_EIO, "%s: cannot write the copy of %s", dst, src);
        } else {
            rc = sim_out_commit(&o, err);
        }
    }
    free(buf);
    return rc;
}

sim_rc stdy_copy_inputs(const stdy_study *st, const char *dir, sim_err *err)
{
    char in[CFG_PATH_LEN], path[CFG_PATH_LEN], name[CFG_NAME_LEN + 8];
    sim_rc rc = stdy_join(in, sizeof in, dir, "inputs", err);
    if (rc == SIM_OK) rc = stdy_mkdir_p(in, err);
    if (rc == SIM_OK) rc = stdy_join(path, sizeof path, in, "study.json", err);
    if (rc == SIM_OK) rc = copy_file(st->path, path, err);
    for (int i = 0; i < st->ncells && rc == SIM_OK; i++) {
        const char *files[2] = {st->cells[i].model.path, st->cells[i].platform.path};
        const char *kinds[2] = {"model-", "platform-"};
        for (int k = 0; k < 2 && rc == SIM_OK; k++) {
            if (!files[k][0]) continue;
            char s[CFG_NAME_LEN];
            stdy_stem(files[k], s, sizeof s);
            snprintf(name, sizeof name, "%s%s.json", kinds[k], s);
            rc = stdy_join(path, sizeof path, in, name, err);
            struct stat sb;
            if (rc == SIM_OK && stat(path, &sb) != 0) rc = copy_file(files[k], path, err);
        }
    }
    return rc;
}

sim_rc stdy_write_command(const char *dir, const char *command, sim_err *err)
{
    char path[CFG_PATH_LEN];
    sim_rc rc = stdy_join(path, sizeof path, dir, "command.txt", err);
    sim_out o;
    if (rc == SIM_OK) rc = sim_out_open(&o, path, "study command", err);
    if (rc != SIM_OK) return rc;
    fprintf(o.f, "%s\n", command);
    return sim_out_commit(&o, err);
}
