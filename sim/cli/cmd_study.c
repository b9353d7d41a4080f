/* cmd_study.c - `heptasim study FILE.json`: the compares of a study file
 * run into one folder (study/study.h), each cell's summary and HTML report
 * written, then the Markdown table and the CSV. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../report/report.h"
#include "../study/study.h"
#include "commands.h"

/* The command line that regenerates the study, as a shell would take it
 * back: the words given but --cells and its patterns (a run of some cells
 * is part of the study's), anything but [A-Za-z0-9_./=:,+-] single-quoted. */
static char *command_line(const cli_args *a)
{
    size_t cap = 64;
    for (int i = 0; i < a->argc; i++) cap += 4 * strlen(a->argv[i]) + 3;
    char *out = sim_xcalloc(1, cap);
    size_t n = 0;
    for (int i = 0; i < a->argc; i++) {
        const char *w = i == 0 ? "heptasim" : a->argv[i];
        if (i > 0 && strncmp(w, "--cells=", 8) == 0) continue;
        if (i > 0 && strcmp(w, "--cells") == 0) {
            i++;
            continue;
        }
        bool plain = w[0] && strspn(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./=:,+-") ==
                                 strlen(w);
        if (i) out[n++] = ' ';
        if (plain) {
            memcpy(out + n, w, strlen(w));
            n += strlen(w);
            continue;
        }
        out[n++] = '\'';
        for (const char *c = w; *c; c++) {
            if (*c == '\'') {
                memcpy(out + n, "'\\''", 4);
                n += 4;
            } else {
                out[n++] = *c;
            }
        }
        out[n++] = '\'';
    }
    out[n] = '\0';
    return out;
}

static sim_rc write_cell(void *ctx, const char *json_path, const void *doc, const char *html_path,
                         const srch_sweep *s, const char *title, sim_err *err)
{
    (void)ctx;
    sim_rc rc = cli_write_search_report(html_path, s, title, err);
    if (rc == SIM_OK) rc = rpt_write_json_doc(json_path, doc, "cell summary", err); /* last: it marks the cell finished */
    return rc;
}

int cmd_study(const cli_args *a)
{
    sim_err err = {{0}};
    if (a->nfiles != 1) {
        fprintf(stderr, "heptasim study: give one study file, e.g. heptasim study studies/hypertron.json (see "
                        "docs/study.md)\n");
        return 2;
    }
    stdy_study *st = NULL;
    sim_rc rc = stdy_load(a->files[0], &st, &err);
    for (int i = 0; rc == SIM_OK && i < st->ncells; i++)
        rc = cli_platform_band(&st->cells[i].platform, &st->cells[i].band, &err);
    if (rc != SIM_OK) {
        stdy_free(st);
        return cli_fail(rc, &err);
    }
    int matched = 0;
    for (int i = 0; i < st->ncells; i++) matched += stdy_cell_chosen(a->cells, st->cells[i].slug);
    if (matched == 0) {
        fprintf(stderr, "heptasim study: %s: '--cells %.200s' matches no cell name (see them with --list)\n",
                a->files[0], a->cells);
        stdy_free(st);
        return 2;
    }
    if (a->list) {
        for (int i = 0; i < st->ncells; i++) {
            char cmd[2048];
            stdy_cell_command(st, &st->cells[i], cmd, sizeof cmd);
            bool mine = (a->shard_count <= 1 || i % a->shard_count == a->shard_index) &&
                        stdy_cell_chosen(a->cells, st->cells[i].slug);
            if (mine) printf("%s\t%s\n", st->cells[i].slug, cmd);
        }
        stdy_free(st);
        return 0;
    }
    char dir[CFG_PATH_LEN];
    if (a->out_path)
        sim_strlcpy(dir, a->out_path, sizeof dir);
    else
        snprintf(dir, sizeof dir, "results/studies/%s", st->name);
    char *command = command_line(a);
    stdy_run_request rq = {.study = st, .out_dir = dir, .command = command, .resume = a->resume,
                                 .shard_index = a->shard_index, .shard_count = a->shard_count, .cells = a->cells,
                                 .jobs = cli_jobs(a),
                                 .write_cell = write_cell, .log = a->quiet ? NULL : stderr};
    stdy_result res;
    rc = stdy_run(&rq, &res, &err);
    char path[CFG_PATH_LEN + 16];
    bool table = rc == SIM_OK && a->shard_count <= 1;
    if (table) {
        snprintf(path, sizeof path, "%s/study.md", dir);
        rc = stdy_write_markdown(path, st, &res, command, &err);
    }
    if (table && rc == SIM_OK) {
        void *rows = stdy_rows_json(st, &res);
        snprintf(path, sizeof path, "%s/study.csv", dir);
        rc = rpt_write_csv(path, rows, rpt_study_csv_columns, "study table", &err);
        cJSON_Delete(rows);
    }
    if (rc == SIM_OK && !a->quiet) {
        printf("heptasim study %s: %d cells (%d run, %d finished earlier, %d failed) in %.0f s\n", st->name,
               res.ran + res.skipped + res.failed, res.ran, res.skipped, res.failed, res.wall_s);
        if (table)
            printf("table: %s/study.md, %s/study.csv; cells: %s/cells/\n", dir, dir, dir);
        else
            printf("shard %d/%d done; when every shard is, '%s %s --out %s --resume' writes the table\n",
                   a->shard_index, a->shard_count, "heptasim study", a->files[0], dir);
    }
    if (rc == SIM_OK && res.failed > 0) {
        const char *first = "";
        for (int i = 0; i < res.nrows && !first[0]; i++)
            if (res.rows[i].state == STDY_FAILED) first = res.rows[i].error;
        rc = sim_fail(&err, SIM_EINTERNAL,
                      "heptasim study: %d of %d cells failed (first: %.400s); '--resume' runs them again", res.failed,
                      res.ran + res.skipped + res.failed, first);
    }
    stdy_result_free(&res);
    stdy_free(st);
    free(command);
    return rc == SIM_OK ? 0 : cli_fail(rc, &err);
}
