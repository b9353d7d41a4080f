/* named.c - the strategy -s names: a strategy file or a name from
 * strategies/, a candidate's compact form as a sweep prints it
 * ("dp64 pp2v2 tp4 sp mb1 sel z1"), or a candidate's id in a sweep's
 * records ("7d-6@sweep.jsonl"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "internal.h"

/* A compact form has spaces between its tokens, or is one word that starts
 * with the dp token every compact form starts with ("dp64"). */
static bool looks_compact(const char *spec)
{
    if (strpbrk(spec, " \t")) return true;
    return strncmp(spec, "dp", 2) == 0 && spec[2] >= '0' && spec[2] <= '9' && !strchr(spec, '.') && !strchr(spec, '/');
}

/* s through the strategy reader again, as if read from a file named
 * origin, so that the overrides of ov apply and name it as they do. */
static sim_rc reread(const cfg_strategy *s, const char *origin, const cfg_overrides *ov, cfg_strategy *out,
                     sim_err *err)
{
    cJSON *doc = cfg_strategy_to_json(s);
    char *json = doc ? cJSON_PrintUnformatted(doc) : NULL;
    cJSON_Delete(doc);
    if (!json) return sim_fail(err, SIM_ENOMEM, "%s: out of memory", origin);
    sim_rc rc = cfg_parse_strategy(json, origin, ov, out, err);
    cJSON_free(json);
    return rc;
}

static sim_rc from_compact(const char *spec, const cfg_overrides *ov, cfg_strategy *out, sim_err *err)
{
    char origin[SIM_ERR_LEN / 2];
    snprintf(origin, sizeof origin, "strategy '%.*s'", 120, spec);
    cfg_strategy s;
    sim_rc rc = srch_base_strategy(NULL, "compact", &s, err);
    if (rc == SIM_OK) rc = cfg_strategy_read_compact(spec, origin, &s, err);
    if (rc != SIM_OK) return rc;
    sim_strlcpy(s.name, "compact", sizeof s.name);
    cfg_strategy_compact(&s, s.description, sizeof s.description);
    return reread(&s, origin, ov, out, err);
}

/* ID@RECORDS: the strategy of the record whose candidate id (its
 * strategy's name, "<space>-<index>") is ID. */
static sim_rc from_record(const char *spec, const char *at, const cfg_overrides *ov, cfg_strategy *out, sim_err *err)
{
    const char *path = at + 1;
    char id[CFG_NAME_LEN];
    size_t len = (size_t)(at - spec);
    if (len == 0 || len >= sizeof id || !*path)
        return sim_fail(err, SIM_EINVAL, "strategy '%.120s': a candidate of a sweep is ID@RECORDS, e.g. "
                        "7d-6@sweep.jsonl (the id as the sweep's records name it, the file of its --out)", spec);
    memcpy(id, spec, len);
    id[len] = '\0';
    srch_candidate *recs = NULL;
    int n = 0, cap = 0;
    rpt_skipped skipped = {0};
    sim_rc rc = srch_jsonl_read(path, &recs, &n, &cap, &skipped, err);
    const srch_candidate *found = NULL;
    for (int i = 0; rc == SIM_OK && i < n && !found; i++)
        if (strcmp(recs[i].strategy.name, id) == 0) found = &recs[i];
    if (rc == SIM_OK && !found)
        rc = sim_fail(err, SIM_EINVAL, "%s: no record of candidate '%s' (%d records; a sweep records the candidates "
                      "it simulated: give the id of one of them, as 7d-6)", path, id, n);
    if (rc == SIM_OK) {
        char origin[SIM_ERR_LEN / 2];
        snprintf(origin, sizeof origin, "%.150s: %s", path, id);
        rc = reread(&found->strategy, origin, ov, out, err);
    }
    free(recs);
    return rc;
}

sim_rc srch_load_strategy(const char *spec, const cfg_overrides *ov, cfg_strategy *out, sim_err *err)
{
    /* A file or a shipped name comes first, so that one that looks like a
     * compact form or holds an '@' is still read as what it is. */
    char path[CFG_PATH_LEN];
    sim_err unused = {{0}};
    if (cfg_resolve("strategies", spec, path, sizeof path, &unused) == SIM_OK) return cfg_load_strategy(spec, ov, out, err);
    if (looks_compact(spec)) return from_compact(spec, ov, out, err);
    const char *at = strrchr(spec, '@');
    if (at) return from_record(spec, at, ov, out, err);
    return cfg_load_strategy(spec, ov, out, err);
}
