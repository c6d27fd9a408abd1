/*
** report.h -- the A/B report page of a gen output: one self-contained,
** deterministic HTML page (no scripts, no external styles, fonts or
** requests) that shows the variants side by side.
**
** Everything on it comes from the manifest (as gen writes it) and the
** variants' configs: params, the plugins' summary and findings, the paths
** that differ from the control, versions and hashes. Bars and products
** are drawn as the manifest's "report_layout" (declared once by a
** plugin) says, in generic terms:
**   {"bars": [{"label", "unit", "budget", "ok", "parts": [{"label",
**   "value"}]}], "products": [{"label", "value", "factors": [{"label",
**   "value"}]}]}
** where "budget", "ok" and "value" are paths into each variant's summary;
** so no config key is named here.
*/
#ifndef DSF_DIFF_REPORT_H
#define DSF_DIFF_REPORT_H

#include <cjson/cJSON.h>

#include "core/buf.h"
#include "core/diag.h"

/* Appends the page to out. docs[i] is the config of the manifest's
** variant i (NULL: not shown), hrefs[i] a link to its JSON file (NULL:
** none); both arrays have one entry per manifest variant. results is
** the run's results.json (`dsforge collect`; borrowed) or NULL, and
** manifest_sha the sha256 of the manifest's bytes (NULL with results
** NULL): its section shows results collected from this manifest only. */
void dsf_report_html(dsf_buf *out, const cJSON *manifest,
                     const cJSON *const *docs, const char *const *hrefs,
                     const cJSON *results, const char *manifest_sha);

/* The link from a page at page_path to the file name in dir, relative
** and percent-encoded, or NULL when either directory does not exist.
** Caller frees. */
char *dsf_report_href(const char *page_path, const char *dir,
                      const char *name);

/* Reads DIR/manifest.json, each variant's file and DIR/results.json when
** present, renders the page and writes it atomically to page_path, with
** links to the files. DSF_EINPUT
** for a missing or malformed manifest or variant file, or a failed
** write. */
int dsf_report_dir(const char *dir, const char *page_path, dsf_diags *d);

#endif
