/* runner.h - simulate one step in a child process, several at a time.
 *
 * SimGrid runs one simulation per process, so every command that simulates
 * more than one case (validate, sweep, regress) forks a child per case; the
 * child replays the step and sends its eng_result back through a pipe.
 * The same machinery runs other work split over child processes (the
 * search's workers, runner_fork_workers). */
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

/* {============================================ work in child processes */

/* Work split over n child processes that run at once: work(i, fd, ctx)
 * runs in child i (started as a simulation's child is: default signal
 * actions, dies with the parent) and writes its whole reply on fd; the
 * parent calls reply(i, fd, ctx) when child i's pipe is readable, which
 * reads the reply and returns whether it was whole, and tick(ctx) (if not
 * NULL) at least once a second.  A child that ends without a whole reply,
 * or a SIGINT, SIGTERM or SIGHUP meanwhile, stops the others (SIGTERM);
 * all are reaped.  Returns SIM_OK; SIM_EINTERNAL ("search worker ...");
 * or SIM_EINTR after a signal. */
typedef sim_rc (*runner_work_fn)(int worker, int fd, void *ctx);
typedef bool (*runner_reply_fn)(int worker, int fd, void *ctx);
typedef void (*runner_tick_fn)(void *ctx);
sim_rc runner_fork_workers(int n, runner_work_fn work, runner_reply_fn reply, runner_tick_fn tick, void *ctx,
                           sim_err *err);

/* Write all n bytes (0, or -1 on an error); read up to n bytes, returning
 * how many came before the end of the file or an error. */
int runner_write_all(int fd, const void *buf, size_t n);
size_t runner_read_all(int fd, void *buf, size_t n);

/* }============================================ work in child processes */

#endif
