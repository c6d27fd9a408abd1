/*
** gen_run.h -- the state of one `gen` run, shared by gen.c (the pipeline),
** variants.c (tiers x matrix) and output.c (--why, summary, files).
*/
#ifndef DSF_GEN_RUN_H
#define DSF_GEN_RUN_H

#include <stdio.h>

#include <cjson/cJSON.h>

#include "core/buf.h"

#include "doc/prov.h"
#include "json/jsonc.h"
#include "plugin/emit.h"
#include "plugin/plugin.h"
#include "plugin/summary.h"
#include "profile/gen.h"
#include "profile/profile.h"

#define DSF_MAX_VARIANTS 100000

typedef struct gen_variant {
    char *name;
    const dsf_tier *tier;   /* NULL for a profile without tiers */
    cJSON *params;          /* every param's value (made just before the
                            ** variant is evaluated) */
    cJSON *inputs;          /* added to prepare/build's ctx: "given" (the
                            ** params set by --param/--matrix), "files"
                            ** (decoded file params); owned */
    cJSON *doc;             /* the final config */
    dsf_prov prov;
    char *bytes;            /* rendered JSON */
    char sha256[65];
    cJSON *extra;           /* the plugins' merged summary, or NULL */
    char **cells;           /* a text (or NULL) per declared column */
    size_t *pick;           /* the value index of each --matrix axis */
    cJSON *findings;        /* [{rule, severity, path, message}] */
    cJSON *differs;         /* the manifest's differs_from_control, found
                            ** while the document is held (or NULL) */
    dsf_emitted *emitted;   /* the selected emitters' files (gen_emit.c) */
    size_t nemitted;
    char **rows;            /* per selected emitter: a run emitter's row
                            ** for this variant (JSON text), or NULL */
} gen_variant;

typedef struct override_file {
    const char *path;
    cJSON *doc;
    dsf_jsrc *src;
    char sha256[65];
    dsf_layer layer;
    char *label;
} override_file;

/* A --matrix axis that is not a param (sweep.c). */
typedef struct sweep_axis {
    bool is_param;
    char *name;             /* in variant names: the path's last key, or
                            ** NULL for files (named by stem) */
    dsf_edit *edits;        /* a config path: one edit per value */
    dsf_layer *layers;      /* ... and its layer */
    char **labels;
    override_file *files;   /* --matrix-file: one file per value */
} sweep_axis;

typedef struct dsf_gen_out dsf_gen_out;

typedef struct gen_run {
    const dsf_gen_request *r;
    dsf_profile *profile;
    dsf_plugins *plugins;
    dsf_srccache *sources;
    dsf_diags warnings;
    override_file *files;
    dsf_layer *chain_layers;
    char **chain_labels;
    dsf_layer tier_layer;
    char *tier_label;
    dsf_layer *edit_layers;
    char **edit_labels;
    gen_variant *v;
    size_t nv;
    sweep_axis *sweeps;     /* parallel to r->matrix */
    cJSON *param_files;     /* param -> file named -> its sha256, or NULL */
    bool keep;              /* dsf_gen_eval: keep docs, provenance, findings */
    const char *target;     /* --target, else the profile's, else the
                            ** plugins' default (borrowed) */
    size_t *emit_sel;       /* the emitters to run (indexes into
                            ** dsf_plugins_emitters, in that order) */
    size_t nemit_sel;
    bool emit_rows;         /* a selected run emitter has a row function */
    dsf_emitted *run_emitted;   /* the run emitters' files (gen_emit.c) */
    size_t nrun_emitted;
    cJSON *detected;        /* --detect: {params: the values taken, kept:
                            ** [names the command line sets]}, or NULL */
    cJSON **axes;           /* each --matrix param axis's parsed values */
    cJSON *overrides;       /* --param values, parsed */
    cJSON *pfiles;          /* param -> value -> the document it names */
    bool stream;            /* each variant goes to dsf_gen_out_variant */
    dsf_gen_out *out;       /* -o's staged files (output.c), or NULL */
    cJSON *control;         /* the first variant's document, parsed */
    cJSON *entries;         /* --report: this run's manifest entries */
} gen_run;

/* Reads an override file into f (its layer labelled label, e.g. "-f
** x.json"): DSF_EINPUT for an unreadable, malformed or non-object file or
** a duplicate key. */
int dsf_gen_load_override(override_file *f, const char *path,
                          const char *label, dsf_diags *d);

/* Sets up ru->sweeps: which --matrix axes are params, and for the others
** the edit or override file of every value. DSF_EUSAGE for a bad path or
** value, DSF_EINPUT for a bad file. */
int dsf_gen_setup_sweeps(gen_run *ru, dsf_diags *d);

/* Appends ".<name>-<value>" (".<stem>" for a file) for value k of axis
** a to a variant name. */
void dsf_gen_sweep_name(const gen_run *ru, size_t a, size_t k, dsf_buf *name);

/* Applies v's sweep values that are not params (files, then paths, in
** axis order) to v->doc with provenance. DSF_EUSAGE when an edit does
** not apply. */
int dsf_gen_apply_sweeps(gen_run *ru, gen_variant *v, dsf_diags *d);

void dsf_gen_free_sweeps(gen_run *ru);

/* Builds ru->v: every selected tier (or "default") times every --matrix
** cell, with each variant's params resolved and checked. DSF_EUSAGE on a
** bad tier, param or matrix value. */
int dsf_gen_make_variants(gen_run *ru, dsf_diags *d);

/* Makes v->params (defaults, tier, --detect, --param, then v's --matrix
** values) and v->inputs (ctx.given and ctx.files) from what
** dsf_gen_make_variants parsed: one variant's, when it is evaluated, so
** a sweep does not hold every variant's params at once. */
void dsf_gen_variant_inputs(gen_run *ru, gen_variant *v);

/* Frees what dsf_gen_make_variants parsed for dsf_gen_variant_inputs. */
void dsf_gen_free_variant_inputs(gen_run *ru);

/* --detect: prints which params were detected (and which the command
** line kept) under the summary table; nothing without --detect. */
void dsf_gen_print_detected(const gen_run *ru, FILE *out);

/* Prints, for each variant, every layer that touched --why's path. */
void dsf_gen_print_why(gen_run *ru, dsf_diags *d);

/* Prints the summary table to out: the variant's name, then every
** declared column (plugin order), each as wide as its widest cell. */
void dsf_gen_print_summary(const gen_run *ru, FILE *out);

/* manifest.json's contents but "variants" (caller owns the object). */
cJSON *dsf_gen_manifest_head(gen_run *ru);

/* v's entry in manifest.json's "variants" (caller owns it), from its
** bytes, sha256 and emitted files; the first variant's is made first
** (it is the control the others are compared with). The last use of
** v's params, summary and findings: they move into it. */
cJSON *dsf_gen_manifest_entry(gen_run *ru, gen_variant *v);

/* The head with ru->entries (moved into it) as "variants": this run's
** manifest for --report's page (caller owns it). */
cJSON *dsf_gen_manifest(gen_run *ru);

/* --report's page (caller frees) from the manifest m and the variants'
** bytes, with links to the JSON files when -o writes them. */
char *dsf_gen_report_page(const gen_run *ru, const cJSON *m);

/* What the plugins declare the report page draws from each summary
** (report.h), or NULL. Caller owns it. */
cJSON *dsf_gen_report_layout(gen_run *ru);

/* --report without -o: builds the manifest, renders the page and writes
** it atomically. */
int dsf_gen_write_report(gen_run *ru, dsf_diags *d);

/* Emitters (gen_emit.c). Chooses ru->emit_sel from --emit, else the
** profile's `emit` field (neither under --stdout or --why, and none for
** dsf_gen_eval): DSF_EUSAGE
** for an unknown name on the command line (with the closest one), for
** --emit with --stdout or --why, or "none" with other names; DSF_EINPUT
** for an unknown name in the profile. */
int dsf_gen_select_emitters(gen_run *ru, dsf_diags *d);

/* Runs the chosen emitters on the finished variant v (its doc, params
** and summary still held), storing their files in v->emitted. */
int dsf_gen_emit_variant(gen_run *ru, gen_variant *v, dsf_diags *d);

/* After every variant, when none has an error: runs the selected run
** emitters once on the whole run (their rows, the variants' names and
** hashes), storing their files in ru->run_emitted. */
int dsf_gen_emit_run(gen_run *ru, dsf_diags *d);

/* After every variant: two files of the run with one name (an emitted
** file and a variant's JSON) is DSF_EUSAGE, naming both. */
int dsf_gen_check_emitted_names(const gen_run *ru, dsf_diags *d);

/* Appends to b what the emitters made: "N files (hf-args, launch)";
** nothing without emitters. */
void dsf_gen_emit_footer(const gen_run *ru, dsf_buf *b);

void dsf_gen_free_emitted(gen_run *ru, gen_variant *v);

/* The run emitters' files (ru->run_emitted) as manifest.json lists them:
** [{emitter, file, sha256}] (caller owns it), or NULL when there are
** none. */
cJSON *dsf_gen_run_emitted_json(const gen_run *ru);

/* Evaluates variant i (layers, resolvers, summaries, rules), then
** (no error so far) runs its emitters, and in a streamed run hands it to
** dsf_gen_out_variant. *eval_rc is the evaluation's own result; the
** diagnostics from index *out_from of d on are the emitters' and the
** staging's. Returns the first error. */
int dsf_gen_eval_variant(gen_run *ru, size_t i, dsf_diags *d, int *eval_rc,
                    size_t *out_from);

/* Parallel evaluation (gen_par.c): how many processes evaluate this
** run's variants (1: serial; -j, else the CPUs, for a streamed run with
** enough variants). */
size_t dsf_gen_parallel_jobs(const gen_run *ru);

/* Evaluates every variant of a streamed run in dsf_gen_parallel_jobs
** processes forked after the plugins are loaded and the first variant
** is done; results merged in variant order, so the files, the manifest,
** the diagnostics and the exit code are those of a serial run. */
int dsf_gen_run_parallel(gen_run *ru, dsf_diags *d);

/* Writing -o's directory as variants finish, all or nothing (output.c).
** dsf_gen_out_begin creates and locks the directory, reads the manifest
** already there and starts this run's (ru->out); a directory that does
** not exist is written as a staging directory beside it instead, renamed
** into place by dsf_gen_out_finish. Before any variant: removes what
** interrupted runs left (out_debris.h, a note each) and checks what the
** renames need (DSF_EINPUT naming the path: a directory where a file
** goes, a directory it cannot write in, no free space). */
int dsf_gen_out_begin(gen_run *ru, dsf_diags *d);

/* A variant is finished (validated without error): stages its files
** (with -o: temporary files next to their final names, or the final
** names in the staging directory; the emitters' then its JSON), adds its manifest entry (-o, --report), and keeps
** only what the summary table and the footer need: its name, cells and
** the names of its emitted files (its bytes too for --report's page). */
int dsf_gen_out_variant(gen_run *ru, gen_variant *v, dsf_diags *d);

/* For gen_par.c: the files staged so far (borrowed; tmp_path NULL when
** the file already holds the bytes), adopting a worker's staged file
** (owned from now on), and the manifest entries' text not yet written
** (hold: a worker's, kept there for the parent; NULL without -o) and
** adding an entry's text (the worker's, with its leading separator). */
size_t dsf_gen_out_nstaged(const gen_run *ru);
/* In a worker just forked: a backstop ending it unlinks only what it
** staged itself; and unlinking what it staged from index from on (when
** it stops early, the parent takes none of it). */
void dsf_gen_out_forked(gen_run *ru);
void dsf_gen_out_unlink_since(gen_run *ru, size_t from);
void dsf_gen_out_staged(const gen_run *ru, size_t k, const char **final_path,
                        const char **tmp_path);
void dsf_gen_out_adopt(gen_run *ru, char *final_path, char *tmp_path);
dsf_buf *dsf_gen_out_entries(gen_run *ru, bool hold);
int dsf_gen_out_add_entry(gen_run *ru, const char *text, size_t len,
                          dsf_diags *d);

/* After every variant: stages the run emitters' files (ru->run_emitted)
** in the same transaction, before the manifest, which lists them under
** "emitted". No-op without -o. */
int dsf_gen_out_run_files(gen_run *ru, dsf_diags *d);

/* Ends the run's writing: rc 0 finishes the manifest (and --report's
** page), checks every destination again and renames every staged file
** into place (the manifest after the variants; a rename that fails
** undoes those before it); otherwise, or when that fails, unlinks every
** temporary file, those a killed worker left unrecorded too (and
** removes the directory if the run created it), so nothing of the run
** is visible. Returns rc or the error of this step; no-op without -o. */
int dsf_gen_out_finish(gen_run *ru, int rc, dsf_diags *d);

#endif
