/* fuzz_set.c - libFuzzer harness for the command line of `heptasim run`
 * and its `--set KEY=VALUE` overrides.  The input is a list of arguments
 * separated by NUL bytes (so that an argument may hold a newline); they are
 * parsed with the option table (cli_parse) and the --set items and
 * --devices are then applied to shipped files: a model (picked by -m among
 * four), the dgx-a100 platform and the gpt3-175b-a100 strategy, which are
 * loaded and cross-checked.  Every error must be one line that starts with
 * "heptasim run: ", the --set item or the file it is about. */
#include "cli/options.h"
#include "fuzz.h"
#include "model/model.h"

#define MAX_ARGS 64

static const char *const models[] = {"models/gpt-1.7b.json", "models/mixtral-8x22b.json",
                                     "models/deepseek-moe-16b.json", "models/llama3-8b.json"};
static const char *const prefixes[] = {"heptasim run: ",          "--set ",
                                       "models/gpt-1.7b.json: ",  "models/mixtral-8x22b.json: ",
                                       "models/deepseek-moe-16b.json: ", "models/llama3-8b.json: ",
                                       "platforms/dgx-a100.json: ", "strategies/gpt3-175b-a100.json: "};
#define NPREFIXES (int)(sizeof prefixes / sizeof prefixes[0])
static char *model_text[4], *platform_text, *strategy_text;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    for (int i = 0; i < 4; i++) model_text[i] = fz_shipped(models[i]);
    platform_text = fz_shipped("platforms/dgx-a100.json");
    strategy_text = fz_shipped("strategies/gpt3-175b-a100.json");
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* argv: "heptasim", "run", then the NUL-separated arguments */
    char *buf;
    char *argv[MAX_ARGS + 3] = {"heptasim", "run"};
    int argc = fz_args(data, size, argv, 2, MAX_ARGS + 2, &buf);

    static cli_args a;
    memset(&a, 0, sizeof a);
    sim_err err = {{0}};
    unsigned accepted = CLI_OPT_INPUTS | CLI_OPT_JSON | CLI_OPT_ENGINE | CLI_OPT_TRACE | CLI_OPT_REPORT | CLI_OPT_QUIET;
    sim_rc rc = cli_parse(argc, argv, 2, accepted, "run", &a, &err);
    fz_check_err(rc, &err, prefixes, NPREFIXES);
    if (rc == SIM_OK) {
        int which = 0;
        for (int i = 0; i < 4; i++)
            if (a.model && strstr(models[i], a.model)) which = i;
        cfg_overrides ov = {a.nsets, a.sets};
        cfg_model m;
        cfg_platform p;
        cfg_strategy s;
        rc = cfg_parse_model(model_text[which], models[which], &ov, &m, &err);
        if (rc == SIM_OK) rc = cfg_parse_platform(platform_text, "platforms/dgx-a100.json", &ov, a.devices, &p, &err);
        if (rc == SIM_OK) rc = cfg_parse_strategy(strategy_text, "strategies/gpt3-175b-a100.json", &ov, &s, &err);
        if (rc == SIM_OK) rc = cfg_check(&m, &p, &s, &err);
        fz_check_err(rc, &err, prefixes, NPREFIXES);
        if (rc == SIM_OK) {
            mdl_memory mem;
            mdl_peak_memory(&m, &s, &mem);
        }
    }
    free(buf);
    return 0;
}
