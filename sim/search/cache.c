/* cache.c - the kept candidates of a search, stored under a key of its
 * inputs, so that a compare or a sweep of the same inputs takes them back
 * instead of searching again (srch_cache_load, srch_cache_store).
 *
 * A file holds one srch_result and its lists, as this build lays them out
 * in memory.  Its name is a 64-bit FNV-1a of what fixes the lists: the
 * resolved model, platform and base strategy (their JSON), the pins, the
 * space, the Megatron-style baseline, --symmetry dp, the twin lists, and
 * the executable itself (its bytes), so that another build of heptasim,
 * which may estimate differently, never reads it.  A file is read only
 * when its header names this build and this key (a second hash of the key
 * with another seed), its sizes are this build's, its checksum matches,
 * and every kept candidate is sound (its strings end, its figures are
 * finite, its strategy passes the validity rules); else it is ignored with
 * one warning and the search runs.  The lists are the best `keep` of each
 * in a total order, so a file kept with `keep` serves every request of at
 * most `keep` (its lists cut). */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "internal.h"

#define CACHE_MAGIC "HPTSRCH1"
#define EXE_LIMIT (256L * 1024 * 1024) /* bytes of the executable hashed at most */

typedef struct cache_head {
    char magic[8];
    uint64_t build;        /* hash of the executable */
    uint64_t key, check;   /* the key (the file's name) and the key with another seed */
    uint32_t cand_bytes, result_bytes;
    int32_t keep;
    int32_t n[3];          /* best, best_megatron, twin_megatron */
    uint64_t sum;          /* FNV-1a of what follows the header */
} cache_head;

static uint64_t fnv_bytes(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 1099511628211ULL;
    }
    return h;
}

static uint64_t fnv_text(uint64_t h, const char *text)
{
    return fnv_bytes(h, text, strlen(text));
}

/* Hash of this executable's bytes (0: it cannot be read). */
static uint64_t build_hash(void)
{
    static uint64_t h;
    if (h) return h;
    FILE *f = fopen("/proc/self/exe", "rb");
    if (!f) return 0;
    uint64_t x = 1469598103934665603ULL;
    unsigned char buf[65536];
    size_t n;
    long total = 0;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0 && total < EXE_LIMIT) {
        x = fnv_bytes(x, buf, n);
        total += (long)n;
    }
    bool bad = ferror(f) != 0;
    fclose(f);
    h = bad || total == 0 ? 0 : x | 1;
    return h;
}

/* The key of rq's search, from a seed. */
static uint64_t key_of(const srch_request *rq, uint64_t seed)
{
    uint64_t h = seed;
    cfg_strategy base = rq->base;
    base.name[0] = base.description[0] = base.path[0] = '\0';
    void *trees[3] = {cfg_model_to_json(rq->model), cfg_platform_to_json(rq->platform), cfg_strategy_to_json(&base)};
    for (int i = 0; i < 3; i++) {
        char *text = trees[i] ? cJSON_PrintUnformatted(trees[i]) : NULL;
        h = fnv_text(h, text ? text : "?");
        h = fnv_text(h, "|");
        cJSON_free(text);
        cJSON_Delete(trees[i]);
    }
    char tail[160];
    snprintf(tail, sizeof tail, "%u|%s|%s|%d|%d|%d", rq->pinned, srch_space_name(rq->space),
             srch_baseline_name(rq->baseline), rq->replica_reduction, rq->twin_too && rq->space == SRCH_SPACE_7D,
             rq->base.global_batch);
    return fnv_text(h, tail);
}

bool srch_cache_dir(char *out, size_t cap)
{
    const char *dir = getenv("HEPTASIM_CACHE");
    if (dir && strcmp(dir, "off") == 0) return false;
    int n;
    if (dir && dir[0])
        n = snprintf(out, cap, "%s", dir);
    else if ((dir = getenv("XDG_CACHE_HOME")) && dir[0] == '/')
        n = snprintf(out, cap, "%s/heptasim", dir);
    else if ((dir = getenv("HOME")) && dir[0])
        n = snprintf(out, cap, "%s/.cache/heptasim", dir);
    else
        return false;
    return n > 0 && (size_t)n < cap;
}

/* The file of rq's search (false: no cache directory, or no build hash). */
static bool cache_path(const srch_request *rq, char *out, size_t cap, uint64_t *key)
{
    char dir[CFG_PATH_LEN];
    if (!build_hash() || !srch_cache_dir(dir, sizeof dir)) return false;
    *key = key_of(rq, 1469598103934665603ULL ^ build_hash());
    int n = snprintf(out, cap, "%s/search-%016llx.bin", dir, (unsigned long long)*key);
    return n > 0 && (size_t)n < cap;
}

static bool ends(const char *s, size_t cap)
{
    return memchr(s, '\0', cap) != NULL;
}

/* Whether candidate c of rq's search is sound. */
static bool candidate_sound(const srch_request *rq, const srch_candidate *c)
{
    const cfg_strategy *s = &c->strategy;
    if (!ends(s->name, sizeof s->name) || !ends(s->description, sizeof s->description) ||
        !ends(s->path, sizeof s->path) || !ends(c->inputs_id, sizeof c->inputs_id) || !ends(c->error, sizeof c->error))
        return false;
    if (c->index < 0 || c->space != rq->space || c->state != SRCH_SIM_NONE) return false;
    if (!(isfinite(c->est.step_s) && c->est.step_s > 0) || !isfinite(c->peak_bytes) || !(c->peak_bytes > 0)) return false;
    sim_err quiet;
    cfg_strategy t = *s;
    return cfg_check_strategy(rq->model, rq->platform, &t, &quiet) == SIM_OK;
}

static void warn(FILE *w, const char *path, const char *why)
{
    if (w) fprintf(w, "heptasim: cache file %s: %s; ignored, searching again\n", path, why);
}

srch_result *srch_cache_load(const srch_request *rq, char *path, size_t cap, FILE *w)
{
    uint64_t key;
    if (!cache_path(rq, path, cap, &key)) return NULL;
    FILE *f = fopen(path, "rb");
    if (!f) return NULL; /* not searched yet */
    cache_head h;
    srch_result *r = NULL;
    const char *why = NULL;
    if (fread(&h, sizeof h, 1, f) != 1 || memcmp(h.magic, CACHE_MAGIC, sizeof h.magic) != 0)
        why = "not a search cache file of heptasim";
    else if (h.build != build_hash() || h.cand_bytes != sizeof(srch_candidate) || h.result_bytes != sizeof(srch_result))
        why = "written by another build of heptasim";
    else if (h.key != key || h.check != key_of(rq, 7809847782465536322ULL))
        why = "holds another search";
    else if (h.keep < 1 || h.n[0] < 0 || h.n[0] > h.keep || h.n[1] < 0 || h.n[1] > h.keep || h.n[2] < 0 ||
             h.n[2] > h.keep)
        why = "its header is damaged";
    if (!why && h.keep < rq->keep) { /* kept fewer than asked: search again, quietly */
        fclose(f);
        return NULL;
    }
    srch_candidate *lists[3] = {NULL, NULL, NULL};
    if (!why) {
        r = sim_xcalloc(1, sizeof *r);
        uint64_t sum = 1469598103934665603ULL;
        bool ok = fread(r, sizeof *r, 1, f) == 1;
        sum = fnv_bytes(sum, r, sizeof *r);
        for (int l = 0; l < 3 && ok; l++) {
            lists[l] = sim_xcalloc((size_t)h.n[l] + 1, sizeof *lists[l]);
            ok = fread(lists[l], sizeof *lists[l], (size_t)h.n[l], f) == (size_t)h.n[l];
            sum = fnv_bytes(sum, lists[l], (size_t)h.n[l] * sizeof *lists[l]);
        }
        if (ok) ok = fgetc(f) == EOF;
        if (!ok)
            why = "truncated or too long";
        else if (sum != h.sum)
            why = "its checksum does not match (a damaged file)";
        else if (r->nbest != h.n[0] || r->nbest_megatron != h.n[1] || r->ntwin_megatron != h.n[2] ||
                 !ends(r->inputs_id, sizeof r->inputs_id) || !ends(r->twin_id, sizeof r->twin_id) ||
                 r->baseline != rq->baseline || r->from_twin || r->counts.enumerated < 1 || r->counts.estimated < 0 ||
                 r->counts.estimated > r->counts.enumerated || (rq->twin_too && rq->space == SRCH_SPACE_7D && !r->twin_kept))
            why = "its result is damaged";
        for (int l = 0; l < 3 && !why; l++)
            for (int i = 0; i < h.n[l] && !why; i++)
                if (!candidate_sound(rq, &lists[l][i]) || strcmp(lists[l][i].inputs_id, l == 2 ? r->twin_id : r->inputs_id) != 0)
                    why = "a kept candidate is damaged";
    }
    fclose(f);
    if (why) {
        warn(w, path, why);
        for (int l = 0; l < 3; l++) free(lists[l]);
        free(r);
        return NULL;
    }
    r->best = lists[0];
    r->best_megatron = lists[1];
    r->twin_megatron = lists[2];
    srch_result_cut(r, rq->keep);
    r->cached = true;
    return r;
}

/* mkdir of path and of its parent, where missing. */
static bool make_dir(const char *path)
{
    char parent[CFG_PATH_LEN];
    snprintf(parent, sizeof parent, "%s", path);
    char *slash = strrchr(parent, '/');
    if (slash && slash != parent) {
        *slash = '\0';
        if (mkdir(parent, 0777) != 0 && errno != EEXIST) return false;
    }
    return mkdir(path, 0777) == 0 || errno == EEXIST;
}

void srch_cache_store(const srch_request *rq, const srch_result *res, FILE *w)
{
    char path[CFG_PATH_LEN], dir[CFG_PATH_LEN];
    uint64_t key;
    if (res->cached || res->from_twin || !cache_path(rq, path, sizeof path, &key) || !srch_cache_dir(dir, sizeof dir))
        return;
    cache_head h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, CACHE_MAGIC, sizeof h.magic);
    h.build = build_hash();
    h.key = key;
    h.check = key_of(rq, 7809847782465536322ULL);
    h.cand_bytes = sizeof(srch_candidate);
    h.result_bytes = sizeof(srch_result);
    h.keep = rq->keep;
    h.n[0] = res->nbest;
    h.n[1] = res->nbest_megatron;
    h.n[2] = res->ntwin_megatron;
    srch_result r;
    memcpy(&r, res, sizeof r);
    r.best = r.best_megatron = r.twin_megatron = NULL;
    r.seconds = 0;
    r.workers = 0;
    const srch_candidate *lists[3] = {res->best, res->best_megatron, res->twin_megatron};
    h.sum = fnv_bytes(1469598103934665603ULL, &r, sizeof r);
    for (int l = 0; l < 3; l++) h.sum = fnv_bytes(h.sum, lists[l], (size_t)h.n[l] * sizeof *lists[l]);
    sim_err err = {{0}};
    sim_out o;
    if (!make_dir(dir)) {
        if (w) fprintf(w, "heptasim: cannot create the cache directory %s: %s (search results are not kept)\n", dir,
                       strerror(errno));
        return;
    }
    if (sim_out_open(&o, path, "search cache", &err) != SIM_OK) {
        if (w) fprintf(w, "%s (search results are not kept)\n", err.msg);
        return;
    }
    bool ok = fwrite(&h, sizeof h, 1, o.f) == 1 && fwrite(&r, sizeof r, 1, o.f) == 1;
    for (int l = 0; l < 3 && ok; l++) ok = fwrite(lists[l], sizeof *lists[l], (size_t)h.n[l], o.f) == (size_t)h.n[l];
    if (!ok) {
        sim_out_discard(&o);
        if (w) fprintf(w, "heptasim: cannot write the cache file %s (search results are not kept)\n", path);
        return;
    }
    if (sim_out_commit(&o, &err) != SIM_OK && w) fprintf(w, "%s (search results are not kept)\n", err.msg);
}
