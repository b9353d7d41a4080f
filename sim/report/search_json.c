/* search_json.c - the JSON summary documents of sweep, compare and merge,
 * from the rows the search hands over (rpt_search_doc).
 *
 * Wall times appear in the documents' "timing" object only, so the rest
 * of a document is the same on every run with the same inputs. */
#include "report.h"

#include <math.h>
#include <stdlib.h>

#include <cjson/cJSON.h>

static cJSON *agreement_json(const rpt_agreement *ag)
{
    cJSON *o = cJSON_CreateObject();
    rpt_json_add_num(o, "n", ag->n);
    rpt_json_add_num(o, "spearman", ag->spearman);
    rpt_json_add_num(o, "largest_gap", ag->largest_gap_index >= 0 ? ag->largest_gap : NAN);
    rpt_json_add_num(o, "largest_gap_index", ag->largest_gap_index);
    rpt_json_add_num(o, "mean_error", ag->n > 0 ? ag->mean_error : NAN);
    rpt_json_add_num(o, "min_error", ag->n > 0 ? ag->min_error : NAN);
    rpt_json_add_num(o, "max_error", ag->n > 0 ? ag->max_error : NAN);
    rpt_json_add_num(o, "best_estimate_rank", ag->best_estimate_rank);
    rpt_json_add_num(o, "best_index", ag->best_index);
    return o;
}

/* The records of l appended to arr, alike ones marked: "alike" on a row
 * that stands for others (how many, itself included) and "alike_indices"
 * (their indices), "alike_of" (the index of that row) on each of the
 * others. */
static cJSON *add_records(cJSON *arr, const rpt_record_list *l)
{
    int *alike = sim_xcalloc((size_t)l->n + 1, sizeof *alike);
    for (int i = 0; i < l->n; i++) alike[l->same_as[i]]++;
    for (int i = 0; i < l->n; i++) {
        cJSON *r = rpt_record_to_json(&l->rows[i]);
        if (l->same_as[i] != i)
            rpt_json_add_num(r, "alike_of", l->rows[l->same_as[i]].index);
        else if (alike[i] > 1) {
            rpt_json_add_num(r, "alike", alike[i]);
            cJSON *under = cJSON_AddArrayToObject(r, "alike_indices");
            for (int j = i + 1; j < l->n; j++)
                if (l->same_as[j] == i) cJSON_AddItemToArray(under, cJSON_CreateNumber(l->rows[j].index));
        }
        cJSON_AddItemToArray(arr, r);
    }
    free(alike);
    return arr;
}

static cJSON *records_json(const rpt_record_list *l)
{
    return add_records(cJSON_CreateArray(), l);
}

void *rpt_records_json(const rpt_record_list *a, const rpt_record_list *b)
{
    cJSON *arr = records_json(a);
    return b ? add_records(arr, b) : arr;
}

/* The keys sweep and compare documents share, up to the ranking. */
static cJSON *session_json(const rpt_search_doc *d)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "command", d->command);
    cJSON_AddStringToObject(o, "model", d->model);
    cJSON_AddStringToObject(o, "platform", d->platform);
    cJSON_AddItemToObject(o, "overrides", rpt_overrides_json(&d->overrides));
    if (d->resolved_model) cJSON_AddItemToObject(o, "resolved_model", cfg_model_to_json(d->resolved_model));
    if (d->resolved_platform) cJSON_AddItemToObject(o, "resolved_platform", cfg_platform_to_json(d->resolved_platform));
    rpt_json_add_num(o, "devices", d->devices);
    cJSON_AddStringToObject(o, "space", d->space);
    rpt_json_add_num(o, "global_batch", d->global_batch);
    rpt_json_add_num(o, "top", d->top);
    if (d->shard_count > 1) {
        char shard[48];
        snprintf(shard, sizeof shard, "%d/%d", d->shard_index, d->shard_count);
        cJSON_AddStringToObject(o, "shard", shard);
    }
    const rpt_search_counts *k = &d->counts;
    cJSON *counts = cJSON_AddObjectToObject(o, "counts");
    rpt_json_add_num(counts, "rejected", (double)k->rejected);
    rpt_json_add_num(counts, "enumerated", (double)k->enumerated);
    rpt_json_add_num(counts, "pruned_memory", (double)k->pruned_memory);
    rpt_json_add_num(counts, "estimated", (double)k->estimated);
    rpt_json_add_num(counts, "estimated_megatron_style", (double)k->estimated_megatron);
    rpt_json_add_num(counts, "probes", (double)k->probes);
    rpt_json_add_num(counts, "selected", k->selected);
    rpt_json_add_num(counts, "simulated", k->simulated);
    rpt_json_add_num(counts, "failed", k->failed);
    rpt_json_add_num(counts, "resumed", k->resumed);
    rpt_json_add_num(counts, "borrowed", k->borrowed);
    cJSON *t = cJSON_AddObjectToObject(o, "timing");
    rpt_json_add_num(t, "search_s", d->search_s);
    rpt_json_add_num(t, "per_candidate_us", k->enumerated > 0 ? 1e6 * d->search_s / (double)k->enumerated : 0.0);
    rpt_json_add_num(t, "search_processes", d->search_processes);
    if (d->cache_path) cJSON_AddStringToObject(t, "search_cache", d->cache_path);
    cJSON_AddBoolToObject(t, "search_from_twin", d->search_from_twin);
    rpt_json_add_num(t, "simulate_s", d->simulate_s);
    rpt_json_add_num(t, "jobs", d->jobs);
    return o;
}

void *rpt_sweep_doc_json(const rpt_search_doc *d)
{
    cJSON *o = session_json(d);
    cJSON_AddItemToObject(o, "agreement", agreement_json(&d->agreement));
    if (d->budget.seconds > 0) {
        cJSON *b = cJSON_AddObjectToObject(o, "budget");
        rpt_json_add_num(b, "seconds", d->budget.seconds);
        rpt_json_add_num(b, "rounds", d->budget.rounds);
        cJSON_AddBoolToObject(b, "best_held", d->budget.best_held);
    } else {
        cJSON_AddNullToObject(o, "budget");
    }
    cJSON_AddItemToObject(o, "ranking", records_json(&d->ranking));
    cJSON_AddItemToObject(o, "estimated_only", records_json(&d->estimated_only));
    return o;
}

void *rpt_compare_doc_json(const rpt_search_doc *d)
{
    cJSON *o = session_json(d);
    cJSON_AddItemToObject(o, "megatron", d->megatron ? rpt_record_to_json(d->megatron) : cJSON_CreateNull());
    cJSON_AddItemToObject(o, "7d", d->best ? rpt_record_to_json(d->best) : cJSON_CreateNull());
    rpt_json_add_num(o, "speedup", d->speedup);
    bool banded = d->band && d->band->pair_error > 0 && isfinite(d->speedup);
    cJSON_AddItemToObject(o, "speedup_error", banded ? cJSON_CreateNumber(d->band->pair_error) : cJSON_CreateNull());
    cJSON_AddItemToObject(o, "speedup_exceeds_error", banded ? cJSON_CreateBool(d->speedup_exceeds_error) : cJSON_CreateNull());
    cJSON_AddItemToObject(o, "agreement", agreement_json(&d->agreement));
    cJSON_AddItemToObject(o, "ranking", records_json(&d->ranking));
    return o;
}

void *rpt_merge_doc_json(const rpt_search_doc *d)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "command", d->command);
    cJSON *files = cJSON_AddArrayToObject(o, "files");
    for (int f = 0; f < d->nfiles; f++) cJSON_AddItemToArray(files, cJSON_CreateString(d->files[f]));
    if (d->ranking.n > 0) cJSON_AddStringToObject(o, "space", d->ranking.rows[0].space);
    cJSON *counts = cJSON_AddObjectToObject(o, "counts");
    rpt_json_add_num(counts, "records", d->counts.records);
    rpt_json_add_num(counts, "candidates", d->ranking.n);
    rpt_json_add_num(counts, "simulated", d->counts.simulated);
    rpt_json_add_num(counts, "failed", d->counts.failed);
    cJSON_AddItemToObject(o, "agreement", agreement_json(&d->agreement));
    cJSON_AddItemToObject(o, "ranking", records_json(&d->ranking));
    return o;
}
