/* names.c - the names users write for the model's enums and the rank
 * dimensions (the tables the schema reads them with), the rank order as
 * text, and the closest name to a misspelt one ("did you mean").  A leaf of
 * the module: it calls no other file of it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_int.h"

/* ------------------------------------------------------------- enum names */

/* ORDER CFG_ACTIVATION */
const char *const cfg_activation_names[] = {"gelu", "swiglu", "geglu", "relu", "squared-relu", NULL};
_Static_assert(sizeof cfg_activation_names / sizeof *cfg_activation_names == CFG_NACTIVATIONS + 1, "one name per activation");
const char *const cfg_window_kind_names[] = {"sliding", "chunked", NULL}; /* ORDER CFG_WINDOW */
_Static_assert(sizeof cfg_window_kind_names / sizeof *cfg_window_kind_names == CFG_NWINDOW_KINDS + 1, "one name per kind");
const char *const cfg_straggler_kind_names[] = {"device", "node", "link", NULL}; /* ORDER CFG_STRAGGLER */
_Static_assert(sizeof cfg_straggler_kind_names / sizeof *cfg_straggler_kind_names == CFG_NSTRAGGLER_KINDS + 1,
               "one name per kind");
const char *const cfg_checkpoint_mode_names[] = {"sync", "async", NULL}; /* ORDER CFG_CHECKPOINT (values from 1) */
static const char *const dim_names[] = {"tp_x", "tp_y", "cp_ulysses", "cp_ring", "ep", "dp", "pp", NULL}; /* ORDER CFG_DIM */
_Static_assert(sizeof dim_names / sizeof *dim_names == CFG_NDIMS + 1, "one name per dimension");

const char *cfg_activation_name(cfg_activation a)
{
    return (unsigned)a < CFG_NACTIVATIONS ? cfg_activation_names[a] : "?";
}

const char *cfg_window_kind_name(cfg_window_kind k)
{
    return (unsigned)k < CFG_NWINDOW_KINDS ? cfg_window_kind_names[k] : "?";
}

const char *cfg_dim_name(cfg_dim d)
{
    return (unsigned)d < CFG_NDIMS ? dim_names[d] : "?";
}

void cfg_order_format(const cfg_strategy *s, char *out, int cap)
{
    if (cap <= 0) return;
    out[0] = '\0';
    size_t used = 0;
    for (int i = 0; i < CFG_NDIMS && used < (size_t)cap; i++)
        used += (size_t)snprintf(out + used, (size_t)cap - used, "%s%s", i ? "-" : "", cfg_dim_name(s->order[i]));
}

bool cfg_order_parse(const char *text, cfg_dim out[CFG_NDIMS], char *why, size_t cap)
{
    bool seen[CFG_NDIMS] = {false};
    int n = 0;
    const char *p = text;
    for (;;) {
        const char *dash = strchr(p, '-');
        size_t len = dash ? (size_t)(dash - p) : strlen(p);
        char tok[32];
        if (len == 0) {
            snprintf(why, cap, "empty dimension name in \"%s\"", text);
            return false;
        }
        if (len >= sizeof tok) len = sizeof tok - 1;
        memcpy(tok, p, len);
        tok[len] = '\0';
        int d = -1;
        for (int i = 0; i < CFG_NDIMS; i++)
            if (strcmp(tok, dim_names[i]) == 0) d = i;
        if (d < 0) {
            const char *close = cfg_suggest(tok, dim_names, CFG_NDIMS);
            if (close)
                snprintf(why, cap, "unknown dimension '%s' (did you mean '%s'?)", tok, close);
            else
                snprintf(why, cap, "unknown dimension '%s' (the dimensions are %s)", tok, CFG_DEFAULT_ORDER);
            return false;
        }
        if (seen[d]) {
            snprintf(why, cap, "'%s' appears twice (name each of %s once)", tok, CFG_DEFAULT_ORDER);
            return false;
        }
        seen[d] = true;
        out[n++] = (cfg_dim)d;
        if (!dash) break;
        p = dash + 1;
    }
    for (int i = 0; i < CFG_NDIMS; i++)
        if (!seen[i]) {
            snprintf(why, cap, "'%s' is missing (name each of %s once)", dim_names[i], CFG_DEFAULT_ORDER);
            return false;
        }
    return true;
}

/* ---------------------------------------------------------- did you mean */

static int edit_distance(const char *a, const char *b)
{
    enum { N = 64 };
    size_t la = strlen(a), lb = strlen(b);
    if (la >= N || lb >= N) return 1000;
    int prev[N + 1], cur[N + 1];
    for (size_t j = 0; j <= lb; j++) prev[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        cur[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int ca = a[i - 1] >= 'A' && a[i - 1] <= 'Z' ? a[i - 1] + 32 : a[i - 1];
            int cb = b[j - 1] >= 'A' && b[j - 1] <= 'Z' ? b[j - 1] + 32 : b[j - 1];
            int best = prev[j - 1] + (ca != cb);
            if (prev[j] + 1 < best) best = prev[j] + 1;
            if (cur[j - 1] + 1 < best) best = cur[j - 1] + 1;
            cur[j] = best;
        }
        memcpy(prev, cur, sizeof(int) * (lb + 1));
    }
    return prev[lb];
}

const char *cfg_suggest(const char *word, const char *const *cands, int n)
{
    const char *best = NULL;
    int len = (int)strlen(word);
    int best_d = (len >= 6 ? 2 : 1) + 1; /* short words: one edit at most */
    for (int i = 0; i < n; i++) {
        int d = edit_distance(word, cands[i]);
        if (d < best_d) {
            best_d = d;
            best = cands[i];
        }
    }
    return best;
}
