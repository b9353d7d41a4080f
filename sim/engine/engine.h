/* engine.h - replay the per-rank programs on SimGrid.
 *
 * The only module that includes the SimGrid headers.  The platform JSON becomes a
 * SimGrid XML platform with two network planes per device (supernode fabric
 * and RDMA NIC to a leaf-spine), one actor per rank runs its program (one
 * per class of alike ranks by default, standing for them: see eng_symmetry), and
 * one actor per (rank, async stream) runs the stream's collectives in order.
 * Collectives are concurrent flows playing the phases of the algorithm net
 * picks (net/net.h) plus its latency steps; SimGrid's max-min sharing gives
 * contention.
 *
 * SimGrid runs one simulation per process: eng_run may be called once. */
#ifndef HEPTASIM_ENGINE_H
#define HEPTASIM_ENGINE_H

#include <stdbool.h>
#include <stdio.h>

#include "../workload/workload.h"

/* What one rank did during the step. Times in seconds. */
typedef struct eng_rank_stats {
    int rank;
    double finish_s;                      /* when its program ended */
    double compute_s;                     /* device busy computing */
    double compute_by_phase_s[WL_NPHASES];
    double exposed_comm_s[WL_NDIMS];      /* main actor blocked on comm of that dim (not PP recv) */
    double bubble_s;                      /* main actor blocked in pipeline receives */
    double comm_s[WL_NDIMS];              /* time collectives of that dim were in flight */
    double bytes_sent[WL_NDIMS];          /* bytes this rank injected into the network */
} eng_rank_stats;

typedef struct eng_result {
    double step_time_s;                   /* last rank's finish */
    int critical_rank;                    /* the rank that finished last */
    eng_rank_stats critical;              /* its stats */
    double bytes_total[WL_NDIMS];         /* all ranks */
    long long instructions;               /* program instructions executed by simulated ranks */
    long long flows;                      /* SimGrid comms started */
    int ranks_simulated;                  /* ranks with an actor */
    int lockstep;                         /* ranks one actor stands for exactly (1: none) */
    unsigned lockstep_dims;               /* bits 1u << cfg_dim: coordinates that differ among them */
    int replicas;                         /* data-parallel replicas one stands for (1: none) */
    bool slowest_mate;                    /* approximate: an actor ran at the speed of the slowest rank it
                                           * stands for (--symmetry dp with slow devices or nodes) */
} eng_result;

/* Whether its figures are approximate (--symmetry dp reduced the replicas,
 * or ran an actor at its slowest mate's speed). */
bool eng_result_approximate(const eng_result *r);

/* Called for every instruction of a traced rank when it completes.
 * stream is WL_S_MAIN for the rank actor, else the async stream it ran on. */
typedef void (*eng_trace_fn)(void *ctx, int rank, const wl_instr *in, int stream, double start_s, double end_s);

typedef enum eng_comm_mode {
    ENG_FLOWS = 0, /* one flow per ring edge carrying the whole traffic (default) */
    ENG_STEPS,     /* every ring step is its own comm (checking the flow mode) */
    ENG_NCOMM_MODES
} eng_comm_mode;

/* --comm-mode's names: "flows", "steps" (collective.c). */
extern const sim_enum_name eng_comm_mode_names[ENG_NCOMM_MODES];

/* Which ranks get an actor.  Ranks that run the same program and see the
 * same network (the ranks of a pipeline stage, of a TP group...) finish
 * every instruction at the same times, so by default one rank per class
 * of alike ranks is simulated and stands for the others: exact, see
 * symmetry.c.  Data-parallel replicas that are not provably alike may
 * still be reduced to one on request: an approximation.  The engine falls
 * back to more ranks when the workload does not allow a reduction. */
typedef enum eng_symmetry {
    ENG_SYM_TP = 0, /* one actor per class of alike ranks, exact (default) */
    ENG_SYM_NONE,   /* one actor per rank */
    ENG_SYM_DP,     /* also one data-parallel replica for all (approximate) */
    ENG_NSYMMETRIES
} eng_symmetry;

/* --symmetry's names, as users write them: "tp", "dp", "none" (symmetry.c). */
extern const sim_enum_name eng_symmetry_names[ENG_NSYMMETRIES];
const char *eng_symmetry_name(eng_symmetry sym);

/* Called now and then during a replay (a few times per second of wall
 * time, from the rank actors: see progress.c) with the simulated time it
 * has reached; it must not touch the simulation. */
typedef void (*eng_progress_fn)(void *ctx, double simulated_s);

typedef struct eng_options {
    eng_comm_mode comm_mode;
    eng_symmetry symmetry;
    const char *dump_xml_path;   /* write the generated platform here too (NULL: no) */
    eng_trace_fn trace;          /* NULL: no tracing */
    void *trace_ctx;
    const bool *trace_rank;      /* world-sized; NULL with trace set: every rank */
    eng_progress_fn progress;    /* NULL: no progress reports */
    void *progress_ctx;
} eng_options;

/* The programs to replay (callbacks, see wl_programs) and what the engine
 * may assume of them. eng_run wraps a wl_plan into one. */
typedef struct eng_workload {
    wl_programs progs;
    /* Set when the members of each WL_G_TP group run the same program (peers
     * and groups aside) and the programs use only the group kinds in
     * groups_used (bit 1u << g): lets the engine simulate one per group. */
    bool tp_lockstep;
    unsigned groups_used;
    /* The step the programs come from, for its replay footprint (layer
     * steps, messages); NULL for hand-written programs. */
    const cfg_model *model;
    const cfg_strategy *strategy;
    /* Set when all ranks of a pipeline stage (coordinates of strategy)
     * run the same program, their pipeline peers at the same rank offsets:
     * lets the engine look for larger exact classes (symmetry.c). */
    bool stage_programs;
    /* With stage_programs: the group kinds of the ring collectives and of
     * the all-to-alls (bits 1u << g, see wl_groups_by_kind). */
    unsigned ring_groups, alltoall_groups;
} eng_workload;

/* {=================================================== replay footprint */

/* What replaying a step costs this machine, measured on SimGrid 3.32
 * (x86-64, 1,024 to 16,384 devices, every symmetry): each device of the
 * platform (its host, links and routes) holds about 7 KiB resident and
 * 7 KiB of address space; each simulated rank (its actors and their
 * stacks) about 73 KiB and 280 KiB more; a lockstep rank's mirror (a host,
 * its route and its actor) about 40 KiB and 128 KiB more.  One layer of
 * one micro-batch on one simulated rank (forward and backward) is 28 to 43
 * instructions.  A step of more layer steps than ENG_MAX_LAYER_STEPS
 * (sim_limits.h: about 2^31 instructions, hours of simulation) is
 * refused, and so is one whose simulated ranks would not fit this
 * machine's memory or the process's address space. */
#define ENG_INSTR_PER_LAYER_STEP 32
#define ENG_DEVICE_RESIDENT_BYTES (8.0 * 1024)
#define ENG_DEVICE_ADDRESS_BYTES (8.0 * 1024)
#define ENG_RANK_RESIDENT_BYTES (80.0 * 1024)
#define ENG_RANK_ADDRESS_BYTES (288.0 * 1024)
#define ENG_MIRROR_RESIDENT_BYTES (40.0 * 1024)
#define ENG_MIRROR_ADDRESS_BYTES (128.0 * 1024)
#define ENG_BASE_RESIDENT_BYTES (64.0 * 1024 * 1024)
#define ENG_BASE_ADDRESS_BYTES (256.0 * 1024 * 1024)

typedef struct eng_footprint {
    int devices;                  /* ranks of the step */
    int ranks_simulated;          /* ranks with an actor, as eng_run decides them (see eng_symmetry) */
    int lockstep;                 /* TP group members one simulated rank stands for (1: none) */
    int replicas;                 /* data-parallel replicas one stands for (1: none) */
    long long layer_steps;        /* ranks_simulated x micro-batches x layers of the largest stage
                                   * (0 for hand-written programs) */
    double resident_bytes;        /* memory the replay needs, about */
    double address_bytes;         /* address space it needs, about */
} eng_footprint;

/* The footprint of replaying plan on p with opt (NULL: the defaults),
 * with the simulated ranks eng_run would choose.  Builds no simulation. */
void eng_replay_footprint(const cfg_platform *p, const wl_plan *plan, const eng_options *opt, eng_footprint *out);

/* Refuses a step too large to replay on this machine (eng_run does it
 * too, before starting SimGrid): SIM_EINVAL naming the strategy's
 * .global_batch when it has more than ENG_MAX_LAYER_STEPS layer steps, or
 * the platform's .devices when the simulated ranks need more memory than
 * the host has (physical memory, lowered by a cgroup memory.max) or more
 * address space than ulimit -v allows.  SIM_OK otherwise. */
sim_rc eng_replay_check(const cfg_platform *p, const wl_plan *plan, const eng_options *opt, sim_err *err);

/* }=================================================== */

/* Add a SimGrid option ("--cfg=KEY:VALUE" or "--log=SPEC", e.g.
 * "--log=heptasim_engine.thres:debug") for the simulation of this process;
 * it is applied after the engine's own settings, so it can override them.
 * The string is copied. Returns SIM_EINVAL for anything else, or after 16
 * options. */
sim_rc eng_simgrid_option(const char *arg, sim_err *err);

/* Write the SimGrid XML of the platform (hosts npu<i>, in supernode zones). */
sim_rc eng_platform_xml(const cfg_platform *p, FILE *out, sim_err *err);

/* One route of the generated platform, as SimGrid computes it. */
typedef struct eng_route {
    char links[256];              /* link names in order, space separated ("fab0_UP fab1_DOWN") */
    double latency_s;             /* sum of the link latencies */
    double bandwidth_bytes_per_s; /* the smallest link bandwidth */
} eng_route;

/* Routes of the platform of p from device src[i] to device dst[i], i < n,
 * into out[i]. Loads the platform and runs a one-actor simulation (routes
 * are final once the platform is sealed), so it uses the process's one
 * simulation, like eng_run. */
sim_rc eng_routes(const cfg_platform *p, int n, const int *src, const int *dst, eng_route *out, sim_err *err);

/* Simulate one training step of plan on platform p. opt may be NULL for the
 * defaults. Fills res. Returns SIM_EINVAL for a step too large to replay
 * here (eng_replay_check), SIM_EINTERNAL with a message if the simulation
 * deadlocks or SimGrid fails. */
sim_rc eng_run(const cfg_platform *p, const wl_plan *plan, const eng_options *opt, eng_result *res, sim_err *err);
sim_rc eng_run_workload(const cfg_platform *p, const eng_workload *w, const eng_options *opt, eng_result *res,
                        sim_err *err);

#endif
