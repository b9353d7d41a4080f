/* fuzz_model.c - libFuzzer harness for cfg_parse_model: any text as a model
 * file (native keys, or a HuggingFace config.json when it has
 * "num_hidden_layers").  On success the model also goes through the model
 * math (parameters, FLOPs) and must write back and load again unchanged. */
#include "fuzz.h"
#include "model/model.h"

static const char *const prefixes[] = {"fuzz.json: "};

static char *again(const char *text, sim_err *err)
{
    cfg_model m;
    if (cfg_parse_model(text, "fuzz.json", NULL, &m, err) != SIM_OK) return NULL;
    return fz_print(cfg_model_to_json(&m));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fz_text(data, size);
    cfg_model m;
    sim_err err = {{0}};
    sim_rc rc = cfg_parse_model(text, "fuzz.json", NULL, &m, &err);
    fz_check_err(rc, &err, prefixes, 1);
    if (rc == SIM_OK) {
        mdl_params par;
        mdl_count_params(&m, &par);
        (void)mdl_model_flops_per_step(&m, 1);
        char *first = fz_print(cfg_model_to_json(&m));
        fz_round_trip(first, again);
        cJSON_free(first);
    }
    free(text);
    return 0;
}
