/*
** measured.h -- the report's "Measured" section, from DIR/results.json
** (`dsforge collect`): each variant's status and measured values in the
** units of the metrics collect declared, measured against estimated GPU
** memory (the estimate's error), speed-up against the control with its
** spread, failures with their first error line, and a throughput x peak
** memory scatter with its Pareto front (inline SVG, no script).
*/
#ifndef DSF_REPORT_MEASURED_H
#define DSF_REPORT_MEASURED_H

#include <cjson/cJSON.h>

#include "core/buf.h"

/* Appends the section for manifest and results (the parsed
** results.json) to b; a note instead when results was collected from
** another manifest (manifest_sha: the sha256 of the manifest shown). */
void dsf_report_measured(dsf_buf *b, const cJSON *manifest,
                         const cJSON *results, const char *manifest_sha);

#endif
