/* programs.c - a plan's programs as the callbacks the engine and the replayer run. */
#include "internal.h"

static void *plan_program_new(void *ctx, int rank) { return wl_program_new((const wl_plan *)ctx, rank); }
static bool plan_program_next(void *prog, wl_instr *out) { return wl_program_next((wl_program *)prog, out); }
static void plan_program_free(void *prog) { wl_program_free((wl_program *)prog); }

static int plan_group_members(void *ctx, int rank, wl_group g, int *members, int *my_index)
{
    return wl_group_members((const wl_plan *)ctx, rank, g, members, my_index);
}

wl_programs wl_plan_programs(const wl_plan *plan)
{
    return (wl_programs){
        .world = wl_world(plan),
        .ctx = (void *)plan,
        .program_new = plan_program_new,
        .program_next = plan_program_next,
        .program_free = plan_program_free,
        .group_members = plan_group_members,
    };
}

sim_rc wl_programs_check(const wl_programs *w, const cfg_platform *p, const char *who, sim_err *err)
{
    if (!w->program_new || !w->program_next || !w->program_free || !w->group_members)
        return sim_fail(err, SIM_EINVAL, "%s: missing program callbacks", who);
    const char *origin = p->path[0] ? p->path : (p->name[0] ? p->name : "platform");
    if (w->world < 1 || w->world > p->devices)
        return sim_fail(err, SIM_EINVAL, "%s: 'devices': %d devices cannot run %d ranks (use at least %d devices)",
                        origin, p->devices, w->world, w->world);
    return SIM_OK;
}
