/* fuzz_e2e.c - end-to-end random driver: tiny random valid configurations
 * built, checked and simulated, one child process per case (SimGrid runs
 * one simulation per process, so this is a fork-per-case driver rather than
 * a libFuzzer harness).
 *
 *   fuzz_e2e SECONDS [SEED]
 *
 * Each case: a small model (1-4 layers, 1-8 heads, a few widths, dense or
 * MoE), the dgx-a100 platform on 1-16 devices with its figures drawn
 * inside their ranges (peak, HBM bandwidth, fabric and NIC bandwidths,
 * latencies, efficiencies), a strategy drawn from the 7D space whose
 * product is the device count.  A case the rules refuse (SIM_EINVAL, with
 * one line) or that does not fit (SIM_EOOM) is counted; one that passes is
 * simulated in a child under alarm(): the child must exit, not abort or
 * hang, and a step time must be finite and positive.  A failure prints the
 * case's --set items (to replay with heptasim run) and exits 1. */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "config/config.h"
#include "runner/runner.h"

#define CASE_LIMIT_S 30 /* a tiny case takes milliseconds: more is a hang */

static unsigned long long state;
static unsigned rnd(unsigned n)
{
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (unsigned)((state >> 33) % n);
}
static double rnd_log(double lo, double hi) { return lo * pow(hi / lo, rnd(1000) / 999.0); }

typedef struct fcase {
    char items[40][96];
    int n;
    char model[512];
} fcase;

static void add(fcase *c, const char *fmt, double v)
{
    snprintf(c->items[c->n++], sizeof c->items[0], fmt, v);
}

/* The divisors of n in d[], how many. */
static int divisors(int n, int *d)
{
    int k = 0;
    for (int i = 1; i <= n; i++)
        if (n % i == 0) d[k++] = i;
    return k;
}

static int pick_divisor(int *rest)
{
    int d[32], k = divisors(*rest, d), v = d[rnd((unsigned)k)];
    *rest /= v;
    return v;
}

static void make_case(fcase *c, int *devices)
{
    memset(c, 0, sizeof *c);
    static const int heads_of[] = {1, 2, 4, 8};
    int heads = heads_of[rnd(4)], head_dim = 8 << rnd(3), layers = 1 + (int)rnd(4);
    int experts = rnd(3) == 0 ? 2 << rnd(2) : 0;
    int seq = 64 << rnd(3);
    snprintf(c->model, sizeof c->model,
             "{\"name\": \"fz\", \"layers\": %d, \"hidden\": %d, \"heads\": %d, \"ffn_hidden\": %d, \"vocab\": %d, "
             "\"seq_len\": %d%s%s}",
             layers, heads * head_dim, heads, heads * head_dim * (2 + (int)rnd(3)), 256 << rnd(3), seq,
             experts ? ", \"moe\": {\"experts\": " : "", "");
    if (experts) {
        size_t l = strlen(c->model);
        snprintf(c->model + l - 1, sizeof c->model - l + 1, "%d, \"top_k\": %d}}", experts, 1 + (int)rnd(2));
    }
    *devices = 1 << rnd(5);
    add(c, "platform.device.peak_tflops=%g", rnd_log(1, 2000));
    add(c, "platform.device.hbm_TBps=%g", rnd_log(0.1, 10));
    add(c, "platform.supernode.fabric_GBps=%g", rnd_log(1, 2000));
    add(c, "platform.supernode.latency_us=%g", rnd_log(0.1, 20));
    add(c, "platform.network.nic_GBps=%g", rnd_log(1, 200));
    add(c, "platform.network.latency_us=%g", rnd_log(0.1, 20));
    add(c, "platform.efficiency.network=%g", rnd_log(0.1, 1));
    add(c, "platform.efficiency.memory=%g", rnd_log(0.1, 1));
    add(c, "platform.efficiency.attention=%g", rnd_log(0.1, 1));
    int rest = *devices;
    add(c, "pp=%g", pick_divisor(&rest));
    add(c, "tp_x=%g", pick_divisor(&rest));
    add(c, "tp_y=%g", pick_divisor(&rest));
    add(c, "cp_ring=%g", pick_divisor(&rest));
    add(c, "cp_ulysses=%g", pick_divisor(&rest));
    add(c, "dp=%g", rest);
    if (experts) add(c, "ep=%g", 1 << rnd(2));
    add(c, "micro_batch=%g", 1 << rnd(2));
    add(c, "global_batch=%g", (double)(rest * (4 << rnd(3))));
    add(c, "zero=%g", rnd(4));
    snprintf(c->items[c->n++], sizeof c->items[0], "recompute=%s", (const char *[]){"none", "selective", "full"}[rnd(3)]);
    snprintf(c->items[c->n++], sizeof c->items[0], "schedule=%s", (const char *[]){"1f1b", "gpipe"}[rnd(2)]);
    snprintf(c->items[c->n++], sizeof c->items[0], "sequence_parallel=%s", rnd(2) ? "true" : "false");
    if (rnd(4) == 0) snprintf(c->items[c->n++], sizeof c->items[0], "fuse_tpy_cp=true");
}

static void show(const fcase *c, int devices, const char *what)
{
    fprintf(stderr, "fuzz_e2e: %s; model %s, dgx-a100 on %d devices, --set", what, c->model, devices);
    for (int i = 0; i < c->n; i++) fprintf(stderr, " %s", c->items[i]);
    fputc('\n', stderr);
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 10;
    state = argc > 2 ? strtoull(argv[2], NULL, 10) : 1;
    long cases = 0, refused = 0, oom = 0, simulated = 0;
    double t0 = sim_now_s();
    while (sim_now_s() - t0 < secs) {
        fcase c;
        int devices;
        make_case(&c, &devices);
        cases++;
        const char *items[40];
        for (int i = 0; i < c.n; i++) items[i] = c.items[i];
        cfg_overrides ov = {c.n, items};
        run_case rc;
        memset(&rc, 0, sizeof rc);
        sim_err err = {{0}};
        sim_rc r = cfg_parse_model(c.model, "fuzz-model.json", &ov, &rc.model, &err);
        if (r == SIM_OK) r = cfg_load_platform("dgx-a100", &ov, devices, &rc.platform, &err);
        if (r == SIM_OK) r = cfg_parse_strategy("{\"name\": \"fz\"}", "fuzz-strategy.json", &ov, &rc.strategy, &err);
        if (r == SIM_OK) r = cfg_check(&rc.model, &rc.platform, &rc.strategy, &err);
        if (r == SIM_OK) r = runner_check_replay(&rc, NULL, &err);
        if (r != SIM_OK) {
            if ((r != SIM_EINVAL && r != SIM_EOOM) || !err.msg[0] || strchr(err.msg, '\n')) {
                show(&c, devices, "a refusal that is not one line of bad input");
                return 1;
            }
            r == SIM_EOOM ? oom++ : refused++;
            continue;
        }
        fflush(NULL);
        pid_t pid = fork();
        if (pid < 0) return 1;
        if (pid == 0) {
            alarm(CASE_LIMIT_S);
            sim_rc sr = runner_simulate_here(&rc, NULL);
            if (sr == SIM_OK && !(rc.result.step_time_s > 0 && isfinite(rc.result.step_time_s))) _exit(3);
            _exit(sr == SIM_OK || sr == SIM_EOOM ? 0 : sr == SIM_EINVAL ? 2 : 4);
        }
        int st = 0;
        while (waitpid(pid, &st, 0) < 0) {}
        if (WIFSIGNALED(st)) {
            char what[64];
            snprintf(what, sizeof what, "simulation killed by signal %d%s", WTERMSIG(st),
                     WTERMSIG(st) == SIGALRM ? " (a hang)" : "");
            show(&c, devices, what);
            return 1;
        }
        if (WEXITSTATUS(st) == 3) {
            show(&c, devices, "a step time that is not finite and positive");
            return 1;
        }
        if (WEXITSTATUS(st) == 4) {
            show(&c, devices, "a valid case the engine failed");
            return 1;
        }
        if (WEXITSTATUS(st) == 2)
            refused++; /* refused by the engine's own checks, with its line */
        else
            simulated++;
    }
    printf("fuzz_e2e: %ld cases in %.0f s: %ld simulated, %ld refused by the rules, %ld out of device memory\n", cases,
           secs, simulated, refused, oom);
    return 0;
}
