/* cmd_sensitivity.c - `heptasim sensitivity`: each platform figure
 * perturbed down and up, the change of the step time as a tornado table,
 * JSON, CSV and an HTML report. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>

#include "../sensitivity/sensitivity.h"
#include "commands.h"

#define DEFAULT_STEP 0.2
#define DEFAULT_SIMULATE 4

int cmd_sensitivity(const cli_args *a)
{
    sim_err err = {{0}};
    double t0 = sim_now_s();
    cli_inputs *in = sim_xcalloc(1, sizeof *in);
    cfg_band band;
    sim_rc rc = cli_load_inputs(a, true, in, &err);
    rpt_run run;
    if (rc == SIM_OK) {
        cli_run_init(&run, a, &in->model, &in->platform, &in->strategy);
        rc = rpt_check_fits(&run, &err); /* a strategy that does not fit is never simulated */
    }
    if (rc == SIM_OK) rc = cli_platform_band(&in->platform, &band, &err);
    if (rc == SIM_OK && a->report_path) rc = sim_out_check(a->report_path, "HTML report", &err);
    sens_result res = {0};
    if (rc == SIM_OK) {
        sens_request rq = {
            .model = &in->model,
            .platform = &in->platform,
            .platform_name = a->platform ? a->platform : DEFAULT_PLATFORM,
            .ov = {a->nsets, a->sets},
            .devices = a->devices,
            .strategy = &in->strategy,
            .step = a->step > 0 ? a->step : DEFAULT_STEP,
            .simulate = a->simulate_given ? a->simulate : DEFAULT_SIMULATE,
            .jobs = cli_jobs(a),
            .search = a->sens_search,
        };
        rc = sens_run(&rq, &res, &err);
        if (rc == SIM_OK) {
            rpt_sens_doc d = {
                .model = &in->model,
                .platform = &in->platform,
                .strategy = &in->strategy,
                .band = &band,
                .step = rq.step,
                .estimate_s = res.estimate_s,
                .simulated = res.simulated,
                .simulated_s = res.simulated_s,
                .rows = res.rows,
                .nrows = res.nrows,
                .search_space = res.searched ? srch_space_name(res.space) : NULL,
                .best = res.searched ? res.best : NULL,
                .best_estimate_s = res.best_estimate_s,
                .wall_s = sim_now_s() - t0,
            };
            if (res.failed > 0)
                fprintf(stderr, "heptasim sensitivity: %d simulation%s failed, left estimated (first: %s)\n",
                        res.failed, res.failed == 1 ? "" : "s", res.first_failure);
            if (!a->quiet) rpt_sens_print(cli_summary_stream(a), &d);
            if (a->json_path) {
                cJSON *doc = rpt_sens_json(&d);
                rc = rpt_write_json_doc(a->json_path, doc, "JSON result", &err);
                cJSON_Delete(doc);
            }
            if (rc == SIM_OK && a->csv_path) {
                cJSON *rows = rpt_sens_rows_json(&d);
                rc = rpt_write_csv(a->csv_path, rows, rpt_sens_csv_columns, "CSV table", &err);
                cJSON_Delete(rows);
            }
            if (rc == SIM_OK && a->report_path) rc = rpt_write_sens_html(a->report_path, &d, &err);
        }
        sens_result_free(&res);
    }
    free(in);
    return rc == SIM_OK ? 0 : cli_fail(rc, &err);
}
