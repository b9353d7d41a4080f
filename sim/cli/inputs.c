/* inputs.c - what the subcommands share: loading the three inputs named
 * on the command line, error printing, the --jobs default. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../search/search.h"
#include "../validate/validate.h"
#include "commands.h"

int cli_fail(sim_rc rc, const sim_err *err)
{
    /* One line, whatever the input held: control characters become '?'. */
    for (const char *c = err->msg; *c; c++) fputc((unsigned char)*c < 0x20 || *c == 0x7f ? '?' : *c, stderr);
    fputc('\n', stderr);
    return sim_exit_status(rc);
}

sim_rc cli_load_model_platform(const cli_args *a, cfg_model *m, cfg_platform *p, sim_err *err)
{
    cfg_overrides ov = {a->nsets, a->sets};
    sim_rc rc = cfg_load_model(a->model ? a->model : DEFAULT_MODEL, &ov, m, err);
    if (rc == SIM_OK && m->seq_len_assumed)
        fprintf(stderr, "heptasim: note: %s: a HuggingFace config gives no training sequence length; assuming %d "
                        "(--set model.seq_len=N to change it)\n", m->path, m->seq_len);
    if (rc == SIM_OK) rc = cfg_load_platform(a->platform ? a->platform : DEFAULT_PLATFORM, &ov, a->devices, p, err);
    return rc;
}

sim_rc cli_platform_band(const cfg_platform *p, cfg_band *out, sim_err *err)
{
    char dir[CFG_PATH_LEN];
    snprintf(dir, sizeof dir, "%s/platforms", cfg_data_dir());
    return val_platform_band(p, dir, out, err);
}

FILE *cli_summary_stream(const cli_args *a)
{
    bool json_out = a->json_path && strcmp(a->json_path, "-") == 0;
    bool csv_out = a->csv_path && strcmp(a->csv_path, "-") == 0;
    return json_out || csv_out ? stderr : stdout;
}

sim_rc cli_check_streams(const cli_args *a, const char *command, sim_err *err)
{
    if (a->json_path && a->csv_path && strcmp(a->json_path, "-") == 0 && strcmp(a->csv_path, "-") == 0)
        return sim_fail(err, SIM_EINVAL, "heptasim %s: '--json -' and '--csv -' cannot both go to stdout (write one "
                        "to a file)", command);
    return SIM_OK;
}

int cli_jobs(const cli_args *a)
{
    if (a->jobs > 0) return a->jobs;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

bool cli_derives_strategy(const cli_args *a)
{
    return !a->strategy && (a->model || a->platform || a->devices > 0);
}

sim_rc cli_load_inputs(const cli_args *a, bool check, cli_inputs *in, sim_err *err)
{
    cfg_overrides ov = {a->nsets, a->sets};
    sim_rc rc = cli_load_model_platform(a, &in->model, &in->platform, err);
    if (rc != SIM_OK) return rc;
    if (cli_derives_strategy(a)) return srch_default_strategy(&in->model, &in->platform, &ov, &in->strategy, err);
    rc = srch_load_strategy(a->strategy ? a->strategy : DEFAULT_STRATEGY, &ov, &in->strategy, err);
    if (rc == SIM_OK && check) rc = cfg_check(&in->model, &in->platform, &in->strategy, err);
    const cfg_strategy *s = &in->strategy;
    if (rc == SIM_OK && in->model.moe.experts > 0 && cfg_expert_dropped(s) > 0)
        fprintf(stderr, "heptasim: note: %s: .moe_capacity_factor: the busiest EP rank's experts drop %.1f %% of "
                        "their routed copies (load imbalance %g over a capacity of %g); model FLOPs still count them\n",
                s->path[0] ? s->path : "strategy", 100 * cfg_expert_dropped(s), s->moe_load_imbalance,
                s->moe_capacity_factor);
    return rc;
}

void cli_run_init(rpt_run *run, const cli_args *a, const cfg_model *m, const cfg_platform *p, const cfg_strategy *s)
{
    rpt_run_init(run, m, p, s);
    run->overrides = (cfg_overrides){a->nsets, a->sets};
}
