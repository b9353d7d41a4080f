/* default.c - the strategy a run takes when it names none: the best
 * Megatron-style strategy of the model and platform by the analytic
 * estimate; and the generic base strategy a search starts from. */
#include <stdio.h>
#include <string.h>

#include "internal.h"

sim_rc srch_base_strategy(const cfg_overrides *ov, const char *name, cfg_strategy *out, sim_err *err)
{
    char json[128];
    snprintf(json, sizeof json, "{\"name\": \"%s\", \"global_batch\": %d}", name, SRCH_BASE_GLOBAL_BATCH);
    return cfg_parse_strategy(json, "the search's base strategy", ov, out, err);
}

unsigned srch_pins_of_overrides(const cfg_overrides *ov, const cfg_strategy *base)
{
    unsigned pinned = 0;
    for (int i = 0; ov && i < ov->n; i++) {
        const char *item = ov->items[i];
        if (!item) continue;
        const char *eq = strchr(item, '=');
        char key[CFG_NAME_LEN];
        size_t len = eq ? (size_t)(eq - item) : strlen(item);
        if (len >= sizeof key) continue;
        memcpy(key, item, len);
        key[len] = '\0';
        pinned |= srch_pin_of_key(key);
    }
    if ((pinned & srch_pin_of_key("dp")) && base->dp == 0) pinned &= ~srch_pin_of_key("dp"); /* dp=0: derived */
    return pinned;
}

sim_rc srch_default_strategy(const cfg_model *m, const cfg_platform *p, const cfg_overrides *ov, cfg_strategy *out,
                             sim_err *err)
{
    srch_request rq;
    memset(&rq, 0, sizeof rq);
    sim_rc rc = srch_base_strategy(ov, "derived", &rq.base, err);
    if (rc != SIM_OK) return rc;
    rq.model = m;
    rq.platform = p;
    rq.pinned = srch_pins_of_overrides(ov, &rq.base);
    /* Keys set outside the Megatron-style space (2D TP, Ulysses, fusion)
     * leave it: the whole space is searched then. */
    bool seven_d = rq.base.tp_y > 1 || rq.base.cp_ulysses > 1 || rq.base.fuse_tpy_cp;
    rq.space = seven_d ? SRCH_SPACE_7D : SRCH_SPACE_MEGATRON;
    rq.keep = 1;
    srch_result *res = NULL;
    rc = srch_run(&rq, &res, err);
    if (rc != SIM_OK) return rc;
    if (res->nbest == 0) {
        char why[600];
        srch_pruned_reason(&rq, &res->counts, why, sizeof why);
        rc = sim_fail(err, SIM_EOOM,
                      "heptasim: no %s strategy of %s fits on %s with %d devices (%lld enumerated, all pruned by "
                      "memory: %s; give more --devices, a smaller --set global_batch, fewer --set keys, or a strategy "
                      "with -s)",
                      seven_d ? "7D" : "Megatron-style", m->name, p->name, p->devices, res->counts.enumerated, why);
    } else {
        *out = res->best[0].strategy;
        sim_strlcpy(out->name, seven_d ? SRCH_DERIVED_7D_NAME : SRCH_DERIVED_NAME, sizeof out->name);
        cfg_strategy_compact(out, out->description, sizeof out->description);
    }
    srch_result_free(res);
    return rc;
}
