/*
** error.h -- the error codes every dsforge function returns.
**
** Functions return 0 on success or one of these negative codes; the details
** (message, file, line, column) travel in a caller-owned dsf_diags list. The
** code's absolute value is the process exit code the CLI documents.
*/
#ifndef DSF_ERROR_H
#define DSF_ERROR_H

enum dsf_error {
    DSF_OK = 0,
    DSF_EVALID = -1,  /* validation found errors in a config (exit 1) */
    DSF_EUSAGE = -2,  /* bad command line (exit 2) */
    DSF_EINPUT = -3,  /* missing/unreadable/malformed file, bad profile (3) */
    DSF_ENET = -4,    /* network or integrity error (exit 4) */
    DSF_ESCRIPT = -5, /* Lua script error or sandbox limit (exit 5) */
    DSF_EWORKER = -6  /* a -j worker process was killed (exit 6) */
};

/* The process exit status for a return code (0 for success). */
static inline int dsf_exit_status(int rc) { return rc < 0 ? -rc : 0; }

#endif
