/* json.c - numbers as text that reads back exactly, in JSON and CSV. */
#include "json.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sim_number_text(double d, char *out)
{
    snprintf(out, SIM_NUMBER_TEXT, "%.15g", d);
    if (strtod(out, NULL) == d) return 15;
    snprintf(out, SIM_NUMBER_TEXT, "%.17g", d);
    return 17;
}

/* Number node n as cJSON prints it (15 digits when they read back within a
 * relative DBL_EPSILON) would not read back the same: make it a raw node
 * holding 17 digits.  Returns false when out of memory. */
static bool exact_number(cJSON *n)
{
    double d = n->valuedouble;
    if (!isfinite(d) || d == (double)n->valueint) return true; /* null, or an integer cJSON prints as one */
    char text[SIM_NUMBER_TEXT];
    if (sim_number_text(d, text) == 15) return true;
    size_t len = strlen(text) + 1;
    char *raw = cJSON_malloc(len);
    if (!raw) return false;
    memcpy(raw, text, len);
    n->type = cJSON_Raw | (n->type & cJSON_StringIsConst);
    n->valuestring = raw;
    return true;
}

static bool exact_numbers(cJSON *node)
{
    for (cJSON *c = node; c; c = c->next) {
        if (cJSON_IsNumber(c) && !exact_number(c)) return false;
        if (c->child && !exact_numbers(c->child)) return false;
    }
    return true;
}

char *sim_json_print(const void *doc, bool formatted)
{
    if (!doc) return NULL;
    cJSON *copy = cJSON_Duplicate(doc, true);
    char *text = NULL;
    if (copy && exact_numbers(copy)) text = formatted ? cJSON_Print(copy) : cJSON_PrintUnformatted(copy);
    cJSON_Delete(copy);
    return text;
}
