/*
** internal.h -- what the profile files share and nobody else needs.
*/
#ifndef DSF_PROFILE_INTERNAL_H
#define DSF_PROFILE_INTERNAL_H

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "profile/profile.h"

#define DSF_MAX_MODULE_DIRS 64

/* A fresh sandboxed host whose require() finds the plugin modules; mods
** (DSF_MAX_MODULE_DIRS slots) is filled here and must outlive the host. */
int dsf_profile_open_host(dsf_host **h, const dsf_profile_ctx *ctx,
                          const char **mods, dsf_diags *d);

/* Letters, digits, '_', '-' and '.', not starting with '.' or '-'. */
bool dsf_profile_valid_name(const char *s);

/* Finds name.lua: first in prefer_dir (the child's directory, so a
** repository's profiles extend their siblings), then on the path. *path_out
** is the caller's to free; *origin_out is borrowed. An unknown name is
** DSF_EINPUT with close names suggested. */
int dsf_profile_find(char **path_out, const char **origin_out,
                     const dsf_dirs *dirs, const char *prefer_dir,
                     const char *prefer_origin, const char *name,
                     dsf_diags *d);

/* NAME is a local profile; REPO/PROFILE[@VERSION] one of a repository:
** then *name_out is PROFILE, *dir_out the repository's profiles
** directory, *origin_out "repo REPO" and *release_out the release it
** resolved to (NULL for a format-1 repository): all four the caller's to
** free. */
int dsf_profile_resolve_remote(char **name_out, char **dir_out,
                               char **release_out,
                               char **origin_out, const dsf_profile_ctx *ctx,
                               const char *name, dsf_diags *d);

/* The param type named s ("integer"/"int", "number", "string",
** "boolean"/"bool"); false for any other name. */
bool dsf_param_type_parse(const char *s, dsf_param_type *t);

/* The type a default value implies; false when it has none. */
bool dsf_param_type_infer(const cJSON *v, dsf_param_type *t);

#endif
