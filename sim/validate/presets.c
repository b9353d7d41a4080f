/* presets.c - each uncalibrated platform preset held against the nearest
 * calibrated platform of its base chains: how far its efficiencies are
 * from the fitted ones.
 *
 * A preset is calibrated when its file carries a calibration record
 * (cfg_calibration).  The chains of two presets are their files and their
 * bases' (cfg_platform_chain); the nearest calibrated relative of a preset
 * is the calibrated preset whose chain meets the preset's in the fewest
 * steps from both ends (the sum of the two positions of the first file
 * they share), ties broken by name. */
#define _DEFAULT_SOURCE /* realpath */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* ORDER VAL_GAP */
static const char *const gap_names[VAL_NGAPS] = {"gemm",    "gemm_fp8",           "attention",
                                                  "memory",  "network",            "kernel_overhead_us",
                                                  "collective_step_us", "overlap_compute_slowdown"};

const char *val_gap_name(val_gap g)
{
    return (unsigned)g < VAL_NGAPS ? gap_names[g] : "?";
}

/* The compared figures of p: the GEMM efficiency at its largest GEMM
 * (the curve's last point, what large models run at), the same of the
 * FP8 curve, the other efficiencies, the two fixed costs and the overlap
 * slowdown. */
static void gap_values(const cfg_platform *p, double v[VAL_NGAPS])
{
    const cfg_curve *c = &p->gemm_efficiency;
    v[VAL_GAP_GEMM] = c->n > 0 ? c->y[c->n - 1] : NAN;
    cfg_curve f8;
    cfg_gemm_fp8_curve(p, &f8);
    v[VAL_GAP_GEMM_FP8] = p->fp8_peak_flops_per_s > 0 && f8.n > 0 ? f8.y[f8.n - 1] : NAN;
    v[VAL_GAP_ATTENTION] = p->attention_efficiency;
    v[VAL_GAP_MEMORY] = p->memory_efficiency;
    v[VAL_GAP_NETWORK] = p->network_efficiency;
    v[VAL_GAP_KERNEL_US] = p->kernel_overhead_s * 1e6;
    v[VAL_GAP_COLL_STEP_US] = p->collective_step_s * 1e6;
    v[VAL_GAP_OVERLAP_SLOWDOWN] = p->overlap_compute_slowdown;
}

/* Where the chains of a and b first meet: the smallest i + j with
 * a->chain[i] == b->chain[j] (-1: never), the shared file's index in a
 * into *at. */
static int meet(const val_preset *a, const val_preset *b, int *at)
{
    int best = -1;
    for (int i = 0; i < a->nchain; i++)
        for (int j = 0; j < b->nchain; j++)
            if (strcmp(a->chain[i], b->chain[j]) == 0 && (best < 0 || i + j < best)) {
                best = i + j;
                *at = i;
            }
    return best;
}

sim_rc val_preset_read(const char *path, const cfg_overrides *ov, val_preset *out, sim_err *err)
{
    char raw[CFG_MAX_BASES + 1][CFG_PATH_LEN];
    memset(out, 0, sizeof *out);
    sim_rc rc = cfg_load_platform(path, ov, 0, &out->p, err);
    if (rc == SIM_OK) rc = cfg_platform_chain(path, raw, CFG_MAX_BASES + 1, &out->nchain, err);
    for (int k = 0; rc == SIM_OK && k < out->nchain; k++) {
        char real[PATH_MAX];
        sim_strlcpy(out->chain[k], realpath(raw[k], real) ? real : raw[k], sizeof out->chain[k]);
    }
    return rc;
}

int val_presets_read(const char *dir, val_preset **out, sim_err *err)
{
    char **paths = NULL;
    int np = 0;
    *out = NULL;
    if (val_list_dir(dir, &paths, &np, err) != SIM_OK) return -1;
    val_preset *ps = sim_xcalloc((size_t)np, sizeof *ps);
    sim_rc rc = SIM_OK;
    for (int i = 0; i < np && rc == SIM_OK; i++) rc = val_preset_read(paths[i], NULL, &ps[i], err);
    val_free_paths(paths, np);
    if (rc != SIM_OK) {
        free(ps);
        return -1;
    }
    *out = ps;
    return np;
}

int val_nearest_calibrated(const val_preset *me, const val_preset *all, int n, int *distance, int *via)
{
    int best = -1;
    *distance = -1;
    for (int j = 0; j < n; j++) {
        int at = 0, d = all[j].p.calibration.cases > 0 ? meet(me, &all[j], &at) : -1;
        if (d < 0 || (best >= 0 && (d > *distance || (d == *distance &&
                                                     strcmp(all[j].p.name, all[best].p.name) >= 0))))
            continue;
        best = j;
        *via = at;
        *distance = d;
    }
    return best;
}

int val_preset_gaps(const char *dir, val_preset_gap *out, int cap, sim_err *err)
{
    val_preset *ps;
    int np = val_presets_read(dir, &ps, err);
    if (np < 0) return -1;
    int n = 0;
    for (int i = 0; i < np && n < cap; i++) {
        if (ps[i].p.calibration.cases > 0) continue;
        val_preset_gap *g = &out[n++];
        memset(g, 0, sizeof *g);
        sim_strlcpy(g->name, ps[i].p.name, sizeof g->name);
        int via = 0, best = val_nearest_calibrated(&ps[i], ps, np, &g->distance, &via);
        for (int k = 0; k < VAL_NGAPS; k++) g->ratio[k] = NAN;
        if (best < 0) continue;
        sim_strlcpy(g->relative, ps[best].p.name, sizeof g->relative);
        cfg_default_name(ps[i].chain[via], g->via, sizeof g->via);
        double a[VAL_NGAPS], b[VAL_NGAPS];
        gap_values(&ps[i].p, a);
        gap_values(&ps[best].p, b);
        for (int k = 0; k < VAL_NGAPS; k++) g->ratio[k] = b[k] > 0 ? a[k] / b[k] : (a[k] == b[k] ? 1.0 : NAN);
    }
    free(ps);
    return n;
}

void val_print_preset_gaps(FILE *f, const val_preset_gap *g, int n)
{
    static const char *const heads[VAL_NGAPS] = {"gemm",   "gemm_fp8",  "attention", "memory",
                                                 "network", "kernel", "coll_step", "overlap"};
    fprintf(f, "uncalibrated presets, each figure over its nearest calibrated relative's (gemm: at the largest "
               "GEMM):\n");
    fprintf(f, "%-22s %-24s %-16s", "preset", "calibrated relative", "shared base");
    for (int k = 0; k < VAL_NGAPS; k++) fprintf(f, " %9s", heads[k]);
    fprintf(f, "\n");
    for (int i = 0; i < n; i++) {
        if (!g[i].relative[0]) {
            fprintf(f, "%-22s uncalibrated: no calibrated platform shares its base chain\n", g[i].name);
            continue;
        }
        fprintf(f, "%-22s %-24s %-16s", g[i].name, g[i].relative, g[i].via);
        for (int k = 0; k < VAL_NGAPS; k++)
            if (isfinite(g[i].ratio[k]))
                fprintf(f, " %8.2fx", g[i].ratio[k]);
            else
                fprintf(f, " %9s", "-");
        fprintf(f, "\n");
    }
}

void *val_preset_gaps_json(const val_preset_gap *g, int n)
{
    cJSON *arr = cJSON_CreateArray();
    for (int i = 0; i < n; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "preset", g[i].name);
        if (g[i].relative[0]) {
            cJSON_AddStringToObject(o, "calibrated_relative", g[i].relative);
            cJSON_AddStringToObject(o, "shared_base", g[i].via);
            cJSON_AddNumberToObject(o, "chain_distance", g[i].distance);
            cJSON *r = cJSON_AddObjectToObject(o, "ratio");
            for (int k = 0; k < VAL_NGAPS; k++)
                cJSON_AddItemToObject(r, val_gap_name((val_gap)k),
                                      isfinite(g[i].ratio[k]) ? cJSON_CreateNumber(g[i].ratio[k]) : cJSON_CreateNull());
        } else {
            cJSON_AddNullToObject(o, "calibrated_relative");
        }
        cJSON_AddItemToArray(arr, o);
    }
    return arr;
}
