/* keys.h - schema rows, and the strategy keys: one table row per key.
 *
 * A schema table is an array of cfg_key rows, one per JSON key, ended by a
 * row whose key is NULL.  config.c holds the model's and the platform's
 * tables; keys.c holds the strategy's, cfg_strategy_keys.  A strategy row
 * carries, besides its schema entry, everything the simulator knows about
 * the key except its effect on the model and the workload:
 *   - whether strategies that differ in it are different strategies
 *     (CFG_KF_SAME, read by cfg_strategy_same) and different inputs of a
 *     search (CFG_KF_FINGERPRINT, read by cfg_strategy_fingerprint_json);
 *   - whether a search holds it at the base value when `--set` gives it
 *     (CFG_KF_PIN, pin_as);
 *   - the values a search tries, and when (search, stage, choices, fits,
 *     derive, matters, CFG_KF_CHECKED);
 *   - its token in compact strategy strings (compact, token, format,
 *     read by cfg_strategy_compact);
 *   - whether the estimator's probe of a strategy depends on it
 *     (CFG_KF_PROBE, read by the estimator's probe key), or its stage
 *     rows or costs (CFG_KF_STAGE_ROWS, CFG_KF_STAGE_COSTS, the keys of
 *     the estimator's caches of those).
 * docs/adding-a-strategy-key.md gives the steps to add a key. */
#ifndef HEPTASIM_CONFIG_KEYS_H
#define HEPTASIM_CONFIG_KEYS_H

#include <stdbool.h>
#include <stddef.h>

#include "config.h"

/* ------------------------------------------------------------ schema rows */

typedef enum cfg_ktype {
    CFG_K_INT = 0, /* int field; JSON number with no fraction */
    CFG_K_DOUBLE,  /* double field = JSON number * scale */
    CFG_K_BOOL,    /* bool field */
    CFG_K_STRING,  /* char[size] field, one line */
    CFG_K_ENUM,    /* int field = values[i] (or i) for the string names[i] */
    CFG_K_CURVE,   /* cfg_curve field from [[x, y], ...] */
    CFG_K_ORDER,   /* cfg_dim[CFG_NDIMS] field from "tp_x-tp_y-..." */
    CFG_K_OBJECT,  /* nested object whose rows (sub) use offsets of the same struct */
    CFG_K_LIST     /* array of at most max objects, element i read with rows sub into the struct at
                    * offset + i * size; the count goes to the int at `count` */
} cfg_ktype;

/* reading and writing (every table) */
#define CFG_KF_REQUIRED 1u       /* absent key is an error */
#define CFG_KF_DERIVED 2u        /* optional, no fixed default: absent leaves 0 for the loader */
#define CFG_KF_MIN_OPEN 4u       /* the lower bound is excluded (x > min) */
#define CFG_KF_OMIT_ZERO 8u      /* not written when 0: an int, a double, a curve (no points), an object (its first int) */
/* strategy keys */
#define CFG_KF_SAME 16u          /* strategies differing in it are different (cfg_strategy_same) */
#define CFG_KF_FINGERPRINT 32u   /* in the fingerprint of a search's inputs */
#define CFG_KF_PIN 64u           /* a search holds it at the base value when `--set` gives it */
#define CFG_KF_CHECKED 128u      /* its searched values are checked with cfg_check once per shape */
#define CFG_KF_TOKEN_ALWAYS 256u /* its compact token is written whatever the value */
#define CFG_KF_TOKEN_JOINED 512u /* its compact token follows the previous one without a space */
#define CFG_KF_NO_MEMORY 1024u   /* the memory model ignores it: a search reuses the peak memory across its values */
#define CFG_KF_PROBE 2048u       /* changes the estimator's probe: strategies differing in it get their own */
#define CFG_KF_STAGE_ROWS 4096u  /* changes the estimator's stage rows (layers and spans per stage) without the probe */
#define CFG_KF_STAGE_COSTS 8192u /* changes the estimator's stage costs (zero stage, gradient and optimizer bytes) */

/* One value of a strategy key, as a search tries it. */
typedef struct cfg_value {
    int i;                    /* int and enum keys; bool keys as 0 or 1 */
    int with;                 /* the int at the row's `with` offset (schedule: its vpp) */
    cfg_dim order[CFG_NDIMS]; /* the order key */
} cfg_value;

/* What the values a search tries depend on, besides the strategy s built
 * so far (the keys of earlier positions are set in s). */
typedef struct cfg_space {
    const cfg_model *model;
    const cfg_platform *platform;
    const cfg_strategy *base; /* the search's base strategy: global_batch, stage layer counts, pins */
    bool megatron;            /* the Megatron-style subspace (search.h) */
    bool megatron_a2a_cp;     /* ... with Megatron-Core's all-to-all CP (cp_ulysses > 1 too) */
    int room;                 /* rank dimensions: the devices the dimensions of earlier positions left */
} cfg_space;

/* When a search tries a key (positions increase from stage to stage). */
typedef enum cfg_stage {
    CFG_STAGE_NONE = 0, /* never: every candidate has the base value */
    CFG_STAGE_DIMS,     /* a rank dimension: its values divide the devices left (room) */
    CFG_STAGE_SHAPE,    /* fixes, with the dimensions, whether the checked keys' values are valid */
    CFG_STAGE_INNER     /* under each valid shape: memory, estimate */
} cfg_stage;

struct cfg_key;

/* Writes the values of key k to try for s, in enumeration order, at most
 * CFG_MAX_CHOICES; returns how many. */
typedef int (*cfg_choices_fn)(const struct cfg_key *k, const cfg_space *sp, const cfg_strategy *s, cfg_value *out);
/* Whether value v of the key can be used for s (pinned values too). */
typedef bool (*cfg_fits_fn)(const cfg_space *sp, const cfg_strategy *s, const cfg_value *v);
/* Turns a pinned value that stands for another into that one. */
typedef void (*cfg_derive_fn)(const cfg_strategy *s, cfg_value *v);
/* Whether the key's value changes anything in s. */
typedef bool (*cfg_matters_fn)(const cfg_strategy *s);
/* Writes the key's token of s into out (nothing when it has none). */
typedef void (*cfg_token_fn)(const cfg_strategy *s, char *out, size_t cap);
/* Reads the key's token at the start of word into s (the inverse of the
 * row's cfg_token_fn); returns the characters it takes, 0 when word does
 * not start with one of the key's tokens. */
typedef int (*cfg_untoken_fn)(const char *word, cfg_strategy *s);

/* One row of a schema table: one JSON key.  Bounds and default are in the
 * units of the JSON key; scale converts them to the SI value stored. */
typedef struct cfg_key {
    const char *key;
    cfg_ktype type;
    unsigned flags;            /* CFG_KF_* */
    size_t offset;             /* into the root struct, also for nested rows */
    size_t size;               /* string capacity */
    double min, max;           /* numbers, and the y of a curve */
    double def;                /* numbers and bools */
    const char *def_str;       /* strings, enums, order */
    double scale;              /* JSON unit -> SI; 0 means 1 */
    const char *const *names;  /* enum names, NULL-terminated */
    const int *values;         /* stored value of names[i]; NULL means i */
    const struct cfg_key *sub; /* rows of a nested object, or of one element of a list */
    size_t count;              /* lists: offset of the int holding the element count */

    /* strategy keys only (zero in the other tables) */
    size_t with;               /* offset of an int field its values carry along (schedule: vpp); 0: none */
    const char *pin_as;        /* pinned together with this key (vpp: "schedule"); NULL: on its own */
    int search;                /* its position in the enumeration, 1 = outermost; 0: not searched */
    cfg_stage stage;
    cfg_choices_fn choices;    /* the values tried when not pinned */
    cfg_fits_fn fits;          /* NULL, or the rule every value, pinned ones too, must pass */
    cfg_derive_fn derive;      /* NULL, or what a pinned value stands for */
    cfg_matters_fn matters;    /* NULL (always), or whether the value changes anything */
    int compact;               /* position of its token in compact strings; 0: no token */
    const char *token;         /* printf format of an int ("ep%d"), or the word of a bool */
    cfg_token_fn format;       /* writes the token instead of `token` */
    cfg_untoken_fn parse;      /* reads what `format` writes (NULL: an enum's format, read by trying its names) */
} cfg_key;

/* Read the JSON object obj (a cJSON object; void*: no cJSON.h here) at
 * path (".search") of the file origin into the zeroed struct at base with
 * the rows of a schema table: the one reader of every config object
 * (unknown and duplicate keys, types, bounds, enum names, defaults), for a
 * part of another input (a study file).  SIM_OK, or SIM_EINVAL with one
 * line "ORIGIN: PATH.KEY: what is wrong". */
sim_rc cfg_schema_read_at(const cfg_key *rows, const void *obj, const char *origin, const char *path, void *base,
                          sim_err *err);

/* ------------------------------------------------------- strategy keys */

/* The strategy keys, in the order of the JSON output, ended by a row whose
 * key is NULL. */
extern const cfg_key cfg_strategy_keys[];

/* The row of a strategy key ("tp_x"), or NULL for an unknown key. */
const cfg_key *cfg_strategy_key(const char *key);

/* Read, write and compare the value of key k (an int, enum, bool or
 * order row) in a strategy.  cfg_key_default gives the schema's default. */
void cfg_key_get(const cfg_key *k, const cfg_strategy *s, cfg_value *v);
void cfg_key_set(const cfg_key *k, cfg_strategy *s, const cfg_value *v);
void cfg_key_default(const cfg_key *k, cfg_value *v);
bool cfg_value_same(const cfg_key *k, const cfg_value *a, const cfg_value *b);

/* The value of key k in s as text: ints as numbers, bools "on"/"off", enum
 * names, the order's short name (cfg_order_name).  Writes at most cap bytes. */
void cfg_key_text(const cfg_key *k, const cfg_strategy *s, char *out, int cap);

/* Whether k's value changes anything in s (true for a key without a
 * matters rule). */
bool cfg_key_matters(const cfg_key *k, const cfg_strategy *s);

/* Whether a and b are the same strategy: equal in every CFG_KF_SAME key. */
bool cfg_strategy_same(const cfg_strategy *a, const cfg_strategy *b);

/* The CFG_KF_FINGERPRINT keys of s as a cJSON object the caller deletes
 * (void* keeps cJSON.h out of this header). */
void *cfg_strategy_fingerprint_json(const cfg_strategy *s);

/* The strategy in one short line ("dp16 pp8v2 tp8 sp mb1 sel z1"): the
 * rows' tokens in their compact order, each key only when it differs from
 * its default and matters (or always, CFG_KF_TOKEN_ALWAYS).  Writes at
 * most cap bytes. */
void cfg_strategy_compact(const cfg_strategy *s, char *out, int cap);

/* The inverse of cfg_strategy_compact, with the same rows' tokens: every
 * key a search tries or a compact string names is set in *s to its
 * default, then to the value of its token in text (words apart by spaces,
 * in any order; a joined token follows its word).  The keys no token
 * names stay as they are in *s (global_batch, the MoE keys).  origin
 * names text in messages.  SIM_OK, or SIM_EINVAL with one line naming the
 * word that is no token or is given twice (*s then undefined). */
sim_rc cfg_strategy_read_compact(const char *text, const char *origin, cfg_strategy *s, sim_err *err);

/* The short name of s's rank order: "default", "dp<cp", "ep-outer",
 * "pp-inner" (the orders a search tries; two orders that place every
 * dimension larger than one alike have the same name), or the order itself
 * ("tp_x-tp_y-..."). */
void cfg_order_name(const cfg_strategy *s, char *out, int cap);

/* Whether the rank order `order` lays s out as one of the two orders
 * Megatron-Core builds its groups in: tp-cp-ep-dp-pp (its default, which
 * is heptasim's default order) or tp-cp-ep-pp-dp (--use-tp-pp-dp-mapping).
 * Within CP the all-to-all ranks come first, as in its a2a+p2p groups. */
bool cfg_order_megatron(const cfg_strategy *s, const cfg_dim *order);

#endif
