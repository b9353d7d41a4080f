/* session.c - a sweep or a compare from start to end: search, choose the
 * candidates to simulate, resume from the records file, simulate what is
 * left while streaming each record to the file, rank.
 *
 * The records file (--out) is appended to as each simulation finishes and
 * flushed per record, so an interrupted sweep keeps what it finished
 * (resume.c reads it back).  The file is locked (flock) for the whole
 * sweep: a second sweep on the same file is refused, naming the process
 * that holds it, instead of tearing its lines. */
#define _GNU_SOURCE /* flock */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "internal.h"

/* Each finished simulation: its record to the file, progress forward. */
typedef struct streaming {
    const srch_sweep_request *rq;
    FILE *out;
    int done, total;
    sim_rc rc;                    /* the first write error */
    sim_err err;
} streaming;

static void sim_done(void *ctx, srch_candidate *c)
{
    streaming *st = ctx;
    st->done++;
    if (st->out && st->rc == SIM_OK) st->rc = srch_jsonl_write(st->out, st->rq->out_path, c, &st->err);
    if (st->rq->sim_progress) st->rq->sim_progress(st->rq->sim_progress_ctx, st->done, st->total);
}

/* The process holding a lock on the file of fd (from /proc/locks), or 0
 * when it cannot be told. */
static long lock_holder(int fd)
{
    struct stat st;
    FILE *f = fstat(fd, &st) == 0 ? fopen("/proc/locks", "r") : NULL;
    if (!f) return 0;
    char line[256];
    long pid = 0;
    while (!pid && fgets(line, sizeof line, f)) {
        long p = 0;
        unsigned maj = 0, min = 0;
        unsigned long ino = 0;
        if (sscanf(line, "%*s %*s %*s %*s %ld %x:%x:%lu", &p, &maj, &min, &ino) == 4 && maj == major(st.st_dev) &&
            min == minor(st.st_dev) && ino == (unsigned long)st.st_ino && p != (long)getpid())
            pid = p;
    }
    fclose(f);
    return pid;
}

/* The records file of path opened for appending and locked against a
 * second writer; emptied unless resuming.  SIM_EIO naming the file (and the
 * other process) when it cannot be. */
static sim_rc records_open(const char *path, bool resume, int *out, sim_err *err)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NONBLOCK, 0666);
    if (fd < 0)
        return sim_fail(err, SIM_EIO, "%s: cannot write the sweep records: %s (check the directory exists)", path,
                        strerror(errno));
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int e = errno;
        long pid = e == EWOULDBLOCK ? lock_holder(fd) : 0;
        close(fd);
        if (e != EWOULDBLOCK)
            return sim_fail(err, SIM_EIO, "%s: cannot lock the sweep records: %s", path, strerror(e));
        char who[48] = "another process";
        if (pid > 0) snprintf(who, sizeof who, "process %ld", pid);
        return sim_fail(err, SIM_EIO,
                        "%s: the sweep records are being written by %s (locked); wait for it to end or use another "
                        "'--out' file", path, who);
    }
    struct stat st;
    if (!resume && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && ftruncate(fd, 0) != 0) {
        int e = errno;
        close(fd);
        return sim_fail(err, SIM_EIO, "%s: cannot write the sweep records: %s", path, strerror(e));
    }
    *out = fd;
    return SIM_OK;
}

/* Borrow from the twin's records what is not simulated yet, and write
 * what was borrowed to this compare's own records (so that they hold every
 * simulation of the compare, and a resume finds them there). */
static sim_rc borrow(const srch_sweep_request *rq, srch_sweep *s, FILE *out, sim_err *err)
{
    bool *before = sim_xcalloc((size_t)s->nchosen + 1, sizeof *before);
    for (int i = 0; i < s->nchosen; i++) before[i] = s->chosen[i]->state == SRCH_SIM_DONE;
    s->resumed.borrowed = srch_borrow(rq->twin_path, s->res->twin_id, s->space, s->chosen, s->nchosen);
    sim_rc rc = SIM_OK;
    for (int i = 0; i < s->nchosen && rc == SIM_OK && out; i++)
        if (!before[i] && s->chosen[i]->state == SRCH_SIM_DONE)
            rc = srch_jsonl_write(out, rq->out_path, s->chosen[i], err);
    free(before);
    return rc;
}

/* Adds candidates to s->chosen once those chosen are simulated; false
 * when it adds none. */
typedef bool (*widen_fn)(const srch_sweep_request *rq, srch_sweep *s);

/* Lock and open the records file, resume, borrow, simulate the chosen candidates
 * not done yet (final records are kept as they come), then those widen
 * adds (NULL: none), rank them all. */
static sim_rc simulate(const srch_sweep_request *rq, srch_sweep *s, widen_fn widen, sim_err *err)
{
    sim_rc rc = SIM_OK;
    streaming st = {rq, NULL, 0, 0, SIM_OK, {{0}}};
    int fd = -1;
    if (rq->out_path) rc = records_open(rq->out_path, rq->resume, &fd, err);
    if (rc == SIM_OK && rq->resume && rq->out_path)
        rc = srch_resume(rq->out_path, s->res->inputs_id, s->space, s->chosen, s->nchosen, &s->resumed, err);
    if (rc == SIM_OK && fd >= 0 && !(st.out = fdopen(fd, "a")))
        rc = sim_fail(err, SIM_EIO, "%s: cannot write the sweep records: %s", rq->out_path, strerror(errno));
    if (rc != SIM_OK) {
        if (fd >= 0 && !st.out) close(fd);
        return rc;
    }
    if (rq->twin_path) rc = borrow(rq, s, st.out, err);
    if (rc != SIM_OK) {
        if (st.out) fclose(st.out);
        return rc;
    }
    double t0 = sim_now_s();
    for (;;) {
        srch_candidate **todo = sim_xcalloc((size_t)s->nchosen + 1, sizeof *todo);
        int n = 0;
        for (int i = 0; i < s->nchosen; i++)
            if (s->chosen[i]->state == SRCH_SIM_NONE) todo[n++] = s->chosen[i];
        st.total += n;
        if (rq->sim_progress) rq->sim_progress(rq->sim_progress_ctx, st.done, st.total);
        rc = srch_simulate(todo, n, rq->search.model, rq->search.platform, rq->jobs, &rq->engine, sim_done, &st, err);
        free(todo);
        if (rc != SIM_OK || st.rc != SIM_OK || !widen || !widen(rq, s)) break;
        if (rq->resume && rq->out_path) {
            /* the candidates added may have records of the interrupted run
             * too; those simulated already keep theirs */
            if (fflush(st.out) != 0) break;
            srch_resumed again;
            memset(&again, 0, sizeof again);
            rc = srch_resume(rq->out_path, s->res->inputs_id, s->space, s->chosen, s->nchosen, &again, err);
            if (rc != SIM_OK) break;
            s->resumed.resumed += again.resumed;
            s->resumed.retried += again.retried;
            s->resumed.ignored = again.ignored;
        }
    }
    s->simulate_s = sim_now_s() - t0;
    if (st.out && fclose(st.out) != 0 && st.rc == SIM_OK)
        st.rc = sim_fail(&st.err, SIM_EIO, "%s: cannot write a sweep record: %s (check free space and permissions)",
                         rq->out_path, strerror(errno));
    if (rc == SIM_EINTR && rq->out_path) {
        char line[SIM_ERR_LEN];
        snprintf(line, sizeof line, "%.600s; %d finished records are in %.300s (carry on with '--resume')", err->msg,
                 st.done, rq->out_path);
        sim_strlcpy(err->msg, line, sizeof err->msg);
    }
    if (rc == SIM_OK && st.rc != SIM_OK) {
        *err = st.err;
        rc = st.rc;
    }
    if (rc == SIM_OK) srch_ranking_make(s->chosen, s->nchosen, &s->ranking);
    return rc;
}

/* Candidates a search kept for the cache keeps at least per list, so
 * that a sweep's file also serves the compare of the same inputs and the
 * other way round (the best `keep` are the first `keep` of them). */
#define CACHE_KEEP 32

/* The search of rq keeping `keep` per list: from the search cache when it
 * holds it, else searched (and kept there). */
static sim_rc search(const srch_sweep_request *rq, srch_space space, int keep, srch_sweep *s, sim_err *err)
{
    memset(s, 0, sizeof *s);
    s->space = space;
    srch_request sr = rq->search;
    sr.space = space;
    sr.keep = keep;
    sr.replica_reduction = rq->engine.symmetry == ENG_SYM_DP;
    sr.jobs = rq->jobs;
    if (rq->no_cache) return srch_run(&sr, &s->res, err);
    double t0 = sim_now_s();
    s->res = srch_cache_load(&sr, s->cache_path, sizeof s->cache_path, rq->warn);
    if (s->res) {
        s->res->seconds = sim_now_s() - t0;
        s->res->workers = 1;
        return SIM_OK;
    }
    s->cache_path[0] = '\0';
    srch_request wide = sr;
    if (wide.keep < CACHE_KEEP) wide.keep = CACHE_KEEP;
    sim_rc rc = srch_run(&wide, &s->res, err);
    if (rc != SIM_OK) return rc;
    srch_cache_store(&wide, s->res, rq->warn);
    srch_result_cut(s->res, keep);
    return SIM_OK;
}

/* Distinct rows among the simulated ones chosen: candidates alike
 * (srch_fold_alike) count once. */
static int distinct_simulated(const srch_sweep *s)
{
    srch_ranking r;
    srch_ranking_make(s->chosen, s->nchosen, &r);
    int done = 0;
    while (done < r.n && r.rows[done]->state == SRCH_SIM_DONE) done++;
    int *same_as = sim_xcalloc((size_t)done + 1, sizeof *same_as), rows = 0;
    srch_fold_alike((const srch_candidate *const *)r.rows, done, same_as);
    for (int i = 0; i < done; i++) rows += same_as[i] == i;
    free(same_as);
    srch_ranking_free(&r);
    return rows;
}

/* The sweep's widening: while alike candidates leave fewer than top
 * distinct simulated rows, the next best estimates kept, as many as rows
 * are missing (none while a simulation failed, so that a resume that
 * retries it chooses as the uninterrupted sweep did). */
static bool distinct_top(const srch_sweep_request *rq, srch_sweep *s)
{
    for (int i = 0; i < s->nchosen; i++)
        if (s->chosen[i]->state != SRCH_SIM_DONE) return false; /* a failure: resume retries it first */
    int missing = rq->top - distinct_simulated(s), left = s->res->nbest - s->selected;
    if (missing <= 0 || left <= 0) return false;
    int add = missing < left ? missing : left;
    for (int i = 0; i < add; i++) s->chosen[s->nchosen++] = &s->res->best[s->selected + i];
    s->selected += add;
    return true;
}

/* The index of the simulated best of s (-1: none simulated). */
static int simulated_best(const srch_sweep *s)
{
    srch_ranking r;
    srch_ranking_make(s->chosen, s->nchosen, &r);
    int best = r.n > 0 && r.rows[0]->state == SRCH_SIM_DONE ? r.rows[0]->index : -1;
    srch_ranking_free(&r);
    return best;
}

/* The sweep's widening with --budget: once the top is distinct
 * (distinct_top), top more of the best estimates at a time while the last
 * round changed the simulated best, the budget is not spent and estimates
 * are left (none while a simulation failed). */
static bool widen_sweep(const srch_sweep_request *rq, srch_sweep *s)
{
    if (distinct_top(rq, s)) return true;
    if (!(rq->budget_s > 0)) return false;
    for (int i = 0; i < s->nchosen; i++)
        if (s->chosen[i]->state != SRCH_SIM_DONE) return false;
    int best = simulated_best(s);
    if (s->rounds > 0 && best == s->best_seen) {
        s->best_held = true;
        return false;
    }
    s->best_seen = best;
    int left = s->res->nbest - s->selected;
    if (left <= 0 || sim_now_s() - s->sim_t0 >= rq->budget_s) return false;
    int add = rq->top < left ? rq->top : left;
    for (int i = 0; i < add; i++) s->chosen[s->nchosen++] = &s->res->best[s->selected + i];
    s->selected += add;
    s->rounds++;
    return true;
}

/* Best estimates a sweep with --budget keeps per list: top x this, for
 * its rounds. */
#define BUDGET_ROUNDS 8

sim_rc srch_sweep_run(const srch_sweep_request *rq, srch_sweep *s, sim_err *err)
{
    /* the top, the next best estimates, and as many again for the top
     * to stand for distinct strategies (distinct_top) */
    bool budget = rq->budget_s > 0 && rq->shard_count <= 1;
    int keep = rq->top * (budget ? BUDGET_ROUNDS : rq->shard_count > 1 ? 1 : 2) + rq->extra;
    sim_rc rc = search(rq, rq->search.space, keep, s, err);
    if (rc != SIM_OK) return rc;
    srch_result *res = s->res;
    if (res->nbest == 0) {
        char why[600];
        srch_pruned_reason(&rq->search, &res->counts, why, sizeof why);
        return sim_fail(err, SIM_EOOM,
                        "heptasim sweep: no strategy of the %s space fits on %s with %d devices (%lld enumerated, %lld "
                        "pruned by memory: %s; try more devices, a smaller --global-batch or fewer --set pins)",
                        srch_space_name(s->space), rq->search.platform->name, rq->search.platform->devices,
                        res->counts.enumerated, res->counts.pruned_memory, why);
    }
    s->selected = rq->top < res->nbest ? rq->top : res->nbest;
    s->chosen = sim_xcalloc((size_t)res->nbest + 1, sizeof *s->chosen);
    s->nchosen = srch_shard(res, rq->top, rq->shard_index, rq->shard_count, s->chosen);
    s->best_seen = -1;
    s->sim_t0 = sim_now_s();
    rc = simulate(rq, s, rq->shard_count > 1 ? NULL : budget ? widen_sweep : distinct_top, err);
    s->nextra = res->nbest - s->selected < rq->extra ? res->nbest - s->selected : rq->extra;
    s->extra = sim_xcalloc((size_t)s->nextra + 1, sizeof *s->extra);
    for (int i = 0; i < s->nextra; i++) s->extra[i] = &res->best[s->selected + i];
    srch_order_ties(s->extra, s->nextra, false);
    if (rc == SIM_OK) srch_sweep_bests(s->chosen, s->nchosen, &s->cmp);
    s->cmp.band = rq->band;
    if (s->space == SRCH_SPACE_MEGATRON) { /* no 7D space searched: nothing to compare with */
        s->cmp.best = NULL;
        s->cmp.speedup = NAN;
    }
    return rc;
}

sim_rc srch_compare_run(const srch_sweep_request *rq, srch_sweep *s, sim_err *err)
{
    sim_rc rc = SIM_OK;
    if (rq->searched) { /* the twin searched for it */
        memset(s, 0, sizeof *s);
        s->space = SRCH_SPACE_7D;
        s->res = rq->searched;
    } else {
        rc = search(rq, SRCH_SPACE_7D, rq->top, s, err);
    }
    if (rc != SIM_OK) return rc;
    s->chosen = sim_xcalloc((size_t)(s->res->nbest + s->res->nbest_megatron) + 1, sizeof *s->chosen);
    s->nchosen = srch_compare_union(s->res, s->chosen);
    rc = simulate(rq, s, NULL, err);
    if (rc == SIM_OK) srch_compare_bests(s->res, s->chosen, s->nchosen, &s->cmp);
    s->cmp.band = rq->band;
    return rc;
}

void srch_sweep_free(srch_sweep *s)
{
    srch_ranking_free(&s->ranking);
    free(s->chosen);
    free(s->extra);
    srch_result_free(s->res);
    memset(s, 0, sizeof *s);
}

sim_rc srch_sweep_failures(const srch_sweep_request *rq, const srch_sweep *s, const char *command, sim_err *err)
{
    const srch_ranking *r = &s->ranking;
    if (r->failed == 0) return SIM_OK;
    const char *first = "";
    for (int i = 0; i < r->n && !first[0]; i++)
        if (r->rows[i]->state == SRCH_SIM_FAILED) first = r->rows[i]->error;
    return sim_fail(err, SIM_EINTERNAL, "heptasim %s: %d of %d simulations failed (first: %.300s)%s", command,
                    r->failed, r->n, first,
                    rq->out_path ? "; their records are not final, '--resume' simulates them again" : "");
}
