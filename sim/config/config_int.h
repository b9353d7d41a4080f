/* config_int.h - declarations shared by the files of sim/config only: the
 * schema table that drives reading, checking and writing a config object,
 * the reader that formats one-line errors, the `--set` overrides, the
 * HuggingFace translation and the sanity checks of single objects.
 *
 * Nothing outside sim/config includes this file. */
#ifndef HEPTASIM_CONFIG_INT_H
#define HEPTASIM_CONFIG_INT_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "config.h"
#include "keys.h"

/* HuggingFace files carry no training sequence length: this one is used
 * (override with --set model.seq_len=N). */
#define CFG_HF_SEQ_LEN 4096

/* ----------------------------------------------------------- the schema */

/* Rows of the model and platform tables (config.c); the strategy's have
 * their own in keys.c. */
#define ROW_INT(k, st, f, lo, hi, d, fl) \
    { .key = k, .type = CFG_K_INT, .flags = fl, .offset = offsetof(st, f), .min = lo, .max = hi, .def = d }
#define ROW_DBL(k, st, f, lo, hi, d, sc, fl)                                                                   \
    {                                                                                                          \
        .key = k, .type = CFG_K_DOUBLE, .flags = fl, .offset = offsetof(st, f), .min = lo, .max = hi, .def = d, \
        .scale = sc                                                                                            \
    }
#define ROW_BOOL(k, st, f, d) { .key = k, .type = CFG_K_BOOL, .offset = offsetof(st, f), .def = d }
#define ROW_STR(k, st, f, fl) \
    { .key = k, .type = CFG_K_STRING, .flags = fl, .offset = offsetof(st, f), .size = sizeof(((st *)0)->f) }
#define ROW_ENUM(k, st, f, nm, vals, d) \
    { .key = k, .type = CFG_K_ENUM, .offset = offsetof(st, f), .names = nm, .values = vals, .def_str = d }
#define ROW_OBJ(k, st, f, rows, fl) \
    { .key = k, .type = CFG_K_OBJECT, .flags = fl, .offset = offsetof(st, f), .sub = rows }
#define ROW_END { .key = NULL }

/* The rank order of a strategy without "order". */
#define CFG_DEFAULT_ORDER "tp_x-tp_y-cp_ulysses-cp_ring-ep-dp-pp"

/* Where a node of a JSON tree came from, when not from the file itself:
 * a `--set` item (origin) or a HuggingFace key (path). */
typedef struct cfg_tag {
    const cJSON *node;
    char *origin; /* "--set KEY=VALUE", or NULL to inherit */
    char *path;   /* ".num_hidden_layers", or NULL for the natural path */
} cfg_tag;

/* State of one read: the error buffer, the default origin (file path as
 * given) and the tags. */
typedef struct cfg_reader {
    sim_err *err;
    const char *origin;
    const char *hf_prefix; /* HuggingFace: the path of the object the model's keys come from ("", ".text_config") */
    cfg_tag *tags;
    int ntags, cap;
} cfg_reader;

void cfg_reader_init(cfg_reader *r, const char *origin, sim_err *err);
/* Frees the tags (not the tree). */
void cfg_reader_free(cfg_reader *r);
/* Remember that `node` came from origin and/or is named path in messages.
 * Both strings are copied; either may be NULL. */
void cfg_reader_tag(cfg_reader *r, const cJSON *node, const char *origin, const char *path);

/* Read the object `obj` into the zeroed struct at base: unknown and
 * duplicate keys, types, bounds, required keys; defaults for absent keys.
 * Returns SIM_OK or SIM_EINVAL with one line in r->err. */
sim_rc cfg_schema_read(cfg_reader *r, const cfg_key *rows, const cJSON *obj, void *base);

/* Fill the default of one row into the struct at base (an object row: the
 * defaults of its optional keys). */
void cfg_schema_default(const cfg_key *row, void *base);

/* The struct at base as a JSON object with the keys and units of the
 * table.  Caller owns the tree (cJSON_Delete). */
cJSON *cfg_schema_write(const cfg_key *rows, const void *base);

/* The same with only the top-level rows that have one of the CFG_KF_*
 * flags in `only` (0: every row). */
cJSON *cfg_schema_write_only(const cfg_key *rows, const void *base, unsigned only);

/* Apply the `--set` items of ov that belong to kind ("model", "platform",
 * "strategy") to root, creating intermediate objects as needed and tagging
 * every node it adds.  Every item is checked for syntax, whatever its kind.
 * ov may be NULL. */
sim_rc cfg_overrides_apply(cfg_reader *r, const cfg_overrides *ov, const char *kind, cJSON *root);

/* Keep the message in err on one line: every control character in it
 * (from the input: a newline in a key, a tab in a quoted line, a path)
 * becomes '?'.  Returns rc, so that an entry point can end with
 * `return cfg_one_line(rc, err)`; does nothing when rc is SIM_OK. */
sim_rc cfg_one_line(sim_rc rc, sim_err *err);

/* The JSON tree of text (caller deletes), or NULL with one line in err:
 * not UTF-8, malformed JSON (near line N).  The parser of every config file. */
cJSON *cfg_parse_json(const char *text, const char *origin, sim_err *err);

/* JSON text of node, at most 40 characters ("..." when cut). */
void cfg_json_repr(const cJSON *node, char *buf, size_t cap);

/* names.c: the name tables of the model's enums (ORDER CFG_ACTIVATION,
 * ORDER CFG_WINDOW; NULL-terminated, as the schema reads them). */
extern const char *const cfg_activation_names[];
extern const char *const cfg_window_kind_names[];
extern const char *const cfg_straggler_kind_names[];
extern const char *const cfg_checkpoint_mode_names[]; /* ORDER CFG_CHECKPOINT */

/* The recompute module named by word[0..len) (cfg_recompute_module), or
 * -1; the closest module name to a word that is none, or NULL. */
int cfg_recompute_module_parse(const char *word, size_t len);
const char *cfg_recompute_module_suggest(const char *word);

/* Parse "tp_x-tp_y-..." into out.  Returns true, or false with the reason
 * in why ("'dp' appears twice ..."). */
bool cfg_order_parse(const char *text, cfg_dim out[CFG_NDIMS], char *why, size_t cap);

/* ------------------------------------------------------------ HuggingFace */

/* What the model's keys are called in its file, for the messages of the
 * rules that tie keys together ("origin: .kv_heads: 3 does not divide
 * heads=8"): each is the JSON path (".kv_heads", ".moe.top_k",
 * ".text_config.num_key_value_heads"); the same name without its dot names
 * the key inside a message. */
typedef struct cfg_model_names {
    char layers[CFG_NAME_LEN], hidden[CFG_NAME_LEN], heads[CFG_NAME_LEN], kv_heads[CFG_NAME_LEN],
        head_dim[CFG_NAME_LEN];
    char experts[CFG_NAME_LEN], top_k[CFG_NAME_LEN], first_dense_layers[CFG_NAME_LEN], shared_experts[CFG_NAME_LEN],
        shared_ffn_hidden[CFG_NAME_LEN];
    char groups[CFG_NAME_LEN], group_top_k[CFG_NAME_LEN];
} cfg_model_names;

/* heptasim's own names. */
extern const cfg_model_names cfg_native_names;

/* True when root looks like a HuggingFace config.json: it has
 * num_hidden_layers, or its text_config (multimodal models) has. */
bool cfg_hf_detect(const cJSON *root);

/* Translate a HuggingFace config into a tree with heptasim's model keys,
 * tagging each value with the HF key it came from, and fill *names with
 * the HF keys the model's values came from; a multimodal config's language
 * model is read from its text_config.  Returns SIM_OK and *out (caller
 * deletes), or SIM_EINVAL (a key given twice, a missing or unsupported
 * value). */
sim_rc cfg_hf_convert(cfg_reader *r, const cJSON *root, cJSON **out, cfg_model_names *names);

/* ------------------------------------------------------------- checks */

/* The name messages start with: the file path, or the kind ("strategy")
 * for a struct built in memory without one. */
static inline const char *cfg_origin(const char *path, const char *kind)
{
    return (path && path[0]) ? path : kind;
}

/* Rules that tie several keys of one object together (kv_heads divides
 * heads, node size divides supernode size, ...), checked when the object
 * is read (config.c).  Messages start with m->path / p->path. */
sim_rc cfg_model_sanity(const cfg_model *m, sim_err *err);
/* The same, naming the keys as the model's file does. */
sim_rc cfg_model_sanity_as(const cfg_model *m, const cfg_model_names *k, sim_err *err);
sim_rc cfg_platform_sanity(const cfg_platform *p, sim_err *err);

/* Re-run the schema on a struct built in memory (the search builds
 * strategies): writes it as JSON and reads it back, so the messages are
 * those of a file.  Messages start with the struct's path. */
sim_rc cfg_model_revalidate(const cfg_model *m, sim_err *err);
sim_rc cfg_platform_revalidate(const cfg_platform *p, sim_err *err);
sim_rc cfg_strategy_revalidate(const cfg_strategy *s, sim_err *err);

#endif
