/* platform_dir.h - what the suites that build a directory of platform
 * files share: a file written into it, and a full platform to base the
 * others on. */
#ifndef HEPTASIM_TESTS_PLATFORM_DIR_H
#define HEPTASIM_TESTS_PLATFORM_DIR_H

#include <check.h>
#include <stdio.h>

/* A platform with every required key: 16 devices, nodes of 4, supernodes of 8. */
#define TEST_FULL_PLATFORM                                                                                   \
    "{\"devices\": 16, \"device\": {\"peak_tflops\": 100, \"hbm_GiB\": 32, \"hbm_TBps\": 1},"                \
    " \"node\": {\"devices\": 4}, \"supernode\": {\"devices\": 8, \"fabric_GBps\": 100, \"latency_us\": 1}," \
    " \"network\": {\"nic_GBps\": 10, \"latency_us\": 2},"                                                   \
    " \"efficiency\": {\"gemm\": [[1e6, 0.1], [1e9, 0.5], [1e12, 0.8]], \"attention\": 0.5, \"memory\": 0.8,"  \
    " \"network\": 0.9, \"kernel_overhead_us\": 3, \"collective_step_us\": 0}}"

/* Writes text to dir/name. */
static inline void write_file(const char *dir, const char *name, const char *text)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

#endif
