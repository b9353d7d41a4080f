/* footprint.c - what replaying a step costs this machine, and the refusal
 * of a step too large to replay (run.c's eng_replay_check applies it to a
 * plan).
 *
 * The cost is counted on what the engine really builds: every device of
 * the platform is a SimGrid host with its links and routes (in a run
 * reduced to classes without replicas, the simulated ranks' devices
 * alone: platform.c leaves the others out), but only the simulated ranks (one per exact class of alike ranks, one data-parallel
 * replica with ENG_SYM_DP: symmetry.c decides) get actors, stacks and
 * mirrors (one per plane their class's own flows take).  The per-item sizes are the measured ones of engine.h. */
#include "internal.h"

#include <stdio.h>
#include <sys/resource.h>
#include <unistd.h>

/* Bytes this process may use, read once: physical memory, lowered by a
 * cgroup (v2) memory.max; *address gets the address-space limit (ulimit
 * -v), 0 when there is none. */
static double host_memory_bytes(double *address)
{
    static bool known;
    static double memory, as_limit;
    if (!known) {
        long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
        memory = pages > 0 && page > 0 ? (double)pages * (double)page : 0;
        FILE *f = fopen("/sys/fs/cgroup/memory.max", "r");
        double cg;
        if (f) {
            if (fscanf(f, "%lf", &cg) == 1 && cg > 0 && (memory == 0 || cg < memory)) memory = cg;
            fclose(f);
        }
        struct rlimit rl;
        as_limit = getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY ? (double)rl.rlim_cur : 0;
        known = true;
    }
    *address = as_limit;
    return memory;
}

static const char *origin(const char *path, const char *kind)
{
    return path && path[0] ? path : kind;
}

void eng_footprint_of(const eng_sim *sim, eng_footprint *out)
{
    const eng_workload *w = sim->w;
    int stand_for = sim->lockstep * sim->replicas;
    double ranks = sim->world / stand_for;
    double devices = sim->rep && sim->replicas == 1 ? ranks : sim->p->devices;
    double mirrors = ranks * __builtin_popcount(sim->mirrors & (ENG_MIRROR_FABRIC | ENG_MIRROR_NIC_ANY));
    out->devices = sim->world;
    out->ranks_simulated = sim->world / stand_for;
    out->lockstep = sim->lockstep;
    out->replicas = sim->replicas;
    out->layer_steps = 0;
    if (w->model && w->strategy)
        out->layer_steps = (long long)out->ranks_simulated * cfg_micro_batches(w->strategy) *
                           cfg_layers_per_stage(w->model, w->strategy);
    out->resident_bytes = ENG_BASE_RESIDENT_BYTES + devices * ENG_DEVICE_RESIDENT_BYTES +
                          ranks * ENG_RANK_RESIDENT_BYTES + mirrors * ENG_MIRROR_RESIDENT_BYTES;
    out->address_bytes = ENG_BASE_ADDRESS_BYTES + devices * ENG_DEVICE_ADDRESS_BYTES +
                         ranks * ENG_RANK_ADDRESS_BYTES + mirrors * ENG_MIRROR_ADDRESS_BYTES;
}

sim_rc eng_footprint_check(const eng_footprint *fp, const cfg_platform *p, const cfg_model *m,
                           const cfg_strategy *s, sim_err *err)
{
    char of[96] = "";
    if (fp->ranks_simulated < fp->devices) snprintf(of, sizeof of, " simulated of %d devices", fp->devices);
    if (fp->layer_steps > ENG_MAX_LAYER_STEPS)
        return sim_fail(err, SIM_EINVAL,
                        "%s: .global_batch: %d ranks%s x %d micro-batches x %d layers per stage = %.3g layer steps to "
                        "simulate (about %.2g instructions), more than the limit of %lld (lower global_batch or raise "
                        "micro_batch, or simulate fewer layers or devices)",
                        origin(s->path, "strategy"), fp->ranks_simulated, of, cfg_micro_batches(s),
                        cfg_layers_per_stage(m, s), (double)fp->layer_steps,
                        (double)fp->layer_steps * ENG_INSTR_PER_LAYER_STEP, ENG_MAX_LAYER_STEPS);
    if (fp->ranks_simulated < fp->devices)
        snprintf(of, sizeof of, " for its %d simulated ranks", fp->ranks_simulated);
    double address;
    double memory = host_memory_bytes(&address);
    const char *f = origin(p->path, "platform");
    if (memory > 0 && fp->resident_bytes > memory)
        return sim_fail(err, SIM_EINVAL,
                        "%s: .devices: simulating %d devices needs about %.1f GiB of memory%s, more than the %.1f GiB "
                        "of this machine (simulate fewer devices, e.g. with --devices)",
                        f, fp->devices, fp->resident_bytes / SIM_GIB, of, memory / SIM_GIB);
    if (address > 0 && fp->address_bytes > address)
        return sim_fail(err, SIM_EINVAL,
                        "%s: .devices: simulating %d devices needs about %.1f GiB of address space%s, more than the "
                        "%.1f GiB the process may use (ulimit -v; simulate fewer devices, e.g. with --devices)",
                        f, fp->devices, fp->address_bytes / SIM_GIB, of, address / SIM_GIB);
    return SIM_OK;
}
