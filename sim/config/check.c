/* check.c - the validity rules that tie a strategy to the model and the
 * platform it runs on (those within one model or platform file are read
 * with it: config.c).
 *
 * Each rule fails with one line that names the file, the key and the fix,
 * e.g. "strategies/x.json: .tp_x: 6 does not divide heads=64 (use a divisor
 * of 64)".  Products are computed in 64 bits so that absurd inputs give a
 * message, not an overflow. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "config_int.h"

typedef long long i64;

/* A product of named strategy values, for messages. */
typedef struct factor {
    const char *name;
    i64 v;
} factor;

/* Multiply the factors and describe the product.  Short form (the message
 * is keyed on a factor): "6" when at most one factor is above 1, else
 * "tp_x*cp_ulysses = 2*3 = 6" with the factors above 1.  Long form: every
 * factor, "dp*micro_batch = 16*1 = 16".  *key gets the first factor above 1
 * (the first factor when none is). */
static i64 product(const factor *f, int n, bool long_form, char *desc, size_t cap, const char **key)
{
    i64 p = 1;
    int above = 0;
    if (key) *key = f[0].name;
    for (int i = 0; i < n; i++) {
        if (__builtin_mul_overflow(p, f[i].v, &p)) p = INT64_MAX;
        if (f[i].v > 1) {
            if (key && above == 0) *key = f[i].name;
            above++;
        }
    }
    if (!long_form && above <= 1) {
        snprintf(desc, cap, "%lld", p);
        return p;
    }
    char names[160] = "", values[160] = "";
    size_t un = 0, uv = 0;
    bool first = true;
    for (int i = 0; i < n; i++) {
        if (!long_form && f[i].v <= 1) continue;
        un += (size_t)snprintf(names + un, sizeof names - un, "%s%s", first ? "" : "*", f[i].name);
        uv += (size_t)snprintf(values + uv, sizeof values - uv, "%s%lld", first ? "" : "*", f[i].v);
        if (un >= sizeof names) un = sizeof names - 1;
        if (uv >= sizeof values) uv = sizeof values - 1;
        first = false;
    }
    if (n == 1 || (!long_form && above == 1))
        snprintf(desc, cap, "%s=%lld", names, p);
    else
        snprintf(desc, cap, "%s = %s = %lld", names, values, p);
    return p;
}

/* ---------------------------------------------------------- strategy */

static sim_rc divides(sim_err *err, const char *f, const factor *fac, int n, const char *what, i64 value)
{
    char desc[200];
    const char *key;
    i64 d = product(fac, n, false, desc, sizeof desc, &key);
    if (value % d == 0) return SIM_OK;
    return sim_fail(err, SIM_EINVAL, "%s: .%s: %s does not divide %s=%lld (use a divisor of %lld)", f, key, desc, what,
                    value, value);
}

/* World size and dp (derived when 0).  *dp gets the resolved dp. */
static sim_rc check_world(const cfg_platform *p, const cfg_strategy *s, int *dp, sim_err *err)
{
    const char *f = cfg_origin(s->path, "strategy");
    char desc[200];
    factor rest[] = {
        {"pp", s->pp}, {"tp_x", s->tp_x}, {"tp_y", s->tp_y}, {"cp_ring", s->cp_ring}, {"cp_ulysses", s->cp_ulysses}};
    i64 r = product(rest, 5, true, desc, sizeof desc, NULL);
    *dp = s->dp;
    if (s->dp == 0) {
        if (r > p->devices || p->devices % r != 0)
            return sim_fail(err, SIM_EINVAL,
                            "%s: .dp: cannot derive dp: %s does not divide the %d devices of platform '%s' (run on a "
                            "multiple of %lld devices, or change the strategy)",
                            f, desc, p->devices, p->name, r);
        *dp = (int)(p->devices / r);
        return SIM_OK;
    }
    factor all[] = {{"dp", s->dp},     {"pp", s->pp},           {"tp_x", s->tp_x},
                    {"tp_y", s->tp_y}, {"cp_ring", s->cp_ring}, {"cp_ulysses", s->cp_ulysses}};
    i64 w = product(all, 6, true, desc, sizeof desc, NULL);
    if (w != p->devices)
        return sim_fail(
            err, SIM_EINVAL,
            "%s: .dp: world size %s does not equal the %d devices of platform '%s' (change the strategy, set "
            "dp to 0 to derive it, or run on %lld devices)",
            f, desc, p->devices, p->name, w);
    return SIM_OK;
}

/* Schedule keys alone: vpp needs interleaving, interleaving needs pp > 1
 * and vpp > 1; the V schedules need pp > 1 and an even split. */
static sim_rc check_schedule(const cfg_strategy *s, sim_err *err)
{
    const char *f = cfg_origin(s->path, "strategy");
    if (cfg_v_schedule(s) && s->pp < 2)
        return sim_fail(err, SIM_EINVAL,
                        "%s: .schedule: \"%s\" places two model chunks per stage in a V and needs pp > 1, got pp=%d "
                        "(use \"zb-h1\" or \"1f1b\")",
                        f, cfg_schedule_name(s->schedule), s->pp);
    if (cfg_v_schedule(s) && cfg_uneven_stages(s))
        return sim_fail(err, SIM_EINVAL,
                        "%s: .schedule: \"%s\" places the layers evenly in a V, first_stage_layers and "
                        "last_stage_layers are not modelled with it (set them to 0, or use \"zb-h1\")",
                        f, cfg_schedule_name(s->schedule));
    if (s->vpp > 1 && s->schedule != CFG_SCHED_INTERLEAVED)
        return sim_fail(err, SIM_EINVAL,
                        "%s: .vpp: vpp=%d needs schedule \"interleaved\", got \"%s\" (set schedule to \"interleaved\" "
                        "or vpp to 1)",
                        f, s->vpp, cfg_schedule_name(s->schedule));
    if (s->schedule != CFG_SCHED_INTERLEAVED) return SIM_OK;
    if (s->pp < 2)
        return sim_fail(err, SIM_EINVAL, "%s: .schedule: \"interleaved\" needs pp > 1, got pp=%d (use \"1f1b\")", f,
                        s->pp);
    if (s->vpp < 2)
        return sim_fail(err, SIM_EINVAL,
                        "%s: .schedule: \"interleaved\" needs vpp > 1, got vpp=%d (set vpp to 2 or more, or use "
                        "\"1f1b\")",
                        f, s->vpp);
    return SIM_OK;
}

static sim_rc check_sequence(const cfg_model *m, const cfg_strategy *s, sim_err *err)
{
    factor fac[4];
    int n = 0;
    const char *key = "tp_x";
    if (s->sequence_parallel || s->tp_y > 1) {
        fac[n++] = (factor){"tp_x", s->tp_x};
        fac[n++] = (factor){"tp_y", s->tp_y};
        if (s->tp_y > 1) key = "tp_y";
    }
    if (s->cp_ring > 1) {
        fac[n++] = (factor){"2*cp_ring", 2LL * s->cp_ring};
        key = "cp_ring";
    }
    if (s->cp_ulysses > 1) {
        fac[n++] = (factor){"cp_ulysses", s->cp_ulysses};
        if (s->cp_ring <= 1) key = "cp_ulysses";
    }
    if (n == 0) return SIM_OK;
    char desc[200];
    i64 split = product(fac, n, true, desc, sizeof desc, NULL);
    if (m->seq_len % split == 0) return SIM_OK;
    return sim_fail(err, SIM_EINVAL,
                    "%s: .%s: seq_len=%d of model '%s' is not a multiple of the sequence split %s (use a seq_len "
                    "that is a multiple of %lld, or split the sequence less)",
                    cfg_origin(s->path, "strategy"), key, m->seq_len, m->name, desc, split);
}

/* What a layout holds, stage by stage. */
typedef struct layout_tally {
    int stages, decoders, mtp;
    int embedding, embedding_at, loss, loss_at, mtp_outside;
} layout_tally;

static void tally_visit(void *ctx, int index, const cfg_layout_stage *st)
{
    layout_tally *t = ctx;
    t->stages = index + 1;
    t->decoders += st->decoders;
    t->mtp += st->mtp;
    if (st->embedding) t->embedding_at = index;
    if (st->loss) t->loss_at = index;
    t->embedding += st->embedding;
    t->loss += st->loss;
    if (st->mtp && !st->loss) t->mtp_outside++;
}

/* A pipeline layout against the model and the pipeline: pp*vpp virtual
 * stages, the model's decoder and MTP layers, the embedding in the first
 * stage, the loss (and the MTP layers, which heptasim runs in the head) in
 * the last; not with the other split keys or a V schedule.  A virtual
 * stage may hold no decoder layer: its chunk then runs only what the
 * layout gives it (the embedding, or the MTP layers and the loss) or just
 * passes the activations on. */
static sim_rc check_layout(const cfg_model *m, const cfg_strategy *s, sim_err *err)
{
    const char *f = cfg_origin(s->path, "strategy"), *lay = s->pipeline_layout;
    char why[SIM_ERR_LEN / 2];
    layout_tally t = {.embedding_at = -1, .loss_at = -1};
    if (cfg_layout_walk(lay, tally_visit, &t, why, sizeof why) < 0)
        return sim_fail(err, SIM_EINVAL,
                        "%s: .pipeline_layout: \"%s\": %s (write the virtual stages as runs of E, t, m and L "
                        "separated by '|', e.g. \"Et*4|(t*4|)*14,tmL\")",
                        f, lay, why);
    const char *other = s->first_stage_layers > 0                   ? "first_stage_layers"
                        : s->last_stage_layers > 0                  ? "last_stage_layers"
                        : s->account_for_embedding_in_pipeline_split ? "account_for_embedding_in_pipeline_split"
                        : s->account_for_loss_in_pipeline_split      ? "account_for_loss_in_pipeline_split"
                                                                     : NULL;
    if (other)
        return sim_fail(err, SIM_EINVAL,
                        "%s: .pipeline_layout: a layout places every layer itself and is not combined with %s "
                        "(unset %s, or the layout)",
                        f, other, other);
    if (cfg_v_schedule(s))
        return sim_fail(err, SIM_EINVAL,
                        "%s: .pipeline_layout: \"%s\" places its chunks in a V; a layout with it is not modelled "
                        "(use \"interleaved\" or \"1f1b\")",
                        f, cfg_schedule_name(s->schedule));
    i64 want = (i64)s->pp * cfg_stage_chunks(s);
    if (t.stages != want)
        return sim_fail(err, SIM_EINVAL,
                        "%s: .pipeline_layout: %d virtual stages, but pp*vpp = %d*%d = %lld (give %lld stages "
                        "separated by '|'%s)",
                        f, t.stages, s->pp, cfg_stage_chunks(s), want, want,
                        t.stages % s->pp == 0 ? ", or set vpp to the layout's stages / pp" : "");
    if (t.decoders != m->layers)
        return sim_fail(err, SIM_EINVAL,
                        "%s: .pipeline_layout: %d transformer layers ('t'), but model '%s' has layers=%d (place "
                        "each layer once)",
                        f, t.decoders, m->name, m->layers);
    if (t.mtp != m->mtp_layers)
        return sim_fail(err, SIM_EINVAL,
                        "%s: .pipeline_layout: %d MTP layers ('m'), but model '%s' has mtp_layers=%d (place each "
                        "once, with the loss)",
                        f, t.mtp, m->name, m->mtp_layers);
    if (t.embedding != 1 || t.embedding_at != 0)
        return sim_fail(err, SIM_EINVAL,
                        "%s: .pipeline_layout: the embedding ('E') must appear once, in the first virtual stage "
                        "(got %d, %s; put one E first)",
                        f, t.embedding, t.embedding ? "elsewhere" : "none");
    if (t.loss != 1 || t.loss_at != t.stages - 1)
        return sim_fail(err, SIM_EINVAL,
                        "%s: .pipeline_layout: the loss ('L') must appear once, in the last virtual stage (got %d, "
                        "%s; put one L last)",
                        f, t.loss, t.loss ? "elsewhere" : "none");
    if (t.mtp_outside)
        return sim_fail(err, SIM_EINVAL,
                        "%s: .pipeline_layout: MTP layers ('m') on a virtual stage without the loss are not "
                        "modelled (heptasim runs them with the output layer; put them in the last virtual stage)",
                        f);
    return SIM_OK;
}

/* Layers over the pipeline stages (the split of cfg_stage_layers): pp*vpp
 * divides the layers, or first_stage_layers / last_stage_layers leave the
 * other stages an even share of at least one layer each; with vpp > 1
 * every stage's count is a multiple of vpp. */
static sim_rc check_stages(const cfg_model *m, const cfg_strategy *s, sim_err *err)
{
    const char *f = cfg_origin(s->path, "strategy");
    int first = s->first_stage_layers, last = s->last_stage_layers;
    if (s->pipeline_layout[0]) return check_layout(m, s, err);
    if (first == 0 && last == 0 && cfg_v_schedule(s) && m->layers % (2LL * s->pp) != 0)
        return sim_fail(err, SIM_EINVAL,
                        "%s: .pp: \"%s\" cuts the layers into 2*pp = %lld chunks, which does not divide layers=%d "
                        "(use a pp whose double divides %d)",
                        f, cfg_schedule_name(s->schedule), 2LL * s->pp, m->layers, m->layers);
    int emb = s->account_for_embedding_in_pipeline_split, loss = s->account_for_loss_in_pipeline_split;
    const char *acc = emb ? "account_for_embedding_in_pipeline_split" : "account_for_loss_in_pipeline_split";
    if ((emb || loss) && (first > 0 || last > 0))
        return sim_fail(err, SIM_EINVAL,
                        "%s: .%s: counting the embedding or the loss as a layer is not combined with "
                        "first_stage_layers or last_stage_layers (set them to 0, or %s to false)",
                        f, acc, acc);
    if (emb || loss) {
        i64 n = (i64)s->pp * cfg_stage_chunks(s), places = (i64)m->layers + emb + loss;
        if (places % n != 0)
            return sim_fail(err, SIM_EINVAL,
                            "%s: .%s: layers=%d plus the %d counted as layers = %lld, which %lld model chunks "
                            "(pp*chunks per stage) do not divide (use a pp and vpp whose product divides %lld)",
                            f, acc, m->layers, emb + loss, places, n, places);
        if (n > 1 && places / n < 2)
            return sim_fail(err, SIM_EINVAL,
                            "%s: .%s: %lld model chunks of %lld places leave the first or last chunk no "
                            "transformer layer (use fewer pipeline stages or virtual stages)",
                            f, acc, n, places / n);
        return SIM_OK;
    }
    if (first == 0 && last == 0) {
        factor stages[] = {{"pp", s->pp}, {"vpp", s->vpp}};
        return divides(err, f, stages, 2, "layers", m->layers);
    }
    const char *key = first > 0 ? "first_stage_layers" : "last_stage_layers";
    char given[160];
    if (first > 0 && last > 0)
        snprintf(given, sizeof given, "first_stage_layers + last_stage_layers = %d+%d = %d", first, last, first + last);
    else
        snprintf(given, sizeof given, "%s=%d", key, first > 0 ? first : last);
    if (s->pp < 2)
        return sim_fail(err, SIM_EINVAL,
                        "%s: .%s: %s needs pp > 1, got pp=%d (set %s to 0, or use 2 or more pipeline stages)", f, key,
                        given, s->pp, key);
    i64 others = s->pp - (first > 0) - (last > 0);
    i64 rest = (i64)m->layers - first - last;
    if (others == 0 && rest != 0)
        return sim_fail(err, SIM_EINVAL,
                        "%s: .last_stage_layers: %s, but with pp=2 the two stages hold all layers=%d (make them add "
                        "up to %d)",
                        f, given, m->layers, m->layers);
    if (others > 0 && rest < others)
        return sim_fail(err, SIM_EINVAL,
                        "%s: .%s: %s leaves %lld of layers=%d for the other %lld stages, fewer than one each (leave "
                        "them at least %lld layers)",
                        f, key, given, rest, m->layers, others, others);
    if (others > 0 && rest % others != 0)
        return sim_fail(err, SIM_EINVAL,
                        "%s: .%s: %s leaves %lld of layers=%d, which the other %lld stages cannot share evenly "
                        "(leave them a multiple of %lld layers)",
                        f, key, given, rest, m->layers, others, others);
    if (s->vpp > 1) {
        int counts[2] = {first, last};
        const char *keys[2] = {"first_stage_layers", "last_stage_layers"};
        for (int i = 0; i < 2; i++)
            if (counts[i] > 0 && counts[i] % s->vpp != 0)
                return sim_fail(err, SIM_EINVAL,
                                "%s: .%s: %d is not a multiple of vpp=%d (each stage's layers are cut into vpp model "
                                "chunks; use a multiple of %d)",
                                f, keys[i], counts[i], s->vpp, s->vpp);
        if (others > 0 && (rest / others) % s->vpp != 0)
            return sim_fail(err, SIM_EINVAL,
                            "%s: .vpp: %d does not divide the %lld layers each of the other %lld stages holds (use "
                            "a divisor of %lld, or change %s)",
                            f, s->vpp, rest / others, others, rest / others,
                            first > 0 && last > 0 ? "first_stage_layers or last_stage_layers" : key);
    }
    return SIM_OK;
}

/* Each value alone against the model: heads, widths, layers, sequence,
 * schedule, expert tensor parallel, fusion. */
static sim_rc check_shapes(const cfg_model *m, const cfg_strategy *s, sim_err *err)
{
    const char *f = cfg_origin(s->path, "strategy");
    sim_rc rc;
    char desc[200];

    /* heads, hidden and FFN widths split over tensor (and Ulysses) ranks */
    factor heads_split[] = {{"tp_x", s->tp_x}, {"cp_ulysses", s->cp_ulysses}};
    if ((rc = divides(err, f, heads_split, 2, "heads", m->heads))) return rc;
    const char *key;
    i64 n = product(heads_split, 2, false, desc, sizeof desc, &key);
    if (m->kv_heads % n != 0 && n % m->kv_heads != 0)
        return sim_fail(err, SIM_EINVAL,
                        "%s: .%s: %s neither divides kv_heads=%d nor is a multiple of it (use a divisor or a multiple "
                        "of %d)",
                        f, key, desc, m->kv_heads, m->kv_heads);
    factor tp[] = {{"tp_x", s->tp_x}, {"tp_y", s->tp_y}};
    if ((rc = divides(err, f, tp, 2, "hidden", m->hidden))) return rc;
    if ((rc = divides(err, f, tp, 2, "ffn_hidden", m->ffn_hidden))) return rc;
    if (m->moe.experts > 0) {
        factor etp[] = {{"etp", s->etp > 0 ? s->etp : s->tp_x * s->tp_y}};
        if ((rc = divides(err, f, etp, 1, "moe.ffn_hidden", m->moe.ffn_hidden))) return rc;
        if (m->moe.shared_experts > 0 &&
            (rc = divides(err, f, tp, 2, "moe.shared_ffn_hidden", m->moe.shared_ffn_hidden)))
            return rc;
    }

    /* layers over pipeline stages, and the schedule */
    if ((rc = check_schedule(s, err))) return rc;
    if ((rc = check_stages(m, s, err))) return rc;

    if ((rc = check_sequence(m, s, err))) return rc;

    if (cfg_is_mla(m) && s->tp_y > 1)
        return sim_fail(err, SIM_EINVAL,
                        "%s: .tp_y: %d, but 2D tensor parallel of multi-head latent attention (model '%s') is not "
                        "modelled (use tp_y 1)",
                        f, s->tp_y, m->name);
    if (s->fuse_tpy_cp && (s->tp_y < 2 || s->cp_ulysses < 2))
        return sim_fail(err, SIM_EINVAL,
                        "%s: .fuse_tpy_cp: needs tp_y > 1 and cp_ulysses > 1, got tp_y=%d and cp_ulysses=%d (set "
                        "fuse_tpy_cp to false)",
                        f, s->tp_y, s->cp_ulysses);
    return SIM_OK;
}

/* The precision keys against the platform. */
sim_rc cfg_check_precision(const cfg_platform *p, const cfg_strategy *s, sim_err *err)
{
    const char *f = cfg_origin(s->path, "strategy");
    if (s->fp8 && !(p->fp8_peak_flops_per_s > 0))
        return sim_fail(err, SIM_EINVAL,
                        "%s: .fp8: platform '%s' has no FP8 peak (device.fp8_peak_tflops in %s; set fp8 to false, or "
                        "give the device its FP8 peak)",
                        f, p->name, cfg_origin(p->path, "the platform file"));
    if (s->fp8 && s->fp8_recipe == CFG_FP8_MXFP8 && !(p->mxfp8_peak_flops_per_s > 0))
        return sim_fail(err, SIM_EINVAL,
                        "%s: .fp8_recipe: \"mxfp8\" needs MXFP8 tensor cores (Blackwell), and platform '%s' has no "
                        "device.mxfp8_peak_tflops in %s (use \"blockwise\" or \"tensorwise\", or give the device "
                        "its MXFP8 peak)",
                        f, p->name, cfg_origin(p->path, "the platform file"));
    return SIM_OK;
}

/* Megatron-Core's expert folding: the ep x etp expert model-parallel
 * ranks tile the tp x cp x dp ranks of a stage (the expert data-parallel
 * size is what is left), and the expert numbering of the ranks puts them
 * on the stages the dense one does (Megatron asserts that the two give the
 * same pipeline groups: pp last in the order, or the expert data-parallel
 * size equal to dp). */
static sim_rc check_expert_fold(const cfg_model *m, const cfg_strategy *s, int dp, sim_err *err)
{
    const char *f = cfg_origin(s->path, "strategy");
    char desc[200], fold[200];
    int etp = s->etp > 0 ? s->etp : s->tp_x * s->tp_y;
    if (m->moe.experts <= 0 || !cfg_experts_folded(s)) return SIM_OK;
    factor stage[] = {{"tp_x", s->tp_x}, {"tp_y", s->tp_y}, {"cp_ring", s->cp_ring}, {"cp_ulysses", s->cp_ulysses},
                      {"dp", dp}};
    factor experts[] = {{"ep", s->ep}, {"etp", etp}};
    i64 ranks = product(stage, 5, true, desc, sizeof desc, NULL), emp = product(experts, 2, true, fold, sizeof fold, NULL);
    if (ranks % emp != 0)
        return sim_fail(err, SIM_EINVAL,
                        "%s: .%s: %s does not divide %s, the ranks of a pipeline stage the expert groups are folded "
                        "over (make ep*etp a divisor of %lld)",
                        f, s->ep > 1 ? "ep" : "etp", fold, desc, ranks);
    cfg_strategy r = *s;
    r.dp = dp;
    r.etp = etp;
    if (!cfg_expert_stages_match(&r)) {
        char order[CFG_NAME_LEN];
        cfg_order_format(s, order, sizeof order);
        return sim_fail(err, SIM_EINVAL,
                        "%s: .order: \"%s\" numbers the expert ranks (etp %d, ep %d, expert dp %d) over other "
                        "pipeline stages than the dense ranks (Megatron-Core needs pp last in the order, or expert "
                        "dp = dp = %d; put pp last)",
                        f, order, etp, s->ep, cfg_edp_group(&r), dp);
    }
    return SIM_OK;
}

/* Rules that need the resolved dp: batch, micro-batches, expert parallel. */
static sim_rc check_batch_and_experts(const cfg_model *m, const cfg_strategy *s, int dp, sim_err *err)
{
    const char *f = cfg_origin(s->path, "strategy");
    char desc[200];
    factor per_step[] = {{"dp", dp}, {"micro_batch", s->micro_batch}};
    i64 per = product(per_step, 2, true, desc, sizeof desc, NULL);
    if (s->global_batch % per != 0)
        return sim_fail(err, SIM_EINVAL, "%s: .global_batch: %d is not a multiple of %s (use a multiple of %lld)", f,
                        s->global_batch, desc, per);
    i64 micro_batches = s->global_batch / per;
    if (micro_batches > CFG_MAX_MICRO_BATCHES)
        return sim_fail(err, SIM_EINVAL,
                        "%s: .global_batch: %lld micro-batches per step is more than the limit of %d (raise "
                        "micro_batch or lower global_batch)",
                        f, micro_batches, CFG_MAX_MICRO_BATCHES);
    int flushes = s->pipeline_flushes > 1 ? s->pipeline_flushes : 1;
    if (micro_batches % flushes != 0)
        return sim_fail(err, SIM_EINVAL,
                        "%s: .pipeline_flushes: %d does not divide the %lld micro-batches "
                        "global_batch/(dp*micro_batch) (use a divisor of %lld)",
                        f, flushes, micro_batches, micro_batches);
    if (flushes > 1 && s->schedule == CFG_SCHED_INTERLEAVED && (micro_batches / flushes) % s->pp != 0)
        return sim_fail(err, SIM_EINVAL,
                        "%s: .pipeline_flushes: the interleaved schedule needs the %lld micro-batches of each of "
                        "the %d flushes to be a multiple of pp=%d (use fewer flushes, or change global_batch)",
                        f, micro_batches / flushes, flushes, s->pp);
    if (s->schedule == CFG_SCHED_INTERLEAVED && micro_batches % s->pp != 0)
        return sim_fail(err, SIM_EINVAL,
                        "%s: .global_batch: the interleaved schedule needs a number of micro-batches "
                        "global_batch/(dp*micro_batch) = %lld that is a multiple of pp=%d (change global_batch or "
                        "micro_batch)",
                        f, micro_batches, s->pp);
    /* The V schedules' orders (the zero-bubble paper's handcrafted ZB-V,
     * DualPipeV) are defined from these counts of micro-batches on. */
    i64 v_least = s->schedule == CFG_SCHED_ZB_V        ? 2LL * s->pp - 1
                  : s->schedule == CFG_SCHED_DUALPIPE_V ? 2LL * s->pp
                                                        : 0;
    if (flushes > 1 && micro_batches / flushes < v_least)
        return sim_fail(err, SIM_EINVAL,
                        "%s: .pipeline_flushes: \"%s\" needs at least %lld micro-batches per flush with pp=%d, got "
                        "%lld (use fewer flushes)",
                        f, cfg_schedule_name(s->schedule), v_least, s->pp, micro_batches / flushes);
    if (micro_batches < v_least)
        return sim_fail(err, SIM_EINVAL,
                        "%s: .global_batch: \"%s\" needs at least %lld micro-batches with pp=%d, got "
                        "global_batch/(dp*micro_batch) = %lld (raise global_batch or lower micro_batch)",
                        f, cfg_schedule_name(s->schedule), v_least, s->pp, micro_batches);
    if (s->ep > 1) {
        if (m->moe.experts <= 0)
            return sim_fail(err, SIM_EINVAL, "%s: .ep: ep=%d needs an MoE model, and model '%s' is dense (set ep to 1)",
                            f, s->ep, m->name);
        if (m->moe.experts % s->ep != 0)
            return sim_fail(err, SIM_EINVAL, "%s: .ep: %d does not divide moe.experts=%d (use a divisor of %d)", f,
                            s->ep, m->moe.experts, m->moe.experts);
    }
    return check_expert_fold(m, s, dp, err);
}

/* The MoE keys: the batch-level all-to-all overlap pairs DualPipe-V's
 * passes, or the steady phase of interleaved 1F1B or of 1F1B without a
 * pipeline (Megatron-Core's --overlap-moe-expert-parallel-comm, whose
 * TransformerConfig wants virtual stages when pp > 1, the alltoall or flex
 * dispatcher, no full recompute, no MoE module recompute, no shared-expert
 * overlap and at most one MTP layer); the shared-expert overlap needs
 * shared experts; the imbalance needs experts. */
static sim_rc check_moe_keys(const cfg_model *m, const cfg_strategy *s, sim_err *err)
{
    const char *f = cfg_origin(s->path, "strategy");
    bool one_f_one_b = s->schedule == CFG_SCHED_INTERLEAVED || (s->schedule == CFG_SCHED_1F1B && s->pp == 1);
    if (s->overlap_ep_comm && s->schedule != CFG_SCHED_DUALPIPE_V && !one_f_one_b)
        return sim_fail(err, SIM_EINVAL,
                        "%s: .overlap_ep_comm: the expert all-to-all behind another micro-batch's compute is "
                        "modelled with schedule \"interleaved\", \"dualpipe-v\", or \"1f1b\" at pp 1 "
                        "(Megatron-Core wants virtual stages with pp > 1), got \"%s\" at pp %d (use one of "
                        "those, or set overlap_ep_comm to false)",
                        f, cfg_schedule_name(s->schedule), s->pp);
    if (s->overlap_ep_comm && one_f_one_b) {
        const char *why = s->recompute == CFG_RECOMP_FULL ? "recompute \"full\""
                          : (cfg_recompute_modules(s) >> CFG_RM_MOE) & 1u ? "recompute of the module \"moe\""
                          : s->moe_dispatcher == CFG_DISPATCH_ALLGATHER ? "moe_dispatcher \"allgather\""
                          : s->overlap_shared_experts ? "overlap_shared_experts"
                          : m->mtp_layers > 1 ? "more than one MTP layer"
                                              : NULL;
        if (why)
            return sim_fail(err, SIM_EINVAL,
                            "%s: .overlap_ep_comm: Megatron-Core's paired 1F1B does not run with %s (drop it, or "
                            "set overlap_ep_comm to false)",
                            f, why);
    }
    if (s->overlap_shared_experts && m->moe.shared_experts <= 0)
        return sim_fail(err, SIM_EINVAL,
                        "%s: .overlap_shared_experts: model '%s' has no shared experts (set overlap_shared_experts "
                        "to false)",
                        f, m->name);
    if (s->overlap_shared_experts && s->schedule == CFG_SCHED_DUALPIPE_V)
        return sim_fail(err, SIM_EINVAL,
                        "%s: .overlap_shared_experts: \"dualpipe-v\" already hides the expert all-to-all behind "
                        "the paired micro-batch; both overlaps together are not modelled (set "
                        "overlap_shared_experts to false)",
                        f);
    if (s->moe_load_imbalance > 1 && m->moe.experts <= 0)
        return sim_fail(err, SIM_EINVAL,
                        "%s: .moe_load_imbalance: %g needs an MoE model, and model '%s' is dense (set it to 1)", f,
                        s->moe_load_imbalance, m->name);
    if (s->moe_pad_expert_input_to_capacity && !(s->moe_capacity_factor > 0))
        return sim_fail(err, SIM_EINVAL,
                        "%s: .moe_pad_expert_input_to_capacity: pads to a capacity, and moe_capacity_factor gives "
                        "none (give moe_capacity_factor, or set the padding to false)",
                        f);
    int etp = cfg_etp(s);
    if (s->moe_dispatcher == CFG_DISPATCH_FLEX && m->moe.experts > 0 && etp > 1)
        return sim_fail(err, SIM_EINVAL,
                        "%s: .moe_dispatcher: \"flex\" (DeepEP, HybridEP) runs the experts whole on each rank, "
                        "got etp %d (set etp to 1, or use \"alltoall\")",
                        f, etp);
    return SIM_OK;
}

/* HSDP as FSDP2's 2D mesh (replicate, shard) runs it: the parameters,
 * gradients and optimizer sharded over dp_shard ranks of the DP group of
 * dp ranks (zero 3 inside the shard group), replicated across the rest. */
static sim_rc check_hybrid_sharding(const cfg_model *m, const cfg_strategy *s, int dp, sim_err *err)
{
    if (s->dp_shard <= 0) return SIM_OK;
    const char *f = cfg_origin(s->path, "strategy");
    int group = dp * cfg_cp(s);
    if (s->zero != 3)
        return sim_fail(err, SIM_EINVAL,
                        "%s: .dp_shard: hybrid sharding shards the parameters as zero 3 does, got zero %d (set zero "
                        "to 3, or leave dp_shard out)",
                        f, s->zero);
    if (group % s->dp_shard != 0)
        return sim_fail(err, SIM_EINVAL,
                        "%s: .dp_shard: %d does not divide the data-parallel group dp x cp = %d (use a divisor of %d)",
                        f, s->dp_shard, group, group);
    if (m->moe.experts > 0)
        return sim_fail(err, SIM_EINVAL,
                        "%s: .dp_shard: hybrid sharding of the routed experts over expert data parallel is not "
                        "modelled, and model '%s' has experts (leave dp_shard out)",
                        f, m->name);
    return SIM_OK;
}

/* True when some layer of m is dense (moe false) or MoE (moe true). */
static bool has_layer_kind(const cfg_model *m, bool moe)
{
    for (int l = 0; l < m->layers; l++)
        if (cfg_is_moe_layer(m, l) == moe) return true;
    return false;
}

/* recompute_modules (with recompute "selective"): Megatron-Core's module
 * names, each applying to some layer of the model. */
static sim_rc check_recompute_modules(const cfg_model *m, const cfg_strategy *s, sim_err *err)
{
    const char *f = cfg_origin(s->path, "strategy");
    if (s->recompute != CFG_RECOMP_SELECTIVE) return SIM_OK;
    for (const char *p = s->recompute_modules; *p;) {
        size_t len = strcspn(p, ", ");
        char word[CFG_NAME_LEN * 2];
        snprintf(word, sizeof word, "%.*s", (int)len, p);
        int i = cfg_recompute_module_parse(p, len);
        if (i < 0) {
            const char *close = cfg_recompute_module_suggest(word);
            return sim_fail(err, SIM_EINVAL,
                            "%s: .recompute_modules: unknown module '%s' (%s%s%s; the modules are core_attn, "
                            "moe_act, layernorm, mla_up_proj, mlp, moe, shared_experts)",
                            f, word, close ? "did you mean '" : "name one of the modules", close ? close : "",
                            close ? "'?" : "");
        }
        bool applies = i == CFG_RM_MLA_UP_PROJ      ? cfg_is_mla(m)
                       : i == CFG_RM_MLP            ? has_layer_kind(m, false)
                       : i == CFG_RM_SHARED_EXPERTS ? m->moe.shared_experts > 0 && has_layer_kind(m, true)
                       : i == CFG_RM_MOE || i == CFG_RM_MOE_ACT ? has_layer_kind(m, true)
                                                                : true;
        if (!applies)
            return sim_fail(err, SIM_EINVAL,
                            "%s: .recompute_modules: '%s' recomputes nothing in model '%s', which has no %s (leave "
                            "it out)",
                            f, word, m->name,
                            i == CFG_RM_MLA_UP_PROJ ? "multi-head latent attention"
                            : i == CFG_RM_MLP       ? "dense layer"
                            : i == CFG_RM_SHARED_EXPERTS ? "shared experts"
                                                         : "MoE layer");
        p += len;
        p += strspn(p, ", ");
    }
    return SIM_OK;
}

static sim_rc check_inputs(const cfg_model *m, const cfg_platform *p, sim_err *err)
{
    sim_rc rc;
    if ((rc = cfg_model_revalidate(m, err)) || (rc = cfg_model_sanity(m, err))) return rc;
    return (rc = cfg_platform_revalidate(p, err)) ? rc : cfg_platform_sanity(p, err);
}

/* The rules that join the strategy's values to each other and to the
 * model and platform (each value already within its key's row). */
static sim_rc check_rules(const cfg_model *m, const cfg_platform *p, cfg_strategy *s, sim_err *err)
{
    sim_rc rc;
    int dp;
    /* a value that is wrong on its own is named before a product that is */
    if ((rc = check_shapes(m, s, err))) return rc;
    if ((rc = check_world(p, s, &dp, err))) return rc;
    if ((rc = cfg_check_precision(p, s, err))) return rc;
    if ((rc = check_batch_and_experts(m, s, dp, err))) return rc;
    if ((rc = check_moe_keys(m, s, err))) return rc;
    if ((rc = check_hybrid_sharding(m, s, dp, err))) return rc;
    if ((rc = check_recompute_modules(m, s, err))) return rc;
    s->dp = dp;
    s->etp = cfg_etp(s); /* unset: Megatron's default, experts split like the dense layers */
    return SIM_OK;
}

static sim_rc check_strategy(const cfg_model *m, const cfg_platform *p, cfg_strategy *s, sim_err *err)
{
    sim_rc rc = cfg_strategy_revalidate(s, err);
    return rc ? rc : check_rules(m, p, s, err);
}

sim_rc cfg_check(const cfg_model *m, const cfg_platform *p, cfg_strategy *s, sim_err *err)
{
    sim_rc rc = check_inputs(m, p, err);
    return cfg_one_line(rc ? rc : check_strategy(m, p, s, err), err);
}

sim_rc cfg_check_inputs(const cfg_model *m, const cfg_platform *p, sim_err *err)
{
    return cfg_one_line(check_inputs(m, p, err), err);
}

sim_rc cfg_check_strategy(const cfg_model *m, const cfg_platform *p, cfg_strategy *s, sim_err *err)
{
    return cfg_one_line(check_strategy(m, p, s, err), err);
}

sim_rc cfg_check_strategy_rules(const cfg_model *m, const cfg_platform *p, cfg_strategy *s, sim_err *err)
{
    return cfg_one_line(check_rules(m, p, s, err), err);
}
