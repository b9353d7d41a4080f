/* hf.c - translation of a HuggingFace config.json into heptasim model keys.
 *
 * A HuggingFace config is recognised by "num_hidden_layers".  The keys the
 * simulator needs are copied under heptasim's names, each tagged with its
 * HuggingFace name so that a bad value is reported as ".hidden_size", not
 * ".hidden"; every other key is ignored.  The result then goes through the
 * model schema like a native file.
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
 *   seq_len is not in these files: CFG_HF_SEQ_LEN (4096). */
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

sim_rc cfg_hf_convert(cfg_reader *r, const cJSON *hf, cJSON **out)
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
    cJSON *m = cJSON_CreateObject();
    sim_rc rc = SIM_OK;
    for (size_t i = 0; i < sizeof direct / sizeof direct[0]; i++) {
        const cJSON *v = hf_get(hf, direct[i].hf);
        if (v)
            put_copy(r, m, direct[i].native, v, direct[i].hf);
        else if (direct[i].required) {
            rc = sim_fail(r->err, SIM_EINVAL, "%s: .%s: required key is missing", r->origin, direct[i].hf);
            goto done;
        }
    }
    cJSON_AddNumberToObject(m, "seq_len", CFG_HF_SEQ_LEN);

    const cJSON *act = hf_get(hf, "hidden_act");
    if (act) {
        char got[64];
        cfg_json_repr(act, got, sizeof got);
        const char *name = NULL;
        if (cJSON_IsString(act)) {
            const char *a = act->valuestring;
            if (strcmp(a, "silu") == 0 || strcmp(a, "swish") == 0 || strcmp(a, "swiglu") == 0)
                name = "swiglu";
            else if (strncmp(a, "gelu", 4) == 0)
                name = "gelu";
        }
        if (!name) {
            rc = sim_fail(r->err, SIM_EINVAL, "%s: .hidden_act: unsupported activation %s (expected silu or gelu)",
                          r->origin, got);
            goto done;
        }
        cJSON *a = cJSON_CreateString(name);
        cJSON_AddItemToObject(m, "activation", a);
        cfg_reader_tag(r, a, NULL, ".hidden_act");
    }
    const cJSON *dt = hf_get(hf, "torch_dtype");
    if (cJSON_IsString(dt) && strcmp(dt->valuestring, "float16") == 0) cJSON_AddStringToObject(m, "dtype", "fp16");

    const cJSON *type = hf_get(hf, "model_type");
    char desc[200];
    if (cJSON_IsString(type))
        snprintf(desc, sizeof desc, "HuggingFace config.json, model_type %.80s", type->valuestring);
    else
        snprintf(desc, sizeof desc, "HuggingFace config.json");
    for (char *c = desc; *c; c++)
        if ((unsigned char)*c < 0x20) *c = ' ';
    cJSON_AddStringToObject(m, "description", desc);

    rc = hf_moe(r, hf, m);
done:
    if (rc) {
        cJSON_Delete(m);
        return rc;
    }
    *out = m;
    return SIM_OK;
}
