/* reliability.h - the reliability model of a cluster (reliability/NAME.json):
 * failure rates per component, recovery and maintenance times, the
 * distribution of slow parts (stragglers), every figure with its source.
 *
 * Rates are stored per second of wall clock per unit (a device, a node,
 * or the whole job), whatever the JSON unit (failures per 1000 unit-days).
 * Every error is one line that names the file, the key and the fix, and
 * the loader returns SIM_EINVAL (bad input, exit status 2).
 * docs/goodput.md describes the file. */
#ifndef HEPTASIM_CONFIG_RELIABILITY_H
#define HEPTASIM_CONFIG_RELIABILITY_H

#include "config.h"

#define CFG_MAX_REL_COMPONENTS 32   /* failure causes of one reliability file */
#define CFG_MAX_REL_STRAGGLERS 8    /* kinds of slow parts of one reliability file */

/* What a failure rate counts: per device, per node (every device of the
 * platform's node), or per job whatever its size.  ORDER CFG_REL_UNIT:
 * cfg_rel_unit_names in reliability.c. */
typedef enum cfg_rel_unit { CFG_REL_DEVICE = 0, CFG_REL_NODE, CFG_REL_JOB, CFG_NREL_UNITS } cfg_rel_unit;

typedef struct cfg_rel_component {
    char name[CFG_NAME_LEN];       /* "gpu", "gpu_hbm", "network_switch_cable" */
    int unit;                      /* cfg_rel_unit */
    double rate_per_s;             /* failures per unit per second (JSON: per 1000 unit-days) */
    bool hardware;                 /* a hardware cause (for the report's hardware share) */
    char source[CFG_TEXT_LEN];
} cfg_rel_component;

/* A kind of slow part: on average per_1000 of every 1000 units (devices,
 * or nodes for kind node, or NIC links) run at speed times the others'. */
typedef struct cfg_rel_straggler {
    int kind;                      /* cfg_straggler_kind */
    double per_1000;               /* expected slow units per 1000 */
    double speed;                  /* (0, 1] */
    char source[CFG_TEXT_LEN];
} cfg_rel_straggler;

typedef struct cfg_reliability {
    char name[CFG_NAME_LEN];
    char description[CFG_TEXT_LEN];
    char calibration[CFG_TEXT_LEN];  /* what the rates were fitted to */
    char path[CFG_PATH_LEN];
    int ncomponents;
    cfg_rel_component components[CFG_MAX_REL_COMPONENTS];
    double detection_s;              /* from a failure to the job knowing of it */
    double restart_s;                /* from then to the processes up again (before the reload) */
    char recovery_source[CFG_TEXT_LEN];
    double maintenance_interval_s;   /* planned stops: one every this long; 0: none */
    double maintenance_downtime_s;   /* the job stopped for each, besides restart and reload */
    char maintenance_source[CFG_TEXT_LEN];
    int nstragglers;
    cfg_rel_straggler stragglers[CFG_MAX_REL_STRAGGLERS];
} cfg_reliability;

/* Read reliability file name_or_path (a path, or NAME for
 * <data>/reliability/NAME.json) into *out (written only on success). */
sim_rc cfg_load_reliability(const char *name_or_path, cfg_reliability *out, sim_err *err);
/* The same from JSON text; origin names it in messages. */
sim_rc cfg_parse_reliability(const char *json, const char *origin, cfg_reliability *out, sim_err *err);
/* The unit's name as written in JSON ("device", "node", "job"). */
const char *cfg_rel_unit_name(cfg_rel_unit u);
/* Failures per second of component c for a job of `devices` devices on
 * nodes of devices_per_node devices. */
double cfg_rel_component_rate(const cfg_rel_component *c, int devices, int devices_per_node);

#endif
