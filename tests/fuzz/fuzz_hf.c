/* fuzz_hf.c - libFuzzer harness for the HuggingFace config.json
 * translation.  Any JSON object is made a HuggingFace config (a
 * "num_hidden_layers" is added when missing), so every input reaches the
 * translation; then as fuzz_model.c: one-line errors, and a loaded model
 * writes back (as a native file) and loads again unchanged. */
#include "fuzz.h"
#include "model/model.h"

static const char *const prefixes[] = {"fuzz/config.json: "};

static char *again(const char *text, sim_err *err)
{
    cfg_model m;
    if (cfg_parse_model(text, "fuzz/config.json", NULL, &m, err) != SIM_OK) return NULL;
    return fz_print(cfg_model_to_json(&m));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fz_text(data, size);
    cJSON *root = cJSON_Parse(text);
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        free(text);
        return 0;
    }
    if (!cJSON_GetObjectItemCaseSensitive(root, "num_hidden_layers"))
        cJSON_AddNumberToObject(root, "num_hidden_layers", 2);
    char *hf = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    free(text);
    if (!hf) return 0;

    cfg_model m;
    sim_err err = {{0}};
    sim_rc rc = cfg_parse_model(hf, "fuzz/config.json", NULL, &m, &err);
    fz_check_err(rc, &err, prefixes, 1);
    if (rc == SIM_OK) {
        mdl_params par;
        mdl_count_params(&m, &par);
        char *first = fz_print(cfg_model_to_json(&m));
        fz_round_trip(first, again);
        cJSON_free(first);
    }
    cJSON_free(hf);
    return 0;
}
