/* report.c - derived metrics of a simulated step and its JSON document.
 *
 * The JSON document is built with cJSON in a fixed key order; numbers are
 * printed by sim_json_print (the fewer of 15 or 17 digits that read back as
 * the same double), so the same inputs give byte-identical output.
 * Non-finite values never reach the document: metrics of a zero step time
 * are 0. */
#include "report.h"

#include "../common/json.h"
#include "../config/keys.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>


#ifndef HEPTASIM_VERSION
#define HEPTASIM_VERSION "0.1.0"
#endif

/* ------------------------------------------------------------- helpers */

const char *rpt_version(void)
{
    return HEPTASIM_VERSION;
}

int rpt_devices(const rpt_run *run)
{
    int w = run->strategy ? cfg_world_size(run->strategy) : 0;
    if (w > 0) return w;
    return run->platform ? run->platform->devices : 0;
}

void rpt_run_init(rpt_run *run, const cfg_model *m, const cfg_platform *p, const cfg_strategy *s)
{
    memset(run, 0, sizeof *run);
    run->model = m;
    run->platform = p;
    run->strategy = s;
    run->memory_stage = mdl_peak_memory(m, s, &run->memory);
}

sim_rc rpt_check_fits(const rpt_run *run, sim_err *err)
{
    double cap = cfg_usable_hbm_bytes(run->platform);
    if (!(run->memory.total_bytes > cap)) return SIM_OK;
    return sim_fail(err, SIM_EOOM,
                    "heptasim: strategy '%s' does not fit: stage %d needs %.1f GiB per device, %s has %.1f GiB usable "
                    "(try more recompute, a higher zero stage, or more tp/pp)",
                    run->strategy->name, run->memory_stage, run->memory.total_bytes / SIM_GIB, run->platform->name,
                    cap / SIM_GIB);
}

void rpt_breakdown_compute(const rpt_run *run, rpt_breakdown *out)
{
    memset(out, 0, sizeof *out);
    if (!run->sim) return;
    const eng_rank_stats *st = &run->sim->critical;
    out->optimizer_s = st->compute_by_phase_s[WL_PH_OPTIMIZER];
    out->compute_s = st->compute_s - out->optimizer_s;
    for (int d = 0; d < WL_NDIMS; d++) out->exposed_comm_s += st->exposed_comm_s[d];
    out->bubble_s = st->bubble_s;
    out->other_s = run->sim->step_time_s - (out->compute_s + out->exposed_comm_s + out->bubble_s + out->optimizer_s);
    out->critical_rank = run->sim->critical_rank;
    out->critical_stage = run->strategy ? rpt_rank_stage(run->strategy, out->critical_rank) : 0;
}

/* Pipeline stage of a rank, in the workload's rank numbering. */
int rpt_rank_stage(const cfg_strategy *s, int rank)
{
    int coords[CFG_NDIMS];
    wl_strategy_coords(s, rank, coords);
    return coords[CFG_DIM_PP];
}

/* ------------------------------------------------------------- metrics */

/* Fills *out from run (model, platform and strategy must be set).  With
 * run->sim NULL, or a step time that is not positive, only the FLOPs are
 * filled and the rates are 0. */
void rpt_metrics_compute(const rpt_run *run, rpt_metrics *out)
{
    memset(out, 0, sizeof *out);
    const cfg_model *m = run->model;
    const cfg_strategy *s = run->strategy;
    out->model_flops_per_step = mdl_model_flops_per_step(m, s->global_batch);
    out->hardware_flops_per_step = mdl_hardware_flops_per_step(m, s);
    if (!run->sim && !run->est) return;
    double t = run->sim ? run->sim->step_time_s : run->est->step_s;
    out->step_time_s = t;
    if (!(t > 0) || !isfinite(t)) return;
    double devices = (double)rpt_devices(run);
    double peak = run->platform->peak_flops_per_s;
    if (devices > 0 && peak > 0) {
        out->mfu = out->model_flops_per_step / (t * devices * peak);
        out->hfu = out->hardware_flops_per_step / (t * devices * peak);
    }
    out->tokens_per_s = (double)s->global_batch * (double)m->seq_len / t;
    if (devices > 0) out->tflops_per_device = out->model_flops_per_step / (t * devices) / 1e12;
}

/* ---------------------------------------------------------------- JSON */

void rpt_json_add_num(void *obj, const char *key, double v)
{
    if (isfinite(v))
        cJSON_AddNumberToObject(obj, key, v);
    else
        cJSON_AddNullToObject(obj, key);
}

/* The components of a rank's memory, into o. */
static void memory_parts(cJSON *o, const mdl_memory *mm)
{
    rpt_json_add_num(o, "weights_bytes", mm->weights_bytes);
    rpt_json_add_num(o, "grads_bytes", mm->grads_bytes);
    rpt_json_add_num(o, "optimizer_bytes", mm->optimizer_bytes);
    rpt_json_add_num(o, "activations_bytes", mm->activations_bytes);
    rpt_json_add_num(o, "buffers_bytes", mm->buffers_bytes);
    rpt_json_add_num(o, "inflight_microbatches", mm->inflight_microbatches);
}

static cJSON *memory_json(const rpt_run *run)
{
    const mdl_memory *mm = &run->memory;
    double cap = cfg_usable_hbm_bytes(run->platform);
    cJSON *o = cJSON_CreateObject();
    rpt_json_add_num(o, "peak_bytes", mm->total_bytes);
    rpt_json_add_num(o, "capacity_bytes", cap);
    cJSON_AddBoolToObject(o, "fits", mm->total_bytes <= cap);
    rpt_json_add_num(o, "stage", run->memory_stage);
    memory_parts(o, mm);
    rpt_json_add_num(o, "params", mm->params);
    return o;
}

void *rpt_memory_stages_json(const cfg_model *m, const cfg_strategy *s, const cfg_platform *p)
{
    cJSON *arr = cJSON_CreateArray();
    double cap = cfg_usable_hbm_bytes(p);
    for (int st = 0; st < (s->pp > 0 ? s->pp : 1); st++) {
        mdl_memory mm;
        mdl_rank_memory(m, s, st, &mm);
        cJSON *o = cJSON_CreateObject();
        rpt_json_add_num(o, "stage", st);
        rpt_json_add_num(o, "layers", cfg_stage_layer_total(m, s, st));
        memory_parts(o, &mm);
        rpt_json_add_num(o, "total_bytes", mm.total_bytes);
        rpt_json_add_num(o, "capacity_bytes", cap);
        cJSON_AddBoolToObject(o, "fits", mm.total_bytes <= cap);
        cJSON_AddItemToArray(arr, o);
    }
    return arr;
}

const char *const rpt_memory_csv_columns[] = {
    "stage", "layers", "weights_bytes", "grads_bytes", "optimizer_bytes", "activations_bytes", "buffers_bytes",
    "total_bytes", "capacity_bytes", "inflight_microbatches", "fits", "overrides", NULL};

static cJSON *breakdown_json(const rpt_run *run)
{
    rpt_breakdown b;
    rpt_breakdown_compute(run, &b);
    cJSON *o = cJSON_CreateObject();
    rpt_json_add_num(o, "compute_s", b.compute_s);
    rpt_json_add_num(o, "exposed_comm_s", b.exposed_comm_s);
    rpt_json_add_num(o, "bubble_s", b.bubble_s);
    rpt_json_add_num(o, "optimizer_s", b.optimizer_s);
    rpt_json_add_num(o, "other_s", b.other_s);
    rpt_json_add_num(o, "critical_rank", b.critical_rank);
    rpt_json_add_num(o, "critical_stage", b.critical_stage);
    return o;
}

static cJSON *dimensions_json(const eng_result *sim)
{
    cJSON *o = cJSON_CreateObject();
    for (int d = 0; d < WL_NDIMS; d++) {
        cJSON *dim = cJSON_CreateObject();
        rpt_json_add_num(dim, "exposed_s", sim->critical.exposed_comm_s[d]);
        rpt_json_add_num(dim, "comm_s", sim->critical.comm_s[d]);
        rpt_json_add_num(dim, "bytes_sent", sim->critical.bytes_sent[d]);
        rpt_json_add_num(dim, "bytes_total", sim->bytes_total[d]);
        cJSON_AddItemToObject(o, rpt_dim_key(d), dim);
    }
    return o;
}

/* Lowercase JSON key of a report dimension ("tp", "cp", "ep", "dp", "pp"). */
const char *rpt_dim_key(int d)
{
    return wl_dim_name((wl_dim)d);
}

void rpt_lockstep_text(const eng_result *sim, char *out, size_t cap)
{
    out[0] = '\0';
    if (sim->lockstep <= 1) return;
    unsigned tp = 1u << CFG_DIM_TP_X | 1u << CFG_DIM_TP_Y;
    if (sim->lockstep_dims && !(sim->lockstep_dims & ~tp)) {
        snprintf(out, cap, "one per TP group of %d (%s)", sim->lockstep, sim->slowest_mate ? "approximate" : "exact");
        return;
    }
    size_t used = (size_t)snprintf(out, cap, "one per class of %d alike ranks, differing in", sim->lockstep);
    for (int d = 0, k = 0; d < CFG_NDIMS && used < cap; d++)
        if (sim->lockstep_dims >> d & 1u)
            used += (size_t)snprintf(out + used, cap - used, "%s %s", k++ ? "," : "", cfg_dim_name((cfg_dim)d));
    if (used < cap) snprintf(out + used, cap - used, " (%s)", sim->slowest_mate ? "approximate" : "exact");
}

void rpt_strategy_label(const cfg_strategy *s, char *out, int cap)
{
    char compact[CFG_TEXT_LEN];
    cfg_strategy_compact(s, compact, sizeof compact);
    snprintf(out, (size_t)cap, "%s: %s", s->name[0] ? s->name : "(unnamed)", compact);
}

/* [lo, hi] of value v within +-band (relative); null when unknown. */
static cJSON *band_range(double v, double band)
{
    if (!(isfinite(band) && band > 0)) return cJSON_CreateNull();
    cJSON *a = cJSON_CreateArray();
    cJSON_AddItemToArray(a, cJSON_CreateNumber(v * (1 - band)));
    cJSON_AddItemToArray(a, cJSON_CreateNumber(v * (1 + band)));
    return a;
}

void *rpt_band_json(const cfg_band *b, double step_time_s, double mfu, double tokens_per_s)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "kind", b->kind);
    cJSON_AddItemToObject(o, "relative_error", b->error > 0 ? cJSON_CreateNumber(b->error) : cJSON_CreateNull());
    cJSON_AddItemToObject(o, "speedup_error", b->pair_error > 0 ? cJSON_CreateNumber(b->pair_error) : cJSON_CreateNull());
    cJSON_AddItemToObject(o, "calibrated_relative", b->relative[0] ? cJSON_CreateString(b->relative) : cJSON_CreateNull());
    cJSON_AddStringToObject(o, "reason", b->reason);
    cJSON_AddItemToObject(o, "step_time_s", band_range(step_time_s, b->error));
    cJSON_AddItemToObject(o, "mfu", band_range(mfu, b->error));
    cJSON_AddItemToObject(o, "tokens_per_s", band_range(tokens_per_s, b->error));
    return o;
}

/* Returns a new cJSON object (the caller frees it with cJSON_Delete) holding
 * the run's contract keys; with run->sim NULL only model, platform, devices,
 * strategy and memory.  Sizes in bytes, times in seconds, mfu/hfu as
 * fractions. */
void rpt_overrides_text(const cfg_overrides *ov, char *out, size_t cap)
{
    out[0] = '\0';
    for (int i = 0; ov && i < ov->n; i++) sim_list_add(out, cap, ov->items[i]);
}

void *rpt_overrides_json(const cfg_overrides *ov)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; ov && i < ov->n; i++) cJSON_AddItemToArray(a, cJSON_CreateString(ov->items[i]));
    return a;
}

void *rpt_run_to_json(const rpt_run *run)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "model", run->model->name);
    cJSON_AddStringToObject(root, "platform", run->platform->name);
    rpt_json_add_num(root, "devices", rpt_devices(run));
    char compact[CFG_TEXT_LEN];
    cfg_strategy_compact(run->strategy, compact, sizeof compact);
    cJSON_AddStringToObject(root, "strategy_name", run->strategy->name);
    cJSON_AddStringToObject(root, "strategy_compact", compact);
    cJSON *strat = cfg_strategy_to_json(run->strategy);
    cJSON_AddItemToObject(root, "strategy", strat ? strat : cJSON_CreateNull());
    cJSON_AddItemToObject(root, "overrides", rpt_overrides_json(&run->overrides));
    cJSON *model = cfg_model_to_json(run->model), *platform = cfg_platform_to_json(run->platform);
    cJSON_AddItemToObject(root, "resolved_model", model ? model : cJSON_CreateNull());
    cJSON_AddItemToObject(root, "resolved_platform", platform ? platform : cJSON_CreateNull());
    rpt_json_add_num(root, "seq_len", run->model->seq_len);
    cJSON_AddBoolToObject(root, "seq_len_assumed", run->model->seq_len_assumed);
    rpt_json_add_num(root, "micro_batches", cfg_micro_batches(run->strategy));
    mdl_params par;
    mdl_count_params(run->model, &par);
    cJSON *params = cJSON_CreateObject();
    rpt_json_add_num(params, "total", par.total);
    rpt_json_add_num(params, "active", par.active);
    cJSON_AddItemToObject(root, "parameters", params);
    if (run->model->moe.experts > 0) {
        cJSON *moe = cJSON_CreateObject();
        rpt_json_add_num(moe, "expert_load", cfg_expert_load(run->strategy));
        rpt_json_add_num(moe, "dropped_fraction", cfg_expert_dropped(run->strategy));
        cJSON_AddItemToObject(root, "moe", moe);
    }

    if (run->est && !run->sim) cJSON_AddBoolToObject(root, "estimate", true);
    if (run->sim || run->est) {
        rpt_metrics mt;
        rpt_metrics_compute(run, &mt);
        rpt_json_add_num(root, "step_time_s", mt.step_time_s);
        rpt_json_add_num(root, "mfu", mt.mfu);
        rpt_json_add_num(root, "hfu", mt.hfu);
        rpt_json_add_num(root, "tokens_per_s", mt.tokens_per_s);
        rpt_json_add_num(root, "tflops_per_device", mt.tflops_per_device);
        rpt_json_add_num(root, "model_flops_per_step", mt.model_flops_per_step);
        rpt_json_add_num(root, "hardware_flops_per_step", mt.hardware_flops_per_step);
    }
    if ((run->sim || run->est) && run->band) {
        rpt_metrics mt;
        rpt_metrics_compute(run, &mt);
        cJSON_AddItemToObject(root, "accuracy", rpt_band_json(run->band, mt.step_time_s, mt.mfu, mt.tokens_per_s));
    }
    cJSON_AddItemToObject(root, "memory", memory_json(run));
    if (run->est && !run->sim) {
        const est_result *e = run->est;
        cJSON *bd = cJSON_CreateObject();
        double exposed = 0;
        cJSON *dims = cJSON_CreateObject();
        for (int d = 0; d < WL_NDIMS; d++) {
            exposed += e->exposed_s[d];
            rpt_json_add_num(dims, rpt_dim_key(d), e->exposed_s[d]);
        }
        rpt_json_add_num(bd, "compute_s", e->compute_s);
        rpt_json_add_num(bd, "exposed_comm_s", exposed);
        rpt_json_add_num(bd, "bubble_s", e->bubble_s);
        rpt_json_add_num(bd, "optimizer_s", e->optimizer_s);
        rpt_json_add_num(bd, "critical_stage", e->critical_stage);
        cJSON_AddItemToObject(bd, "exposed_by_dimension_s", dims);
        cJSON_AddItemToObject(root, "breakdown", bd);
    }
    if (run->sim) {
        cJSON_AddItemToObject(root, "breakdown", breakdown_json(run));
        cJSON_AddItemToObject(root, "dimensions", dimensions_json(run->sim));
        cJSON *sim = cJSON_CreateObject();
        rpt_json_add_num(sim, "wall_s", run->wall_s);
        rpt_json_add_num(sim, "instructions", (double)run->sim->instructions);
        rpt_json_add_num(sim, "flows", (double)run->sim->flows);
        rpt_json_add_num(sim, "ranks_simulated", run->sim->ranks_simulated);
        rpt_json_add_num(sim, "lockstep", run->sim->lockstep);
        cJSON *dims = cJSON_CreateArray();
        for (int d = 0; d < CFG_NDIMS; d++)
            if (run->sim->lockstep_dims >> d & 1u) cJSON_AddItemToArray(dims, cJSON_CreateString(cfg_dim_name((cfg_dim)d)));
        cJSON_AddItemToObject(sim, "lockstep_dims", dims);
        rpt_json_add_num(sim, "replicas", run->sim->replicas);
        cJSON_AddBoolToObject(sim, "approximate", eng_result_approximate(run->sim));
        cJSON_AddBoolToObject(sim, "slowest_mate", run->sim->slowest_mate);
        cJSON_AddStringToObject(sim, "version", rpt_version());
        cJSON_AddItemToObject(root, "simulator", sim);
    }
    return root;
}

sim_rc rpt_write_json_doc(const char *path, const void *doc, const char *what, sim_err *err)
{
    char *text = sim_json_print(doc, true);
    if (!text) return sim_fail(err, SIM_ENOMEM, "%s: cannot format the %s (out of memory)", path, what);
    sim_out o;
    sim_rc rc = sim_out_open(&o, path, what, err);
    if (rc == SIM_OK) {
        fputs(text, o.f);
        fputc('\n', o.f);
        rc = sim_out_commit(&o, err);
    }
    cJSON_free(text);
    return rc;
}

sim_rc rpt_write_json(const char *path, const rpt_run *run, sim_err *err)
{
    cJSON *root = rpt_run_to_json(run);
    sim_rc rc = rpt_write_json_doc(path, root, "JSON result", err);
    cJSON_Delete(root);
    return rc;
}
