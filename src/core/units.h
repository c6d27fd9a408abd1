/*
** units.h -- a measured or estimated value in the unit a person reads:
** bytes as GiB (or MiB below one GiB), seconds as s or ms, rates with
** three significant digits. For collect's table and the report page.
*/
#ifndef DSF_UNITS_H
#define DSF_UNITS_H

#include "core/buf.h"

/* Appends v in unit ("bytes", "s", "1/s", "TFLOPS", or anything else:
** plain, with the unit after it when not empty) to b. */
void dsf_units_format(dsf_buf *b, double v, const char *unit);

#endif
