/* search.h - design-space exploration: enumerate every valid strategy of a
 * space, prune those that do not fit in device memory, rank the rest with a
 * fast analytic estimate of the step time, simulate the best in SimGrid and
 * join the results (also across shards) into one ranking.
 *
 * The ranking uses the analytic estimator (estimate/estimate.h), which
 * replays the same workload without contention.  An estimate is never
 * reported as a simulated result: records keep the two in separate keys.
 *
 * Files: enumerate.c (the space), search.c (enumerate + prune + rank,
 * srch_run), candidate.c (a candidate as report's record row and back;
 * the records' JSON and files are report/records.c's), sweep.c (simulation of the chosen
 * candidates, ranking and ties, agreement, reasons), table.c (alike
 * candidates, the rows of the ranked tables report/ranking.c prints),
 * shard.c (a shard's candidates),
 * resume.c (results taken back from a records file), merge.c (shards
 * joined), compare.c (compare's candidates, the bests and the speedup),
 * session.c (a sweep or compare from search to ranking), summary.c (the rows
 * of their text and JSON summaries, which report/search_text.c and
 * search_json.c write), default.c (the strategy of a run that names
 * none), objective.c (the simulated candidates ranked by goodput). */
#ifndef HEPTASIM_SEARCH_H
#define HEPTASIM_SEARCH_H

#include <stdbool.h>
#include <stdio.h>

#include "../config/config.h"
#include "../config/keys.h"
#include "../engine/engine.h"
#include "../estimate/estimate.h"
#include "../goodput/goodput.h"
#include "../model/model.h"
#include "../report/report.h"
#include "../workload/workload.h"

/* ------------------------------------------------------------- the space */

typedef enum srch_space {
    SRCH_SPACE_7D = 0,    /* every dimension, fusion and rank order */
    SRCH_SPACE_MEGATRON,  /* the Megatron-style part (srch_megatron_style) */
    SRCH_NSPACES
} srch_space;

/* The spaces' names, as --space and records write them: "megatron", "7d"
 * (enumerate.c); srch_space_name looks one up (static). */
extern const sim_enum_name srch_space_names[SRCH_NSPACES];
const char *srch_space_name(srch_space sp);

/* The bit of a strategy key in srch_request.pinned: a search holds a
 * pinned key at the base strategy's value instead of enumerating it.
 * Returns 0 for a key that cannot be pinned (global_batch, name, ...);
 * keys pinned together (vpp and schedule) share a bit.  The rows of the
 * strategy key table say which (config/keys.h). */
unsigned srch_pin_of_key(const char *key);

/* The Megatron-style baseline: what a Megatron-Core (0.13) user can
 * configure (docs/study.md lists its flags).  Its context parallelism is
 * ring attention alone (--cp-comm-type p2p), or also Megatron-Core's
 * all-to-all CP (a2a, and a2a+p2p with
 * --hierarchical-context-parallel-sizes): cp_ulysses > 1 beside cp_ring. */
typedef enum srch_baseline {
    SRCH_BASELINE_RING = 0,      /* --cp-comm-type p2p */
    SRCH_BASELINE_A2A,           /* --cp-comm-type p2p, a2a or a2a+p2p */
    SRCH_NBASELINES
} srch_baseline;

/* The baselines' names, as --megatron-cp and studies write them: "ring",
 * "a2a" (enumerate.c); srch_baseline_name looks one up (static). */
extern const sim_enum_name srch_baseline_names[SRCH_NBASELINES];
const char *srch_baseline_name(srch_baseline b);
/* The subspace in a few words, its clauses joined (static). */
const char *srch_baseline_text(srch_baseline b);

/* Whether s (checked) is in the Megatron-style subspace of baseline b on
 * platform p: tp_y = 1, cp_ulysses = 1 (any with SRCH_BASELINE_A2A), no
 * fusion, a schedule of Megatron-LM's (gpipe, 1f1b, interleaved), zero 0
 * or 1 (the distributed optimizer), one of Megatron-Core's rank orders
 * (cfg_order_megatron), and the TP group fits inside one node. */
bool srch_megatron_style(const cfg_strategy *s, const cfg_platform *p, srch_baseline b);

/* The clauses of the Megatron-style rule that s breaks under baseline b
 * on platform p, in words joined by ", " ("2D TP (tp_y 2), ZeRO-3"), into
 * out; "" when s is Megatron-style. */
void srch_megatron_breaches(const cfg_strategy *s, const cfg_platform *p, srch_baseline b, char *out, size_t cap);

/* What the device count's factors leave of the space (enumerate.c), for
 * the messages of a search that finds nothing: "1000 = 2^3 x 5^3 limits
 * dp to 8 (a divisor of the global batch 1024), tp_x to 8 (a divisor of
 * the 64 heads), ep to 8 (a divisor of the 128 experts)", naming each
 * dimension whose largest value (the greatest common divisor of the
 * devices and what it must divide) is below both; "" when none is. */
void srch_device_limits(const cfg_model *m, int devices, int global_batch, char *out, size_t cap);

/* ----------------------------------------------------------- candidates */

typedef enum srch_sim_state {
    SRCH_SIM_NONE = 0,   /* not simulated: the estimate is all there is */
    SRCH_SIM_DONE,       /* simulated: the sim_* fields hold its results */
    SRCH_SIM_FAILED      /* the simulation failed: error holds the reason */
} srch_sim_state;

typedef struct srch_candidate {
    int index;                    /* position in the enumeration order of its space */
    srch_space space;             /* the space of the search that produced it */
    char inputs_id[17];           /* fingerprint of the search's inputs (srch_result.inputs_id) */
    bool megatron_style;
    cfg_strategy strategy;        /* checked: dp and etp resolved */
    double peak_bytes;            /* memory of the peak stage (mdl_peak_memory) */
    double capacity_bytes;        /* HBM minus the reserved part */
    est_result est;
    /* simulation */
    srch_sim_state state;
    double step_time_s, mfu, tokens_per_s;
    double compute_s, bubble_s, optimizer_s;  /* critical rank */
    double exposed_s[WL_NDIMS];   /* critical rank, by dimension */
    double comm_s[WL_NDIMS];      /* time collectives of the dimension were in flight */
    bool approximate;             /* simulated with one data-parallel replica for all */
    char error[SIM_ERR_LEN];
} srch_candidate;

/* ------------------------------------------------------------ the search */

typedef struct srch_counts {
    long long rejected;       /* combinations the validity rules (cfg_check) turned down */
    long long enumerated;     /* valid strategies of the space */
    long long pruned_memory;  /* of those, the ones that do not fit in device memory */
    long long estimated;      /* the rest, each with an analytic estimate */
    long long estimated_megatron; /* of those, the Megatron-style ones */
    long long estimated_twin_megatron; /* and the Megatron-style ones under the other baseline (twin_too) */
    long long probes;         /* workload probes the estimates needed */
    double least_pruned_bytes;/* the smallest peak memory of the pruned ones (0: none pruned) */
} srch_counts;

/* Called now and then while searching: done of total dimension tuples. */
typedef void (*srch_progress_fn)(void *ctx, long long done, long long total);

typedef struct srch_request {
    const cfg_model *model;
    const cfg_platform *platform;
    cfg_strategy base;            /* global_batch, moe_capacity_factor, overlap_tp_comm, pinned values */
    unsigned pinned;              /* keys taken from base (srch_pin_of_key bits) */
    srch_space space;
    srch_baseline baseline;       /* what counts as Megatron-style (in inputs_id when not ring) */
    int keep;                     /* best candidates kept per list, >= 1 */
    bool twin_too;                /* 7D space: also keep the Megatron-style best under the other
                                   * baseline, for the twin search (srch_result_twin) */
    bool replica_reduction;       /* candidates will be simulated with --symmetry dp (in inputs_id) */
    int jobs;                     /* child processes that share the search out (<= 1: none, this one
                                   * searches); the result is the same for every value */
    bool no_floor;                /* estimate every candidate in full (est_floor unused): the same
                                   * result, slower; for the tests that show it is the same */
    srch_progress_fn progress;    /* may be NULL */
    void *progress_ctx;
} srch_request;

typedef struct srch_result {
    srch_counts counts;
    srch_candidate *best;         /* the best `keep` of the space by estimate (then index) */
    int nbest;
    srch_candidate *best_megatron;/* the best `keep` Megatron-style candidates, same order */
    int nbest_megatron;
    double seconds;               /* wall time of enumeration, pruning and estimation */
    int workers;                  /* processes that searched (1: the caller's alone) */
    char inputs_id[17];           /* 16 hex digits: FNV-1a of model, platform, base strategy, pins,
                                   * space and the enumeration counts, which fix every candidate's
                                   * index; records carry it so that resume and merge refuse results
                                   * of another search (or of a simulator that numbers differently) */
    char twin_id[17];             /* 7D space: the inputs_id of the same search with the other baseline
                                   * (same candidates and indices); "" for the Megatron space */
    srch_baseline baseline;       /* the request's */
    srch_candidate *twin_megatron;/* twin_too: the best `keep` Megatron-style candidates under the
                                   * other baseline (their flags and inputs_id this search's) */
    int ntwin_megatron;
    bool twin_kept;               /* twin_too was asked (and the space is 7D) */
    bool from_twin;               /* made by srch_result_twin: searched by the twin (seconds 0) */
    long long floored;            /* estimated candidates whose closed form was skipped: the floor
                                   * of their estimate (est_floor) was worse than every candidate
                                   * kept (work, which changes with jobs; not part of the result) */
    bool cached;                  /* taken from the search cache (srch_cache_load; seconds: reading it) */
} srch_result;

/* Cut r's lists to their best keep (each is the best of its list in
 * order, so they are what a search keeping keep gives). */
void srch_result_cut(srch_result *r, int keep);

/* {============================================================ the cache
 *
 * The search cache (cache.c): the kept lists of a search under a key of
 * its inputs and of the executable, in $HEPTASIM_CACHE (a directory, or
 * "off"), else $XDG_CACHE_HOME/heptasim, else ~/.cache/heptasim. */

/* The cache directory into out (false: none, the cache is off). */
bool srch_cache_dir(char *out, size_t cap);

/* The result of an earlier search of rq kept with at least rq->keep per
 * list, its lists cut to rq->keep, and its file in path; NULL when there
 * is none.  A file that cannot be trusted (damaged, another build's,
 * another search's) is ignored with one line on w (may be NULL).  Free
 * with srch_result_free. */
srch_result *srch_cache_load(const srch_request *rq, char *path, size_t cap, FILE *w);

/* Keep res, the result of srch_run(rq), in the cache (written to a
 * temporary file, then renamed).  A failure costs one line on w and
 * nothing else. */
void srch_cache_store(const srch_request *rq, const srch_result *res, FILE *w);

/* }============================================================ */

/* Enumerate the space, prune by memory and estimate every candidate that
 * fits, keeping the best.  Returns SIM_OK and *out (free with
 * srch_result_free), SIM_EINVAL when the request is unusable (message names
 * the option), or an estimator error. */
sim_rc srch_run(const srch_request *rq, srch_result **out, sim_err *err);

/* Why a search of rq with counts k kept no candidate, for its message:
 * the least memory a pruned candidate needs against the usable memory,
 * and what the device count's factors limit (srch_device_limits). */
void srch_pruned_reason(const srch_request *rq, const srch_counts *k, char *out, size_t cap);
void srch_result_free(srch_result *r);

/* The result the same search gives under the other baseline, from one that
 * kept its twin's list (twin_too): the same counts, candidates and
 * indices, the lists swapped, the Megatron-style flags of platform p and
 * the fingerprints the twin's (inputs_id and twin_id exchanged), seconds 0
 * and from_twin set.  It equals what srch_run gives for the twin request
 * (tested), without enumerating the space again.  NULL when r kept no
 * twin list.  Free with srch_result_free. */
srch_result *srch_result_twin(const srch_result *r, const cfg_platform *p);

/* Order of a ranking by estimate: estimate, then peak memory, then index
 * (the enumeration order, itself an order of the key values) (qsort
 * comparator of srch_candidate).  Times that agree to a relative 1e-9
 * (rounding noise) are equal. */
int srch_cmp_estimate(const void *a, const void *b);

/* Order of a ranking by simulation: simulated ones by step time, then
 * failed ones, then the rest by estimate; ties by peak memory, then index
 * (qsort comparator). */
int srch_cmp_simulated(const void *a, const void *b);

/* Two step times are a tie when they differ by at most SRCH_TIE_REL of the
 * faster one, or by at most SRCH_TIE_ABS_S: 0.1 % is well below what the
 * cost model can tell apart (the estimate and the simulation agree to a
 * few percent), so a smaller gap is not a reason to prefer a strategy.
 * Rankings put tied candidates in the order of their peak memory
 * (srch_order_ties), and the reasons say "tie". */
#define SRCH_TIE_REL 1e-3
#define SRCH_TIE_ABS_S 1e-6
bool srch_tie(double a_s, double b_s);

/* Reorders rows[0..n), sorted by time (time_of), in groups of ties: from
 * the fastest row not yet placed, every later row within a tie of it
 * (srch_tie) joins its group, and a group is ordered by peak memory, then
 * index.  simulated: the simulated step time, else the estimate. */
void srch_order_ties(srch_candidate **rows, int n, bool simulated);

/* ------------------------------------------------------------ simulation */

/* Called in the parent as each simulation finishes (completion order). */
typedef void (*srch_done_fn)(void *ctx, srch_candidate *c);

/* Simulate the n candidates *cands[i] in child processes, `jobs` at a time,
 * with engine options opt (NULL: the defaults), filling their simulation
 * fields (state, step time, MFU, breakdown, approximate, or error).
 * Returns SIM_OK unless a child could not be started. */
sim_rc srch_simulate(srch_candidate **cands, int n, const cfg_model *m, const cfg_platform *p, int jobs,
                     const eng_options *opt, srch_done_fn done, void *ctx, sim_err *err);

/* Agreement of the analytic ranking with the simulation on the simulated
 * candidates: Spearman rank correlation of estimate and step time
 * (gsl_stats_spearman; NAN with fewer than 2), and the largest relative gap
 * |estimate - simulated| / simulated with the index of its candidate (-1
 * when none). */
typedef rpt_agreement srch_agreement; /* report.h */

void srch_agreement_compute(const srch_candidate *c, int n, srch_agreement *out);

/* Why candidate a beats b, from the per-dimension breakdown (simulated when
 * both are simulated, else estimated): the component that saves the most
 * and the strategy keys behind it, e.g. "less bubble: pp 4 vs 8".  Writes
 * at most cap bytes. */
void srch_reason(const srch_candidate *a, const srch_candidate *b, const cfg_platform *p, char *out, int cap);

/* --------------------------------------------------------------- records */

/* The JSONL record of a candidate, as a cJSON object the caller deletes
 * (void* keeps cJSON.h out of this header).  Keys: index, space,
 * megatron_style, strategy, estimate_step_time_s, estimate, simulated,
 * step_time_s, mfu, tokens_per_s, breakdown, dimensions (these five when
 * simulated), final (true when simulated: a failed simulation is not final
 * and --resume retries it), memory, error (when the simulation failed),
 * inputs_id (rpt_record_to_json). */
void *srch_record_to_json(const srch_candidate *c);

/* The row of c that report writes as its record (rpt_record_to_json),
 * and the candidate of a row report read back (its space through
 * srch_space_names). */
void srch_candidate_record(const srch_candidate *c, rpt_record *r);
void srch_candidate_from_record(const rpt_record *r, srch_candidate *c);

/* Read a record back into *out (rpt_record_from_json, with the space
 * names of srch_space_names); origin names it in messages ("a.jsonl:
 * line 3").  Returns SIM_EINVAL with a message naming the key when the
 * record is incomplete or invalid. */
sim_rc srch_record_from_json(const void *json, const char *origin, srch_candidate *out, sim_err *err);

/* Read every record of a JSONL file through the one reader of records
 * (rpt_records_read: junk lines skipped and counted in *skipped), appending
 * to *arr (grown, *n and *cap updated; the caller frees *arr).  A
 * JSON object that is not a valid record (a missing or unknown key, a
 * figure that is not finite and positive, another fingerprint format) is
 * an error naming the file, line and key.  Returns SIM_EINVAL (bad
 * content, missing file), or SIM_OK. */
sim_rc srch_jsonl_read(const char *path, srch_candidate **arr, int *n, int *cap, rpt_skipped *skipped, sim_err *err);

/* Append the record of c as a line to f and flush it (rpt_record_append).
 * Returns SIM_EIO naming path on a write error. */
sim_rc srch_jsonl_write(FILE *f, const char *path, const srch_candidate *c, sim_err *err);

/* ------------------------------------------------------------- printing */

/* Whether a and b are the same strategy in effect: both simulated (then
 * their simulated figures count) or both not (their estimates), and step
 * time, compute, bubble, optimizer, the exposed time of every dimension
 * and the peak memory agree to SRCH_SAME_REL of the step (of the memory),
 * so that what differs between them (an order that only moves dimensions
 * of size 1, an overlap switch with nothing to overlap, traffic that stays
 * hidden) does nothing for this model and platform.  An estimate has no traffic figure,
 * so two estimated candidates must also agree in the keys that set the
 * traffic (the dimensions, micro_batch, sequence_parallel, fusion, zero and
 * the order). */
#define SRCH_SAME_REL 1e-6
bool srch_alike(const srch_candidate *a, const srch_candidate *b);

/* Folds rows[0..n) (in ranked order) into groups of alike candidates:
 * same_as[i] gets the position of the first row rows[i] is alike to, i
 * itself when none; alike rows lie within a tie of each other, so only
 * those are compared. */
void srch_fold_alike(const srch_candidate *const *rows, int n, int *same_as);

/* Ranked table, printed by rpt_print_ranking: rank, strategy, estimate,
 * simulated step time, MFU, memory and the reason each row beats the next
 * one (srch_reason).  Alike rows
 * (srch_fold_alike) are one row, whose strategy says how many it stands
 * for ("(+2 alike)"); ranks count the rows printed. */
void srch_print_table(FILE *out, const srch_candidate *const *rows, int n, const cfg_platform *p);

/* The rows of that table into *out (allocated, the caller frees it);
 * returns how many. */
int srch_ranked_rows(const srch_candidate *const *rows, int n, const cfg_platform *p, rpt_ranked_row **out);

/* ------------------------------------------------------------- rankings */

/* Candidates in simulated order (srch_cmp_simulated: simulated by step
 * time, then failed, then the rest), how many were simulated or failed, and
 * the agreement of estimate and simulation on them. */
typedef struct srch_ranking {
    srch_candidate **rows;        /* n pointers (owned) to the caller's candidates */
    int n;
    int simulated, failed;        /* rows in state SRCH_SIM_DONE, SRCH_SIM_FAILED */
    srch_agreement agreement;
} srch_ranking;

/* Rank the n candidates *cands[i] (sweep.c).  Free with srch_ranking_free
 * (a zeroed ranking is fine); the candidates stay the caller's. */
void srch_ranking_make(srch_candidate *const *cands, int n, srch_ranking *out);
void srch_ranking_free(srch_ranking *r);

/* ------------------------------------------------- shards, resume, merge */

/* The candidates a shard simulates (shard.c): of the first `top` of
 * res->best (estimate order), those at positions i with i % count == index;
 * all of them when count <= 1.  Writes pointers into res->best to out
 * (capacity top) and returns how many.  The same inputs give every shard
 * the same split, so shards merged rank as one sweep. */
int srch_shard(srch_result *res, int top, int index, int count, srch_candidate **out);

/* What srch_resume took from the records. */
typedef struct srch_resumed {
    int resumed;                  /* chosen candidates that got their results from the file */
    int ignored;                  /* records of candidates not chosen this time, left as they are */
    int retried;                  /* chosen candidates whose record is a failure (not final): simulated again */
    int borrowed;                 /* chosen candidates that got their simulation from the twin's records */
    rpt_skipped skipped;          /* unreadable lines of the file (srch_jsonl_read) */
} srch_resumed;

/* Carry on an interrupted sweep (resume.c): every record of the JSONL file
 * path (the sweep's --out) must come from the search of inputs_id and
 * space; a final record (simulated) of one of the n chosen candidates
 * (same index, same strategy) gives its simulation to the candidate when
 * the candidate has none yet; a failed one does not (it is retried).  A torn last line (an interrupted write) is cut off the file so
 * that appended records start on a line of their own.  A missing file is a
 * fresh start.  Returns SIM_OK and *out; SIM_EINVAL for an unreadable
 * record or one of another search (the message names the file and says to
 * use another one); SIM_EIO when the torn line cannot be cut. */
sim_rc srch_resume(const char *path, const char *inputs_id, srch_space space, srch_candidate *const *chosen, int n,
                   srch_resumed *out, sim_err *err);

/* Borrow from the records file of a compare's twin (resume.c): the same
 * search with the other Megatron-style baseline (srch_result.twin_id).
 * Each final record of twin_id and space whose index and strategy are
 * those of one of the n chosen candidates not simulated yet gives that
 * candidate its simulation (only: index, inputs_id and the Megatron-style
 * flag stay its own).  Records of any other search, failed ones, a missing
 * or unreadable file are passed over: borrowing only saves simulations.
 * Returns how many candidates borrowed one. */
int srch_borrow(const char *path, const char *twin_id, srch_space space, srch_candidate *const *chosen, int n);

/* The shards of one sweep joined (merge.c). */
typedef struct srch_merged {
    srch_candidate *records;      /* every record of the files, in file order (owned) */
    int nrecords;
    srch_ranking ranking;         /* one row per candidate, into records */
    rpt_skipped skipped;          /* unreadable lines of all the files (first_line: of the first such file) */
    const char *skipped_path;     /* the first file with skipped lines (one of paths), or NULL */
} srch_merged;

/* Read the npaths JSONL files and keep one record per candidate: of a
 * candidate's records the first simulated one, else the first failed one,
 * else its first.  Every record must come from one search (same space and
 * inputs_id) and the records of one candidate must hold the same strategy;
 * otherwise SIM_EINVAL naming the two files.  An unreadable file or record
 * is SIM_EINVAL naming it, and so is a file with unreadable lines and no
 * record at all; unreadable lines beside records are counted in skipped.
 * Free *out with srch_merged_free (also after a
 * failure). */
sim_rc srch_merge(const char *const *paths, int npaths, srch_merged *out, sim_err *err);
void srch_merged_free(srch_merged *m);

/* ------------------------------------------------ the default strategy */

/* Sequences per step of the base strategy a search starts from when no
 * strategy is named (default.c). */
#define SRCH_BASE_GLOBAL_BATCH 1024

/* The names of the strategies srch_default_strategy derives. */
#define SRCH_DERIVED_NAME "derived (best Megatron-style by estimate)"
#define SRCH_DERIVED_7D_NAME "derived (best 7D by estimate)"

/* The generic base strategy of a search (global batch
 * SRCH_BASE_GLOBAL_BATCH, every other key at its default) named name,
 * with the strategy items of ov applied.  SIM_EINVAL for a bad item. */
sim_rc srch_base_strategy(const cfg_overrides *ov, const char *name, cfg_strategy *out, sim_err *err);

/* The srch_request.pinned bits of the strategy keys ov sets (dp=0 on the
 * base pins nothing: dp is derived). */
unsigned srch_pins_of_overrides(const cfg_overrides *ov, const cfg_strategy *base);

/* The strategy of a run that names none: the best candidate of the
 * Megatron-style space by the analytic estimate (srch_run, keep 1) on the
 * base of srch_base_strategy, with the keys ov sets pinned; of the whole
 * 7D space when ov sets tp_y > 1, cp_ulysses > 1 or fuse_tpy_cp.  *out is
 * checked (dp resolved), named SRCH_DERIVED_NAME (SRCH_DERIVED_7D_NAME)
 * and described by its compact form.  SIM_EOOM with one line when no candidate fits; else the
 * search's errors. */
sim_rc srch_default_strategy(const cfg_model *m, const cfg_platform *p, const cfg_overrides *ov, cfg_strategy *out,
                             sim_err *err);

/* -------------------------------------------------------- sweep, compare */

/* A sweep (the best estimates of one space simulated) or a compare (the
 * best of the whole 7D space against the best Megatron-style strategies). */
typedef struct srch_sweep_request {
    srch_request search;          /* keep and replica_reduction are set by the run */
    int top;                      /* candidates simulated (compare: of each space), >= 1 */
    int extra;                    /* sweep: best estimates kept beyond top, not simulated */
    int shard_index, shard_count; /* sweep: this shard of the top (count <= 1: all) */
    int jobs;                     /* simulations at once */
    eng_options engine;           /* of the simulations (symmetry) */
    const char *out_path;         /* JSONL records streamed as simulations finish (NULL: none) */
    bool resume;                  /* first take the results in out_path (srch_resume) */
    const char *twin_path;        /* compare: records of its twin, to borrow from (srch_borrow; NULL: none) */
    srch_result *searched;        /* compare: the search of this request already run (srch_result_twin
                                   * of its twin's), used instead of searching; the sweep takes it over
                                   * (NULL: search) */
    cfg_overrides overrides;      /* the --set items of the inputs, for the documents (n 0: none) */
    srch_progress_fn sim_progress;/* simulations done of total (may be NULL) */
    void *sim_progress_ctx;
    const cfg_band *band;         /* how far to trust the platform's step times (NULL: not known) */
    bool no_cache;                /* search again, and keep nothing in the search cache (--no-cache) */
    double budget_s;              /* sweep --budget: after the top, top more of the best estimates at a time
                                   * until the simulated best holds for a round, within this wall time of
                                   * simulation (0: the top alone) */
    FILE *warn;                   /* where the cache's warnings go (NULL: nowhere) */
} srch_sweep_request;

/* The best strategies of the two spaces, as compare (and the report of a
 * sweep) names them: the first simulated candidate of each in ranked order
 * (step time, ties by peak memory: srch_ranking_make), so that the best is
 * the first row of the table.  The speedup is computed here only; with
 * ties broken by memory it can be a little under 1 (a tie, srch_tie). */
typedef struct srch_comparison {
    const srch_candidate *megatron; /* best simulated Megatron-style candidate (NULL: none) */
    const srch_candidate *best;     /* best simulated candidate of the 7D space (NULL: none) */
    double speedup;                 /* megatron step / best step (simulated); NAN without both */
    const cfg_band *band;           /* the request's band (NULL: not known) */
} srch_comparison;

typedef struct srch_sweep {
    srch_space space;             /* the space searched (compare: 7d) */
    srch_result *res;
    srch_candidate **chosen;      /* the candidates simulated (this shard's), into res (owned array) */
    int nchosen;
    int selected;                 /* sweep: the best estimates the shards share (min(top, nbest)) */
    srch_candidate **extra;       /* sweep: the next best estimates, not simulated (owned array) */
    int nextra;
    srch_ranking ranking;         /* chosen, in simulated order */
    srch_resumed resumed;
    double simulate_s;            /* wall time of the simulations */
    srch_comparison cmp;          /* the bests (compare: srch_compare_bests; sweep: srch_sweep_bests) */
    char cache_path[CFG_PATH_LEN];/* the search cache file the search was taken from ("": searched) */
    /* --budget */
    double sim_t0;                /* when the simulations began */
    int rounds;                   /* rounds of top more simulated */
    int best_seen;                /* index of the simulated best before the last round (-1: none) */
    bool best_held;               /* the last round left the simulated best as it was */
} srch_sweep;

/* The sweep of rq (session.c): search, keep top + extra, refuse when none
 * fits (SIM_EOOM "no strategy of the ... space fits"), take this shard's
 * part of the top, resume from out_path when asked, simulate what is left
 * (jobs at a time, each record appended to out_path as it finishes) and
 * rank.  The records file is locked for the sweep (a second writer gets
 * SIM_EIO naming it).  Returns SIM_OK; SIM_EINVAL, SIM_EIO for the records
 * file, SIM_EINTR after SIGINT/SIGTERM/SIGHUP (the finished records kept,
 * the message says where), or the search's error.  Free *out with srch_sweep_free (also after a failure). */
sim_rc srch_sweep_run(const srch_sweep_request *rq, srch_sweep *out, sim_err *err);

/* The compare of rq (session.c): search the 7D space keeping the top of
 * the space and of its Megatron-style part, simulate their union
 * (srch_compare_union) as srch_sweep_run does and pick both bests
 * (srch_compare_bests).  Same returns. */
sim_rc srch_compare_run(const srch_sweep_request *rq, srch_sweep *out, sim_err *err);
void srch_sweep_free(srch_sweep *s);

/* After a sweep or compare that ran: SIM_OK when no simulation failed;
 * else SIM_EINTERNAL with one line "heptasim <command>: N of M simulations
 * failed (first: ...)", which says that --resume retries them. */
sim_rc srch_sweep_failures(const srch_sweep_request *rq, const srch_sweep *s, const char *command, sim_err *err);

/* The candidates compare simulates (compare.c): res->best, then those of
 * res->best_megatron not among them (each candidate once).  Writes
 * pointers into res to out (capacity nbest + nbest_megatron) and returns
 * how many. */
int srch_compare_union(srch_result *res, srch_candidate **out);

/* After the union was simulated: gives the Megatron-style list the
 * results of the candidates simulated through res->best, and fills *out
 * with the fastest simulated candidate of each space (the Megatron-style
 * ones are 7D candidates too). */
void srch_compare_bests(srch_result *res, srch_candidate *const *chosen, int n, srch_comparison *out);

/* The same for the n candidates *rows[i] of a sweep: the best of those
 * that are Megatron-style and the best of all. */
void srch_sweep_bests(srch_candidate *const *rows, int n, srch_comparison *out);

/* The speedup of c as compare and the reports print it: "1.042x", "1.000x;
 * the best 7D strategy is Megatron-style", "0.999x, a tie (within 0.1 %)".
 * Returns false (out untouched) without a speedup. */
bool srch_speedup_text(const srch_comparison *c, char *out, int cap);

/* Whether the speedup of c is larger than the model's error on a ratio of
 * two step times on its platform: above 1 + 2 x the band's pair error (two
 * standard deviations of the error measured on pairs of published runs,
 * docs/validation.md).  False without a band or a speedup. */
bool srch_speedup_sure(const srch_comparison *c);
/* The same rule for a speedup and a band (NULL: none). */
bool srch_ratio_sure(const cfg_band *band, double speedup);

/* SIM_OK when both bests exist; else SIM_EOOM with the one line saying
 * which space has no simulated strategy (none fits, or every simulation
 * failed). */
sim_rc srch_compare_check(const srch_comparison *c, sim_err *err);

/* ------------------------------------------- the strategies -s names */

/* The strategy -s names (named.c): a compact form as a sweep prints it
 * (words apart by spaces, or one word starting "dp<N>": the generic base
 * strategy of srch_base_strategy with the tokens' values,
 * cfg_strategy_read_compact; named "compact"); ID@RECORDS, the strategy
 * of the record of candidate ID ("7d-6", its strategy's name) in the
 * records file RECORDS of a sweep's --out; else a file or a name from
 * strategies/ (cfg_load_strategy).  The overrides of ov apply to each and
 * name it as cfg_parse_strategy does.  SIM_EINVAL with one line naming the
 * word, the id or the file. */
sim_rc srch_load_strategy(const char *spec, const cfg_overrides *ov, cfg_strategy *out, sim_err *err);

/* The strategy of candidate c as a strategy file at path, described by
 * its compact form (save.c; rpt_write_json_doc: no truncated file). */
sim_rc srch_save_strategy(const char *path, const srch_candidate *c, sim_err *err);

/* One strategy file per row of the ranked table r (its simulated
 * candidates in order, alike ones once: srch_fold_alike) in the folder dir
 * (created when missing), named NN-ID.json (01-7d-6.json); *saved gets how
 * many.  SIM_EIO naming the folder or file that cannot be written. */
sim_rc srch_save_top(const char *dir, const srch_ranking *r, int *saved, sim_err *err);

/* ------------------------------------------------------------ summaries */

/* The text summaries (summary.c hands report/search_text.c the rows):
 * what was searched, simulated, the ranked table, the next best estimates,
 * the agreement and, for compare, both bests side by side. */
void srch_print_sweep(FILE *f, const srch_sweep_request *rq, const srch_sweep *s);
void srch_print_compare(FILE *f, const srch_sweep_request *rq, const srch_sweep *s);
void srch_print_merge(FILE *f, const srch_merged *m, int nfiles);

/* The JSON summaries, as cJSON trees the caller deletes (void*: no
 * cJSON.h here): command, inputs, counts, timing, agreement, ranking (and
 * estimated_only, or both bests and the speedup; merge: files and
 * counts). */
void *srch_sweep_to_json(const srch_sweep_request *rq, const srch_sweep *s);
void *srch_compare_to_json(const srch_sweep_request *rq, const srch_sweep *s);
void *srch_merge_to_json(const srch_merged *m, const char *const *paths, int npaths);

/* The records of the ranking, then (sweep) of the next best estimates, as
 * a cJSON array for rpt_write_sweep_html; and the report's title. */
void *srch_sweep_records_json(const srch_sweep *s);

void srch_sweep_title(const srch_sweep_request *rq, bool compare, char *out, int cap);

/* ------------------------------------------------------------ objective */

/* What sweep and compare rank their simulated candidates by (objective.c):
 * the step time, or goodput (docs/goodput.md). */
typedef enum srch_objective { SRCH_OBJ_STEP = 0, SRCH_OBJ_GOODPUT, SRCH_NOBJECTIVES } srch_objective;
/* "step", "goodput" (ORDER srch_objective) */
extern const sim_enum_name srch_objective_names[SRCH_NOBJECTIVES];

/* One simulated candidate's run over days. */
typedef struct srch_goodput_row {
    const srch_candidate *c;
    int rank;                     /* its row in the step-time ranking */
    gp_inputs in;
    gp_result res;
} srch_goodput_row;

typedef struct srch_goodput {
    srch_goodput_row *rows;       /* the simulated candidates, the best by goodput first (owned) */
    int n;
    int best, megatron;           /* rows of the first one and of the first Megatron-style one (-1: none) */
    const srch_candidate *step_best, *step_megatron; /* the bests by step time, before */
} srch_goodput;

/* Ranks the simulated candidates of the finished sweep or compare s by
 * goodput with options o: for each, the slow steps of o's reliability
 * file are simulated (rq->jobs at a time), then the run over days; rows
 * go by mean days to the token budget (without one, by mean goodput in
 * the horizon), ties in the step-time ranking's order.  s->cmp's bests
 * become the first of each space by goodput (the speedup their step
 * ratio).  Only simulated candidates are ranked (the top of the estimate
 * ranking that the sweep simulated).  SIM_OK and *out (free with
 * srch_goodput_free, also after a failure); gp_checkpoint_of's errors (a
 * platform without storage); a slow step's failed simulation. */
sim_rc srch_goodput_rank(const srch_sweep_request *rq, srch_sweep *s, const gp_options *o, srch_goodput *out,
                         sim_err *err);
void srch_goodput_free(srch_goodput *g);

/* g's text block after the summary of a sweep or compare (the table by
 * goodput, the bests, and for compare why one finishes first:
 * rpt_print_goodput_rank), and its JSON object (the documents' "goodput"
 * key; void*: cJSON). */
void srch_print_goodput(FILE *f, const srch_sweep_request *rq, const srch_goodput *g, bool compare);
void *srch_goodput_to_json(const srch_sweep_request *rq, const srch_goodput *g, bool compare);
/* Adds the "goodput" object (rpt_goodput_record_json) to each record row
 * of records (a cJSON array of srch_sweep_records_json) that g ranked. */
void srch_goodput_add_records(void *records, const srch_goodput *g);

#endif
