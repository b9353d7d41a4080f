/* svg.c - HTML escaping, inline SVG elements, axis ticks and their labels
 * for the HTML reports (figures are formatted by sim_fmt_*).
 *
 * Numbers are written with fixed precision (%.1f for coordinates) in the C
 * locale, so the same report data gives byte-identical files. */
#include "svg.h"

#include <math.h>
#include <string.h>

#include "report.h"

void rpt_html_escape(FILE *f, const char *s)
{
    if (!s) return;
    for (; *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&#39;", f); break;
        default: fputc(*s, f); break;
        }
    }
}

void rpt_svg_open(FILE *f, double w, double h, const char *title)
{
    fprintf(f,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
            "role=\"img\" font-family=\"sans-serif\">\n<title>",
            w, h, w, h);
    rpt_html_escape(f, title);
    fputs("</title>\n", f);
}

void rpt_svg_close(FILE *f)
{
    fputs("</svg>\n", f);
}

void rpt_svg_rect(FILE *f, double x, double y, double w, double h, const char *fill, const char *tip)
{
    if (!(w > 0) || !(h > 0)) return;
    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"", x, y, w, h, fill);
    if (tip) {
        fputs("><title>", f);
        rpt_html_escape(f, tip);
        fputs("</title></rect>\n", f);
    } else {
        fputs("/>\n", f);
    }
}

static void points_attr(FILE *f, const double *xs, const double *ys, int n)
{
    fputs(" points=\"", f);
    for (int i = 0; i < n; i++) fprintf(f, "%s%.1f,%.1f", i ? " " : "", xs[i], ys[i]);
    fputs("\"", f);
}

void rpt_svg_polyline(FILE *f, const double *xs, const double *ys, int n, const char *stroke, double width)
{
    if (n < 2) return;
    fputs("<polyline", f);
    points_attr(f, xs, ys, n);
    fprintf(f, " fill=\"none\" stroke=\"%s\" stroke-width=\"%.1f\"/>\n", stroke, width);
}

void rpt_svg_polygon(FILE *f, const double *xs, const double *ys, int n, const char *fill, double opacity,
                     const char *tip)
{
    if (n < 3) return;
    fputs("<polygon", f);
    points_attr(f, xs, ys, n);
    fprintf(f, " fill=\"%s\" fill-opacity=\"%.2f\" stroke=\"none\"", fill, opacity);
    if (tip) {
        fputs("><title>", f);
        rpt_html_escape(f, tip);
        fputs("</title></polygon>\n", f);
    } else {
        fputs("/>\n", f);
    }
}

void rpt_svg_line(FILE *f, double x1, double y1, double x2, double y2, const char *stroke, double width,
                  const char *dash)
{
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"%.1f\"", x1, y1,
            x2, y2, stroke, width);
    if (dash) fprintf(f, " stroke-dasharray=\"%s\"", dash);
    fputs("/>\n", f);
}

void rpt_svg_text(FILE *f, double x, double y, const char *anchor, double size, const char *fill, const char *text)
{
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" font-size=\"%.0f\" fill=\"%s\">", x, y, anchor, size,
            fill);
    rpt_html_escape(f, text);
    fputs("</text>\n", f);
}

double rpt_svg_legend(FILE *f, double x, double y, const char *fill, const char *label)
{
    rpt_svg_rect(f, x, y - 10, 12, 12, fill, NULL);
    rpt_svg_text(f, x + 16, y, "start", 12, "#333", label);
    return x + 16 + 7.0 * (double)strlen(label) + 18;
}

int rpt_nice_ticks(double hi, int max_ticks, double *ticks)
{
    return rpt_nice_range(0, hi, max_ticks, ticks);
}

int rpt_nice_range(double lo, double hi, int max_ticks, double *ticks)
{
    if (!isfinite(lo) || lo < 0) lo = 0;
    if (!(hi > lo) || !isfinite(hi) || max_ticks < 2) {
        ticks[0] = lo;
        return 1;
    }
    double raw = (hi - lo) / (max_ticks - 2 > 0 ? max_ticks - 2 : 1);
    if (lo == 0) raw = hi / (max_ticks - 1);
    double mag = pow(10.0, floor(log10(raw)));
    double step = mag;
    if (raw > 5 * mag)
        step = 10 * mag;
    else if (raw > 2 * mag)
        step = 5 * mag;
    else if (raw > mag)
        step = 2 * mag;
    double first = floor(lo / step * (1 + 1e-12)) * step;
    int k = (int)ceil((hi - first) / step * (1 - 1e-12));
    if (k < 1) k = 1;
    if (k > max_ticks - 1) k = max_ticks - 1;
    for (int i = 0; i <= k; i++) ticks[i] = first + step * i;
    return k + 1;
}

void rpt_time_tick_labels(const double *ticks, int n, char (*labels)[32])
{
    double hi = 0, step = 0;
    for (int i = 0; i < n; i++) hi = fmax(hi, fabs(ticks[i]));
    if (n > 1) step = fabs(ticks[1] - ticks[0]);
    double scale = 1;
    const char *unit = "s";
    if (hi > 0 && hi < 1e-3) {
        scale = 1e6;
        unit = "us";
    } else if (hi > 0 && hi < 1) {
        scale = 1e3;
        unit = "ms";
    }
    int decimals = 0;
    if (step > 0) decimals = (int)ceil(-log10(step * scale) - 1e-9);
    if (decimals < 0) decimals = 0;
    if (decimals > 9) decimals = 9;
    for (int i = 0; i < n; i++) {
        double v = ticks[i] * scale;
        if (fabs(v) < 0.5 * pow(10.0, -decimals)) v = 0; /* no "-0.000" */
        snprintf(labels[i], 32, "%.*f %s", decimals, v, unit);
    }
}

void rpt_html_begin(FILE *f, const char *title)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>", f);
    rpt_html_escape(f, title);
    fputs("</title>\n<style>\n"
          "body{font-family:sans-serif;margin:24px auto;max-width:1180px;color:#222;background:#fff}\n"
          "h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 6px;border-bottom:1px solid #ddd}\n"
          "p.sub{color:#555;margin:0 0 12px}p.note{color:#666;font-size:13px;margin:4px 0}\n"
          "table{border-collapse:collapse;font-size:13px}td,th{padding:3px 10px;text-align:right;"
          "border-bottom:1px solid #eee}th{background:#f4f4f4}td.l,th.l{text-align:left}\n"
          "table.kv td:first-child{text-align:left;color:#555}\n"
          "tr.oom td{color:#999}tr.best td{font-weight:bold}\n"
          "svg{display:block;max-width:100%;height:auto;margin:6px 0}\n"
          "footer{margin-top:30px;color:#888;font-size:12px}\n"
          "</style>\n</head>\n<body>\n<h1>",
          f);
    rpt_html_escape(f, title);
    fputs("</h1>\n", f);
}

void rpt_html_end(FILE *f)
{
    fputs("<footer>heptasim ", f);
    rpt_html_escape(f, rpt_version());
    fputs(" &#8212; simulated times; one self-contained file, no scripts.</footer>\n</body>\n</html>\n", f);
}
