/* hf.c - translation of a HuggingFace config.json into heptasim model keys.
 *
 * A HuggingFace config is recognised by "num_hidden_layers", at the top or
 * in "text_config" (multimodal models: Llama 4, Gemma 3, Qwen-VL), whose
 * language model is then read and reported as ".text_config.KEY"; the
 * vision tower is not modelled.  The keys the simulator needs are copied
 * under heptasim's names, each tagged with its HuggingFace name so that a
 * bad value is reported as ".hidden_size", not ".hidden" (the rules that
 * tie keys together name them as the file does too: cfg_model_names);
 * every other key is ignored.  The result then goes through the model
 * schema like a native file.
 *
 *   num_hidden_layers -> layers            hidden_size -> hidden
 *   num_attention_heads -> heads           num_key_value_heads -> kv_heads
 *   head_dim -> head_dim                   intermediate_size -> ffn_hidden
 *   vocab_size -> vocab                    tie_word_embeddings -> tied_embeddings
 *   hidden_act silu/swish -> swiglu, gelu* -> gelu, relu -> relu,
 *     relu2 -> squared-relu (Nemotron)
 *   torch_dtype float16 -> fp16, anything else -> bf16
 *   kv_lora_rank, q_lora_rank (null: 0), qk_nope_head_dim,
 *     qk_rope_head_dim, v_head_dim -> mla (DeepSeek-V2/V3, Kimi K2)
 *   num_nextn_predict_layers -> mtp_layers
 *   windows (hf_window): layer_types, or sliding_window with
 *     use_sliding_window and max_window_layers (Mistral, Qwen), Gemma 2's
 *     every other layer, Gemma 3's sliding_window_pattern (6), Llama 4's
 *     attention_chunk_size on all but every no_rope_layer_interval-th (4)
 *     layer -> attention_window
 *   num_local_experts | num_experts | n_routed_experts -> moe.experts
 *   num_experts_per_tok (gpt-oss: experts_per_token) -> moe.top_k
 *   moe_intermediate_size -> moe.ffn_hidden (intermediate_size for Mixtral's
 *     num_local_experts, or when absent)
 *   n_shared_experts -> moe.shared_experts, each of width
 *     shared_expert_intermediate_size when given, else moe_intermediate_size
 *     (DeepSeek's fused shared MLP of n_shared * moe_intermediate_size);
 *     shared_expert_intermediate_size alone means one shared expert (Qwen)
 *   first_k_dense_replace -> moe.first_dense_layers
 *   n_group, topk_group -> moe.groups, moe.group_top_k (DeepSeek-V2/V3's
 *     group-limited routing: a token's experts come from its topk_group
 *     best groups; n_group 1 is none)
 *   norm_topk_prob, scoring_func, topk_method, routed_scaling_factor: how
 *     the router weighs the chosen experts, part of its top-k pass (not
 *     read: the pass costs the same)
 *   moe_layer_freq | decoder_sparse_step -> moe.layer_freq
 *   Llama 4: intermediate_size_mlp -> ffn_hidden (its dense layers),
 *     intermediate_size -> moe.ffn_hidden, one shared expert of that width,
 *     interleave_moe_layer_step n -> first_dense_layers n-1, layer_freq n
 *   seq_len is not in these files: CFG_HF_SEQ_LEN (4096).
 *   Not modelled and named in the description: attention biases
 *   (attention_bias, qkv_bias: Qwen2, gpt-oss), gpt-oss's attention sinks
 *   (one logit per head added to the softmax) -- each well under 0.1 % of
 *   a layer's FLOPs and parameters.
 *
 * Model families whose code decides what the file leaves out (families[]):
 * Gemma's MLP is gated whatever its GELU is called (GeGLU: gate_proj,
 * up_proj, down_proj), its activation is hidden_activation when given, and
 * its embeddings are tied unless tie_word_embeddings says otherwise
 * (GemmaConfig's default).  Elsewhere an absent tie_word_embeddings means
 * untied, as in the Llama, Mistral, Mixtral, Qwen and DeepSeek configs.
 *
 * A key given twice is refused: Python's json module (and so transformers)
 * would take the last one silently, and heptasim's own files refuse
 * duplicates too. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "config_int.h"

/* The object holding the language model's keys: root, or its
 * text_config when root has no num_hidden_layers. */
static const cJSON *hf_text(const cJSON *root)
{
    if (cJSON_GetObjectItemCaseSensitive(root, "num_hidden_layers")) return root;
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(root, "text_config");
    return cJSON_IsObject(t) && cJSON_GetObjectItemCaseSensitive(t, "num_hidden_layers") ? t : NULL;
}

bool cfg_hf_detect(const cJSON *root)
{
    return hf_text(root) != NULL;
}

/* The value of key, treating null as absent. */
static const cJSON *hf_get(const cJSON *hf, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(hf, key);
    return (v && !cJSON_IsNull(v)) ? v : NULL;
}

/* The prefix of HF key paths in messages ("" or ".text_config"). */
static const char *pre(const cfg_reader *r) { return r->hf_prefix ? r->hf_prefix : ""; }

/* Tag node as coming from HF key hfkey. */
static void tag_hf(cfg_reader *r, const cJSON *node, const char *hfkey)
{
    char path[CFG_PATH_LEN];
    snprintf(path, sizeof path, "%s.%s", pre(r), hfkey);
    cfg_reader_tag(r, node, NULL, path);
}

/* Copy src under key into obj, reported as .hfkey in messages. */
static void put_copy(cfg_reader *r, cJSON *obj, const char *key, const cJSON *src, const char *hfkey)
{
    cJSON *dup = cJSON_Duplicate(src, 1);
    cJSON_AddItemToObject(obj, key, dup);
    tag_hf(r, dup, hfkey);
}

/* Put the number v under key, reported as .hfkey. */
static void put_number(cfg_reader *r, cJSON *obj, const char *key, double v, const char *hfkey)
{
    cJSON *n = cJSON_CreateNumber(v);
    cJSON_AddItemToObject(obj, key, n);
    tag_hf(r, n, hfkey);
}

/* A count the translation itself looks at (experts, shared experts). */
static sim_rc hf_count(cfg_reader *r, const cJSON *v, const char *hfkey, int *out)
{
    if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) || v->valuedouble < 0 || v->valuedouble > 1e9) {
        char got[64];
        cfg_json_repr(v, got, sizeof got);
        return sim_fail(r->err, SIM_EINVAL, "%s: %s.%s: expected an integer >= 0, got %s", r->origin, pre(r), hfkey,
                        got);
    }
    *out = (int)v->valuedouble;
    return SIM_OK;
}

static bool type_is(const cJSON *hf, const char *a, const char *b)
{
    const cJSON *t = hf_get(hf, "model_type");
    return cJSON_IsString(t) && (strcmp(t->valuestring, a) == 0 || (b && strcmp(t->valuestring, b) == 0));
}

/* A layer pattern: flags[l] (l < n) true for the layers with the feature.
 * Writes the heptasim rule it matches: *every = 0 when every layer has it,
 * or n_ > 0 when exactly the layers l with (l+1) % n_ != 0 have it (every
 * n_-th layer without, as cfg_is_window_layer), -1 when no layer has it.
 * Returns false when the pattern is none of these. */
static bool pattern_every(const bool *flags, int n, int *every)
{
    int first_without = -1;
    for (int l = 0; l < n && first_without < 0; l++)
        if (!flags[l]) first_without = l;
    if (first_without < 0) {
        *every = 0;
        return true;
    }
    int k = first_without + 1;
    for (int l = 0; l < n; l++)
        if (flags[l] != ((l + 1) % k != 0)) return false;
    *every = k == 1 ? -1 : k;
    return true;
}

/* SIM_EINVAL unless the per-layer list under key has one entry per layer. */
static sim_rc list_length(cfg_reader *r, const char *key, const cJSON *list, int layers)
{
    int n = cJSON_GetArraySize(list);
    if (n == layers) return SIM_OK;
    return sim_fail(r->err, SIM_EINVAL, "%s: %s.%s: %d entries for num_hidden_layers=%d (give one per layer)",
                    r->origin, pre(r), key, n, layers);
}

/* The rule of a per-layer list (flags[l]: layer l windowed), as
 * pattern_every, or SIM_EINVAL naming key. */
static sim_rc list_rule(cfg_reader *r, const char *key, const bool *flags, int n, int *every)
{
    if (pattern_every(flags, n, every)) return SIM_OK;
    return sim_fail(r->err, SIM_EINVAL,
                    "%s: %s.%s: this order of full and windowed layers is not modelled (heptasim models all layers "
                    "windowed, or every n-th layer full and the others windowed)",
                    r->origin, pre(r), key);
}

/* MLA's keys into an "mla" object (DeepSeek-V2/V3, Kimi K2). */
static sim_rc hf_mla(cfg_reader *r, const cJSON *hf, cJSON *m)
{
    const cJSON *kvl = hf_get(hf, "kv_lora_rank");
    if (!kvl) return SIM_OK;
    static const char *const need[] = {"qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"};
    for (int i = 0; i < 3; i++)
        if (!hf_get(hf, need[i]))
            return sim_fail(r->err, SIM_EINVAL, "%s: %s.%s: required key is missing (kv_lora_rank is set)", r->origin,
                            pre(r), need[i]);
    cJSON *mla = cJSON_CreateObject();
    cJSON_AddItemToObject(m, "mla", mla);
    put_copy(r, mla, "kv_lora_rank", kvl, "kv_lora_rank");
    const cJSON *ql = hf_get(hf, "q_lora_rank");
    if (ql) put_copy(r, mla, "q_lora_rank", ql, "q_lora_rank");
    for (int i = 0; i < 3; i++) put_copy(r, mla, need[i], hf_get(hf, need[i]), need[i]);
    return SIM_OK;
}

/* Which layers attend through a window, and how wide (see the banner). */
static sim_rc hf_window(cfg_reader *r, const cJSON *hf, cJSON *m)
{
    const cJSON *nl = hf_get(hf, "num_hidden_layers");
    bool valid = cJSON_IsNumber(nl) && nl->valuedouble >= 1 && nl->valuedouble <= CFG_MAX_LAYERS;
    int layers = valid ? (int)nl->valuedouble : 0;
    if (layers == 0) return SIM_OK; /* the schema names num_hidden_layers */
    const cJSON *types = hf_get(hf, "layer_types");
    const cJSON *nope = hf_get(hf, "no_rope_layers");
    bool flags[CFG_MAX_LAYERS];
    const char *size_key = "sliding_window", *rule_key = NULL, *kind = cfg_window_kind_name(CFG_WINDOW_SLIDING);
    int every = 0;
    if (cJSON_IsArray(types)) {
        /* transformers' own per-layer list */
        int n = cJSON_GetArraySize(types), l = 0, chunked = 0, sliding = 0;
        sim_rc rc = list_length(r, "layer_types", types, layers);
        if (rc) return rc;
        for (const cJSON *c = types->child; c; c = c->next, l++) {
            const char *t = cJSON_IsString(c) ? c->valuestring : "";
            chunked += strcmp(t, "chunked_attention") == 0;
            sliding += strcmp(t, "sliding_attention") == 0;
            flags[l] = strcmp(t, "full_attention") != 0;
            if (flags[l] && strcmp(t, "chunked_attention") != 0 && strcmp(t, "sliding_attention") != 0) {
                char got[64];
                cfg_json_repr(c, got, sizeof got);
                return sim_fail(r->err, SIM_EINVAL,
                                "%s: %s.layer_types[%d]: %s is not modelled (heptasim models \"full_attention\", "
                                "\"sliding_attention\" and \"chunked_attention\")",
                                r->origin, pre(r), l, got);
            }
        }
        if (chunked && sliding)
            return sim_fail(r->err, SIM_EINVAL, "%s: %s.layer_types: both sliding and chunked layers are not modelled "
                            "(use one kind of window)", r->origin, pre(r));
        if ((rc = list_rule(r, "layer_types", flags, n, &every))) return rc;
        if (every < 0) return SIM_OK;
        if (chunked) {
            size_key = "attention_chunk_size";
            kind = cfg_window_kind_name(CFG_WINDOW_CHUNKED);
        }
        rule_key = "layer_types";
    } else if (type_is(hf, "llama4_text", "llama4")) {
        /* RoPE layers attend in chunks, every no_rope_layer_interval-th
         * layer (NoPE) to the whole context */
        size_key = "attention_chunk_size";
        kind = cfg_window_kind_name(CFG_WINDOW_CHUNKED);
        const cJSON *iv = hf_get(hf, "no_rope_layer_interval");
        every = 4;
        rule_key = "model_type";
        if (cJSON_IsArray(nope) && cJSON_GetArraySize(nope) > 0) {
            int n = cJSON_GetArraySize(nope), l = 0;
            sim_rc rc = list_length(r, "no_rope_layers", nope, layers);
            if (rc) return rc;
            for (const cJSON *c = nope->child; c; c = c->next, l++)
                flags[l] = !cJSON_IsNumber(c) || c->valuedouble != 0;
            if ((rc = list_rule(r, "no_rope_layers", flags, n, &every))) return rc;
            if (every < 0) return SIM_OK;
            rule_key = "no_rope_layers";
        } else if (iv) {
            int k = 0;
            sim_rc rc = hf_count(r, iv, "no_rope_layer_interval", &k);
            if (rc) return rc;
            every = k;
            rule_key = "no_rope_layer_interval";
        }
    } else if (type_is(hf, "gemma2", NULL)) {
        every = 2; /* every other layer slides, the first one first */
        rule_key = "model_type";
    } else if (type_is(hf, "gemma3_text", "gemma3")) {
        const cJSON *pat = hf_get(hf, "sliding_window_pattern");
        every = 6;
        rule_key = "model_type";
        if (pat) {
            sim_rc rc = hf_count(r, pat, "sliding_window_pattern", &every);
            if (rc) return rc;
            rule_key = "sliding_window_pattern";
        }
    } else {
        /* Mistral's window on every layer; Qwen's when use_sliding_window,
         * on the layers from max_window_layers on */
        const cJSON *use = hf_get(hf, "use_sliding_window");
        if (cJSON_IsFalse(use)) return SIM_OK;
        const cJSON *mwl = hf_get(hf, "max_window_layers");
        if (cJSON_IsTrue(use) && mwl) {
            int from = 0;
            sim_rc rc = hf_count(r, mwl, "max_window_layers", &from);
            if (rc) return rc;
            if (from >= layers) return SIM_OK;
            if (from > 0)
                return sim_fail(r->err, SIM_EINVAL,
                                "%s: %s.max_window_layers: %d full layers before windowed ones are not modelled "
                                "(heptasim models all layers windowed, or every n-th layer full)",
                                r->origin, pre(r), from);
        }
    }
    const cJSON *size = hf_get(hf, size_key);
    if (!size) {
        if (rule_key && strcmp(rule_key, "model_type") != 0)
            return sim_fail(r->err, SIM_EINVAL, "%s: %s.%s: required key is missing (%s gives windowed layers)",
                            r->origin, pre(r), size_key, rule_key);
        return SIM_OK;
    }
    if (cJSON_IsNumber(size) && size->valuedouble == 0) return SIM_OK; /* Qwen writes 0 for none */
    if (every == 1) return SIM_OK; /* every layer full */
    cJSON *w = cJSON_CreateObject();
    cJSON_AddItemToObject(m, "attention_window", w);
    put_copy(r, w, "tokens", size, size_key);
    if (every > 0) put_number(r, w, "full_every", every, rule_key ? rule_key : size_key);
    cJSON *k = cJSON_CreateString(kind);
    cJSON_AddItemToObject(w, "kind", k);
    tag_hf(r, k, size_key);
    return SIM_OK;
}

static sim_rc hf_moe(cfg_reader *r, const cJSON *hf, cJSON *m)
{
    static const char *const expert_keys[] = {"num_local_experts", "num_experts", "n_routed_experts"};
    const char *ekey = NULL;
    for (int i = 0; i < 3 && !ekey; i++)
        if (hf_get(hf, expert_keys[i])) ekey = expert_keys[i];
    if (!ekey) return SIM_OK;
    int experts = 0;
    sim_rc rc = hf_count(r, hf_get(hf, ekey), ekey, &experts);
    if (rc || experts == 0) return rc;

    const char *topk_key = hf_get(hf, "num_experts_per_tok") ? "num_experts_per_tok" : "experts_per_token";
    const cJSON *topk = hf_get(hf, topk_key);
    if (!topk)
        return sim_fail(r->err, SIM_EINVAL, "%s: %s.num_experts_per_tok: required key is missing (%s is set)",
                        r->origin, pre(r), ekey);
    const cJSON *mlp_only = hf_get(hf, "mlp_only_layers");
    if (cJSON_IsArray(mlp_only) && cJSON_GetArraySize(mlp_only) > 0)
        return sim_fail(r->err, SIM_EINVAL,
                        "%s: %s.mlp_only_layers: dense layers at chosen places are not modelled (heptasim models the "
                        "first k layers dense and every n-th after them MoE)",
                        r->origin, pre(r));
    const char *ffn_key = "intermediate_size";
    if (strcmp(ekey, "num_local_experts") != 0 && hf_get(hf, "moe_intermediate_size"))
        ffn_key = "moe_intermediate_size";

    cJSON *moe = cJSON_CreateObject();
    cJSON_AddItemToObject(m, "moe", moe);
    put_copy(r, moe, "experts", hf_get(hf, ekey), ekey);
    put_copy(r, moe, "top_k", topk, topk_key);
    put_copy(r, moe, "ffn_hidden", hf_get(hf, ffn_key), ffn_key);

    const cJSON *nse = hf_get(hf, "n_shared_experts");
    const cJSON *sei = hf_get(hf, "shared_expert_intermediate_size");
    int n_shared = 0, shared_width = 0;
    if (nse && (rc = hf_count(r, nse, "n_shared_experts", &n_shared))) return rc;
    if (sei && (rc = hf_count(r, sei, "shared_expert_intermediate_size", &shared_width))) return rc;
    if (shared_width > 0) {
        if (nse)
            put_copy(r, moe, "shared_experts", nse, "n_shared_experts");
        else
            put_number(r, moe, "shared_experts", 1, "shared_expert_intermediate_size");
        put_copy(r, moe, "shared_ffn_hidden", sei, "shared_expert_intermediate_size");
    } else if (n_shared > 0) {
        put_copy(r, moe, "shared_experts", nse, "n_shared_experts");
        put_copy(r, moe, "shared_ffn_hidden", hf_get(hf, ffn_key), ffn_key);
    } else if (type_is(hf, "llama4_text", "llama4")) {
        /* Llama4TextMoe: one shared expert as wide as the routed ones */
        put_number(r, moe, "shared_experts", 1, "model_type");
        put_copy(r, moe, "shared_ffn_hidden", hf_get(hf, ffn_key), ffn_key);
    }
    const cJSON *v;
    if ((v = hf_get(hf, "first_k_dense_replace"))) put_copy(r, moe, "first_dense_layers", v, "first_k_dense_replace");
    if ((v = hf_get(hf, "n_group"))) put_copy(r, moe, "groups", v, "n_group");
    if ((v = hf_get(hf, "topk_group"))) put_copy(r, moe, "group_top_k", v, "topk_group");
    if ((v = hf_get(hf, "moe_layer_freq")))
        put_copy(r, moe, "layer_freq", v, "moe_layer_freq");
    else if ((v = hf_get(hf, "decoder_sparse_step")))
        put_copy(r, moe, "layer_freq", v, "decoder_sparse_step");
    else if ((v = hf_get(hf, "interleave_moe_layer_step"))) {
        /* Llama 4: layers step-1, 2*step-1, ... are MoE */
        int step = 0;
        if ((rc = hf_count(r, v, "interleave_moe_layer_step", &step))) return rc;
        put_copy(r, moe, "layer_freq", v, "interleave_moe_layer_step");
        if (step > 1) put_number(r, moe, "first_dense_layers", step - 1, "interleave_moe_layer_step");
    }
    return SIM_OK;
}

/* Appends to desc the features of hf heptasim leaves out (see the banner). */
static void hf_unmodelled(const cJSON *hf, char *desc, size_t cap)
{
    bool bias = cJSON_IsTrue(hf_get(hf, "attention_bias")) || cJSON_IsTrue(hf_get(hf, "qkv_bias"));
    bool sinks = type_is(hf, "gpt_oss", NULL);
    if (!bias && !sinks) return;
    size_t used = strlen(desc);
    snprintf(desc + used, cap - used, "; not modelled: %s%s%s", bias ? "attention biases" : "",
             bias && sinks ? ", " : "", sinks ? "attention sinks" : "");
}

/* What a model family's code decides that its config.json may leave out. */
static const struct {
    const char *model_type;
    bool gated_gelu;   /* a GELU activation means GeGLU */
    bool tied_default; /* embeddings tied when tie_word_embeddings is absent */
} families[] = {
    {"gemma", true, true},
    {"gemma2", true, true},
    {"gemma3", true, true},
    {"gemma3_text", true, true},
};

/* SIM_EINVAL naming the first key of object hf given twice; prefix is
 * hf's path. */
static sim_rc no_duplicates(cfg_reader *r, const cJSON *hf, const char *prefix)
{
    for (const cJSON *c = hf->child; c; c = c->next)
        for (const cJSON *d = c->next; d; d = d->next)
            if (c->string && d->string && strcmp(c->string, d->string) == 0)
                return sim_fail(r->err, SIM_EINVAL,
                                "%s: %s.%s: duplicate key (transformers would silently take the last one; keep one)",
                                r->origin, prefix, c->string);
    return SIM_OK;
}

/* The activation: hidden_activation (Gemma) before hidden_act. */
static sim_rc hf_activation(cfg_reader *r, const cJSON *hf, bool gated_gelu, cJSON *m)
{
    const char *key = gated_gelu && hf_get(hf, "hidden_activation") ? "hidden_activation" : "hidden_act";
    const cJSON *act = hf_get(hf, key);
    if (!act && !gated_gelu) return SIM_OK; /* heptasim's default, gelu */
    const char *name = NULL;
    if (!act) {
        name = cfg_activation_name(CFG_ACT_GEGLU); /* Gemma's MLP is GeGLU whatever the file says */
    } else if (cJSON_IsString(act)) {
        const char *a = act->valuestring;
        if (strcmp(a, "silu") == 0 || strcmp(a, "swish") == 0 || strcmp(a, "swiglu") == 0)
            name = cfg_activation_name(CFG_ACT_SWIGLU);
        else if (strncmp(a, "gelu", 4) == 0)
            name = cfg_activation_name(gated_gelu ? CFG_ACT_GEGLU : CFG_ACT_GELU);
        else if (strcmp(a, "relu") == 0)
            name = cfg_activation_name(CFG_ACT_RELU);
        else if (strcmp(a, "relu2") == 0)
            name = cfg_activation_name(CFG_ACT_SQUARED_RELU);
    }
    if (!name) {
        char got[64];
        cfg_json_repr(act, got, sizeof got);
        return sim_fail(r->err, SIM_EINVAL,
                        "%s: %s.%s: unsupported activation %s (expected silu, gelu, relu or relu2)", r->origin, pre(r),
                        key, got);
    }
    cJSON *a = cJSON_CreateString(name);
    cJSON_AddItemToObject(m, "activation", a);
    tag_hf(r, a, act ? key : "model_type");
    return SIM_OK;
}

/* dst (CFG_NAME_LEN) = the path of HF key `key` in messages. */
static void name_key(const cfg_reader *r, char *dst, const char *key)
{
    snprintf(dst, CFG_NAME_LEN, "%s.%s", pre(r), key);
}

/* The HF keys the model's values came from (after the conversion). */
static void hf_names(const cfg_reader *r, const cJSON *hf, cfg_model_names *k)
{
    name_key(r, k->layers, "num_hidden_layers");
    name_key(r, k->hidden, "hidden_size");
    name_key(r, k->heads, "num_attention_heads");
    name_key(r, k->kv_heads, "num_key_value_heads");
    name_key(r, k->head_dim, "head_dim");
    static const char *const expert_keys[] = {"num_local_experts", "num_experts", "n_routed_experts"};
    sim_strlcpy(k->experts, ".moe.experts", CFG_NAME_LEN);
    for (int i = 0; i < 3; i++)
        if (hf_get(hf, expert_keys[i])) {
            name_key(r, k->experts, expert_keys[i]);
            break;
        }
    name_key(r, k->top_k, hf_get(hf, "num_experts_per_tok") ? "num_experts_per_tok" : "experts_per_token");
    name_key(r, k->groups, "n_group");
    name_key(r, k->group_top_k, "topk_group");
    name_key(r, k->first_dense_layers,
             hf_get(hf, "interleave_moe_layer_step") && !hf_get(hf, "first_k_dense_replace")
                 ? "interleave_moe_layer_step"
                 : "first_k_dense_replace");
    name_key(r, k->shared_experts,
             hf_get(hf, "n_shared_experts") ? "n_shared_experts" : "shared_expert_intermediate_size");
    name_key(r, k->shared_ffn_hidden,
             hf_get(hf, "shared_expert_intermediate_size") ? "shared_expert_intermediate_size"
                                                           : "moe_intermediate_size");
}

sim_rc cfg_hf_convert(cfg_reader *r, const cJSON *root, cJSON **out, cfg_model_names *names)
{
    const cJSON *hf = hf_text(root);
    r->hf_prefix = hf == root ? "" : ".text_config";
    static const struct {
        const char *hf, *native;
        bool required;
    } direct[] = {
        {"num_hidden_layers", "layers", true},  {"hidden_size", "hidden", true},
        {"num_attention_heads", "heads", true}, {"num_key_value_heads", "kv_heads", false},
        {"head_dim", "head_dim", false},        {"intermediate_size", "ffn_hidden", true},
        {"vocab_size", "vocab", true},          {"tie_word_embeddings", "tied_embeddings", false},
        {"num_nextn_predict_layers", "mtp_layers", false},
    };
    sim_rc rc = no_duplicates(r, root, "");
    if (!rc && hf != root) rc = no_duplicates(r, hf, ".text_config");
    if (rc) return rc;
    const cJSON *type = hf_get(hf, "model_type");
    bool gated_gelu = false, tied_default = false;
    for (size_t i = 0; i < sizeof families / sizeof families[0]; i++)
        if (cJSON_IsString(type) && strcmp(type->valuestring, families[i].model_type) == 0) {
            gated_gelu = families[i].gated_gelu;
            tied_default = families[i].tied_default;
        }

    cJSON *m = cJSON_CreateObject();
    for (size_t i = 0; i < sizeof direct / sizeof direct[0]; i++) {
        const char *key = direct[i].hf;
        if (strcmp(key, "intermediate_size") == 0 && hf_get(hf, "intermediate_size_mlp"))
            key = "intermediate_size_mlp"; /* Llama 4's dense layers; intermediate_size is its experts' */
        const cJSON *v = hf_get(hf, key);
        if (v)
            put_copy(r, m, direct[i].native, v, key);
        else if (direct[i].required) {
            rc = sim_fail(r->err, SIM_EINVAL, "%s: %s.%s: required key is missing", r->origin, pre(r), key);
            goto done;
        }
    }
    const cJSON *tie = hf_get(hf, "tie_word_embeddings");
    if (!tie && hf != root && (tie = hf_get(root, "tie_word_embeddings"))) {
        /* a multimodal model's own key, when its text_config has none */
        r->hf_prefix = "";
        put_copy(r, m, "tied_embeddings", tie, "tie_word_embeddings");
        r->hf_prefix = ".text_config";
    }
    if (tied_default && !tie) {
        cJSON *t = cJSON_CreateTrue();
        cJSON_AddItemToObject(m, "tied_embeddings", t);
        tag_hf(r, t, "model_type");
    }
    cJSON_AddNumberToObject(m, "seq_len", CFG_HF_SEQ_LEN);

    if ((rc = hf_activation(r, hf, gated_gelu, m))) goto done;
    const cJSON *dt = hf_get(hf, "torch_dtype");
    if (!dt) dt = hf_get(root, "torch_dtype");
    if (cJSON_IsString(dt) && strcmp(dt->valuestring, "float16") == 0) cJSON_AddStringToObject(m, "dtype", "fp16");

    char desc[200];
    if (cJSON_IsString(type))
        snprintf(desc, sizeof desc, "HuggingFace config.json, model_type %.80s", type->valuestring);
    else
        snprintf(desc, sizeof desc, "HuggingFace config.json");
    hf_unmodelled(hf, desc, sizeof desc);
    for (char *c = desc; *c; c++)
        if ((unsigned char)*c < 0x20) *c = ' ';
    sim_utf8_scrub(desc); /* %.80s may have cut a character in two */
    cJSON_AddStringToObject(m, "description", desc);

    if (!(rc = hf_moe(r, hf, m)) && !(rc = hf_mla(r, hf, m))) rc = hf_window(r, hf, m);
done:
    if (rc) {
        cJSON_Delete(m);
        return rc;
    }
    hf_names(r, hf, names);
    *out = m;
    return SIM_OK;
}
