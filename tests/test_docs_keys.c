/* test_docs_keys.c - what follows from the strategy key table
 * (config/keys.h): the columns of a CSV of sweep records, and the key
 * tables of docs/strategies.md and docs/outputs.md, which must name every
 * key the table holds and no other. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/keys.h"
#include "report/report.h"
#include "lib/check_run.h"

/* The text of the file rel (under the data directory), NUL-ended; the
 * caller frees it. */
static char *read_doc(const char *rel)
{
    char path[CFG_PATH_LEN + 64];
    snprintf(path, sizeof path, "%s/%s", cfg_data_dir(), rel);
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "cannot read %s", path);
    static const size_t cap = 1 << 20;
    char *text = malloc(cap);
    ck_assert(text);
    size_t n = fread(text, 1, cap - 1, f);
    fclose(f);
    text[n] = '\0';
    return text;
}

static int column_index(const char *const *columns, const char *name)
{
    for (int i = 0; columns[i]; i++)
        if (strcmp(columns[i], name) == 0) return i;
    return -1;
}

/* Every searched key (a search position, or pinned with one that has it)
 * and every other row of the table has its strategy.KEY column, in the
 * table's order, once; every strategy.* column is a row. */
START_TEST(csv_has_a_column_per_strategy_key)
{
    const char *const *columns = rpt_record_csv_columns();
    int last = -1, searched = 0, strategy_columns = 0;
    for (const cfg_key *k = cfg_strategy_keys; k->key; k++) {
        char want[96];
        snprintf(want, sizeof want, "strategy.%s", k->key);
        int at = column_index(columns, want);
        ck_assert_msg(at >= 0, "no CSV column %s", want);
        ck_assert_msg(at > last, "CSV column %s is out of the key table's order", want);
        last = at;
        if (k->search > 0 || k->pin_as) searched++;
    }
    for (int i = 0; columns[i]; i++) {
        ck_assert_msg(column_index(columns, columns[i]) == i, "CSV column %s twice", columns[i]);
        if (strncmp(columns[i], "strategy.", 9) != 0) continue;
        strategy_columns++;
        ck_assert_msg(cfg_strategy_key(columns[i] + 9) != NULL, "CSV column %s names no strategy key", columns[i]);
    }
    ck_assert_int_ge(searched, 22); /* the table's searched keys (21 positions, vpp with schedule) */
    for (const char *fixed[] = {"index", "space", "megatron_style", "estimate_step_time_s", "step_time_s",
                                "memory.peak_bytes", "error", NULL},
         **c = fixed;
         *c; c++)
        ck_assert_msg(column_index(columns, *c) >= 0, "no CSV column %s", *c);
    int rows = 0;
    for (const cfg_key *k = cfg_strategy_keys; k->key; k++) rows++;
    ck_assert_int_eq(strategy_columns, rows);
}
END_TEST

/* The backticked names of the first cell of a Markdown table row, before
 * any ':' (a row such as "`schedule`: `zb-h1`" is about a value); returns
 * how many went to out. */
static int first_cell_names(const char *row, char out[][64], int cap)
{
    const char *end = strchr(row + 1, '|');
    int n = 0;
    for (const char *c = row + 1; c && c < end; c++) {
        if (*c == ':') break;
        if (*c != '`') continue;
        const char *close = strchr(c + 1, '`');
        ck_assert(close && close < end && close - c - 1 < 64 && n < cap);
        memcpy(out[n], c + 1, (size_t)(close - c - 1));
        out[n][close - c - 1] = '\0';
        n++;
        c = close;
    }
    return n;
}

/* docs/strategies.md, "## Keys": one table whose first column names every
 * key but name and description (which the text above it describes), and
 * nothing else. */
START_TEST(strategies_doc_names_every_key)
{
    char *text = read_doc("docs/strategies.md");
    char *p = strstr(text, "\n## Keys\n");
    ck_assert(p);
    p = strstr(p, "\n| key |");
    ck_assert(p);
    p = strchr(p + 1, '\n') + 1; /* the header, then the rule */
    p = strchr(p, '\n') + 1;
    bool seen[256] = {false};
    int nkeys = 0;
    for (const cfg_key *k = cfg_strategy_keys; k->key; k++) nkeys++;
    ck_assert_int_lt(nkeys, 256);
    for (; *p == '|'; p = strchr(p, '\n') + 1) {
        char names[8][64];
        int n = first_cell_names(p, names, 8);
        for (int i = 0; i < n; i++) {
            const cfg_key *k = cfg_strategy_key(names[i]);
            ck_assert_msg(k != NULL, "docs/strategies.md documents '%s', which is not a strategy key", names[i]);
            seen[k - cfg_strategy_keys] = true;
        }
    }
    for (const cfg_key *k = cfg_strategy_keys; k->key; k++) {
        if (strcmp(k->key, "name") == 0 || strcmp(k->key, "description") == 0) continue;
        ck_assert_msg(seen[k - cfg_strategy_keys], "docs/strategies.md: the key table has no row for '%s'", k->key);
    }
    free(text);
}
END_TEST

/* docs/outputs.md lists the columns of a sweep's CSV: exactly
 * rpt_record_csv_columns, in order (".KEY" stands for "strategy.KEY"). */
START_TEST(outputs_doc_lists_the_csv_columns)
{
    char *text = read_doc("docs/outputs.md");
    char *p = strstr(text, "* `sweep` and `compare`");
    ck_assert(p);
    char *end = strstr(p, "\n* `validate`");
    ck_assert(end);
    *end = '\0';
    p = strchr(p, ':'); /* after "one row per candidate ... order ...):" */
    ck_assert(p);
    const char *const *columns = rpt_record_csv_columns();
    int i = 0;
    for (char *c = strchr(p, '`'); c; c = strchr(c + 1, '`')) {
        char *close = strchr(c + 1, '`');
        ck_assert(close);
        *close = '\0';
        char name[2048];
        snprintf(name, sizeof name, "%s", c + 1);
        for (char *item = strtok(name, ", \n"); item; item = strtok(NULL, ", \n")) {
            char full[96];
            snprintf(full, sizeof full, "%s%s", item[0] == '.' ? "strategy" : "", item);
            ck_assert_msg(columns[i] != NULL, "docs/outputs.md lists '%s' past the last CSV column", full);
            ck_assert_msg(strcmp(columns[i], full) == 0, "docs/outputs.md: CSV column %d is '%s', the documentation says '%s'",
                          i + 1, columns[i], full);
            i++;
        }
        c = close;
    }
    ck_assert_msg(columns[i] == NULL, "docs/outputs.md does not list the CSV column '%s'", columns[i] ? columns[i] : "");
    free(text);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("docs_keys");
    TCase *t = tcase_create("core");
    tcase_add_test(t, csv_has_a_column_per_strategy_key);
    tcase_add_test(t, strategies_doc_names_every_key);
    tcase_add_test(t, outputs_doc_lists_the_csv_columns);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return check_run(suite());
}
