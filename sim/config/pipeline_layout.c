/* pipeline_layout.c - Megatron-Core's --pipeline-model-parallel-layout
 * strings: walking the virtual stages they describe.
 *
 * The grammar is Megatron-Core's (transformer/pipeline_parallel_layer_
 * layout.py, parse_str_to_list): virtual stages separated by '|', each a
 * run of E (embedding), t (transformer decoder layer), m (multi-token
 * prediction layer) and L (loss); "x*n" repeats one character n times,
 * "(...)*n" repeats a group (no nested groups); commas are cosmetic and
 * dropped.  Example: DeepSeek-V3 on PP 16 x VPP 2, "Et*3|(tt|)*29,m|L".
 * The list is in global order: entry i is virtual stage i, chunk i / pp of
 * pipeline rank i % pp.  The walk never expands the string into memory. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_int.h"

/* The walk's state: the stage being filled and the visitor. */
typedef struct walk {
    cfg_layout_stage cur;
    int index;         /* of cur */
    long atoms;        /* characters after expansion, against CFG_LAYOUT_MAX_ATOMS */
    cfg_layout_visit visit;
    void *ctx;
} walk;

/* One expanded character. */
static void atom(walk *w, char c)
{
    switch (c) {
    case 'E': w->cur.embedding++; break;
    case 't': w->cur.decoders++; break;
    case 'm': w->cur.mtp++; break;
    case 'L': w->cur.loss++; break;
    case '|':
        w->visit(w->ctx, w->index++, &w->cur);
        memset(&w->cur, 0, sizeof w->cur);
        break;
    }
    w->atoms++;
}

/* A repeat count "*n" at *p: returns n (1 when there is none) and moves
 * *p past it, or -1 with why. */
static long repeat_count(const char **p, char *why, size_t cap)
{
    if (**p != '*') return 1;
    const char *q = *p + 1;
    if (!isdigit((unsigned char)*q)) {
        snprintf(why, cap, "a '*' is not followed by a count");
        return -1;
    }
    long n = 0;
    while (isdigit((unsigned char)*q)) {
        n = n * 10 + (*q++ - '0');
        if (n > CFG_LAYOUT_MAX_ATOMS) {
            snprintf(why, cap, "a repeat count above %d", CFG_LAYOUT_MAX_ATOMS);
            return -1;
        }
    }
    *p = q;
    return n;
}

/* The characters [s, end) without parentheses, `reps` times; false with
 * why on an unknown character or a bad count. */
static bool run(walk *w, const char *s, const char *end, long reps, char *why, size_t cap)
{
    for (long r = 0; r < reps; r++)
        for (const char *p = s; p < end;) {
            char c = *p++;
            if (c == ',') continue;
            if (!strchr("EtmL|", c)) {
                snprintf(why, cap, "unknown character '%c' (the layers are E, t, m and L, '|' ends a virtual stage)",
                         c);
                return false;
            }
            long n = repeat_count(&p, why, cap);
            if (n < 0) return false;
            if (w->atoms + n > CFG_LAYOUT_MAX_ATOMS) {
                snprintf(why, cap, "it expands to more than %d characters", CFG_LAYOUT_MAX_ATOMS);
                return false;
            }
            for (long k = 0; k < n; k++) atom(w, c);
        }
    return true;
}

int cfg_layout_walk(const char *text, cfg_layout_visit visit, void *ctx, char *why, size_t cap)
{
    walk w = {.visit = visit, .ctx = ctx};
    const char *p = text;
    while (*p) {
        if (*p == ')' || *p == '*') {
            snprintf(why, cap, "'%c' at offset %d without a group before it", *p, (int)(p - text));
            return -1;
        }
        if (*p != '(') {
            const char *q = p + 1;
            if (*q == '*')
                for (q++; isdigit((unsigned char)*q); q++) {}
            if (!run(&w, p, q, 1, why, cap)) return -1;
            p = q;
            continue;
        }
        const char *close = strchr(p + 1, ')'), *open = strchr(p + 1, '(');
        if (!close) {
            snprintf(why, cap, "'(' at offset %d is not closed", (int)(p - text));
            return -1;
        }
        if (open && open < close) {
            snprintf(why, cap, "nested groups at offset %d (Megatron-Core does not nest them)", (int)(open - text));
            return -1;
        }
        const char *after = close + 1;
        if (*after != '*') {
            snprintf(why, cap, "the group at offset %d has no repeat count (write \"(...)*n\")", (int)(p - text));
            return -1;
        }
        long n = repeat_count(&after, why, cap);
        if (n < 0 || !run(&w, p + 1, close, n, why, cap)) return -1;
        p = after;
    }
    visit(ctx, w.index, &w.cur);
    return w.index + 1;
}
