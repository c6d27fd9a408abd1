/* units.c -- see units.h. */
#include "core/units.h"

#include <math.h>
#include <string.h>

/* Three significant digits, without an exponent for everyday sizes. */
static void sig3(dsf_buf *b, double v)
{
    double a = fabs(v);
    if (a < 1e15 && v == floor(v)) {
        dsf_buf_printf(b, "%.0f", v);
        return;
    }
    if (a == 0 || (a >= 0.001 && a < 1e15)) {
        int decimals = a >= 100 ? 0 : a >= 10 ? 1 : a >= 1 ? 2 : 3;
        dsf_buf_printf(b, "%.*f", decimals, v);
    } else {
        dsf_buf_printf(b, "%.3g", v);
    }
}

void dsf_units_format(dsf_buf *b, double v, const char *unit)
{
    if (!strcmp(unit, "bytes")) {
        if (v == 0)
            dsf_buf_puts(b, "0");
        else if (fabs(v) >= 1073741824.0)
            dsf_buf_printf(b, "%.2f GiB", v / 1073741824.0);
        else
            dsf_buf_printf(b, "%.1f MiB", v / 1048576.0);
    } else if (!strcmp(unit, "s")) {
        if (fabs(v) < 1.0 && v != 0) {
            sig3(b, v * 1000.0);
            dsf_buf_puts(b, " ms");
        } else {
            sig3(b, v);
            dsf_buf_puts(b, " s");
        }
    } else if (!strcmp(unit, "1/s")) {
        sig3(b, v);
        dsf_buf_puts(b, "/s");
    } else {
        sig3(b, v);
        if (*unit) {
            dsf_buf_putc(b, ' ');
            dsf_buf_puts(b, unit);
        }
    }
}
