/* run_text.c - the text reports: the summary of a simulated step and the
 * per-stage memory table.
 *
 * Plain text for a terminal, a dozen lines at most per run.  Memory and
 * traffic alike are in binary units (GiB = 2^30 bytes, sim_fmt_bytes). */
#include "report.h"

#include "../config/keys.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------- helpers */

/* A parameter count as people quote it: "671.03 B", "402.65 M". */
static const char *fmt_params(char *buf, size_t cap, double v)
{
    if (v >= 1e9)
        snprintf(buf, cap, "%.2f B", v / 1e9);
    else
        snprintf(buf, cap, "%.2f M", v / 1e6);
    return buf;
}

/* Seconds, short: "0" for zero, else two decimals. */
static const char *fmt_s(char *buf, size_t cap, double v)
{
    if (v == 0.0)
        snprintf(buf, cap, "0");
    else
        snprintf(buf, cap, "%.2f", v);
    return buf;
}

static double pct(double part, double whole)
{
    return whole > 0 ? 100.0 * part / whole : 0.0;
}

/* The precision keys that differ from the default, each after sep:
 * "fp8 GEMMs", "bf16 grads", "bf16 moments", "eager attention". */
static void precision_items(FILE *out, const cfg_strategy *s, const char *sep)
{
    if (s->fp8) fprintf(out, "%sfp8 GEMMs", sep);
    if (s->grad_reduce_in_bf16) fprintf(out, "%sbf16 grads", sep);
    if (s->optimizer_moments == CFG_MOMENTS_BF16) fprintf(out, "%sbf16 moments", sep);
    if (s->attention_kernel == CFG_ATTN_EAGER) fprintf(out, "%seager attention", sep);
}

/* The strategy in words: "dp 16 x pp 16 x tp 8 (1D, SP) | 1f1b | ...",
 * leaving out what does nothing for it. */
static void strategy_words(FILE *out, const cfg_strategy *s)
{
    fprintf(out, "dp %d x pp %d", s->dp, s->pp);
    if (s->tp_y > 1)
        fprintf(out, " x tp %d (2D: tp_x %d x tp_y %d)", cfg_tp(s), s->tp_x, s->tp_y);
    else if (s->tp_x > 1)
        fprintf(out, " x tp %d (1D%s)", s->tp_x, s->sequence_parallel ? ", SP" : "");
    else
        fputs(" x tp 1", out);
    if (s->cp_ring > 1 && s->cp_ulysses > 1)
        fprintf(out, " x cp %d (ring %d x ulysses %d)", cfg_cp(s), s->cp_ring, s->cp_ulysses);
    else if (s->cp_ring > 1)
        fprintf(out, " x cp %d (ring)", s->cp_ring);
    else if (s->cp_ulysses > 1)
        fprintf(out, " x cp %d (ulysses)", s->cp_ulysses);
    if (s->ep > 1) {
        fprintf(out, " | ep %d", s->ep);
        if (s->etp > 1) fprintf(out, ", etp %d", s->etp);
    }
    if (s->fuse_tpy_cp) fprintf(out, " | fused tp_y+ulysses");
    if (s->pp > 1) {
        if (s->vpp > 1)
            fprintf(out, " | vpp %d %s", s->vpp, cfg_schedule_name(s->schedule));
        else
            fprintf(out, " | %s", cfg_schedule_name(s->schedule));
    }
    if (cfg_uneven_stages(s)) {
        fputs(" | layers on", out);
        if (s->first_stage_layers > 0) fprintf(out, " first stage %d", s->first_stage_layers);
        if (s->last_stage_layers > 0)
            fprintf(out, "%s last stage %d", s->first_stage_layers > 0 ? "," : "", s->last_stage_layers);
    }
    int nmb = cfg_micro_batches(s);
    fprintf(out, " | mb %d, gb %d (%d micro-batch%s) | recompute %s | zero %d", s->micro_batch, s->global_batch, nmb,
            nmb == 1 ? "" : "es", cfg_recompute_name(s->recompute), s->zero);
    precision_items(out, s, " | ");

    /* the overlap switches that are on and do something for s */
    /* tp-bwd: overlap_tp_backward alone (overlap_tp_comm implies it) */
    static const char *const keys[5] = {"overlap_grad_reduce", "overlap_param_gather", "overlap_tp_comm",
                                        "overlap_tp_backward", "overlap_cp_comm"};
    const char *names[5] = {"grad", "param", "tp", "tp-bwd", "cp"};
    bool on[5] = {s->overlap_grad_reduce, s->overlap_param_gather, s->overlap_tp_comm,
                  s->overlap_tp_backward && !s->overlap_tp_comm, s->overlap_cp_comm};
    int any = 0;
    for (int i = 0; i < 5; i++) {
        const cfg_key *k = cfg_strategy_key(keys[i]);
        if (!on[i] || (k && !cfg_key_matters(k, s)) || ((i == 2 || i == 3) && cfg_tp(s) <= 1)) continue;
        fprintf(out, "%s%s", any ? "+" : " | overlap ", names[i]);
        any = 1;
    }

    char order[128];
    cfg_strategy def = *s;
    static const cfg_dim def_order[CFG_NDIMS] = {CFG_DIM_TP_X, CFG_DIM_TP_Y, CFG_DIM_CP_ULYSSES, CFG_DIM_CP_RING,
                                                 CFG_DIM_EP,   CFG_DIM_DP,   CFG_DIM_PP};
    memcpy(def.order, def_order, sizeof def.order);
    if (memcmp(def.order, s->order, sizeof def.order) != 0) {
        cfg_order_format(s, order, (int)sizeof order);
        fprintf(out, " | order %s", order);
    }
}

void rpt_strategy_text(const cfg_strategy *s, char *out, size_t cap)
{
    out[0] = '\0';
    FILE *f = cap > 1 ? fmemopen(out, cap, "w") : NULL;
    if (!f) return;
    strategy_words(f, s);
    fclose(f);
}

/* The strategy line of the summaries. */
static void strategy_line(FILE *out, const cfg_strategy *s)
{
    fputs("strategy   ", out);
    strategy_words(out, s);
    fputc('\n', out);
}

/* The model line: parameters and the sequence length trained at. */
static void model_line(FILE *out, const cfg_model *m)
{
    mdl_params par;
    mdl_count_params(m, &par);
    char a[32], b[32], c[32], d[32];
    fprintf(out, "model      %s parameters, %s active per token (%s without the input embedding) | sequence length "
                 "%s%s\n",
            fmt_params(a, sizeof a, par.total), fmt_params(b, sizeof b, par.active),
            fmt_params(c, sizeof c, par.active_matmul), sim_fmt_count(m->seq_len, d, sizeof d),
            m->seq_len_assumed ? " (assumed: the HuggingFace config gives none)" : "");
}

/* The memory line: components of the peak rank and the verdict. */
static void memory_line(FILE *out, const rpt_run *run)
{
    const mdl_memory *mm = &run->memory;
    double cap = cfg_usable_hbm_bytes(run->platform);
    char kept[48] = "";
    if (run->platform->hbm_headroom > 0)
        snprintf(kept, sizeof kept, " (%.3g %% headroom kept free)", 100 * run->platform->hbm_headroom);
    fprintf(out, "memory     %.1f GiB of %.1f GiB usable%s per device (stage %d): weights %.1f",
            mm->total_bytes / SIM_GIB, cap / SIM_GIB, kept, run->memory_stage, mm->weights_bytes / SIM_GIB);
    if (mm->fp8_copies_bytes > 0) fprintf(out, " (FP8 copies %.1f)", mm->fp8_copies_bytes / SIM_GIB);
    fprintf(out, ", grads %.1f, optimizer %.1f, activations %.1f, buffers %.1f", mm->grads_bytes / SIM_GIB,
            mm->optimizer_bytes / SIM_GIB, mm->activations_bytes / SIM_GIB, mm->buffers_bytes / SIM_GIB);
    if (mm->total_bytes <= cap)
        fprintf(out, "  -> fits\n");
    else
        fprintf(out, "  -> does NOT fit: needs %.1f GiB, device has %.1f GiB usable\n", mm->total_bytes / SIM_GIB,
                cap / SIM_GIB);
}

/* The breakdown of an analytic estimate, marked as such. */
static void estimate_breakdown(FILE *out, const est_result *e)
{
    char b1[64];
    double t = e->step_s, exposed = 0;
    for (int d = 0; d < WL_NDIMS; d++) exposed += e->exposed_s[d];
    fprintf(out, "time, estimated (critical stage %d):\n", e->critical_stage);
    fprintf(out, "  compute         %8.2f s %5.1f %%\n", e->compute_s, pct(e->compute_s, t));
    fprintf(out, "  exposed comm    %8.2f s %5.1f %%   (", exposed, pct(exposed, t));
    for (int d = 0; d < WL_NDIMS; d++)
        fprintf(out, "%s%s %s", d ? ", " : "", rpt_dim_key(d), fmt_s(b1, sizeof b1, e->exposed_s[d]));
    fprintf(out, ")\n");
    fprintf(out, "  pipeline bubble %8.2f s %5.1f %%\n", e->bubble_s, pct(e->bubble_s, t));
    fprintf(out, "  optimizer       %8.2f s %5.1f %%\n", e->optimizer_s, pct(e->optimizer_s, t));
}

/* ------------------------------------------------------------- summary */

/* What a summary says of its inputs under its first line: the --set
 * items, and that an uncalibrated preset has a calibrated one beside it. */
static void inputs_lines(FILE *out, const cfg_overrides *ov, const cfg_platform *p)
{
    char sets[CFG_TEXT_LEN * 2];
    rpt_overrides_text(ov, sets, sizeof sets);
    if (sets[0]) fprintf(out, "overrides  %s\n", sets);
    char fitted[CFG_NAME_LEN + 16];
    if (cfg_calibrated_preset(p, fitted, sizeof fitted))
        fprintf(out, "platform   %s: efficiencies uncalibrated (defaults); %s is fitted to published runs (-p %s)\n",
                p->name, fitted, fitted);
}

/* The error band of the step time, tokens/s and MFU, and its reason. */
static void band_lines(FILE *out, const cfg_band *b, const rpt_metrics *mt)
{
    char lo[64], hi[64];
    if (isfinite(b->error) && b->error > 0)
        fprintf(out, "band       +-%.1f %%: step time %.2f - %.2f s, tokens/s %s - %s, MFU %.1f - %.1f %%\n",
                100 * b->error, mt->step_time_s * (1 - b->error), mt->step_time_s * (1 + b->error),
                sim_fmt_count(mt->tokens_per_s * (1 - b->error), lo, sizeof lo),
                sim_fmt_count(mt->tokens_per_s * (1 + b->error), hi, sizeof hi), 100 * mt->mfu * (1 - b->error),
                100 * mt->mfu * (1 + b->error));
    else
        fprintf(out, "band       unknown\n");
    fprintf(out, "           %s\n", b->reason);
}

/* Prints the summary of run to out.  With run->sim NULL only the header,
 * strategy and memory lines.  A strategy that does not fit says so on its
 * own line first, then on the memory line. */
void rpt_summary(FILE *out, const rpt_run *run)
{
    char b1[64], b2[64], b3[64];
    const cfg_strategy *s = run->strategy;
    int devices = rpt_devices(run);
    double cap = cfg_usable_hbm_bytes(run->platform);

    char label[CFG_NAME_LEN + CFG_TEXT_LEN + 8];
    rpt_strategy_label(s, label, sizeof label);
    fprintf(out, "heptasim %s  %s on %s (%d devices), strategy %s\n", rpt_version(), run->model->name,
            run->platform->name, devices, label);
    inputs_lines(out, &run->overrides, run->platform);
    if (!run->sim && run->est)
        fputs("ESTIMATE: analytic (no contention, not simulated; 'heptasim run' simulates it)\n", out);
    if (run->memory.total_bytes > cap)
        fprintf(out, "!! OUT OF MEMORY: this strategy does NOT fit: needs %.1f GiB, device has %.1f GiB usable\n",
                run->memory.total_bytes / SIM_GIB, cap / SIM_GIB);
    model_line(out, run->model);
    strategy_line(out, s);

    if (run->sim || run->est) {
        rpt_metrics mt;
        rpt_metrics_compute(run, &mt);
        fprintf(out, "step time  %.2f s%s   tokens/s %s     MFU %.1f %%   HFU %.1f %%   (%.1f TFLOP/s per device)\n",
                mt.step_time_s, run->sim ? "   " : " (estimate)", sim_fmt_count(mt.tokens_per_s, b1, sizeof b1),
                100.0 * mt.mfu, 100.0 * mt.hfu, mt.tflops_per_device);
        if (run->band) band_lines(out, run->band, &mt);
    }
    memory_line(out, run);
    if (!run->sim && run->est) estimate_breakdown(out, run->est);
    if (!run->sim) return;

    const eng_result *sim = run->sim;
    const eng_rank_stats *st = &sim->critical;
    double t = sim->step_time_s;
    rpt_breakdown bd;
    rpt_breakdown_compute(run, &bd);

    fprintf(out, "time (critical rank %d, stage %d):\n", bd.critical_rank, bd.critical_stage);
    fprintf(out, "  compute         %8.2f s %5.1f %%\n", bd.compute_s, pct(bd.compute_s, t));
    fprintf(out, "  exposed comm    %8.2f s %5.1f %%   (", bd.exposed_comm_s, pct(bd.exposed_comm_s, t));
    for (int d = 0; d < WL_NDIMS; d++)
        fprintf(out, "%s%s %s", d ? ", " : "", rpt_dim_key(d), fmt_s(b1, sizeof b1, st->exposed_comm_s[d]));
    fprintf(out, ")\n");
    fprintf(out, "  pipeline bubble %8.2f s %5.1f %%\n", bd.bubble_s, pct(bd.bubble_s, t));
    fprintf(out, "  optimizer       %8.2f s %5.1f %%\n", bd.optimizer_s, pct(bd.optimizer_s, t));
    /* Show the remainder when it is visible at the precision printed. */
    if (fabs(bd.other_s) >= 0.005 || fabs(pct(bd.other_s, t)) >= 0.05)
        fprintf(out, "  other           %8.2f s %5.1f %%\n", bd.other_s, pct(bd.other_s, t));

    fprintf(out, "comm in flight per dimension (bytes sent by the critical rank):");
    for (int d = 0; d < WL_NDIMS; d++)
        fprintf(out, "%s %s %s s (%s)", d ? "," : "", rpt_dim_key(d), fmt_s(b1, sizeof b1, st->comm_s[d]),
                sim_fmt_bytes(st->bytes_sent[d], b2, sizeof b2));
    fputc('\n', out);
    fprintf(out, "traffic, all ranks:");
    for (int d = 0; d < WL_NDIMS; d++)
        fprintf(out, "%s %s %s", d ? "," : "", rpt_dim_key(d), sim_fmt_bytes(sim->bytes_total[d], b2, sizeof b2));
    fputc('\n', out);
    fprintf(out, "simulated in %.1f s (%s instructions, %s flows", run->wall_s,
            sim_fmt_count((double)sim->instructions, b2, sizeof b2), sim_fmt_count((double)sim->flows, b3, sizeof b3));
    int stand_for = sim->lockstep * sim->replicas;
    if (stand_for > 1)
        fprintf(out, "; %s of %s ranks simulated", sim_fmt_count((double)sim->ranks_simulated, b2, sizeof b2),
                sim_fmt_count((double)sim->ranks_simulated * stand_for, b3, sizeof b3));
    char how[160];
    rpt_lockstep_text(sim, how, sizeof how);
    if (how[0]) fprintf(out, ", %s", how);
    fputs(")\n", out);
    if (sim->replicas > 1)
        fprintf(out, "APPROXIMATE: one data-parallel replica simulated for %d (--symmetry dp): its data-parallel flows go "
                     "to the other replicas' devices, which are not simulated\n",
                sim->replicas);
    if (sim->slowest_mate)
        fprintf(out, "APPROXIMATE: slow devices (platform stragglers) with --symmetry dp: each simulated rank ran at "
                     "the speed of the slowest rank it stands for\n");
}

/* ---------------------------------------------------------- memory table */

/* Prints the memory of a rank of every pipeline stage, in GiB, with the
 * verdict against the usable capacity (HBM minus reserved).  The strategy
 * must have passed cfg_check. */
void rpt_memory_summary(FILE *out, const cfg_model *m, const cfg_strategy *s, const cfg_platform *p,
                        const cfg_overrides *ov)
{
    double cap = cfg_usable_hbm_bytes(p);
    char label[CFG_NAME_LEN + CFG_TEXT_LEN + 8];
    rpt_strategy_label(s, label, sizeof label);
    fprintf(out, "memory per device: %s, strategy %s, on %s\n", m->name, label, p->name);
    inputs_lines(out, ov, p);
    mdl_params par;
    mdl_count_params(m, &par);
    char a[32], b[32], d[32];
    model_line(out, m);
    strategy_line(out, s);
    if (m->mtp_layers > 0)
        fprintf(out, "multi-token prediction: %d module%s, %s of %s own (%s active), %s with the embedding and output "
                     "layer %s shares\n",
                m->mtp_layers, m->mtp_layers > 1 ? "s" : "", fmt_params(a, sizeof a, par.mtp),
                m->mtp_layers > 1 ? "their" : "its", fmt_params(b, sizeof b, par.mtp_active),
                fmt_params(d, sizeof d, par.mtp + par.embedding + par.output), m->mtp_layers > 1 ? "they" : "it");
    fprintf(out, "capacity %.1f GiB usable (%.1f GiB HBM - %.1f GiB reserved)\n", cap / SIM_GIB,
            p->hbm_bytes / SIM_GIB, p->hbm_reserved_bytes / SIM_GIB);
    fprintf(out, "%5s %9s %9s %9s %11s %9s %9s %9s %6s  %s\n", "stage", "weights", "grads", "optim", "activations",
            "buffers", "total", "in-flight", "layers", "verdict");

    int peak_stage = 0, fits_all = 1;
    double peak = -1.0;
    int stages = s->pp > 0 ? s->pp : 1;
    for (int st = 0; st < stages; st++) {
        mdl_memory mm;
        mdl_rank_memory(m, s, st, &mm);
        int fits = mm.total_bytes <= cap;
        fits_all = fits_all && fits;
        if (mm.total_bytes > peak) {
            peak = mm.total_bytes;
            peak_stage = st;
        }
        fprintf(out, "%5d %9.2f %9.2f %9.2f %11.2f %9.2f %9.2f %9d %6d  %s\n", st, mm.weights_bytes / SIM_GIB,
                mm.grads_bytes / SIM_GIB, mm.optimizer_bytes / SIM_GIB, mm.activations_bytes / SIM_GIB,
                mm.buffers_bytes / SIM_GIB, mm.total_bytes / SIM_GIB, mm.inflight_microbatches,
                cfg_stage_layer_total(m, s, st), fits ? "fits" : "does NOT fit");
    }
    if (fits_all)
        fprintf(out, "peak: stage %d, %.1f GiB of %.1f GiB usable -> fits\n", peak_stage, peak / SIM_GIB,
                cap / SIM_GIB);
    else
        fprintf(out, "peak: stage %d -> does NOT fit: needs %.1f GiB, device has %.1f GiB usable\n", peak_stage,
                peak / SIM_GIB, cap / SIM_GIB);
    if (s->fp8 || s->grad_reduce_in_bf16 || s->optimizer_moments != CFG_MOMENTS_FP32) {
        mdl_precision pr;
        mdl_precision_of(m, s, &pr);
        fprintf(out, "bytes per parameter: weights %g", pr.weight_bytes);
        if (pr.fp8_copy_bytes > 0) fprintf(out, " + FP8 weight and transpose %g (layer GEMMs)", pr.fp8_copy_bytes);
        fprintf(out, ", grads %g, optimizer %g (before ZeRO)%s\n", pr.grad_bytes, pr.optimizer_bytes,
                s->fp8 ? "; GEMM inputs saved in FP8" : "");
    }
    if (s->attention_kernel == CFG_ATTN_EAGER)
        fputs("attention: eager kernel (stores the s x s scores unless recomputed)\n", out);
}
