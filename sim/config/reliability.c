/* reliability.c - reading reliability files (reliability/NAME.json) through
 * the schema tables: unknown keys with "did you mean", bounds, required
 * keys, one line per error. */
#include "reliability.h"

#include <stdlib.h>
#include <string.h>

#include "config_int.h"

/* ORDER CFG_REL_UNIT */
static const char *const cfg_rel_unit_names[] = {"device", "node", "job", NULL};

const char *cfg_rel_unit_name(cfg_rel_unit u)
{
    return (u >= 0 && u < CFG_NREL_UNITS) ? cfg_rel_unit_names[u] : "?";
}

/* failures per 1000 unit-days -> per unit-second */
#define PER_1000_DAYS (1.0 / (1000.0 * 86400.0))
#define REQ CFG_KF_REQUIRED

static const cfg_key component_rows[] = {
    ROW_STR("name", cfg_rel_component, name, REQ),
    ROW_ENUM("per", cfg_rel_component, unit, cfg_rel_unit_names, NULL, "device"),
    ROW_DBL("failures_per_1000_days", cfg_rel_component, rate_per_s, 0, 1e6, 0, PER_1000_DAYS, REQ),
    ROW_BOOL("hardware", cfg_rel_component, hardware, 1),
    ROW_STR("source", cfg_rel_component, source, REQ),
    ROW_END,
};

static const cfg_key recovery_rows[] = {
    ROW_DBL("detection_min", cfg_reliability, detection_s, 0, 1e5, 0, 60, REQ),
    ROW_DBL("restart_min", cfg_reliability, restart_s, 0, 1e5, 0, 60, REQ),
    ROW_STR("source", cfg_reliability, recovery_source, REQ),
    ROW_END,
};

static const cfg_key maintenance_rows[] = {
    ROW_DBL("interval_h", cfg_reliability, maintenance_interval_s, 0, 1e6, 0, 3600, REQ),
    ROW_DBL("downtime_min", cfg_reliability, maintenance_downtime_s, 0, 1e5, 0, 60, 0),
    ROW_STR("source", cfg_reliability, maintenance_source, REQ),
    ROW_END,
};

static const cfg_key straggler_rows[] = {
    ROW_ENUM("kind", cfg_rel_straggler, kind, cfg_straggler_kind_names, NULL, "device"),
    ROW_DBL("per_1000", cfg_rel_straggler, per_1000, 0, 1000, 0, 1, REQ),
    ROW_DBL("speed", cfg_rel_straggler, speed, CFG_STRAGGLER_SPEED_MIN, 1, 0, 1, REQ),
    ROW_STR("source", cfg_rel_straggler, source, REQ),
    ROW_END,
};

static const cfg_key reliability_rows[] = {
    ROW_STR("name", cfg_reliability, name, CFG_KF_DERIVED),
    ROW_STR("description", cfg_reliability, description, 0),
    ROW_STR("calibration", cfg_reliability, calibration, 0),
    {.key = "components", .type = CFG_K_LIST, .flags = REQ, .offset = offsetof(cfg_reliability, components),
     .size = sizeof(cfg_rel_component), .max = CFG_MAX_REL_COMPONENTS,
     .count = offsetof(cfg_reliability, ncomponents), .sub = component_rows},
    ROW_OBJ("recovery", cfg_reliability, detection_s, recovery_rows, REQ),
    ROW_OBJ("maintenance", cfg_reliability, maintenance_interval_s, maintenance_rows, 0),
    {.key = "stragglers", .type = CFG_K_LIST, .flags = CFG_KF_OMIT_ZERO, .offset = offsetof(cfg_reliability, stragglers),
     .size = sizeof(cfg_rel_straggler), .max = CFG_MAX_REL_STRAGGLERS,
     .count = offsetof(cfg_reliability, nstragglers), .sub = straggler_rows},
    ROW_END,
};

sim_rc cfg_parse_reliability(const char *json, const char *origin, cfg_reliability *out, sim_err *err)
{
    cJSON *root = cfg_parse_json(json, origin, err);
    if (!root) return cfg_one_line(SIM_EINVAL, err);
    cfg_reader r;
    cfg_reader_init(&r, origin, err);
    cfg_reliability *rel = sim_xcalloc(1, sizeof *rel);
    sim_rc rc = cfg_schema_read(&r, reliability_rows, root, rel);
    cJSON_Delete(root);
    cfg_reader_free(&r);
    for (int i = 0; rc == SIM_OK && i < rel->ncomponents; i++)
        for (int j = 0; j < i; j++)
            if (strcmp(rel->components[i].name, rel->components[j].name) == 0) {
                rc = sim_fail(err, SIM_EINVAL, "%s: .components[%d].name: '%s' is also .components[%d] (name each "
                              "cause once)", origin, i, rel->components[i].name, j);
                break;
            }
    if (rc == SIM_OK && rel->maintenance_interval_s > 0 && rel->maintenance_interval_s < 60)
        rc = sim_fail(err, SIM_EINVAL, "%s: .maintenance.interval_h: shorter than a minute (give 0 for none, or "
                      "hours between planned stops)", origin);
    if (rc == SIM_OK) {
        if (!rel->name[0]) cfg_default_name(origin, rel->name, sizeof rel->name);
        sim_strlcpy(rel->path, origin, sizeof rel->path);
        *out = *rel;
    }
    free(rel);
    return cfg_one_line(rc, err);
}

sim_rc cfg_load_reliability(const char *name_or_path, cfg_reliability *out, sim_err *err)
{
    char path[CFG_PATH_LEN];
    char *text = NULL;
    sim_rc rc = cfg_resolve("reliability", name_or_path, path, sizeof path, err);
    if (rc == SIM_OK) rc = sim_read_text(path, CFG_MAX_FILE_BYTES, "a config file", &text, err);
    if (rc == SIM_OK) rc = cfg_parse_reliability(text, path, out, err);
    free(text);
    return rc;
}

double cfg_rel_component_rate(const cfg_rel_component *c, int devices, int devices_per_node)
{
    switch (c->unit) {
    case CFG_REL_DEVICE: return c->rate_per_s * devices;
    case CFG_REL_NODE: return c->rate_per_s * (double)devices / (devices_per_node > 0 ? devices_per_node : 1);
    default: return c->rate_per_s;
    }
}
