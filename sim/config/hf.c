/* hf.c - translation of a HuggingFace config.json into heptasim model keys.
 *
 * A HuggingFace config is recognised by "num_hidden_layers".  The keys the
 * simulator needs are copied under heptasim's names, each tagged with its
 * HuggingFace name so that a bad value is reported as ".hidden_size", not
 * ".hidden" (the rules that tie keys together name them as the file does
 * too: cfg_model_names); every other key is ignored.  The result then goes
 * through the model schema like a native file.
 *
 *   num_hidden_layers -> layers            hidden_size -> hidden
 *   num_attention_heads -> heads           num_key_value_heads -> kv_heads
 *   head_dim -> head_dim                   intermediate_size -> ffn_hidden
 *   vocab_size -> vocab                    tie_word_embeddings -> tied_embeddings
 *   hidden_act silu/swish -> swiglu, gelu* -> gelu
 *   torch_dtype float16 -> fp16, anything else -> bf16
 *   num_local_experts | num_experts | n_routed_experts -> moe.experts
 *   num_experts_per_tok -> moe.top_k
 *   moe_intermediate_size -> moe.ffn_hidden (intermediate_size for Mixtral's
 *     num_local_experts, or when absent)
 *   n_shared_experts -> moe.shared_experts, each of width
 *     shared_expert_intermediate_size when given, else moe_intermediate_size
 *     (DeepSeek's fused shared MLP of n_shared * moe_intermediate_size);
 *     shared_expert_intermediate_size alone means one shared expert (Qwen)
 *   first_k_dense_replace -> moe.first_dense_layers
 *   moe_layer_freq | decoder_sparse_step -> moe.layer_freq
 *   seq_len is not in these files: CFG_HF_SEQ_LEN (4096).
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

bool cfg_hf_detect(const cJSON *root)
{
    return cJSON_GetObjectItemCaseSensitive(root, "num_hidden_layers") != NULL;
}

/* The value of key, treating null as absent. */
static const cJSON *hf_get(const cJSON *hf, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(hf, key);
    return (v && !cJSON_IsNull(v)) ? v : NULL;
}

/* Copy src under key into obj, reported as .hfkey in messages. */
static void put_copy(cfg_reader *r, cJSON *obj, const char *key, const cJSON *src, const char *hfkey)
{
    cJSON *dup = cJSON_Duplicate(src, 1);
    char path[CFG_PATH_LEN];
    snprintf(path, sizeof path, ".%s", hfkey);
    cJSON_AddItemToObject(obj, key, dup);
    cfg_reader_tag(r, dup, NULL, path);
}

/* A count the translation itself looks at (experts, shared experts). */
static sim_rc hf_count(cfg_reader *r, const cJSON *v, const char *hfkey, int *out)
{
    if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) || v->valuedouble < 0 || v->valuedouble > 1e9) {
        char got[64];
        cfg_json_repr(v, got, sizeof got);
        return sim_fail(r->err, SIM_EINVAL, "%s: .%s: expected an integer >= 0, got %s", r->origin, hfkey, got);
    }
    *out = (int)v->valuedouble;
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

    const cJSON *topk = hf_get(hf, "num_experts_per_tok");
    if (!topk)
        return sim_fail(r->err, SIM_EINVAL, "%s: .num_experts_per_tok: required key is missing (%s is set)", r->origin,
                        ekey);
    const char *ffn_key = "intermediate_size";
    if (strcmp(ekey, "num_local_experts") != 0 && hf_get(hf, "moe_intermediate_size"))
        ffn_key = "moe_intermediate_size";

    cJSON *moe = cJSON_CreateObject();
    cJSON_AddItemToObject(m, "moe", moe);
    put_copy(r, moe, "experts", hf_get(hf, ekey), ekey);
    put_copy(r, moe, "top_k", topk, "num_experts_per_tok");
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
            cJSON_AddNumberToObject(moe, "shared_experts", 1);
        put_copy(r, moe, "shared_ffn_hidden", sei, "shared_expert_intermediate_size");
    } else if (n_shared > 0) {
        put_copy(r, moe, "shared_experts", nse, "n_shared_experts");
        put_copy(r, moe, "shared_ffn_hidden", hf_get(hf, ffn_key), ffn_key);
    }
    const cJSON *v;
    if ((v = hf_get(hf, "first_k_dense_replace"))) put_copy(r, moe, "first_dense_layers", v, "first_k_dense_replace");
    if ((v = hf_get(hf, "moe_layer_freq")))
        put_copy(r, moe, "layer_freq", v, "moe_layer_freq");
    else if ((v = hf_get(hf, "decoder_sparse_step")))
        put_copy(r, moe, "layer_freq", v, "decoder_sparse_step");
    return SIM_OK;
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

/* SIM_EINVAL naming the first top-level key given twice. */
static sim_rc no_duplicates(cfg_reader *r, const cJSON *hf)
{
    for (const cJSON *c = hf->child; c; c = c->next)
        for (const cJSON *d = c->next; d; d = d->next)
            if (c->string && d->string && strcmp(c->string, d->string) == 0)
                return sim_fail(r->err, SIM_EINVAL,
                                "%s: .%s: duplicate key (transformers would silently take the last one; keep one)",
                                r->origin, c->string);
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
        name = "geglu"; /* Gemma's MLP is GeGLU whatever the file says */
    } else if (cJSON_IsString(act)) {
        const char *a = act->valuestring;
        if (strcmp(a, "silu") == 0 || strcmp(a, "swish") == 0 || strcmp(a, "swiglu") == 0)
            name = "swiglu";
        else if (strncmp(a, "gelu", 4) == 0)
            name = gated_gelu ? "geglu" : "gelu";
    }
    if (!name) {
        char got[64];
        cfg_json_repr(act, got, sizeof got);
        return sim_fail(r->err, SIM_EINVAL, "%s: .%s: unsupported activation %s (expected silu or gelu)", r->origin,
                        key, got);
    }
    cJSON *a = cJSON_CreateString(name);
    cJSON_AddItemToObject(m, "activation", a);
    char path[48];
    snprintf(path, sizeof path, ".%s", key);
    cfg_reader_tag(r, a, NULL, act ? path : ".model_type");
    return SIM_OK;
}

/* The HF keys the MoE values came from (after hf_moe succeeded). */
static void moe_names(const cJSON *hf, cfg_model_names *k)
{
    static const char *const expert_keys[] = {".num_local_experts", ".num_experts", ".n_routed_experts"};
    for (int i = 0; i < 3; i++)
        if (hf_get(hf, expert_keys[i] + 1)) {
            k->experts = expert_keys[i];
            break;
        }
    k->top_k = ".num_experts_per_tok";
    k->first_dense_layers = ".first_k_dense_replace";
    k->shared_experts = hf_get(hf, "n_shared_experts") ? ".n_shared_experts" : ".shared_expert_intermediate_size";
    k->shared_ffn_hidden =
        hf_get(hf, "shared_expert_intermediate_size") ? ".shared_expert_intermediate_size" : ".moe_intermediate_size";
}

sim_rc cfg_hf_convert(cfg_reader *r, const cJSON *hf, cJSON **out, cfg_model_names *names)
{
    static const struct {
        const char *hf, *native;
        bool required;
    } direct[] = {
        {"num_hidden_layers", "layers", true},  {"hidden_size", "hidden", true},
        {"num_attention_heads", "heads", true}, {"num_key_value_heads", "kv_heads", false},
        {"head_dim", "head_dim", false},        {"intermediate_size", "ffn_hidden", true},
        {"vocab_size", "vocab", true},          {"tie_word_embeddings", "tied_embeddings", false},
    };
    sim_rc rc = no_duplicates(r, hf);
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
        const cJSON *v = hf_get(hf, direct[i].hf);
        if (v)
            put_copy(r, m, direct[i].native, v, direct[i].hf);
        else if (direct[i].required) {
            rc = sim_fail(r->err, SIM_EINVAL, "%s: .%s: required key is missing", r->origin, direct[i].hf);
            goto done;
        }
    }
    if (tied_default && !hf_get(hf, "tie_word_embeddings")) {
        cJSON *t = cJSON_CreateTrue();
        cJSON_AddItemToObject(m, "tied_embeddings", t);
        cfg_reader_tag(r, t, NULL, ".model_type");
    }
    cJSON_AddNumberToObject(m, "seq_len", CFG_HF_SEQ_LEN);

    if ((rc = hf_activation(r, hf, gated_gelu, m))) goto done;
    const cJSON *dt = hf_get(hf, "torch_dtype");
    if (cJSON_IsString(dt) && strcmp(dt->valuestring, "float16") == 0) cJSON_AddStringToObject(m, "dtype", "fp16");

    char desc[200];
    if (cJSON_IsString(type))
        snprintf(desc, sizeof desc, "HuggingFace config.json, model_type %.80s", type->valuestring);
    else
        snprintf(desc, sizeof desc, "HuggingFace config.json");
    for (char *c = desc; *c; c++)
        if ((unsigned char)*c < 0x20) *c = ' ';
    sim_utf8_scrub(desc); /* %.80s may have cut a character in two */
    cJSON_AddStringToObject(m, "description", desc);

    rc = hf_moe(r, hf, m);
done:
    if (rc) {
        cJSON_Delete(m);
        return rc;
    }
    *names = (cfg_model_names){".num_hidden_layers", ".hidden_size", ".num_attention_heads", ".num_key_value_heads",
                               ".head_dim", ".moe.experts", ".num_experts_per_tok", ".first_k_dense_replace",
                               ".n_shared_experts", ".shared_expert_intermediate_size"};
    moe_names(hf, names);
    *out = m;
    return SIM_OK;
}
