/* runner.h - simulate one step in a child process, several at a time.
 *
 * SimGrid runs one simulation per process, so every command that simulates
 * more than one case (validate, sweep, regress) forks a child per case; the
 * child replays the step and sends its eng_result back through a pipe. */
#ifndef HEPTASIM_RUNNER_H
#define HEPTASIM_RUNNER_H

#include "../engine/engine.h"

/* One case: the inputs (already checked with cfg_check) and the outcome. */
typedef struct run_case {
    cfg_model model;
    cfg_platform platform;
    cfg_strategy strategy;
    void *user;                  /* caller's data, untouched */
    /* optional, for runner_simulate_all: the engine options of the child's
     * simulation (NULL: defaults), and a reply area: after simulating, the
     * child sends back its copy of the reply_bytes bytes at reply (what the
     * options' trace callback left there) and the parent copies them over
     * the caller's. */
    const eng_options *options;
    void *reply;
    size_t reply_bytes;
    /* filled by runner_simulate_* */
    sim_rc rc;
    char msg[SIM_ERR_LEN];       /* the error line when rc != SIM_OK */
    eng_result result;
    double wall_s;               /* simulator wall time of the child */
} run_case;

/* Called in the parent as each case finishes (in completion order). */
typedef void (*run_done_fn)(run_case *c, void *ctx);

/* Whether the step of c can be replayed on this machine with opt (NULL:
 * defaults): eng_replay_check on its plan, without simulating, so that a
 * refusal comes before any output is started.  SIM_OK, SIM_EINVAL with
 * the refusal, or the cost model's or workload's error. */
sim_rc runner_check_replay(const run_case *c, const eng_options *opt, sim_err *err);

/* Simulate in this process (may be called once per process: SimGrid). */
sim_rc runner_simulate_here(run_case *c, const eng_options *opt);

/* Simulate the n cases in child processes, at most `jobs` at a time,
 * calling done (if not NULL) for each as it finishes.  Each case's rc and
 * result are filled.  SIGINT, SIGTERM or SIGHUP meanwhile stop the running
 * children (SIGTERM), which are reaped; done is called for every case that
 * finished, never for a stopped one.  Returns SIM_OK; SIM_EINTR after a
 * signal ("stopped by SIGINT: ..."; sim_signal_caught names it); or
 * SIM_EINTERNAL when a child could not be started. */
sim_rc runner_simulate_all(run_case *cases, int n, int jobs, run_done_fn done, void *ctx, sim_err *err);

#endif
