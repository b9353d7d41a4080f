/* internal.h - the search module's private helpers, shared by its files
 * (enumerate.c, search.c, candidate.c, resume.c, sweep.c, table.c). */
#ifndef HEPTASIM_SEARCH_INTERNAL_H
#define HEPTASIM_SEARCH_INTERNAL_H

#include "search.h"

/* The bit of a strategy key in srch_request.pinned (srch_pin_of_key). */
unsigned srch_pin_of(const cfg_key *k);

/* The searched keys in enumeration order (rows of cfg_strategy_keys with a
 * search position); returns how many. */
int srch_levels(const cfg_key *out[SRCH_MAX_LEVELS]);

/* The simulation fields of candidate from (state to error, search.h)
 * given to c, which keeps its identity (resume.c). */
void srch_take_simulation(srch_candidate *c, const srch_candidate *from);

#endif
