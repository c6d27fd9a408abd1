/*
** pstate.h -- the Lua state a profile is evaluated in, kept for the whole
** run: created when the profile is loaded, renewed (lua/host.h's
** dsf_host_renew) before every later evaluation, its files compiled once.
*/
#ifndef DSF_PROFILE_PSTATE_H
#define DSF_PROFILE_PSTATE_H

#include "lua/host.h"
#include "profile/profile.h"

typedef struct dsf_profile_state dsf_profile_state;

/* A new state for evaluating profiles with ctx (its plugin dirs, sources,
** limits and warnings: borrowed, and must outlive it). *out is freed with
** dsf_pstate_free. */
int dsf_pstate_new(dsf_profile_state **out, const dsf_profile_ctx *ctx,
                   dsf_diags *d);
void dsf_pstate_free(dsf_profile_state *s);

/* *st's host, ready for a new evaluation with ctx: renewed when it has
** run scripts since it was made or renewed, or replaced by a new state
** when it was made for another ctx (or *st is NULL). The host stays
** *st's; drop *st (dsf_pstate_free, then NULL) after an evaluation that
** failed, so no state that broke off a script is used again. */
int dsf_pstate_host(dsf_host **h, dsf_profile_state **st,
                    const dsf_profile_ctx *ctx, dsf_diags *d);

#endif
