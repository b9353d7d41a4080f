/* fuzz_platform.c - libFuzzer harness for cfg_parse_platform.  The first
 * byte picks a --devices value (none, small, the limit, past the limit);
 * the rest is the platform file.  On success the cost model is built from
 * it (GSL interpolation of the efficiency curve) and asked for a GEMM time,
 * and the platform must write back and load again unchanged. */
#include <math.h>

#include "cost/cost.h"
#include "fuzz.h"

static const char *const prefixes[] = {"fuzz.json: "};

static char *again(const char *text, sim_err *err)
{
    cfg_platform p;
    if (cfg_parse_platform(text, "fuzz.json", NULL, 0, &p, err) != SIM_OK) return NULL;
    return fz_print(cfg_platform_to_json(&p));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const int devices[] = {0, 0, 8, 64, 131072, 131073, 1 << 30, -5};
    int dev = size > 0 ? devices[data[0] & 7] : 0;
    char *text = fz_text(size > 0 ? data + 1 : data, size > 0 ? size - 1 : 0);
    cfg_platform p;
    sim_err err = {{0}};
    sim_rc rc = cfg_parse_platform(text, "fuzz.json", NULL, dev, &p, &err);
    fz_check_err(rc, &err, prefixes, 1);
    if (rc == SIM_OK) {
        if (p.devices < 1 || p.devices > 131072) fz_violation("device count out of range after a load", "");
        cost_model *c = cost_new(&p, &err);
        if (!c) fz_violation("the cost model refuses a platform the loader accepted", err.msg);
        double t = cost_gemm_s(c, 4096, 4096, 4096, 2);
        if (!(t > 0) || !isfinite(t)) fz_violation("a GEMM time is not a positive number", "");
        cost_free(c);
        char *first = fz_print(cfg_platform_to_json(&p));
        fz_round_trip(first, again);
        cJSON_free(first);
    }
    free(text);
    return 0;
}
