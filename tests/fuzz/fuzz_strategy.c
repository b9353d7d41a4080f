/* fuzz_strategy.c - libFuzzer harness for cfg_parse_strategy and the
 * cross checks (cfg_check).  The first byte picks a shipped model; the rest
 * is the strategy file.  A strategy that loads is checked against that
 * model on the dgx-a100 platform sized to the strategy's world (64 devices
 * when dp is derived), so the divisibility and limit rules all get
 * exercised; a strategy that passes goes through the memory model, and
 * must write back and load again unchanged. */
#include <math.h>

#include "fuzz.h"
#include "model/model.h"

static const char *const prefixes[] = {"fuzz.json: "};
static const char *const models[] = {"models/gpt-1.7b.json", "models/mixtral-8x22b.json",
                                     "models/deepseek-moe-16b.json", "models/llama3-8b.json"};
static char *model_text[4], *platform_text;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    for (int i = 0; i < 4; i++) model_text[i] = fz_shipped(models[i]);
    platform_text = fz_shipped("platforms/dgx-a100.json");
    return 0;
}

static char *again(const char *text, sim_err *err)
{
    cfg_strategy s;
    if (cfg_parse_strategy(text, "fuzz.json", NULL, &s, err) != SIM_OK) return NULL;
    return fz_print(cfg_strategy_to_json(&s));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int which = size > 0 ? data[0] & 3 : 0;
    char *text = fz_text(size > 0 ? data + 1 : data, size > 0 ? size - 1 : 0);
    cfg_strategy s;
    sim_err err = {{0}};
    sim_rc rc = cfg_parse_strategy(text, "fuzz.json", NULL, &s, &err);
    fz_check_err(rc, &err, prefixes, 1);
    if (rc == SIM_OK) {
        char *first = fz_print(cfg_strategy_to_json(&s));
        fz_round_trip(first, again);
        cJSON_free(first);

        cfg_model m;
        cfg_platform p;
        if (cfg_parse_model(model_text[which], models[which], NULL, &m, &err) != SIM_OK) abort();
        long long world = (long long)(s.dp ? s.dp : 1) * s.pp * s.tp_x * s.tp_y * s.cp_ring * s.cp_ulysses;
        int devices = s.dp == 0 ? 64 : world <= 131072 ? (int)world : 64;
        if (cfg_parse_platform(platform_text, "platforms/dgx-a100.json", NULL, devices, &p, &err) != SIM_OK) abort();
        rc = cfg_check(&m, &p, &s, &err);
        fz_check_err(rc, &err, prefixes, 1);
        if (rc == SIM_OK) {
            if (cfg_world_size(&s) != p.devices) fz_violation("checked world size differs from the devices", "");
            if (cfg_micro_batches(&s) < 1) fz_violation("checked strategy has no micro-batch", "");
            mdl_memory mem;
            mdl_peak_memory(&m, &s, &mem);
            if (!(mem.total_bytes > 0) || !isfinite(mem.total_bytes))
                fz_violation("memory of a checked strategy is not a positive number", "");
            double f = mdl_hardware_flops_per_step(&m, &s);
            if (!(f > 0) || !isfinite(f)) fz_violation("FLOPs of a checked strategy are not a positive number", "");
        }
    }
    free(text);
    return 0;
}
