/* runner.c - one simulation per child process, `jobs` children at a time.
 *
 * The child builds the cost model and the plan, runs the engine and writes
 * a fixed-size message (rc, error line, eng_result, wall time) on a pipe;
 * the parent polls the pipes and reaps children as they finish, and
 * reports the counts (sim_progress_counts) when progress is on.
 *
 * Signals: a child runs in a process group of its own with the default
 * actions, so the terminal's Ctrl-C reaches the parent only (SimGrid's own
 * SIGINT handler never runs), and it dies with the parent (Linux:
 * PR_SET_PDEATHSIG).  SIGINT, SIGTERM or SIGHUP to the parent stops the
 * starting of children and sends SIGTERM to the running ones, which end at
 * once without output; the parent reaps them all, keeps the results that
 * were complete, and returns SIM_EINTR. */
#define _GNU_SOURCE /* ppoll */
#include "runner.h"

#include <errno.h>
#include <poll.h>
#include <time.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "../cost/cost.h"

typedef struct message {
    sim_rc rc;
    char msg[SIM_ERR_LEN];
    eng_result result;
    double wall_s;
} message;

/* The cost model and the workload plan of c; the caller frees both (also
 * on failure, when they may be NULL). */
static sim_rc plan_of(const run_case *c, cost_model **cost, wl_plan **plan, sim_err *err)
{
    *plan = NULL;
    *cost = cost_new(&c->platform, err);
    if (!*cost) return SIM_EINVAL;
    return wl_plan_new(&c->model, &c->platform, &c->strategy, *cost, plan, err);
}

sim_rc runner_check_replay(const run_case *c, const eng_options *opt, sim_err *err)
{
    cost_model *cost;
    wl_plan *plan;
    sim_rc rc = plan_of(c, &cost, &plan, err);
    if (rc == SIM_OK) rc = eng_replay_check(&c->platform, plan, opt, err);
    wl_plan_free(plan);
    cost_free(cost);
    return rc;
}

sim_rc runner_simulate_here(run_case *c, const eng_options *opt)
{
    sim_err err = {{0}};
    double t0 = sim_now_s();
    memset(&c->result, 0, sizeof c->result);
    c->msg[0] = '\0';
    cost_model *cost;
    wl_plan *plan;
    sim_rc rc = plan_of(c, &cost, &plan, &err);
    if (rc == SIM_OK) rc = eng_run(&c->platform, plan, opt, &c->result, &err);
    wl_plan_free(plan);
    cost_free(cost);
    c->rc = rc;
    if (rc != SIM_OK) sim_strlcpy(c->msg, err.msg, sizeof c->msg);
    c->wall_s = sim_now_s() - t0;
    return rc;
}

int runner_write_all(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

size_t runner_read_all(int fd, void *buf, size_t n)
{
    char *p = buf;
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, p + got, n - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        got += (size_t)r;
    }
    return got;
}

typedef struct child {
    pid_t pid;
    int fd;
    int index;
} child;

/* A child's start: default signal actions, a process group of its own, death
 * with the parent, and no file of the parent's open but its pipe fd. */
static void child_start(int fd, pid_t parent)
{
    sim_signals_default();
    setpgid(0, 0);
#ifdef __linux__
    prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
    if (getppid() != parent) _exit(1); /* the parent is gone already */
    /* the parent's files are not the child's: a locked records file stays
     * the parent's alone */
    long top = sysconf(_SC_OPEN_MAX);
    if (top < 0 || top > 65536) top = 65536;
    for (int f = 3; f < top; f++)
        if (f != fd) close(f);
}

/* A child process with a pipe to its parent: 0 in the child (*fd the
 * pipe's write end), the child's pid in the parent (*fd the read end), or
 * -1 with err set. */
static pid_t spawn(int *fd, const char *what, sim_err *err)
{
    int pfd[2];
    if (pipe(pfd) != 0) {
        sim_fail(err, SIM_EINTERNAL, "heptasim: cannot create a pipe: %s", strerror(errno));
        return -1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        close(pfd[0]);
        close(pfd[1]);
        sim_fail(err, SIM_EINTERNAL, "heptasim: cannot fork %s: %s", what, strerror(errno));
        return -1;
    }
    if (pid == 0) {
        close(pfd[0]);
        *fd = pfd[1];
        return 0;
    }
    setpgid(pid, pid); /* as the child does: no race on which runs first */
    close(pfd[1]);
    *fd = pfd[0];
    return pid;
}

static void child_main(run_case *c, int fd, pid_t parent)
{
    child_start(fd, parent);
    runner_simulate_here(c, c->options);
    message m;
    memset(&m, 0, sizeof m);
    m.rc = c->rc;
    memcpy(m.msg, c->msg, sizeof m.msg);
    m.result = c->result;
    m.wall_s = c->wall_s;
    int status = runner_write_all(fd, &m, sizeof m) == 0 ? 0 : 1;
    if (status == 0 && c->reply && c->reply_bytes > 0) status = runner_write_all(fd, c->reply, c->reply_bytes) == 0 ? 0 : 1;
    close(fd);
    _exit(status);
}

/* Collect one finished child: read its message, reap it, fill its case.
 * A child stopped by the parent (stopping) that left no whole message is
 * not a result: its case gets SIM_EINTR and done is not called.  Returns
 * whether the case finished. */
static bool finish(child *ch, run_case *cases, bool stopping, run_done_fn done, void *ctx)
{
    message m;
    run_case *c = &cases[ch->index];
    size_t got = runner_read_all(ch->fd, &m, sizeof m);
    bool replied = true;
    if (got == sizeof m && c->reply && c->reply_bytes > 0)
        replied = runner_read_all(ch->fd, c->reply, c->reply_bytes) == c->reply_bytes;
    close(ch->fd);
    int status = 0;
    while (waitpid(ch->pid, &status, 0) < 0 && errno == EINTR) {}
    if (got == sizeof m && replied) {
        c->rc = m.rc;
        memcpy(c->msg, m.msg, sizeof c->msg);
        c->result = m.result;
        c->wall_s = m.wall_s;
    } else if (stopping) {
        c->rc = SIM_EINTR;
        snprintf(c->msg, sizeof c->msg, "%s: simulation stopped", c->strategy.name);
        return false;
    } else {
        c->rc = SIM_EINTERNAL;
        if (WIFSIGNALED(status))
            snprintf(c->msg, sizeof c->msg, "%s: simulation process killed by signal %d (%s%s)", c->strategy.name,
                     WTERMSIG(status), sim_signal_name(WTERMSIG(status)),
                     WTERMSIG(status) == SIGKILL ? ": the out-of-memory killer, or kill -9" : "");
        else
            snprintf(c->msg, sizeof c->msg, "%s: simulation process ended without a result (status %d)",
                     c->strategy.name, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    }
    if (done) done(c, ctx);
    return true;
}

sim_rc runner_simulate_all(run_case *cases, int n, int jobs, run_done_fn done, void *ctx, sim_err *err)
{
    if (jobs < 1) jobs = 1;
    child *running = sim_xcalloc((size_t)jobs, sizeof *running);
    struct pollfd *fds = sim_xcalloc((size_t)jobs, sizeof *fds);
    int nrun = 0, next = 0, finished = 0, stopped = 0, shown = -1;
    double t0_s = sim_now_s();
    bool stopping = false;
    sim_rc rc = SIM_OK;
    pid_t parent = getpid();
    sigset_t old;
    sim_signals_catch(&old);
    fflush(NULL); /* children must not flush the parent's buffers again */
    while (next < n || nrun > 0) {
        if (sim_signal_caught() && !stopping) {
            stopping = true;
            for (int i = 0; i < nrun; i++) kill(running[i].pid, SIGTERM);
        }
        while (rc == SIM_OK && !stopping && next < n && nrun < jobs) {
            int fd;
            pid_t pid = spawn(&fd, "a simulation", err);
            if (pid < 0) {
                rc = SIM_EINTERNAL;
                break;
            }
            if (pid == 0) child_main(&cases[next], fd, parent);
            running[nrun++] = (child){pid, fd, next++};
        }
        if (nrun == 0) break;
        sim_progress_counts(finished != shown, "simulated", finished, n, nrun, t0_s);
        shown = finished;
        for (int i = 0; i < nrun; i++) fds[i] = (struct pollfd){running[i].fd, POLLIN, 0};
        /* the stop signals are blocked but here, so none is missed; with
         * progress shown, the wall time and what is left go forward too */
        nfds_t nfds = (nfds_t)(nrun > 0 && nrun <= jobs ? nrun : 1);
        struct timespec tick = {1, 0};
        if (ppoll(fds, nfds, sim_progress_on() ? &tick : NULL, &old) < 0) {
            if (errno == EINTR) continue;
            rc = sim_fail(err, SIM_EINTERNAL, "heptasim: cannot wait for the simulations: %s", strerror(errno));
            stopping = true;
            for (int i = 0; i < nrun; i++) kill(running[i].pid, SIGTERM);
            for (int i = 0; i < nrun; i++) finish(&running[i], cases, true, NULL, NULL);
            nrun = 0;
            break;
        }
        for (int i = nrun - 1; i >= 0; i--) {
            if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR | POLLNVAL))) continue;
            if (finish(&running[i], cases, stopping, done, ctx))
                finished++;
            else
                stopped++;
            running[i] = running[--nrun];
        }
    }
    sim_progress_counts(true, "simulated", finished, n, 0, t0_s);
    sim_progress_clear();
    sim_signals_restore(&old);
    free(running);
    free(fds);
    int sig = sim_signal_caught();
    if (rc == SIM_OK && sig)
        rc = sim_fail(err, SIM_EINTR, "heptasim: stopped by %s: %d of %d simulations finished, %d stopped, %d not started",
                      sim_signal_name(sig), finished, n, stopped, n - next);
    return rc;
}

sim_rc runner_fork_workers(int n, runner_work_fn work, runner_reply_fn reply, runner_tick_fn tick, void *ctx,
                           sim_err *err)
{
    child *running = sim_xcalloc((size_t)n, sizeof *running);
    struct pollfd *fds = sim_xcalloc((size_t)n, sizeof *fds);
    int nrun = 0;
    sim_rc rc = SIM_OK;
    pid_t parent = getpid();
    sigset_t old;
    sim_signals_catch(&old);
    fflush(NULL); /* children must not flush the parent's buffers again */
    for (int i = 0; i < n; i++) {
        int fd;
        pid_t pid = spawn(&fd, "a search worker", err);
        if (pid < 0) {
            rc = SIM_EINTERNAL;
            break;
        }
        if (pid == 0) {
            child_start(fd, parent);
            int status = work(i, fd, ctx) == SIM_OK ? 0 : 1;
            close(fd);
            _exit(status);
        }
        running[nrun++] = (child){pid, fd, i};
    }
    bool stopping = rc != SIM_OK;
    while (nrun > 0) {
        if (!stopping && sim_signal_caught()) stopping = true;
        if (stopping) { /* a signal or a failure: the others' work is not wanted */
            for (int i = 0; i < nrun; i++) {
                kill(running[i].pid, SIGTERM);
                close(running[i].fd);
                while (waitpid(running[i].pid, NULL, 0) < 0 && errno == EINTR) {}
            }
            nrun = 0;
            break;
        }
        for (int i = 0; i < nrun; i++) fds[i] = (struct pollfd){running[i].fd, POLLIN, 0};
        struct timespec second = {1, 0};
        int ready = ppoll(fds, (nfds_t)nrun, tick ? &second : NULL, &old);
        if (ready < 0) {
            if (errno == EINTR) continue;
            rc = sim_fail(err, SIM_EINTERNAL, "heptasim: cannot wait for the search workers: %s", strerror(errno));
            stopping = true;
            continue;
        }
        if (tick) tick(ctx);
        for (int i = nrun - 1; i >= 0; i--) {
            if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR | POLLNVAL))) continue;
            bool whole = reply(running[i].index, running[i].fd, ctx);
            close(running[i].fd);
            int status = 0;
            while (waitpid(running[i].pid, &status, 0) < 0 && errno == EINTR) {}
            if (!whole && rc == SIM_OK) {
                if (WIFSIGNALED(status))
                    rc = sim_fail(err, SIM_EINTERNAL, "heptasim: search worker %d killed by signal %d (%s%s)",
                                  running[i].index, WTERMSIG(status), sim_signal_name(WTERMSIG(status)),
                                  WTERMSIG(status) == SIGKILL ? ": the out-of-memory killer, or kill -9" : "");
                else
                    rc = sim_fail(err, SIM_EINTERNAL, "heptasim: search worker %d ended without a result (status %d)",
                                  running[i].index, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
                stopping = true;
            }
            running[i] = running[--nrun];
        }
    }
    sim_signals_restore(&old);
    free(running);
    free(fds);
    int sig = sim_signal_caught();
    if (rc == SIM_OK && sig) rc = sim_fail(err, SIM_EINTR, "heptasim: stopped by %s while searching", sim_signal_name(sig));
    return rc;
}
