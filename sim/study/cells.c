/* cells.c - a study expanded into cells: the main grid (models x
 * platforms x HBM sizes x sequence lengths x CP baselines), then the
 * sensitivity cells (one platform key changed at a time); each cell's
 * slug, --set items and loaded model, platform and base strategy, so that
 * a bad input is refused before anything runs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* {============================================================ the cells */

/* The number at the dotted key of platform `name`'s JSON file, its bases'
 * keys included. */
static sim_rc platform_number(stdy_reader *r, const char *name, const char *dotted, const char *key, double *out)
{
    char path[CFG_PATH_LEN];
    cJSON *root = stdy_platform_json(r, name, key, path);
    if (!root) return SIM_EINVAL;
    const cJSON *v = cfg_json_at(root, dotted);
    bool ok = v && cJSON_IsNumber(v) && isfinite(v->valuedouble);
    if (ok) *out = v->valuedouble;
    cJSON_Delete(root);
    if (!ok)
        return stdy_bad(r, key, "%s: '%s' is not a number of the platform file %s (a factor needs its value; give \"values\")",
                   name, dotted, path);
    return SIM_OK;
}

void stdy_stem(const char *name, char *out, size_t cap)
{
    const char *b = strrchr(name, '/');
    sim_strlcpy(out, b ? b + 1 : name, cap);
    size_t n = strlen(out);
    if (n > 5 && strcmp(out + n - 5, ".json") == 0) out[n - 5] = '\0';
}

/* Letters, digits, '.', '_', '-', '=' kept; the rest '_'. */
static void slug_clean(char *s)
{
    for (; *s; s++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-=", *s)) *s = '_';
}

/* What a cell varies, before it is loaded. */
typedef struct cell_def {
    const char *model;
    const char *model_key; /* where the file names it, as ".models[0]" */
    const stdy_plat_entry *plat;
    const stdy_hbm_spec *hbm;
    long long seq;
    srch_baseline cp;
    const stdy_axis *ax;   /* NULL: a cell of the main grid */
    double ax_value;  /* the factor or value of ax */
} cell_def;

static sim_rc cell_add(stdy_reader *r, stdy_study *st, const stdy_spec *sp, const cell_def *d, const char *key)
{
    if (st->ncells == STDY_MAX_CELLS) return stdy_bad(r, key, "more than %d cells", STDY_MAX_CELLS);
    if (sp->tokens % d->seq != 0)
        return stdy_bad(r, ".tokens_per_step", "%lld is not a multiple of the sequence length %lld (give tokens per step "
                   "that every sequence length divides)", sp->tokens, d->seq);
    stdy_cell *c = &st->cells[st->ncells];
    memset(c, 0, sizeof *c);
    c->index = st->ncells;
    sim_strlcpy(c->model_name, d->model, sizeof c->model_name);
    sim_strlcpy(c->platform_name, d->plat->name, sizeof c->platform_name);
    c->devices = d->plat->devices;
    c->seq_len = (int)d->seq;
    c->global_batch = sp->tokens / d->seq;
    c->baseline = d->cp;
    if (c->global_batch > CFG_MAX_WIDTH)
        return stdy_bad(r, ".tokens_per_step", "%lld tokens at sequence length %lld are %lld sequences, more than %d",
                   sp->tokens, d->seq, c->global_batch, CFG_MAX_WIDTH);
    double hbm_gib = d->hbm->v;
    if (!d->hbm->absolute) {
        double shipped;
        sim_rc rc = platform_number(r, d->plat->name, "device.hbm_GiB", key, &shipped);
        if (rc != SIM_OK) return rc;
        hbm_gib = shipped * d->hbm->v;
    }
    c->hbm_gib = hbm_gib;
    snprintf(c->sets[c->nsets++], sizeof c->sets[0], "model.seq_len=%lld", d->seq);
    snprintf(c->sets[c->nsets++], sizeof c->sets[0], "platform.device.hbm_GiB=%.10g", hbm_gib);
    if (d->ax) {
        double v = d->ax_value;
        if (d->ax->factors) {
            double base;
            sim_rc rc = platform_number(r, d->plat->name, d->ax->key, key, &base);
            if (rc != SIM_OK) return rc;
            v = base * d->ax_value;
        }
        sim_strlcpy(c->axis, d->ax->key, sizeof c->axis);
        c->axis_value = v;
        c->axis_factor = d->ax->factors ? d->ax_value : 0;
        snprintf(c->sets[c->nsets++], sizeof c->sets[0], "platform.%s=%.10g", d->ax->key, v);
    }
    for (int i = 0; i < sp->nstrat; i++) sim_strlcpy(c->sets[c->nsets++], sp->strat[i], sizeof c->sets[0]);
    char m[CFG_NAME_LEN], p[CFG_NAME_LEN], dev[24] = "", ax[160] = "";
    stdy_stem(d->model, m, sizeof m);
    stdy_stem(d->plat->name, p, sizeof p);
    if (c->devices) snprintf(dev, sizeof dev, "-d%d", c->devices);
    if (d->ax) snprintf(ax, sizeof ax, "_%s=%.6g", d->ax->key, c->axis_value);
    snprintf(c->slug, sizeof c->slug, "%s_%s%s_s%d_hbm%.4g_%s%s", m, p, dev, c->seq_len, hbm_gib,
             srch_baseline_name(c->baseline), ax);
    slug_clean(c->slug);
    for (int i = 0; i < st->ncells; i++)
        if (strcmp(st->cells[i].slug, c->slug) == 0)
            return stdy_bad(r, key, "the study holds the cell %s twice (list each model, platform, sequence length, HBM "
                       "size and value once)", c->slug);
    /* every input loaded now: a bad model, platform or value is refused before anything runs */
    const char *items[STDY_MAX_SETS];
    for (int i = 0; i < c->nsets; i++) items[i] = c->sets[i];
    cfg_overrides ov = {c->nsets, items};
    sim_err why = {{0}};
    if (cfg_load_model(c->model_name, &ov, &c->model, &why) != SIM_OK)
        return stdy_bad(r, d->model_key, "%s", stdy_loader_says(why.msg));
    if (cfg_load_platform(c->platform_name, &ov, c->devices, &c->platform, &why) != SIM_OK)
        return stdy_bad(r, key, "%s", stdy_loader_says(why.msg));
    if (srch_base_strategy(&ov, "study", &c->base, &why) != SIM_OK)
        return stdy_bad(r, ".strategy", "%s", stdy_loader_says(why.msg));
    c->base.global_batch = (int)c->global_batch;
    c->pinned = srch_pins_of_overrides(&ov, &c->base);
    st->ncells++;
    return SIM_OK;
}

sim_rc stdy_cells_of(stdy_reader *r, stdy_study *st, const stdy_spec *sp)
{
    int cap = sp->nmodels * sp->nplats * STDY_MAX_LIST * sp->nseqs * sp->ncps;
    if (sp->sens)
        for (int a = 0; a < sp->naxes; a++) cap += sp->axes[a].n * sp->nsens_models * sp->nsens_seqs * sp->ncps;
    if (cap > STDY_MAX_CELLS) cap = STDY_MAX_CELLS;
    st->cells = sim_xcalloc((size_t)cap + 1, sizeof *st->cells);
    sim_rc rc = SIM_OK;
    for (int m = 0; m < sp->nmodels && rc == SIM_OK; m++)
        for (int p = 0; p < sp->nplats && rc == SIM_OK; p++)
            for (int h = 0; h < sp->plats[p].nhbm && rc == SIM_OK; h++)
                for (int s = 0; s < sp->nseqs && rc == SIM_OK; s++)
                    for (int c = 0; c < sp->ncps && rc == SIM_OK; c++) {
                        char key[64], mkey[64];
                        snprintf(key, sizeof key, ".platforms[%d]", p);
                        snprintf(mkey, sizeof mkey, ".models[%d]", m);
                        cell_def d = {sp->models[m], mkey, &sp->plats[p], &sp->plats[p].hbm[h], sp->seqs[s], sp->cps[c],
                                      NULL, 0};
                        rc = cell_add(r, st, sp, &d, key);
                    }
    st->nmain = st->ncells;
    for (int a = 0; sp->sens && a < sp->naxes && rc == SIM_OK; a++)
        for (int v = 0; v < sp->axes[a].n && rc == SIM_OK; v++)
            for (int m = 0; m < sp->nsens_models && rc == SIM_OK; m++)
                for (int s = 0; s < sp->nsens_seqs && rc == SIM_OK; s++)
                    for (int c = 0; c < sp->ncps && rc == SIM_OK; c++) {
                        char key[64], mkey[64];
                        snprintf(key, sizeof key, ".sensitivity.axes[%d]", a);
                        snprintf(mkey, sizeof mkey, "%s[%d]", sp->sens_models_key, m);
                        cell_def d = {sp->sens_models[m], mkey, &sp->sens_plat, &sp->sens_plat.hbm[0], sp->sens_seqs[s],
                                      sp->cps[c], &sp->axes[a], sp->axes[a].v[v]};
                        rc = cell_add(r, st, sp, &d, key);
                    }
    return rc;
}

sim_rc stdy_load(const char *path, stdy_study **out, sim_err *err)
{
    *out = NULL;
    stdy_reader r = {path, err};
    char *text = NULL;
    sim_rc rc = sim_read_text(path, CFG_MAX_FILE_BYTES, "study file", &text, err);
    if (rc != SIM_OK) return rc;
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithOpts(text, &end, 1);
    if (!root) {
        int line = 1;
        for (const char *c = text; end && c < end; c++) line += *c == '\n';
        free(text);
        return sim_fail(err, SIM_EINVAL, "%.300s: line %d: not valid JSON (a study file is one JSON object; see "
                        "docs/study.md)", path, line);
    }
    free(text);
    stdy_study *st = sim_xcalloc(1, sizeof *st);
    sim_strlcpy(st->path, path, sizeof st->path);
    stdy_spec *sp = sim_xcalloc(1, sizeof *sp);
    rc = stdy_spec_of(&r, root, st, sp);
    if (rc == SIM_OK) rc = stdy_cells_of(&r, st, sp);
    free(sp);
    cJSON_Delete(root);
    if (rc != SIM_OK) {
        stdy_free(st);
        return rc;
    }
    *out = st;
    return SIM_OK;
}

void stdy_free(stdy_study *st)
{
    if (!st) return;
    free(st->cells);
    free(st);
}

void stdy_cell_command(const stdy_study *st, const stdy_cell *c, char *out, int cap)
{
    int n = snprintf(out, (size_t)cap, "heptasim compare -m %s -p %s", c->model_name, c->platform_name);
    if (c->devices && n < cap) n += snprintf(out + n, (size_t)(cap - n), " --devices %d", c->devices);
    for (int i = 0; i < c->nsets && n < cap; i++) n += snprintf(out + n, (size_t)(cap - n), " --set %s", c->sets[i]);
    if (n < cap)
        snprintf(out + n, (size_t)(cap - n), " --global-batch %lld --top %d --symmetry %s --megatron-cp %s",
                 c->global_batch, st->top,
                 eng_symmetry_name(st->symmetry),
                 srch_baseline_name(c->baseline));
}

/* }============================================================ the cells */