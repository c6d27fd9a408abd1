/*
** readers.h -- what plugins declare for `dsforge collect` (the `readers`
** and `results` fields of a declaration, contrib/docs/plugins.md
** "Readers"): readers turn the files a run left behind into values, and
** one plugin's `results` table turns what the readers found into a
** variant's record. The core knows no log format and no record field but
** `status` and `values`.
**
** A reader: { name, files = {GLOB...}, lines = {SUBSTRING...} | nil,
** format = "lines"|"text"|"json", scope = "variant"|"run",
** read = function(input, ctx) }. A run reader reads files of the results
** root itself (a job system's record of every job), once per collect. Globs
** are fnmatch patterns over the paths under a variant's results directory
** ("stdout.log", "*.csv"; a "/" reaches one level of subdirectories).
** "lines" readers get only the lines
** holding one of their substrings (collect/scan.h finds them).
*/
#ifndef DSF_PLUGIN_READERS_H
#define DSF_PLUGIN_READERS_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "core/diag.h"
#include "plugin/plugin.h"

typedef enum dsf_read_format {
    DSF_READ_LINES, DSF_READ_TEXT, DSF_READ_JSON
} dsf_read_format;

typedef struct dsf_reader {
    char *name;
    char *plugin;
    char *what;          /* "reader NAME (plugin P)", for messages */
    char **files;        /* globs */
    size_t nfiles;
    char **lines;        /* substrings (format lines), or NULL */
    size_t nlines;
    dsf_read_format format;
    bool run_scope;      /* scope = "run": files of the results root */
    int ref;             /* registry reference of read */
} dsf_reader;

/* better: which way a metric improves, for --best and the report. */
typedef enum dsf_better { DSF_BETTER_NONE, DSF_BETTER_MAX, DSF_BETTER_MIN }
    dsf_better;

typedef struct dsf_metric {
    char *name;          /* the key in a record's values */
    char *title;         /* for people: "samples/s" */
    char *unit;          /* "bytes", "s", "1/s", "TFLOPS", "" */
    dsf_better better;
} dsf_metric;

typedef struct dsf_results_decl {
    dsf_reader *readers;
    size_t nreaders;
    dsf_metric *metrics;
    size_t nmetrics;
    char **override_ignore;  /* canonical config paths --best leaves out */
    size_t nignore;
    char *plugin;            /* the plugin declaring `results`, or NULL */
    int record_ref;          /* results.record, or LUA_NOREF */
    int calibration_ref;     /* results.calibration, or LUA_NOREF */
    int held;                /* the variant being collected: registry
                             ** reference of {variant, found, problems},
                             ** or LUA_NOREF */
    int run_found;           /* what the run readers found (a list), or
                             ** LUA_NOREF */
} dsf_results_decl;

/* Reads every plugin's `readers` and the one `results` table (first
** call only; later calls return 0). DSF_EINPUT with a diagnostic for a bad
** declaration, a reader name declared twice or two `results` tables;
** a script error when a declaring function raises. *out is borrowed
** from p. */
int dsf_plugins_read_results(dsf_plugins *p, const dsf_results_decl **out,
                             dsf_diags *d);

/* Starts a variant: its table (the manifest entry: name, file, sha256,
** tier, profile, params, summary) for readers' ctx.variant and the record
** hook. Ends the previous one. */
int dsf_results_begin(dsf_plugins *p, const cJSON *variant, dsf_diags *d);

/* One input of a reader. */
typedef struct dsf_read_input {
    const char *file;        /* relative to the results directory */
    const char *text;        /* format text: the file */
    size_t len;
    const cJSON *json;       /* format json: the document */
    const char *const *lines;  /* format lines: the matching lines */
    const size_t *lens;
    size_t nlines;
    size_t dropped;          /* lines left out by the scan's caps */
} dsf_read_input;

/* Runs reader r on in for the current variant (a run reader: for the
** run, before any variant); what it returns is added to the variant's
** findings, or the run's (a nil result adds nothing). Script errors name
** the reader and the file. */
int dsf_results_read(dsf_plugins *p, const dsf_reader *r,
                     const dsf_read_input *in, dsf_diags *d);

/* A problem with one of the variant's files (unreadable, not JSON, too
** large), passed to the record hook. */
int dsf_results_problem(dsf_plugins *p, const char *text, dsf_diags *d);

/* The current variant's record from results.record(variant, found,
** problems, run_found): *out a JSON object (caller frees) with a string
** `status` and an object `values` of numbers (checked: a script error
** otherwise). */
int dsf_results_record(dsf_plugins *p, cJSON **out, dsf_diags *d);

/* results.calibration(variant, record): *out a JSON value, or NULL when
** the hook returns nil or is not declared. */
int dsf_results_calibration(dsf_plugins *p, const cJSON *record,
                            cJSON **out, dsf_diags *d);

void dsf_plugin_free_results(dsf_plugins *p);

#endif
