/* band.c - how far to trust the results on a platform: the expected error
 * of its step times, from its calibration and provenance records and those
 * of its calibrated relatives (docs/validation.md, "Error bands").
 *
 * The rule, in order:
 *   calibrated (the file's own fit record, its efficiencies as fitted): the
 *     fit's mean held-out error (calibrate --loo), else its in-sample rms
 *     error after the fit;
 *   derived (provenance.derived_from, the efficiencies those of that
 *     calibrated base): the relative's band;
 *   otherwise uncalibrated: the rms error the uncalibrated efficiencies of
 *     the nearest calibrated relative's base had on its cases before its fit
 *     (its rms_error_before); without a relative, the largest such error of
 *     any calibrated preset.
 * A file whose efficiencies were changed (--set platform.efficiency.*)
 * counts as uncalibrated.  The error of a ratio of two step times (a
 * speed-up) is the same record's pair error: after the fit for the first
 * two, before it for the third. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* The band of calibrated platform c (named by its own record). */
static void calibrated_band(const cfg_platform *c, cfg_band *out)
{
    const cfg_calibration *k = &c->calibration;
    char on[CFG_NAME_LEN + 48];
    snprintf(on, sizeof on, "%s%.*s (%d cases)", k->sources[0] ? "on " : "", CFG_NAME_LEN - 1, k->sources,
             k->cases);
    if (k->held_out_error > 0) {
        out->error = k->held_out_error;
        snprintf(out->reason, sizeof out->reason, "calibrated %s: mean error of each case held out of the fit", on);
    } else {
        out->error = k->rms_error_after;
        snprintf(out->reason, sizeof out->reason,
                 "calibrated %s: rms error of the fit itself (no held-out record; refit with calibrate --loo)", on);
    }
    out->pair_error = k->pair_error_after;
    sim_strlcpy(out->kind, "calibrated", sizeof out->kind);
    sim_strlcpy(out->relative, c->name, sizeof out->relative);
}

/* The uncalibrated band of me against the presets of dir; why (may be "")
 * opens the reason. */
static sim_rc uncalibrated_band(const val_preset *me, const char *dir, const char *why, cfg_band *out, sim_err *err)
{
    val_preset *ps;
    int np = val_presets_read(dir, &ps, err);
    if (np < 0) return SIM_EINVAL;
    int distance, via, best = val_nearest_calibrated(me, ps, np, &distance, &via);
    sim_strlcpy(out->kind, "uncalibrated", sizeof out->kind);
    if (best >= 0 && ps[best].p.calibration.rms_error_before > 0) {
        const cfg_platform *r = &ps[best].p;
        out->error = r->calibration.rms_error_before;
        out->pair_error = r->calibration.pair_error_before;
        sim_strlcpy(out->relative, r->name, sizeof out->relative);
        snprintf(out->reason, sizeof out->reason,
                 "%suncalibrated: rms error of uncalibrated efficiencies on the %d cases of %s, its nearest "
                 "calibrated relative, before the fit",
                 why, r->calibration.cases, r->name);
    } else {
        int worst = -1;
        for (int j = 0; j < np; j++)
            if (ps[j].p.calibration.cases > 0 &&
                (worst < 0 || ps[j].p.calibration.rms_error_before > ps[worst].p.calibration.rms_error_before))
                worst = j;
        out->error = worst >= 0 ? ps[worst].p.calibration.rms_error_before : NAN;
        out->pair_error = worst >= 0 ? ps[worst].p.calibration.pair_error_before : 0;
        if (worst >= 0) sim_strlcpy(out->relative, ps[worst].p.name, sizeof out->relative);
        snprintf(out->reason, sizeof out->reason,
                 "%suncalibrated, no calibrated relative%s: the largest error of uncalibrated efficiencies on a "
                 "calibrated preset's cases (%s)",
                 why, best >= 0 ? " with an error before its fit" : "",
                 worst >= 0 ? ps[worst].p.name : "none in the platform directory");
    }
    free(ps);
    return SIM_OK;
}

sim_rc val_platform_band(const cfg_platform *p, const char *dir, cfg_band *out, sim_err *err)
{
    memset(out, 0, sizeof *out);
    val_preset *me = sim_xcalloc(1, sizeof *me);
    sim_rc rc = p->path[0] ? val_preset_read(p->path, NULL, me, err) : SIM_OK;
    if (!p->path[0]) me->p = *p; /* no file: no chain, no relative */
    char why[CFG_NAME_LEN * 2 + 64] = "";
    bool as_filed = rc == SIM_OK && cfg_same_efficiencies(p, &me->p);
    if (rc == SIM_OK && !as_filed)
        snprintf(why, sizeof why, "efficiencies changed from %.*s's: ", CFG_NAME_LEN - 1, me->p.name);
    if (rc == SIM_OK && as_filed && p->calibration.cases > 0) {
        calibrated_band(p, out);
        free(me);
        return SIM_OK;
    }
    if (rc == SIM_OK && as_filed && p->provenance.derived_path[0]) {
        val_preset *rel = sim_xcalloc(1, sizeof *rel);
        rc = val_preset_read(p->provenance.derived_path, NULL, rel, err);
        if (rc == SIM_OK && cfg_same_efficiencies(p, &rel->p)) {
            calibrated_band(&rel->p, out);
            char line[CFG_TEXT_LEN * 2];
            snprintf(line, sizeof line, "derived from %s, %s; not measured on this hardware", rel->p.name,
                     out->reason);
            sim_strlcpy(out->reason, line, sizeof out->reason);
            sim_strlcpy(out->kind, "derived", sizeof out->kind);
            free(rel);
            free(me);
            return SIM_OK;
        }
        if (rc == SIM_OK)
            snprintf(why, sizeof why, "efficiencies differ from %.*s's: ", CFG_NAME_LEN - 1, rel->p.name);
        free(rel);
    }
    if (rc == SIM_OK) rc = uncalibrated_band(me, dir, why, out, err);
    free(me);
    return rc;
}

int val_preset_bands(const char *dir, val_preset_band *out, int cap, sim_err *err)
{
    val_preset *ps;
    int np = val_presets_read(dir, &ps, err);
    if (np < 0) return -1;
    int n = 0;
    sim_rc rc = SIM_OK;
    for (int i = 0; i < np && n < cap && rc == SIM_OK; i++) {
        sim_strlcpy(out[n].name, ps[i].p.name, sizeof out[n].name);
        rc = val_platform_band(&ps[i].p, dir, &out[n].band, err);
        n++;
    }
    free(ps);
    return rc == SIM_OK ? n : -1;
}

void val_print_preset_bands(FILE *f, const val_preset_band *b, int n)
{
    fprintf(f, "error bands of the platforms (step time, MFU, tokens/s; a ratio of two step times):\n");
    fprintf(f, "%-24s %-13s %8s %8s  %s\n", "platform", "kind", "band", "ratio", "measured on");
    for (int i = 0; i < n; i++) {
        const cfg_band *x = &b[i].band;
        char band[16] = "-", ratio[16] = "-";
        if (x->error > 0) snprintf(band, sizeof band, "+-%.1f%%", 100 * x->error);
        if (x->pair_error > 0) snprintf(ratio, sizeof ratio, "%.1f%%", 100 * x->pair_error);
        fprintf(f, "%-24s %-13s %8s %8s  %s\n", b[i].name, x->kind, band, ratio, x->relative[0] ? x->relative : "-");
    }
}

void *val_preset_bands_json(const val_preset_band *b, int n)
{
    cJSON *arr = cJSON_CreateArray();
    for (int i = 0; i < n; i++) {
        const cfg_band *x = &b[i].band;
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "platform", b[i].name);
        cJSON_AddStringToObject(o, "kind", x->kind);
        cJSON_AddItemToObject(o, "relative_error", x->error > 0 ? cJSON_CreateNumber(x->error) : cJSON_CreateNull());
        cJSON_AddItemToObject(o, "speedup_error", x->pair_error > 0 ? cJSON_CreateNumber(x->pair_error) : cJSON_CreateNull());
        cJSON_AddItemToObject(o, "calibrated_relative", x->relative[0] ? cJSON_CreateString(x->relative) : cJSON_CreateNull());
        cJSON_AddStringToObject(o, "reason", x->reason);
        cJSON_AddItemToArray(arr, o);
    }
    return arr;
}
