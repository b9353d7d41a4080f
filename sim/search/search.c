/* search.c - enumerate a strategy space, prune it by memory, estimate what
 * is left and keep the best candidates (srch_run).
 *
 * The enumeration is an odometer over the searched keys of the strategy
 * key table, in their search positions (the last key turns fastest); each
 * key's values are recomputed whenever a key above it turns, as its row's
 * rules depend on them.  It runs in three stages, so that what a check or
 * a probe depends on changes as rarely as possible: the rank dimensions
 * (the progress counts their tuples); the shape keys (experts,
 * micro-batch, sequence parallel), after which the checked keys' values
 * (schedule, fusion) are checked with cfg_check once; and the inner keys
 * (recompute, fusion, CP overlap, order, schedule, zero and the
 * data-parallel overlap switches), each combination a candidate.  The
 * estimator's probe depends on the keys above the schedule, so vpp, zero
 * and the switches vary innermost and reuse it.  Candidates are numbered
 * in that order (their `index`), which is the same on every run with the
 * same inputs.  Only the best `keep` candidates are stored (bounded
 * heaps: the whole space and its Megatron-style part, and on request the
 * Megatron-style part under the other baseline, for the twin search), so
 * memory does not grow with the size of the space.  With jobs > 1 child processes share
 * the dimension tuples out (see "workers" below); the result is the same. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include <errno.h>
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "../runner/runner.h"
#include "internal.h"

/* A step time rounded to 30 significant bits (a relative 1e-9): times that
 * differ only by rounding noise compare equal, so that ties go to memory,
 * and the rounding keeps the comparison transitive (qsort needs it). */
static double time_key(double t)
{
    if (!isfinite(t) || t == 0) return t;
    int e;
    double m = frexp(t, &e);
    return ldexp(nearbyint(ldexp(m, 30)), e - 30);
}

/* Ascending order of (time, peak memory, index). */
static int cmp_time_memory(double ta, double ma, int ia, double tb, double mb, int ib)
{
    ta = time_key(ta);
    tb = time_key(tb);
    if (ta != tb) return ta < tb ? -1 : 1;
    if (ma != mb) return ma < mb ? -1 : 1;
    return (ia > ib) - (ia < ib);
}

int srch_cmp_estimate(const void *pa, const void *pb)
{
    const srch_candidate *a = pa, *b = pb;
    return cmp_time_memory(a->est.step_s, a->peak_bytes, a->index, b->est.step_s, b->peak_bytes, b->index);
}

static int sim_class(const srch_candidate *c)
{
    return c->state == SRCH_SIM_DONE ? 0 : c->state == SRCH_SIM_FAILED ? 1 : 2;
}

int srch_cmp_simulated(const void *pa, const void *pb)
{
    const srch_candidate *a = pa, *b = pb;
    int ka = sim_class(a), kb = sim_class(b);
    if (ka != kb) return ka - kb;
    if (ka == 0) return cmp_time_memory(a->step_time_s, a->peak_bytes, a->index, b->step_time_s, b->peak_bytes, b->index);
    if (ka == 2) return srch_cmp_estimate(a, b);
    return (a->index > b->index) - (a->index < b->index);
}

/* {=============================================================== heaps */

enum { LIST_ALL, LIST_MEG, LIST_TWIN, SRCH_LISTS };

/* The best `cap` candidates: a max-heap in the order of srch_cmp_estimate
 * (estimate, peak memory, index), so the root is the worst one kept. */
typedef struct heap {
    srch_candidate *a;
    int n, cap;
} heap;

static bool worse(const srch_candidate *a, const srch_candidate *b)
{
    return srch_cmp_estimate(a, b) > 0;
}

static void sift_down(heap *h, int i)
{
    for (;;) {
        int l = 2 * i + 1, r = l + 1, big = i;
        if (l < h->n && worse(&h->a[l], &h->a[big])) big = l;
        if (r < h->n && worse(&h->a[r], &h->a[big])) big = r;
        if (big == i) return;
        srch_candidate t = h->a[i];
        h->a[i] = h->a[big];
        h->a[big] = t;
        i = big;
    }
}

static void sift_up(heap *h, int i)
{
    while (i > 0) {
        int up = (i - 1) / 2;
        if (!worse(&h->a[i], &h->a[up])) return;
        srch_candidate t = h->a[i];
        h->a[i] = h->a[up];
        h->a[up] = t;
        i = up;
    }
}

/* Whether a candidate with this estimate, memory and index would be kept. */
static bool heap_wants(const heap *h, double est, double peak_bytes, int index)
{
    if (h->n < h->cap) return true;
    const srch_candidate *root = &h->a[0];
    return cmp_time_memory(root->est.step_s, root->peak_bytes, root->index, est, peak_bytes, index) > 0;
}

/* Whether every candidate kept in full heap h beats any estimate of at
 * least floor_s (step times compared as cmp_time_memory does). */
static bool heap_beats(const heap *h, double floor_s)
{
    return h->n == h->cap && time_key(h->a[0].est.step_s) < time_key(floor_s);
}

static void heap_put(heap *h, const srch_candidate *c)
{
    if (h->n < h->cap) {
        h->a[h->n] = *c;
        sift_up(h, h->n++);
    } else {
        h->a[0] = *c;
        sift_down(h, 0);
    }
}

/* }=============================================================== heaps */

/* One level of the enumeration: a searched key and the values it takes
 * under the values of the levels above. */
typedef struct level {
    const cfg_key *key;
    bool pinned;
    int n, i;                          /* its values, and the one set in the strategy */
    cfg_value v[CFG_MAX_CHOICES];
    int nvalid;                        /* checked keys: the values valid for the current shape */
    cfg_value valid[CFG_MAX_CHOICES];
} level;

/* Peak memory of the candidates of one shape, by the values of the inner
 * keys the memory model reads (those without CFG_KF_NO_MEMORY): slots
 * found by a hash of the values' positions, each checked against the
 * values it holds. */
#define MEM_SLOTS 256

typedef struct mem_slot {
    long long shape;                   /* the shape it belongs to (searcher.shape) */
    cfg_value key[SRCH_MAX_LEVELS];
    double peak_bytes;
} mem_slot;

/* What the workers of a search share (mapped before they are forked). */
typedef struct shared {
    atomic_llong next;                 /* the next dimension tuple nobody took */
    atomic_llong done;                 /* tuples finished */
    atomic_int stop;                   /* a worker failed: take no more tuples */
    long long count[];                 /* candidates (enumerated) of each tuple */
} shared;

/* The state of one search, shared by the stages. */
typedef struct searcher {
    const srch_request *rq;
    cfg_space space;
    level *lv;
    int nlv, dims_end, shape_end;      /* levels [0, dims_end) dimensions, then shape, then inner */
    long long tuples, tuple;           /* dimension tuples, and the one being expanded */
    int mem_levels[SRCH_MAX_LEVELS], nmem; /* inner levels the memory depends on */
    mem_slot *mem;                     /* MEM_SLOTS */
    long long shape;                   /* valid shapes so far, 1 for the first */
    est_estimator *est;
    srch_result *res;
    heap list[SRCH_LISTS];             /* the best of the space, of its Megatron-style part, of the twin's */
    srch_baseline twin_baseline;
    double capacity;
    int index;                         /* the next candidate's (a worker's: in its own order) */
    /* a worker's (sh NULL: a search alone) */
    shared *sh;
    long long claimed;                 /* the tuple it takes next */
    long long *mine, *start;           /* the tuples it took, and its index at each one's start */
    long long nmine, failed_tuple;
} searcher;

/* Memory of the peak stage of candidate s (mdl_peak_memory), computed
 * once for the values of the keys it depends on in the current shape. */
static double peak_of(searcher *x, const cfg_strategy *s)
{
    unsigned h = 0;
    for (int j = 0; j < x->nmem; j++) h = h * 31u + (unsigned)x->lv[x->mem_levels[j]].i;
    mem_slot *slot = &x->mem[h % MEM_SLOTS];
    bool hit = slot->shape == x->shape;
    for (int j = 0; j < x->nmem && hit; j++) {
        const level *l = &x->lv[x->mem_levels[j]];
        hit = cfg_value_same(l->key, &slot->key[j], &l->v[l->i]);
    }
    if (!hit) {
        mdl_memory mm;
        mdl_peak_memory(x->rq->model, s, &mm);
        slot->shape = x->shape;
        slot->peak_bytes = mm.total_bytes;
        for (int j = 0; j < x->nmem; j++) slot->key[j] = x->lv[x->mem_levels[j]].v[x->lv[x->mem_levels[j]].i];
    }
    return slot->peak_bytes;
}

/* Candidate s (complete, checked): count, prune by memory, estimate and
 * offer it to the heaps. */
static sim_rc visit(searcher *x, cfg_strategy *s, sim_err *err)
{
    srch_counts *k = &x->res->counts;
    int index = x->index++;
    k->enumerated++;
    double peak_bytes = peak_of(x, s);
    if (peak_bytes > x->capacity) {
        k->pruned_memory++;
        if (k->least_pruned_bytes == 0 || peak_bytes < k->least_pruned_bytes) k->least_pruned_bytes = peak_bytes;
        return SIM_OK;
    }
    bool meg = srch_megatron_style(s, x->rq->platform, x->rq->baseline);
    bool twin = x->list[LIST_TWIN].cap > 0 && srch_megatron_style(s, x->rq->platform, x->twin_baseline);
    bool in[SRCH_LISTS] = {true, meg, twin};
    k->estimated++;
    if (meg) k->estimated_megatron++;
    if (twin) k->estimated_twin_megatron++;
    /* every list it could enter full: its estimate's floor may already be
     * worse than each one's worst, and the estimate is not needed */
    bool full = !x->rq->no_floor;
    for (int l = 0; l < SRCH_LISTS && full; l++) full = !in[l] || x->list[l].n == x->list[l].cap;
    sim_rc rc;
    if (full) {
        double floor_s;
        rc = est_floor(x->est, s, &floor_s, err);
        if (rc != SIM_OK) return rc;
        bool beaten = true;
        for (int l = 0; l < SRCH_LISTS && beaten; l++)
            beaten = !in[l] || heap_beats(&x->list[l], floor_s);
        if (beaten) {
            x->res->floored++;
            return SIM_OK;
        }
    }
    est_result est;
    rc = est_step(x->est, s, &est, err);
    if (rc != SIM_OK) return rc;
    bool want[SRCH_LISTS] = {heap_wants(&x->list[LIST_ALL], est.step_s, peak_bytes, index),
                             meg && heap_wants(&x->list[LIST_MEG], est.step_s, peak_bytes, index),
                             twin && heap_wants(&x->list[LIST_TWIN], est.step_s, peak_bytes, index)};
    if (!want[LIST_ALL] && !want[LIST_MEG] && !want[LIST_TWIN]) return SIM_OK;
    srch_candidate c;
    memset(&c, 0, sizeof c);
    c.index = index;
    c.space = x->rq->space;
    c.megatron_style = meg;
    c.strategy = *s; /* named in heap_finish: formatting costs more than estimating */
    c.peak_bytes = peak_bytes;
    c.capacity_bytes = x->capacity;
    c.est = est;
    for (int l = 0; l < SRCH_LISTS; l++)
        if (want[l]) heap_put(&x->list[l], &c);
    return SIM_OK;
}

/* The values level l's key takes for s: the base value when pinned (what
 * it stands for, with a derive rule), else its choices; then only those
 * that pass its fits rule (and, for a dimension, divide the devices left).
 * Writes at most CFG_MAX_CHOICES into out and returns how many. */
static int values_of(searcher *x, const level *l, const cfg_strategy *s, cfg_value *out)
{
    const cfg_key *k = l->key;
    int n;
    if (l->pinned) {
        cfg_key_get(k, &x->rq->base, &out[0]);
        if (k->derive) k->derive(s, &out[0]);
        n = 1;
    } else {
        n = k->choices(k, &x->space, s, out);
    }
    int kept = 0;
    for (int j = 0; j < n; j++) {
        if (k->stage == CFG_STAGE_DIMS && (out[j].i < 1 || x->space.room % out[j].i != 0)) continue;
        if (k->fits && !k->fits(&x->space, s, &out[j])) continue;
        out[kept++] = out[j];
    }
    return kept;
}

/* Compute the values of level d for s (the levels above set in it). */
static void fill(searcher *x, int d, const cfg_strategy *s)
{
    level *l = &x->lv[d];
    l->i = 0;
    if (l->key->flags & CFG_KF_CHECKED) { /* prepared for this shape by check_shape */
        memcpy(l->v, l->valid, (size_t)l->nvalid * sizeof l->v[0]);
        l->n = l->nvalid;
        return;
    }
    if (l->key->stage == CFG_STAGE_DIMS) {
        x->space.room = x->rq->platform->devices;
        for (int j = 0; j < d; j++) {
            cfg_value v;
            cfg_key_get(x->lv[j].key, s, &v);
            x->space.room /= v.i;
        }
    }
    l->n = values_of(x, l, s, l->v);
}

typedef sim_rc (*leaf_fn)(searcher *x, cfg_strategy *s, sim_err *err);

/* Set every combination of the values of levels [lo, hi) in s, the last
 * level turning fastest, and call leaf on each. */
static sim_rc turn(searcher *x, int lo, int hi, cfg_strategy *s, leaf_fn leaf, sim_err *err)
{
    if (lo == hi) return leaf(x, s, err);
    int d = lo;
    fill(x, d, s);
    for (;;) {
        level *l = &x->lv[d];
        if (l->i == l->n) { /* this level is done: turn the one above */
            if (d == lo) return SIM_OK;
            x->lv[--d].i++;
            continue;
        }
        cfg_key_set(l->key, s, &l->v[l->i]);
        if (d + 1 < hi) {
            fill(x, ++d, s);
            continue;
        }
        sim_rc rc = leaf(x, s, err);
        if (rc != SIM_OK) return rc;
        l->i++;
    }
}

/* The values of the checked keys for shape s, each kept when cfg_check
 * accepts it, the rejected ones counted.  The keys are checked in table
 * order: the first one's values with the other checked keys at their
 * default; each later one's values with the earlier ones at their first
 * valid value (its default value needs no check: that strategy passed with
 * the earlier key).  Returns false, and stops, when a key has no valid
 * value: the shape gives no candidate. */
static bool check_shape(searcher *x, const cfg_strategy *s)
{
    cfg_strategy c = *s; /* dp is the dimensions' (their product is the device count) */
    for (int d = x->shape_end; d < x->nlv; d++)
        if (x->lv[d].key->flags & CFG_KF_CHECKED) {
            cfg_value def;
            cfg_key_default(x->lv[d].key, &def);
            cfg_key_set(x->lv[d].key, &c, &def);
        }
    int checked = 0;
    for (const cfg_key *k = cfg_strategy_keys; k->key; k++) {
        level *l = NULL;
        for (int d = x->shape_end; d < x->nlv && !l; d++)
            if (x->lv[d].key == k && (k->flags & CFG_KF_CHECKED)) l = &x->lv[d];
        if (!l) continue;
        cfg_value cand[CFG_MAX_CHOICES], def;
        int n = values_of(x, l, s, cand);
        cfg_key_default(k, &def);
        l->nvalid = 0;
        for (int j = 0; j < n; j++) {
            bool ok = checked > 0 && cfg_value_same(k, &cand[j], &def);
            if (!ok) {
                cfg_strategy t = c;
                cfg_key_set(k, &t, &cand[j]);
                sim_err quiet;
                ok = cfg_check_strategy_rules(x->rq->model, x->rq->platform, &t, &quiet) == SIM_OK;
                if (!ok) x->res->counts.rejected++;
            }
            if (ok) l->valid[l->nvalid++] = cand[j];
        }
        if (l->nvalid == 0) return false;
        cfg_key_set(k, &c, &l->valid[0]);
        checked++;
    }
    return true;
}

static sim_rc shape_leaf(searcher *x, cfg_strategy *s, sim_err *err)
{
    if (!check_shape(x, s)) return SIM_OK;
    x->shape++; /* empties the memory slots */
    return turn(x, x->shape_end, x->nlv, s, visit, err);
}

/* A tuple of rank dimensions: the base strategy with them, its own uneven
 * split of the layers kept only for its own pp. */
static sim_rc dims_leaf(searcher *x, cfg_strategy *s, sim_err *err)
{
    (void)s; /* the values are read from the levels */
    const srch_request *rq = x->rq;
    long long tuple = x->tuple++;
    if (x->sh) {
        if (tuple != x->claimed) return SIM_OK; /* another worker's */
        x->mine[x->nmine] = tuple;
        x->start[x->nmine++] = x->index;
    } else if (rq->progress) {
        rq->progress(rq->progress_ctx, tuple, x->tuples);
    }
    cfg_strategy t = rq->base;
    for (int d = 0; d < x->dims_end; d++) cfg_key_set(x->lv[d].key, &t, &x->lv[d].v[x->lv[d].i]);
    if (t.pp != rq->base.pp) t.first_stage_layers = t.last_stage_layers = 0; /* even split */
    sim_rc rc = turn(x, x->dims_end, x->shape_end, &t, shape_leaf, err);
    if (x->sh) {
        x->sh->count[tuple] = x->index - x->start[x->nmine - 1];
        if (rc != SIM_OK) {
            x->failed_tuple = tuple;
            atomic_store(&x->sh->stop, 1);
        }
        atomic_fetch_add(&x->sh->done, 1);
        x->claimed = atomic_load(&x->sh->stop) ? -1 : atomic_fetch_add(&x->sh->next, 1);
    }
    return rc;
}

static sim_rc count_leaf(searcher *x, cfg_strategy *s, sim_err *err)
{
    (void)s, (void)err;
    x->tuples++;
    return SIM_OK;
}

/* The levels of the request's space: the searched keys in order, pinned
 * or not, and where each stage starts. */
static void levels_init(searcher *x)
{
    const cfg_key *keys[SRCH_MAX_LEVELS];
    x->nlv = srch_levels(keys);
    x->lv = sim_xcalloc((size_t)x->nlv, sizeof *x->lv);
    x->dims_end = x->shape_end = 0;
    for (int d = 0; d < x->nlv; d++) {
        x->lv[d].key = keys[d];
        x->lv[d].pinned = (x->rq->pinned & srch_pin_of(keys[d])) != 0;
        if (keys[d]->stage == CFG_STAGE_DIMS) x->dims_end = d + 1;
        if (keys[d]->stage <= CFG_STAGE_SHAPE) x->shape_end = d + 1;
    }
    x->nmem = 0;
    for (int d = x->shape_end; d < x->nlv; d++)
        if (!(keys[d]->flags & CFG_KF_NO_MEMORY)) x->mem_levels[x->nmem++] = d;
    x->mem = sim_xcalloc(MEM_SLOTS, sizeof *x->mem);
}

/* {============================================================= workers
 *
 * With jobs > 1 the dimension tuples are shared out among that many child
 * processes (runner_fork_workers).  Each takes the next tuple nobody took
 * (a counter in shared memory), so the load evens out however unequal the
 * tuples are, and keeps its own best `keep` of each list.  A worker
 * numbers its candidates in its own order, which is the enumeration order
 * restricted to its tuples (it takes them in ascending order), so its
 * heaps break ties as the search alone would.  It replies once every tuple
 * is done, when the candidates of each tuple (shared memory too) give
 * every candidate its index in the enumeration: with each kept
 * candidate's tuple and position in it, the parent numbers them and
 * offers them to its own heaps as it reads them, which end with the best
 * `keep` of the union, the lists of one process searching.  A worker
 * whose estimate fails stops the others taking tuples; every tuple taken
 * still ends, so the first failure in the enumeration order is the one a
 * search alone stops at. */

/* A worker's reply: this, then the wire entries of each list in turn. */
typedef struct reply_head {
    sim_rc rc;
    char msg[SIM_ERR_LEN];
    long long failed_tuple;            /* rc != SIM_OK: where */
    srch_counts counts;
    long long floored;
    int n[SRCH_LISTS];
} reply_head;

typedef struct wire {
    long long tuple;
    int offset;                        /* position among the tuple's candidates */
    srch_candidate c;
} wire;

typedef struct workers {
    searcher *x;
    reply_head *heads;                 /* one per worker */
    long long *first;                  /* index of each tuple's first candidate (tuples + 1) */
} workers;

/* The tuple of a worker's candidate of its own index i, and i's position
 * in it: the last tuple the worker took whose start is at most i (a tuple
 * without candidates starts where the next one does). */
static wire wire_of(const searcher *x, const srch_candidate *c)
{
    long long lo = 0, hi = x->nmine - 1;
    while (lo < hi) {
        long long mid = (lo + hi + 1) / 2;
        if (x->start[mid] <= c->index)
            lo = mid;
        else
            hi = mid - 1;
    }
    wire w;
    memset(&w, 0, sizeof w);
    w.tuple = x->mine[lo];
    w.offset = (int)(c->index - x->start[lo]);
    w.c = *c;
    return w;
}

static bool search_over(const shared *sh, long long tuples)
{
    return atomic_load(&sh->stop) || atomic_load(&sh->done) == tuples;
}

static sim_rc worker_main(int worker, int fd, void *ctx)
{
    (void)worker;
    searcher *x = ((workers *)ctx)->x; /* this process's copy */
    x->mine = sim_xcalloc((size_t)x->tuples + 1, sizeof *x->mine);
    x->start = sim_xcalloc((size_t)x->tuples + 1, sizeof *x->start);
    x->claimed = atomic_fetch_add(&x->sh->next, 1);
    cfg_strategy s = x->rq->base;
    sim_err err = {{0}};
    reply_head h;
    memset(&h, 0, sizeof h);
    h.rc = turn(x, 0, x->dims_end, &s, dims_leaf, &err);
    /* the others' tuples too, so that every tuple's count is known */
    while (!search_over(x->sh, x->tuples)) nanosleep(&(struct timespec){0, 2000000}, NULL);
    sim_strlcpy(h.msg, err.msg, sizeof h.msg);
    h.failed_tuple = x->failed_tuple;
    h.counts = x->res->counts;
    h.counts.probes = est_probes(x->est);
    h.floored = x->res->floored;
    bool sends = !atomic_load(&x->sh->stop);
    for (int l = 0; l < SRCH_LISTS; l++) h.n[l] = sends ? x->list[l].n : 0;
    if (runner_write_all(fd, &h, sizeof h) != 0) return SIM_EIO;
    for (int l = 0; l < SRCH_LISTS; l++)
        for (int i = 0; i < h.n[l]; i++) {
            wire w = wire_of(x, &x->list[l].a[i]);
            if (runner_write_all(fd, &w, sizeof w) != 0) return SIM_EIO;
        }
    return SIM_OK;
}

/* The indices of every tuple's first candidate, once all are counted. */
static void tuple_starts(workers *ws)
{
    const searcher *x = ws->x;
    ws->first = sim_xcalloc((size_t)x->tuples + 1, sizeof *ws->first);
    for (long long t = 0; t < x->tuples; t++) ws->first[t + 1] = ws->first[t] + x->sh->count[t];
}

static bool worker_reply(int worker, int fd, void *ctx)
{
    workers *ws = ctx;
    searcher *x = ws->x;
    reply_head *h = &ws->heads[worker];
    if (runner_read_all(fd, h, sizeof *h) != sizeof *h) return false;
    for (int l = 0; l < SRCH_LISTS; l++)
        if (h->n[l] < 0 || h->n[l] > x->list[l].cap) return false;
    for (int l = 0; l < SRCH_LISTS; l++)
        for (int i = 0; i < h->n[l]; i++) {
            if (!ws->first) tuple_starts(ws);
            wire w;
            if (runner_read_all(fd, &w, sizeof w) != sizeof w || w.tuple < 0 || w.tuple >= x->tuples) return false;
            srch_candidate *c = &w.c;
            c->index = (int)(ws->first[w.tuple] + w.offset);
            heap *hp = &x->list[l];
            if (heap_wants(hp, c->est.step_s, c->peak_bytes, c->index)) heap_put(hp, c);
        }
    return true;
}

static void worker_tick(void *ctx)
{
    searcher *x = ((workers *)ctx)->x;
    x->rq->progress(x->rq->progress_ctx, atomic_load(&x->sh->done), x->tuples);
}

/* The search of x shared out among n workers: x's counts and heaps get the
 * union's, as a search alone would have them. */
static sim_rc search_in_workers(searcher *x, int n, sim_err *err)
{
    size_t bytes = sizeof(shared) + (size_t)x->tuples * sizeof(long long);
    shared *sh = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED)
        return sim_fail(err, SIM_EINTERNAL, "heptasim: search: cannot map memory for its workers: %s",
                        strerror(errno));
    atomic_init(&sh->next, 0);
    atomic_init(&sh->done, 0);
    atomic_init(&sh->stop, 0);
    x->sh = sh;
    workers ws = {x, sim_xcalloc((size_t)n, sizeof *ws.heads), NULL};
    sim_rc rc = runner_fork_workers(n, worker_main, worker_reply, x->rq->progress ? worker_tick : NULL, &ws, err);
    /* the first failure in the enumeration order, as a search alone stops at */
    long long failed = -1;
    for (int w = 0; rc == SIM_OK && w < n; w++)
        if (ws.heads[w].rc != SIM_OK && (failed < 0 || ws.heads[w].failed_tuple < failed)) failed = ws.heads[w].failed_tuple;
    for (int w = 0; rc == SIM_OK && failed >= 0 && w < n; w++)
        if (ws.heads[w].rc != SIM_OK && ws.heads[w].failed_tuple == failed)
            rc = sim_fail(err, ws.heads[w].rc, "%s", ws.heads[w].msg);
    srch_counts *k = &x->res->counts;
    for (int w = 0; rc == SIM_OK && w < n; w++) {
        const srch_counts *c = &ws.heads[w].counts;
        k->rejected += c->rejected;
        k->enumerated += c->enumerated;
        k->pruned_memory += c->pruned_memory;
        if (c->least_pruned_bytes > 0 && (k->least_pruned_bytes == 0 || c->least_pruned_bytes < k->least_pruned_bytes))
            k->least_pruned_bytes = c->least_pruned_bytes;
        k->estimated += c->estimated;
        k->estimated_megatron += c->estimated_megatron;
        k->estimated_twin_megatron += c->estimated_twin_megatron;
        k->probes += c->probes;
        x->res->floored += ws.heads[w].floored;
    }
    free(ws.first);
    free(ws.heads);
    munmap(sh, bytes);
    x->sh = NULL;
    return rc;
}

/* }============================================================= workers */

/* FNV-1a, 64 bits, of the text. */
static uint64_t fnv1a(uint64_t h, const char *text)
{
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
        h ^= *p;
        h *= 1099511628211ULL;
    }
    return h;
}

/* The fingerprint of what fixes the candidates and their indices: the
 * inputs, and the enumeration's counts, which change with the rules of the
 * space too (a newer simulator may number candidates differently). */
static void inputs_id(const srch_request *rq, const srch_counts *k, char out[17])
{
    uint64_t h = 1469598103934665603ULL;
    cfg_model model = *rq->model;
    model.description[0] = model.path[0] = '\0';
    cfg_platform platform = *rq->platform;
    platform.description[0] = platform.path[0] = '\0';
    cfg_platform_drop_band_records(&platform);
    void *trees[3] = {cfg_model_to_json(&model), cfg_platform_to_json(&platform),
                      cfg_strategy_fingerprint_json(&rq->base)};
    for (int i = 0; i < 3; i++) {
        char *text = trees[i] ? cJSON_PrintUnformatted(trees[i]) : NULL;
        h = fnv1a(h, text ? text : "?");
        cJSON_free(text);
        cJSON_Delete(trees[i]);
    }
    char tail[128];
    snprintf(tail, sizeof tail, "|%u|%s|%lld|%lld|%lld%s%s", rq->pinned, srch_space_name(rq->space), k->rejected,
             k->enumerated, k->pruned_memory, rq->replica_reduction ? "|dp" : "",
             rq->baseline == SRCH_BASELINE_A2A ? "|a2a" : "");
    h = fnv1a(h, tail);
    snprintf(out, 17, "%016llx", (unsigned long long)h);
}

static void heap_finish(heap *h, srch_candidate **out, int *n, const char *id)
{
    qsort(h->a, (size_t)h->n, sizeof *h->a, srch_cmp_estimate);
    for (int i = 0; i < h->n; i++) {
        cfg_strategy *s = &h->a[i].strategy;
        snprintf(s->name, sizeof s->name, "%s-%d", srch_space_name(h->a[i].space), h->a[i].index);
        cfg_strategy_compact(s, s->description, sizeof s->description);
        s->path[0] = '\0';
        sim_strlcpy(h->a[i].inputs_id, id, sizeof h->a[i].inputs_id);
    }
    *out = h->a;
    *n = h->n;
    h->a = NULL;
}

/* The space holds no valid strategy: bad input (SIM_EINVAL), with the rule
 * the simplest candidate breaks: the base strategy with every searched key
 * that is not pinned at its default (dimensions 1, dp derived).  A pin
 * that breaks a rule alone (tp_x=3 with 8 heads) is named so. */
static sim_rc no_valid_strategy(const srch_request *rq, sim_err *err)
{
    cfg_strategy s = rq->base;
    for (const cfg_key *k = cfg_strategy_keys; k->key; k++) {
        if (k->search <= 0 || (rq->pinned & srch_pin_of(k))) continue;
        cfg_value v;
        cfg_key_default(k, &v);
        cfg_key_set(k, &s, &v);
    }
    if (s.pp != rq->base.pp) s.first_stage_layers = s.last_stage_layers = 0; /* even split, as the search does */
    sim_err why = {{0}};
    char limits[400];
    srch_device_limits(rq->model, rq->platform->devices, rq->base.global_batch, limits, sizeof limits);
    if (cfg_check(rq->model, rq->platform, &s, &why) != SIM_OK && limits[0])
        return sim_fail(err, SIM_EINVAL, "heptasim: search: no valid strategy in the %s space: %s; the simplest "
                        "candidate: %s", srch_space_name(rq->space), limits, why.msg);
    if (why.msg[0])
        return sim_fail(err, SIM_EINVAL, "heptasim: search: no valid strategy in the %s space: %s",
                        srch_space_name(rq->space), why.msg);
    return sim_fail(err, SIM_EINVAL,
                    "heptasim: search: no valid strategy in the %s space of %d devices with these pinned keys (pin "
                    "fewer keys, or change the device count)",
                    srch_space_name(rq->space), rq->platform->devices);
}

void srch_pruned_reason(const srch_request *rq, const srch_counts *k, char *out, size_t cap)
{
    char least[32], usable[32], limits[400];
    srch_device_limits(rq->model, rq->platform->devices, rq->base.global_batch, limits, sizeof limits);
    if (k->least_pruned_bytes > 0)
        snprintf(out, cap, "the least memory a candidate needs is %s of %s usable per device%s%s",
                 sim_fmt_bytes(k->least_pruned_bytes, least, sizeof least),
                 sim_fmt_bytes(cfg_usable_hbm_bytes(rq->platform), usable, sizeof usable), limits[0] ? "; " : "",
                 limits);
    else
        snprintf(out, cap, "%s", limits);
}

sim_rc srch_run(const srch_request *rq, srch_result **out, sim_err *err)
{
    if (rq->keep < 1) return sim_fail(err, SIM_EINVAL, "heptasim: search: keep must be >= 1");
    if (rq->base.global_batch < 1)
        return sim_fail(err, SIM_EINVAL, "heptasim: search: global batch must be >= 1 (use --global-batch B)");
    /* the model and platform once; each candidate's own checks in check_shape */
    sim_rc prc = cfg_check_inputs(rq->model, rq->platform, err);
    if (prc != SIM_OK) return prc;
    /* a base strategy that allows fp8 (or pins it) needs a device with an FP8 peak */
    prc = cfg_check_precision(rq->platform, &rq->base, err);
    if (prc != SIM_OK) return prc;
    double t0 = sim_now_s();
    searcher x;
    memset(&x, 0, sizeof x);
    x.rq = rq;
    x.est = est_new(rq->model, rq->platform, err);
    if (!x.est) return SIM_EINVAL;
    x.res = sim_xcalloc(1, sizeof *x.res);
    x.twin_baseline = rq->baseline == SRCH_BASELINE_A2A ? SRCH_BASELINE_RING : SRCH_BASELINE_A2A;
    for (int l = 0; l < SRCH_LISTS; l++) {
        x.list[l].cap = l < LIST_TWIN || (rq->twin_too && rq->space == SRCH_SPACE_7D) ? rq->keep : 0;
        x.list[l].a = sim_xcalloc((size_t)x.list[l].cap + 1, sizeof *x.list[l].a);
    }
    x.capacity = cfg_usable_hbm_bytes(rq->platform);

    x.space = (cfg_space){.model = rq->model, .platform = rq->platform, .base = &rq->base,
                          .megatron = rq->space == SRCH_SPACE_MEGATRON,
                          .megatron_a2a_cp = rq->baseline == SRCH_BASELINE_A2A};
    levels_init(&x);
    cfg_strategy s = rq->base;
    sim_rc rc = turn(&x, 0, x.dims_end, &s, count_leaf, err);
    int workers = rq->jobs < x.tuples ? rq->jobs : (int)x.tuples;
    x.res->workers = workers > 1 ? workers : 1;
    if (rc == SIM_OK && workers > 1) {
        rc = search_in_workers(&x, workers, err);
    } else if (rc == SIM_OK) {
        rc = turn(&x, 0, x.dims_end, &s, dims_leaf, err);
        x.res->counts.probes = est_probes(x.est);
    }
    if (rq->progress && rc == SIM_OK) rq->progress(rq->progress_ctx, x.tuples, x.tuples);
    free(x.lv);
    free(x.mem);
    est_free(x.est);
    if (rc == SIM_OK && x.res->counts.enumerated == 0) rc = no_valid_strategy(rq, err);
    if (rc != SIM_OK) {
        for (int l = 0; l < SRCH_LISTS; l++) free(x.list[l].a);
        free(x.res);
        return rc;
    }
    inputs_id(rq, &x.res->counts, x.res->inputs_id);
    if (rq->space == SRCH_SPACE_7D) {
        srch_request twin = *rq;
        twin.baseline = x.twin_baseline;
        inputs_id(&twin, &x.res->counts, x.res->twin_id);
    }
    heap_finish(&x.list[LIST_ALL], &x.res->best, &x.res->nbest, x.res->inputs_id);
    heap_finish(&x.list[LIST_MEG], &x.res->best_megatron, &x.res->nbest_megatron, x.res->inputs_id);
    heap_finish(&x.list[LIST_TWIN], &x.res->twin_megatron, &x.res->ntwin_megatron, x.res->twin_id);
    x.res->baseline = rq->baseline;
    x.res->twin_kept = x.list[LIST_TWIN].cap > 0;
    x.res->seconds = sim_now_s() - t0;
    *out = x.res;
    return SIM_OK;
}

static srch_candidate *twin_list(const srch_candidate *a, int n, const srch_result *t, const cfg_platform *p)
{
    srch_candidate *out = sim_xcalloc((size_t)n + 1, sizeof *out);
    const srch_candidate none = {0};
    for (int i = 0; i < n; i++) {
        out[i] = a[i];
        srch_take_simulation(&out[i], &none); /* as searched: a simulation of the twin is borrowed */
        out[i].megatron_style = srch_megatron_style(&out[i].strategy, p, t->baseline);
        sim_strlcpy(out[i].inputs_id, t->inputs_id, sizeof out[i].inputs_id);
    }
    return out;
}

srch_result *srch_result_twin(const srch_result *r, const cfg_platform *p)
{
    if (!r->twin_kept) return NULL;
    srch_result *t = sim_xcalloc(1, sizeof *t);
    *t = *r;
    t->baseline = r->baseline == SRCH_BASELINE_A2A ? SRCH_BASELINE_RING : SRCH_BASELINE_A2A;
    t->counts.estimated_megatron = r->counts.estimated_twin_megatron;
    t->counts.estimated_twin_megatron = r->counts.estimated_megatron;
    sim_strlcpy(t->inputs_id, r->twin_id, sizeof t->inputs_id);
    sim_strlcpy(t->twin_id, r->inputs_id, sizeof t->twin_id);
    t->best = twin_list(r->best, r->nbest, t, p);
    t->best_megatron = twin_list(r->twin_megatron, r->ntwin_megatron, t, p);
    t->nbest_megatron = r->ntwin_megatron;
    t->twin_megatron = twin_list(r->best_megatron, r->nbest_megatron, t, p);
    t->ntwin_megatron = r->nbest_megatron;
    t->seconds = 0;
    t->from_twin = true;
    return t;
}

void srch_result_cut(srch_result *r, int keep)
{
    if (r->nbest > keep) r->nbest = keep;
    if (r->nbest_megatron > keep) r->nbest_megatron = keep;
    if (r->ntwin_megatron > keep) r->ntwin_megatron = keep;
}

void srch_result_free(srch_result *r)
{
    if (!r) return;
    free(r->best);
    free(r->best_megatron);
    free(r->twin_megatron);
    free(r);
}
