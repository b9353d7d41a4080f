/* run.c - one simulated training step: SimGrid set-up, the platform, one
 * actor per rank, the run, and the per-rank statistics turned into a
 * result; and the checks of a plan before its replay (eng_replay_check).
 *
 * Reads like a SimGrid example: init with our configuration (CM02 network
 * model without correction factors, small actor stacks, SimGrid's own
 * messages silenced), load the generated platform, start the actors, run,
 * read the clock.  SimGrid allows one simulation per process. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <simgrid/actor.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/link.h>
#include <xbt/dynar.h>
#include <xbt/log.h>

XBT_LOG_EXTERNAL_DEFAULT_CATEGORY(heptasim_engine);

/* Actor stacks, in KiB: our actors are shallow, and a 16k-rank run has tens
 * of thousands of them. */
#ifndef ENG_STACK_KIB
#define ENG_STACK_KIB "128"
#endif

static bool eng_used; /* SimGrid was initialised in this process */

static char *eng_options_extra[ENG_MAX_OPTIONS]; /* from eng_simgrid_option */
static int eng_noptions;

/* Records a --cfg/--log option for simgrid_init; returns SIM_EINVAL for
 * anything else or when the table is full. */
sim_rc eng_simgrid_option(const char *arg, sim_err *err)
{
    if (!arg || (strncmp(arg, "--cfg=", 6) != 0 && strncmp(arg, "--log=", 6) != 0) || strlen(arg) < 7)
        return sim_fail(err, SIM_EINVAL, "simgrid option '%s': expected --cfg=KEY:VALUE or --log=SPEC",
                        arg ? arg : "(null)");
    if (eng_noptions == ENG_MAX_OPTIONS)
        return sim_fail(err, SIM_EINVAL, "simgrid option '%s': at most %d options", arg, ENG_MAX_OPTIONS);
    eng_options_extra[eng_noptions++] = sim_xstrdup(arg);
    return SIM_OK;
}

/* {========================================================== set-up */

/* Starts SimGrid with our configuration for platform p. */
static void simgrid_start(const cfg_platform *p)
{
    /* simgrid_init consumes the --cfg/--log arguments it understands. */
    static char a0[] = "heptasim";
    static char c1[] = "--cfg=network/model:CM02";
    static char c2[] = "--cfg=network/latency-factor:1";
    static char c3[] = "--cfg=network/bandwidth-factor:1";
    static char c4[] = "--cfg=network/crosstraffic:0";
    static char c5[] = "--cfg=network/weight-S:0";
    static char c6[] = "--cfg=network/TCP-gamma:0";
    static char c7[] = "--cfg=contexts/stack-size:" ENG_STACK_KIB;
    static char c8[] = "--cfg=contexts/guard-size:0";
    /* The lazy update of flow rates got a transfer wrong (far too fast) on a
     * 2048-device pipeline; the full update agrees with the closed forms. */
    static char c9[] = "--cfg=network/optim:Full";
    /* ... but re-solve only the sharing of the links whose flows changed:
     * the same rates (max-min sharing decomposes over the components of
     * the flow-link graph), without re-solving every flow of the step at
     * each event (a reduced run's classes keep most flows to their own
     * links: five times faster on an expert-parallel step) */
    static char c10[] = "--cfg=network/maxmin-selective-update:yes";
    /* ... except on a network with tiers, where SimGrid 3.32's selective
     * update gets rates wrong: the flows through tier uplinks that many
     * devices share (a rail-optimised 128-GPU step lost 42 us of a 2 MiB
     * pipeline transfer, and with uplinks of twice their NICs' bandwidth
     * the whole step came out 0.05 % short) */
    static char c10_full[] = "--cfg=network/maxmin-selective-update:no";
    static char l1[] = "--log=root.thres:warning";
    static char l2[] = "--log=root.fmt:%m%n";
    /* deadlocks are reported by us, in one line */
    static char l3[] = "--log=ker_engine.app:file:/dev/null";
    char *argv[15 + ENG_MAX_OPTIONS] = {a0, c1, c2, c3, c4, c5, c6, c7, c8, c9, net_tiers(p) > 0 ? c10_full : c10,
                                        l1, l2, l3};
    int argc = 14;
    for (int i = 0; i < eng_noptions; i++) argv[argc++] = eng_options_extra[i];
    argv[argc] = NULL;
    simgrid_init(&argc, argv);
    for (int i = 0; i < eng_noptions; i++) {
        free(eng_options_extra[i]);
        eng_options_extra[i] = NULL;
    }
    eng_noptions = 0;
}

/* The platform to load: p, or for a reduced run (sim not NULL) with its
 * mirrors and shared-link shares (see symmetry.c). */
static sim_rc platform_xml(const cfg_platform *p, const eng_sim *sim, FILE *out, sim_err *err)
{
    if (!sim || !sim->rep) return eng_platform_xml(p, out, err);
    /* reduced replicas send their own data-parallel traffic: shared links
     * only carry one flow for the lockstep TP group */
    unsigned only = sim->replicas == 1 ? ENG_ONLY_SIMULATED : 0u;
    return eng_platform_xml_for(p, sim->rep, sim->world, sim->mirrors | only, sim->lockstep, sim->up_share,
                                sim->down_share, &sim->tiers, out, err);
}

/* Writes the platform into a new temporary file whose name goes to path
 * (capacity cap); the caller unlinks it. */
static sim_rc write_temp_platform(const cfg_platform *p, const eng_sim *sim, char *path, size_t cap, sim_err *err)
{
    const char *dir = getenv("TMPDIR");
    if (!dir || !*dir) dir = "/tmp";
    snprintf(path, cap, "%s/heptasim-platform-XXXXXX", dir);
    int fd = mkstemp(path);
    if (fd < 0)
        return sim_fail(err, SIM_EIO, "%s: cannot create the platform file (set TMPDIR to a writable directory)",
                        path);
    FILE *f = fdopen(fd, "w");
    if (!f) {
        close(fd);
        unlink(path);
        return sim_fail(err, SIM_EIO, "%s: cannot write the platform file", path);
    }
    sim_rc rc = platform_xml(p, sim, f, err);
    if (rc == SIM_EIO) rc = sim_fail(err, SIM_EIO, "%s: cannot write the platform file (disk full?)", path);
    if (fclose(f) != 0 && rc == SIM_OK)
        rc = sim_fail(err, SIM_EIO, "%s: cannot write the platform file (disk full?)", path);
    if (rc != SIM_OK) unlink(path);
    return rc;
}

static sim_rc dump_platform(const cfg_platform *p, const eng_sim *sim, const char *path, sim_err *err)
{
    sim_out o;
    sim_rc rc = sim_out_open(&o, path, "platform XML", err);
    if (rc == SIM_OK) rc = platform_xml(p, sim, o.f, err);
    if (rc == SIM_EIO)
        rc = sim_fail(err, SIM_EIO, "%s: cannot write the platform XML (check disk space and permissions)", path);
    if (rc == SIM_OK) return sim_out_commit(&o, err);
    sim_out_discard(&o);
    return rc;
}

/* Initialises SimGrid and loads the platform of p for sim (NULL: the plain
 * platform), also written to dump_path when not NULL.  Fails with
 * SIM_EINTERNAL on a second call in the process. */
static sim_rc boot(const cfg_platform *p, const eng_sim *sim, const char *dump_path, sim_err *err)
{
    if (eng_used)
        return sim_fail(err, SIM_EINTERNAL,
                        "engine: SimGrid runs one simulation per process (run each simulation in its own process)");
    char tmp[4096];
    sim_rc rc = write_temp_platform(p, sim, tmp, sizeof tmp, err);
    if (rc != SIM_OK) return rc;
    if (dump_path) {
        rc = dump_platform(p, sim, dump_path, err);
        if (rc != SIM_OK) {
            unlink(tmp);
            return rc;
        }
    }
    eng_used = true;
#ifdef __GLIBC__
    /* Actor stacks are calloc'ed: keep them in fresh mmap'ed (zero) pages,
     * which stay untouched until used, instead of heap memory that calloc
     * must clear.  glibc raises the threshold on its own otherwise. */
    mallopt(M_MMAP_THRESHOLD, 64 * 1024);
#endif
    simgrid_start(p);
    simgrid_load_platform(tmp);
    unlink(tmp);
    return SIM_OK;
}

/* }========================================================== */

/* {========================================================== results */

static void describe(const eng_rank *r, char *out, size_t cap)
{
    const wl_instr *in = &r->cur;
    if (!r->started) {
        snprintf(out, cap, "rank %d never started", r->rank);
        return;
    }
    if (r->draining) {
        snprintf(out, cap, "rank %d waiting for its streams after its last instruction (%lld)", r->rank, r->pc);
        return;
    }
    char what[96];
    switch ((wl_op)in->op) {
    case WL_COMPUTE: snprintf(what, sizeof what, "compute"); break;
    case WL_COLL:
        snprintf(what, sizeof what, "%s on %s, stream %d", wl_coll_name((wl_coll)in->coll),
                 wl_group_name((wl_group)in->group), in->stream);
        break;
    case WL_SEND: snprintf(what, sizeof what, "send to rank %d", in->peer); break;
    case WL_RECV: snprintf(what, sizeof what, "recv from rank %d", in->peer); break;
    case WL_WAIT: snprintf(what, sizeof what, "wait for %u ops of stream %d", in->seq, in->stream); break;
    default: snprintf(what, sizeof what, "op %d", in->op); break;
    }
    snprintf(out, cap, "rank %d at instruction %lld, %s", r->rank, r->pc, what);
}

static sim_rc collect(const eng_sim *sim, eng_result *res, sim_err *err)
{
    if (sim->failed) return sim_fail(err, SIM_EINTERNAL, "simulation failed: %s", sim->fail_msg);
    int stuck = 0, first = -1;
    for (int i = 0; i < sim->world; i++)
        if (!sim->ranks[i].done) {
            if (first < 0) first = i;
            stuck++;
        }
    if (stuck > 0) {
        char where[256];
        describe(&sim->ranks[first], where, sizeof where);
        return sim_fail(err, SIM_EINTERNAL, "simulation deadlocked: %d rank%s did not finish (first: %s)", stuck,
                        stuck == 1 ? "" : "s", where);
    }
    memset(res, 0, sizeof *res);
    int crit = 0;
    for (int i = 0; i < sim->world; i++) {
        const eng_rank *r = &sim->ranks[i];
        if (r->st.finish_s > sim->ranks[crit].st.finish_s) crit = i;
        for (int d = 0; d < WL_NDIMS; d++) res->bytes_total[d] += r->st.bytes_sent[d];
        res->instructions += r->instructions;
        res->flows += r->flows;
    }
    res->ranks_simulated = sim->world / (sim->lockstep * sim->replicas);
    res->lockstep = sim->lockstep;
    res->lockstep_dims = sim->lockstep_dims;
    res->replicas = sim->replicas;
    res->slowest_mate = sim->slowest_mate;
    res->critical_rank = crit;
    res->critical = sim->ranks[crit].st;
    res->step_time_s = res->critical.finish_s;
    return SIM_OK;
}

/* }========================================================== */

void eng_sim_release(eng_sim *sim)
{
    if (sim->ranks)
        for (int i = 0; i < sim->world; i++) eng_rank_release(&sim->ranks[i]);
    free(sim->ranks);
    free(sim->hosts);
    free(sim->rep);
    free(sim->mates);
    free(sim->detours);
    free(sim->up_share);
    free(sim->down_share);
    free(sim->scratch);
    free(sim->sn_count);
}

void eng_sim_init(eng_sim *sim, const cfg_platform *p, const eng_workload *w, const eng_options *opt)
{
    memset(sim, 0, sizeof *sim);
    sim->p = p;
    sim->w = w;
    if (opt) sim->opt = *opt;
    sim->world = w->progs.world;
    sim->nsn = net_supernodes(p);
    sim->eff = net_efficiency(p);
    sim->scratch = sim_xcalloc((size_t)sim->world, sizeof *sim->scratch);
    sim->sn_count = sim_xcalloc((size_t)sim->nsn, sizeof *sim->sn_count);
    eng_symmetry_plan(sim);
}

/* Simulates one step of the programs of w on platform p (rank i on device
 * i; w->progs.world <= p->devices).  opt may be NULL.  Fills *res and returns
 * SIM_OK; SIM_EINVAL for unusable input or a step too large to replay
 * here; SIM_EIO when the platform file cannot be written; SIM_EINTERNAL
 * when called twice in a process, when a program is invalid, or when the
 * simulation deadlocks (the message names the first rank that did not
 * finish and its instruction).  Nothing is kept after the call but
 * SimGrid's own globals. */
sim_rc eng_run_workload(const cfg_platform *p, const eng_workload *w, const eng_options *opt, eng_result *res,
                        sim_err *err)
{
    if (!p || !w || !res) return sim_fail(err, SIM_EINVAL, "engine: missing platform, workload or result");
    sim_rc rc = wl_programs_check(&w->progs, p, "engine", err);
    if (rc != SIM_OK) return rc;
    eng_workload seen;
    eng_progress_wrap(w, opt, &seen);
    eng_sim sim;
    eng_sim_init(&sim, p, &seen, opt);
    eng_footprint fp;
    eng_footprint_of(&sim, &fp);
    rc = eng_footprint_check(&fp, p, w->model, w->strategy, err);
    if (rc == SIM_OK) rc = boot(p, &sim, opt ? opt->dump_xml_path : NULL, err);
    if (rc != SIM_OK) {
        eng_sim_release(&sim);
        return rc;
    }

    sim.ranks = sim_xcalloc((size_t)sim.world, sizeof *sim.ranks);
    sim.hosts = eng_device_hosts(sim.world);
    for (int i = 0; i < sim.world; i++) {
        eng_rank *r = &sim.ranks[i];
        r->rank = i;
        r->sim = &sim;
        r->st.rank = i;
        r->host = sim.hosts[i];
        r->speed = cfg_device_speed(p, i);
        r->traced = sim.opt.trace && (!sim.opt.trace_rank || sim.opt.trace_rank[i]);
    }
    eng_symmetry_start(&sim);
    for (int i = 0; i < sim.world; i++)
        if (!sim.rep || sim.rep[i] == i) eng_rank_start(&sim.ranks[i]);

    simgrid_run();
    XBT_DEBUG("simulation ended at %g s", simgrid_get_clock());

    eng_symmetry_spread(&sim);
    rc = collect(&sim, res, err);
    eng_sim_release(&sim);
    return rc;
}

bool eng_result_approximate(const eng_result *r)
{
    return r->replicas > 1 || r->slowest_mate;
}

/* {========================================================== routes */

typedef struct route_job {
    int devices;
    int n;
    const int *src, *dst;
    eng_route *out;
} route_job;

static void route_actor(int argc, char *argv[])
{
    (void)argc;
    (void)argv;
    route_job *job = sg_actor_self_get_data();
    sg_host_t *hosts = eng_device_hosts(job->devices);
    xbt_dynar_t links = xbt_dynar_new(sizeof(sg_link_t), NULL);
    for (int i = 0; i < job->n; i++) {
        sg_host_t ha = hosts[job->src[i]], hb = hosts[job->dst[i]];
        eng_route *o = &job->out[i];
        xbt_dynar_reset(links);
        sg_host_get_route(ha, hb, links);
        size_t len = 0;
        o->links[0] = '\0';
        for (unsigned long k = 0; k < xbt_dynar_length(links); k++) {
            sg_link_t l = xbt_dynar_get_as(links, k, sg_link_t);
            int w = snprintf(o->links + len, sizeof o->links - len, "%s%s", k ? " " : "", sg_link_get_name(l));
            if (w < 0 || (size_t)w >= sizeof o->links - len) break;
            len += (size_t)w;
        }
        o->latency_s = sg_host_get_route_latency(ha, hb);
        o->bandwidth_bytes_per_s = sg_host_get_route_bandwidth(ha, hb);
    }
    xbt_dynar_free(&links);
    free(hosts);
}

/* Fills out[i] with the route src[i] -> dst[i] of p's platform. Returns
 * SIM_EINVAL for a device outside the platform, else as eng_run. */
sim_rc eng_routes(const cfg_platform *p, int n, const int *src, const int *dst, eng_route *out, sim_err *err)
{
    if (!p || n < 0 || (n > 0 && (!src || !dst || !out)))
        return sim_fail(err, SIM_EINVAL, "engine: eng_routes needs a platform and n pairs");
    for (int i = 0; i < n; i++)
        if (src[i] < 0 || src[i] >= p->devices || dst[i] < 0 || dst[i] >= p->devices)
            return sim_fail(err, SIM_EINVAL, "engine: route %d: devices %d -> %d outside [0, %d)", i, src[i], dst[i],
                            p->devices);
    memset(out, 0, (size_t)n * sizeof *out);
    sim_rc rc = boot(p, NULL, NULL, err);
    if (rc != SIM_OK) return rc;
    route_job job = {p->devices, n, src, dst, out};
    sg_actor_t a = sg_actor_init("routes", sg_host_by_name("npu0"));
    sg_actor_set_data(a, &job);
    sg_actor_start(a, route_actor, 0, NULL);
    simgrid_run();
    return SIM_OK;
}

/* }========================================================== */

/* {========================================================== wl_plan */

void eng_plan_workload(const wl_plan *plan, eng_workload *w)
{
    unsigned ring, alltoall;
    wl_groups_by_kind(plan, &ring, &alltoall);
    *w = (eng_workload){
        .ring_groups = ring,
        .alltoall_groups = alltoall,
        .progs = wl_plan_programs(plan),
        .tp_lockstep = true,
        .groups_used = wl_groups_used(plan),
        .stage_programs = true,
        .model = wl_model(plan),
        .strategy = wl_strategy(plan),
    };
}

void eng_replay_footprint(const cfg_platform *p, const wl_plan *plan, const eng_options *opt, eng_footprint *out)
{
    eng_workload w;
    eng_plan_workload(plan, &w);
    eng_sim sim;
    eng_sim_init(&sim, p, &w, opt);
    eng_footprint_of(&sim, out);
    eng_sim_release(&sim);
}

sim_rc eng_replay_check(const cfg_platform *p, const wl_plan *plan, const eng_options *opt, sim_err *err)
{
    eng_footprint fp;
    eng_replay_footprint(p, plan, opt, &fp);
    return eng_footprint_check(&fp, p, wl_model(plan), wl_strategy(plan), err);
}

/* Simulates one step of plan on p: eng_run_workload over the plan's
 * programs and groups. Same returns. */
sim_rc eng_run(const cfg_platform *p, const wl_plan *plan, const eng_options *opt, eng_result *res, sim_err *err)
{
    if (!plan) return sim_fail(err, SIM_EINVAL, "engine: no workload plan");
    eng_workload w;
    eng_plan_workload(plan, &w);
    return eng_run_workload(p, &w, opt, res, err);
}

/* }========================================================== */
