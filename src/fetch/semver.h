/*
** semver.h -- release versions and the requirements that select them.
**
** A release version is semver 2.0: MAJOR.MINOR.PATCH with an optional
** pre-release (-rc.1); numbers without leading zeros. A requirement
** (the part after '@' in NAME/PROFILE@REQ) follows cargo:
**
**   1.2.3  =1.2.3   exactly that version      =1.2  >=1.2.0, <1.3.0
**   ^1.2.3          >=1.2.3, <2.0.0           ^1.2  >=1.2.0, <2.0.0
**   ^0.2.3          >=0.2.3, <0.3.0           ^0.2  >=0.2.0, <0.3.0
**   ^0.0.3          >=0.0.3, <0.0.4           ^0.0  >=0.0.0, <0.1.0
**   ~1.2.3          >=1.2.3, <1.3.0           ~1.2  >=1.2.0, <1.3.0
**   ^1, ~1, =1, 1   >=1.0.0, <2.0.0           ^0    >=0.0.0, <1.0.0
**
** A pre-release version matches only a requirement that names a
** pre-release of the same MAJOR.MINOR.PATCH (^1.2.0-rc.1 matches
** 1.2.0-rc.2 and 1.4.0, not 1.4.0-rc.1). Full reference in
** contrib/docs/repositories.md.
*/
#ifndef DSF_SEMVER_H
#define DSF_SEMVER_H

#include <stdbool.h>
#include <stddef.h>

typedef struct dsf_semreq {
    char op;                     /* '=', '^' or '~' */
    int n;                       /* numbers given: 1 to 3 */
    unsigned long long v[3];     /* missing ones are 0 */
    char pre[65];                /* pre-release, "" when none */
} dsf_semreq;

/* True when v is a release version (no build metadata), at most 64
** bytes (like every version in an index). */
bool dsf_semver_valid(const char *v);

/* Semver precedence of two valid versions: <0, 0, >0. */
int dsf_semver_cmp(const char *a, const char *b);

/* Parses requirement s into *r. On a syntax error returns false with
** *col the 1-based column in s of the offending character and *why a
** static description. */
bool dsf_semreq_parse(dsf_semreq *r, const char *s, size_t *col,
                      const char **why);

/* True when the valid version v satisfies r. */
bool dsf_semreq_matches(const dsf_semreq *r, const char *v);

#endif
