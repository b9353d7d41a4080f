/* save.c - the strategies a sweep found as strategy files, for `run -s`:
 * --save-best FILE (the best simulated candidate) and --save-top DIR (one
 * file per row of the ranked table, alike candidates once). */
#define _DEFAULT_SOURCE /* mkdir */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "internal.h"

sim_rc srch_save_strategy(const char *path, const srch_candidate *c, sim_err *err)
{
    cfg_strategy s = c->strategy;
    cfg_strategy_compact(&s, s.description, sizeof s.description);
    cJSON *doc = cfg_strategy_to_json(&s);
    sim_rc rc = rpt_write_json_doc(path, doc, "strategy file", err);
    cJSON_Delete(doc);
    return rc;
}

/* dir, created when missing (not its parents) */
static sim_rc folder(const char *dir, sim_err *err)
{
    struct stat st;
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        return sim_fail(err, SIM_EIO, "%s: cannot create the folder for --save-top: %s (check its parent exists and "
                        "is writable)", dir, strerror(errno));
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return sim_fail(err, SIM_EIO, "%s: not a folder (give --save-top a folder)", dir);
    return SIM_OK;
}

sim_rc srch_save_top(const char *dir, const srch_ranking *r, int *saved, sim_err *err)
{
    *saved = 0;
    sim_rc rc = folder(dir, err);
    int n = r->simulated;
    int *same_as = sim_xcalloc((size_t)n + 1, sizeof *same_as);
    srch_fold_alike((const srch_candidate *const *)r->rows, n, same_as);
    for (int i = 0; i < n && rc == SIM_OK; i++) {
        if (same_as[i] != i) continue;
        char path[CFG_PATH_LEN];
        if ((size_t)snprintf(path, sizeof path, "%s/%02d-%s.json", dir, *saved + 1, r->rows[i]->strategy.name) >=
            sizeof path) {
            rc = sim_fail(err, SIM_EINVAL, "%s: path too long for --save-top (give a shorter folder)", dir);
            break;
        }
        rc = srch_save_strategy(path, r->rows[i], err);
        if (rc == SIM_OK) (*saved)++;
    }
    free(same_as);
    return rc;
}
