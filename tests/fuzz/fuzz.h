/* fuzz.h - what the libFuzzer harnesses of the config loaders share: the
 * input as a C string, the shipped files they start from, and the
 * properties every outcome must have.
 *
 * Properties checked on every input (a violation aborts, so libFuzzer keeps
 * the input as a crash):
 *   - a failure is SIM_EINVAL (bad input, exit status 2) with a message of
 *     exactly one line, printable, that starts with the origin it was given
 *     ("fuzz.json: ...") or with the `--set` item that caused it, and that
 *     the error buffer did not cut off;
 *   - a success writes back as JSON that loads again to the same JSON (so
 *     --json output and golden files describe what was simulated).
 * Each harness is one .c file that includes this header once. */
#ifndef HEPTASIM_FUZZ_H
#define HEPTASIM_FUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "config/config.h"

#ifndef HEPTASIM_DATADIR
#define HEPTASIM_DATADIR "."
#endif

/* The fuzz input as a NUL-terminated string (embedded NULs cut it short,
 * as they would a file read by the loader).  The caller frees it. */
static inline char *fz_text(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s) abort();
    memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

/* Splits the fuzz input into NUL-separated arguments, after the `first`
 * ones already in argv: returns argc (at most max), argv[argc] is NULL.
 * The arguments live in *buf, which the caller frees. */
static inline int fz_args(const uint8_t *data, size_t size, char **argv, int first, int max, char **buf)
{
    *buf = fz_text(data, size);
    int argc = first;
    for (size_t i = 0; i <= size && argc < max;) {
        argv[argc++] = *buf + i;
        i += strlen(*buf + i) + 1;
    }
    argv[argc] = NULL;
    return argc;
}

/* A shipped input file (path relative to the repository) as a string the
 * caller frees; aborts when it cannot be read, as nothing can be fuzzed. */
static inline char *fz_shipped(const char *rel)
{
    const char *dir = getenv("HEPTASIM_DATA");
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir && dir[0] ? dir : HEPTASIM_DATADIR, rel);
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "fuzz: cannot read %s (set HEPTASIM_DATA to the repository)\n", path);
        abort();
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    if (!s || fread(s, 1, (size_t)n, f) != (size_t)n) abort();
    s[n] = '\0';
    fclose(f);
    return s;
}

static inline void fz_violation(const char *what, const char *msg)
{
    fprintf(stderr, "fuzz: property violated: %s\n  message: [%s]\n", what, msg);
    abort();
}

/* Check the outcome of a load or a check: SIM_OK, or SIM_EINVAL with one
 * printable line that starts with one of the prefixes ("fuzz.json: ",
 * "--set ", "heptasim"). */
static inline void fz_check_err(sim_rc rc, const sim_err *err, const char *const *prefixes, int nprefixes)
{
    if (rc == SIM_OK) return;
    const char *msg = err->msg;
    if (rc != SIM_EINVAL) fz_violation("bad input must give SIM_EINVAL", msg);
    if (!msg[0]) fz_violation("empty error message", msg);
    if (strlen(msg) >= sizeof err->msg - 1) fz_violation("error message cut off by the error buffer", msg);
    for (const char *c = msg; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f) fz_violation("error message is not one printable line", msg);
    for (int i = 0; i < nprefixes; i++)
        if (strncmp(msg, prefixes[i], strlen(prefixes[i])) == 0) return;
    fz_violation("error message does not start with the file or --set item it is about", msg);
}

/* Print a cJSON tree (void* as returned by cfg_*_to_json) and free the
 * tree; the text is freed with cJSON_free. */
static inline char *fz_print(void *tree)
{
    char *s = cJSON_PrintUnformatted((cJSON *)tree);
    cJSON_Delete((cJSON *)tree);
    if (!s) abort();
    return s;
}

/* Round trip: `first` (JSON written from a loaded struct) must load again
 * and write back as the same text.  load_again parses text and returns the
 * struct written back as JSON text (fz_print), or NULL with err filled. */
static inline void fz_round_trip(const char *first, char *(*load_again)(const char *text, sim_err *err))
{
    sim_err err = {{0}};
    char *second = load_again(first, &err);
    if (!second) {
        fprintf(stderr, "fuzz: written JSON: %s\n", first);
        fz_violation("a loaded object, written as JSON, does not load again", err.msg);
    }
    if (strcmp(first, second) != 0) {
        fprintf(stderr, "fuzz: first:  %s\nfuzz: second: %s\n", first, second);
        fz_violation("writing a loaded object is not stable", "");
    }
    cJSON_free(second);
}

#endif
