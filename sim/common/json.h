/* json.h - numbers as text that reads back exactly, in JSON and CSV.
 *
 * cJSON writes a number with 15 significant digits whenever they read back
 * within a relative DBL_EPSILON of it, so about one double in six comes back
 * one unit in the last place off: a record resumed, a summary read again or
 * a value compared by its text would not be the one computed. */
#ifndef HEPTASIM_JSON_H
#define HEPTASIM_JSON_H

#include <stdbool.h>

/* Double d in the fewer of 15 or 17 significant digits that read back as d
 * (out holds at least SIM_NUMBER_TEXT bytes); returns the digits used. */
enum { SIM_NUMBER_TEXT = 32 };
int sim_number_text(double d, char *out);

/* The text of cJSON tree doc, laid out as cJSON_Print (formatted) or
 * cJSON_PrintUnformatted would, with every finite number in as few digits
 * (15 or 17) as give back the same double.  Free with cJSON_free; NULL when
 * out of memory. */
char *sim_json_print(const void *doc, bool formatted);

#endif
