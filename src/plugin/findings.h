/*
** findings.h -- the bound on a config's findings: of each rule and
** severity, at most DSF_FINDINGS_PER_GROUP are kept, the first by path
** (then message), and the rest only counted, in one note per rule and
** severity (dsf_findings_close). Memory and time stay in proportion to
** what is shown, not to what a config holds (a million unknown keys make
** 100 findings and one count), and which findings are kept does not
** depend on the order the rules report them in.
**
** A rule that reports many findings asks first (ctx.wanted, validate.c)
** and composes only the ones that will be kept.
*/
#ifndef DSF_FINDINGS_H
#define DSF_FINDINGS_H

#include <stdbool.h>

#include "plugin/plugin.h"

#define DSF_FINDINGS_PER_GROUP 100

/* Whether a finding of rule with severity sev at path (canonical, as
** ctx.report makes it) would be kept by dsf_findings_put now. When it
** would not, it is counted as one more finding not kept, and the caller
** must not put it. */
bool dsf_findings_wanted(dsf_findings *f, const char *rule,
                         dsf_severity sev, const char *path);

/* Adds *x to f, which takes its strings: kept, or (its group full and x
** sorting after every kept one) freed and counted; a kept one x sorts
** before is then freed and counted instead. */
void dsf_findings_put(dsf_findings *f, dsf_finding *x);

/* Appends, for each rule and severity with findings not kept, the note
** that counts them ("39,900 more warnings not shown (...)", more set,
** severity note). Call once, after the last put. */
void dsf_findings_close(dsf_findings *f);

#endif
