/*
** best.h -- the override file that turns the control's config into
** another variant's: `collect --best METRIC` writes it as best.json, for
** `gen PROFILE --tier CONTROL_TIER -f best.json`.
**
** Made from the two written configs, not from the manifest's
** differs_from_control (which compares params, and misses what a tier
** changes): every key whose value differs is set, objects recursively,
** arrays whole; a key only the control has is {"$delete": true} (the
** override-file syntax, README "Override layers").
*/
#ifndef DSF_COLLECT_BEST_H
#define DSF_COLLECT_BEST_H

#include <stddef.h>

#include <cjson/cJSON.h>

/* The override from control to best (caller frees; an empty object when
** they are equal). Keys at or under one of ignore[0..n) (dotted config
** paths) are left out. */
cJSON *dsf_best_override(const cJSON *control, const cJSON *best,
                         char *const *ignore, size_t n);

#endif
