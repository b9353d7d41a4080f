/* svg.h - small writers of HTML text and inline SVG elements shared by the
 * run and sweep reports (html.c, sweep_html.c).  Internal to the report module.
 *
 * Every function writes to a stdio stream and never allocates; coordinates
 * are SVG user units (pixels).  Text arguments are escaped for HTML/XML. */
#ifndef HEPTASIM_REPORT_SVG_H
#define HEPTASIM_REPORT_SVG_H

#include <stdio.h>

/* Writes s with &, <, >, " and ' escaped. NULL writes nothing. */
void rpt_html_escape(FILE *f, const char *s);

/* Opens an <svg> of w x h units with an accessible title; close it with
 * rpt_svg_close. */
void rpt_svg_open(FILE *f, double w, double h, const char *title);
void rpt_svg_close(FILE *f);

/* A filled rectangle; tip (may be NULL) becomes its hover tooltip. */
void rpt_svg_rect(FILE *f, double x, double y, double w, double h, const char *fill, const char *tip);

/* A line; dash NULL for a solid one, else an SVG dash array ("6 4"). */
void rpt_svg_line(FILE *f, double x1, double y1, double x2, double y2, const char *stroke, double width,
                  const char *dash);

/* A polyline through the n points (xs[i], ys[i]), unfilled; and a closed
 * polygon filled with fill at opacity (0 to 1), unstroked; tip (may be
 * NULL) becomes its hover tooltip. */
void rpt_svg_polyline(FILE *f, const double *xs, const double *ys, int n, const char *stroke, double width);
void rpt_svg_polygon(FILE *f, const double *xs, const double *ys, int n, const char *fill, double opacity,
                     const char *tip);

/* Text at (x, y); anchor is "start", "middle" or "end"; size in pixels. */
void rpt_svg_text(FILE *f, double x, double y, const char *anchor, double size, const char *fill, const char *text);

/* A legend entry: a swatch of fill then label, at (x, y) (baseline);
 * returns the x where the next entry can start. */
double rpt_svg_legend(FILE *f, double x, double y, const char *fill, const char *label);

/* Up to max_ticks "nice" tick values (0, step, 2 step, ... with step 1, 2
 * or 5 x 10^k), the last one >= hi, written to ticks (capacity max_ticks);
 * returns how many.  The last tick is the axis end.  hi <= 0 gives 0 only. */
int rpt_nice_ticks(double hi, int max_ticks, double *ticks);

/* The same for an axis over [lo, hi] that need not start at 0 (lo >= 0):
 * the first tick is <= lo, the last >= hi. */
int rpt_nice_range(double lo, double hi, int max_ticks, double *ticks);

/* Labels of the n time ticks of one axis (seconds, evenly spaced by
 * step), all in the unit of the largest and with as many decimals as the
 * step needs, so that no two read the same ("3.440 s", "3.441 s"; "0 ms",
 * "20 ms").  labels[i] holds cap bytes. */
void rpt_time_tick_labels(const double *ticks, int n, char (*labels)[32]);

/* Writes the common page start (doctype, meta, the inline style sheet and
 * an <h1> of title) and the end (a footer with the simulator version). */
void rpt_html_begin(FILE *f, const char *title);
void rpt_html_end(FILE *f);

#endif
