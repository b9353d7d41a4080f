/* report.h - turn a simulated step into numbers people read: derived
 * metrics (MFU, HFU, tokens/s), the text summary and the JSON document.
 *
 * The only module that writes result files. It takes const pointers and
 * never frees what it did not allocate. */
#ifndef HEPTASIM_REPORT_H
#define HEPTASIM_REPORT_H

#include <stdio.h>

#include "../engine/engine.h"
#include "../model/model.h"

typedef struct rpt_run {
    const cfg_model *model;
    const cfg_platform *platform;
    const cfg_strategy *strategy;
    const eng_result *sim;       /* NULL for a memory-only report */
    mdl_memory memory;           /* the peak rank */
    int memory_stage;            /* its pipeline stage */
    double wall_s;               /* simulator wall-clock time */
} rpt_run;

/* Metrics derived from a run (sim must be set). */
typedef struct rpt_metrics {
    double step_time_s;
    double model_flops_per_step;
    double hardware_flops_per_step;
    double mfu;                  /* model FLOPs / (step time * devices * peak) */
    double hfu;
    double tokens_per_s;
    double tflops_per_device;    /* model FLOP/s per device, in TFLOP/s */
} rpt_metrics;

void rpt_metrics_compute(const rpt_run *run, rpt_metrics *out);

/* Human-readable summary of a simulated step. */
void rpt_summary(FILE *out, const rpt_run *run);

/* Memory table for `heptasim memory` (every stage). */
void rpt_memory_summary(FILE *out, const cfg_model *m, const cfg_strategy *s, const cfg_platform *p);

/* The run as a JSON document with the contract's keys. path "-" is stdout.
 * Returns SIM_EIO with a message if the file cannot be written. */
sim_rc rpt_write_json(const char *path, const rpt_run *run, sim_err *err);

/* The same document as a cJSON tree the caller deletes (void* keeps cJSON.h
 * out of this header). */
void *rpt_run_to_json(const rpt_run *run);

/* Time breakdown of the critical rank, in seconds.  compute_s excludes the
 * optimizer phase, which is optimizer_s; exposed_comm_s sums the exposed
 * time of every dimension; other_s = step time - the four others (what no
 * category explains, may be slightly negative).  All 0 when sim is NULL. */
typedef struct rpt_breakdown {
    double compute_s;
    double exposed_comm_s;
    double bubble_s;
    double optimizer_s;
    double other_s;
    int critical_rank;
    int critical_stage;
} rpt_breakdown;

void rpt_breakdown_compute(const rpt_run *run, rpt_breakdown *out);

/* Devices of the run: the strategy's world size, else the platform's count. */
int rpt_devices(const rpt_run *run);

/* Usable device memory: HBM minus the reserved part. Bytes. */
double rpt_capacity_bytes(const cfg_platform *p);

/* Pipeline stage of `rank`: its pp digit in the mixed-radix numbering of the
 * strategy's order (innermost first; ep takes no digit, as it is carved out
 * of dp x cp). */
int rpt_rank_stage(const cfg_strategy *s, int rank);

/* JSON key of a report dimension: "tp", "cp", "ep", "dp", "pp" (static). */
const char *rpt_dim_key(int d);

/* Simulator version string (static). */
const char *rpt_version(void);

#endif
