/* log.c - the engine's log categories (heptasim, its heptasim_engine
 * child; each file of the engine adds its own below them) and eng_fail, a
 * replay's one failure line.  A leaf of the module: it calls no other file
 * of it. */
#include "internal.h"

#include <stdarg.h>
#include <stdio.h>

#include <xbt/log.h>

XBT_LOG_NEW_CATEGORY(heptasim, "heptasim simulator");
XBT_LOG_NEW_DEFAULT_SUBCATEGORY(heptasim_engine, heptasim, "heptasim SimGrid engine");

void eng_fail(eng_sim *sim, const char *fmt, ...)
{
    if (sim->failed) return;
    sim->failed = true;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(sim->fail_msg, sizeof sim->fail_msg, fmt, ap);
    va_end(ap);
}
