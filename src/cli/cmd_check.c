/* cmd_check.c -- `dsforge check FILE...`: validate DeepSpeed configs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/check_cmd.h"
#include "cli/check_par.h"
#include "cli/cmds.h"
#include "core/buf.h"
#include "cli/opts.h"
#include "cli/plugin_opts.h"
#include "core/error.h"
#include "core/teardown.h"
#include "core/workers.h"
#include "core/xalloc.h"
#include "doc/jpath.h"
#include "json/jsonc.h"
#include "core/fsutil.h"
#include "json/jsonout.h"
#include "plugin/checkdoc.h"
#include "plugin/findings.h"
#include "plugin/plugin.h"
#include "plugin/targets.h"

enum { OPT_TARGET = 1, OPT_FORMAT, OPT_STRICT, OPT_JOBS };

/* Files that pay for a worker process (a fork costs about as much as
** checking a few files). */
#define MIN_FILES_PER_JOB 16

/* The output (text or JSON) holds at most this many findings of one file
** with the same rule and severity, and counts the rest in one note
** (README, "Checking configs"): the plugins' findings are bounded as they
** are made (plugin/findings.h), the others here. */
#define DSF_CHECK_MAX_SHOWN DSF_FINDINGS_PER_GROUP

static const dsf_opt opts[] = {
    {"target", 0, "TARGET",
     "the program the file is given to, which decides what it may leave "
     "for that program to fill (one of the targets the plugins own; "
     "default: the one they recognise, else theirs)", OPT_TARGET, NULL},
    {"format", 0, "text|json", "output format (default text)", OPT_FORMAT,
     NULL},
    {"strict", 0, NULL, "warnings fail too (exit 1), for CI", OPT_STRICT,
     NULL},
    {"jobs", 'j', "N",
     "check the files in N processes (default: one per CPU; 1: one "
     "process); the output is the same for any N", OPT_JOBS, NULL},
    {NULL, 0, NULL, NULL, 0, NULL}};

static int run(int argc, char **argv);

const dsf_command dsf_cmd_check = {
    "check", "validate @F config files",
    "check [options] (FILE... | CONFIG -- COMMAND...)",
    "Validates @F config files with the rules of every plugin "
    "('dsforge plugins' lists them). Prints file:line:col: severity: "
    "message [rule-id] and a suggested fix for each finding. A FILE of - "
    "reads standard input (named <stdin> in the messages).\n\n"
    "With -- and a training command after it (launcher, script and "
    "flags, as typed in a shell), also checks the command against CONFIG "
    "with the command checks of the plugins (built in: plugins/launch): "
    "each finding names the word as argv[N] (N counted from 0, the "
    "program) and points at its column in the command line (<command>:1:"
    "COL), followed by a note at the config key it disagrees with. When "
    "CONFIG is listed in the manifest.json beside it (a gen -o output), "
    "the variant's params are what the config intends and its target is "
    "the default --target.",
    opts, true,
    "Exit status: 0 no errors, 1 errors found (or warnings with --strict), "
    "2 a usage error, 3 a file cannot be read or parsed (or no plugin "
    "checks commands), 6 a -j worker process was killed.",
    "file", NULL, run, NULL};

/* Reads and parses file, or standard input for "-" (named "<stdin>").
** For a file, *text and *len are its text (borrowed from *src: the
** --target hf check reads it there, not from the file again); NULL for
** standard input. */
static int load(cJSON **doc, dsf_jsrc **src, const char **text, size_t *len,
                const char *file, dsf_diags *d)
{
    *text = NULL;
    *len = 0;
    if (strcmp(file, "-")) {
        *doc = NULL;
        *src = NULL;
        char *bytes;
        int rc = dsf_read_file(&bytes, len, file, DSF_JSON_MAX_FILE, d);
        if (!rc)
            rc = dsf_json_parse_take(doc, src, file, bytes, *len, d);
        if (!rc)
            *text = dsf_jsrc_text(*src, len);
        return rc;
    }
    dsf_buf b = DSF_BUF_INIT;
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, stdin)) > 0) {
        if (b.len + n > DSF_JSON_MAX_FILE) {
            dsf_buf_free(&b);
            return dsf_diag_error(d, DSF_EINPUT, "<stdin>", 0, 0,
                                  "more than %d bytes",
                                  (int)DSF_JSON_MAX_FILE);
        }
        dsf_buf_add(&b, chunk, n);
    }
    int rc = ferror(stdin)
                 ? dsf_diag_error(d, DSF_EINPUT, "<stdin>", 0, 0,
                                  "cannot read standard input")
                 : dsf_json_parse(doc, src, "<stdin>", dsf_buf_str(&b), b.len,
                                  d);
    dsf_buf_free(&b);
    return rc;
}

/* The command's checks on file (check_file): their params join params
** (all but those in keep, the params given on the command line). */
static int command_check(dsf_check_cmd *cmd, dsf_plugins *plugins,
                         cJSON *doc, const dsf_jsrc *src, const char *file,
                         const dsf_validate_opts *vo, bool target_given,
                         dsf_diags *cmd_out, cJSON *cmd_json, cJSON *params,
                         const cJSON *keep, dsf_diags *out)
{
    cJSON *learned = cJSON_CreateObject();
    int rc = dsf_check_cmd_run(cmd, plugins, doc, src, file, vo,
                               target_given, cmd_out, cmd_json, learned,
                               out);
    for (cJSON *m = learned->child; m; m = m->next) {
        if (keep && cJSON_GetObjectItemCaseSensitive(keep, m->string))
            continue;
        cJSON_DeleteItemFromObjectCaseSensitive(params, m->string);
        cJSON_AddItemToObject(params, m->string, cJSON_Duplicate(m, 1));
    }
    cJSON_Delete(learned);
    return rc;
}

/* Checks file with the rules, and the command of cmd (may be NULL)
** against it: the command's findings go to cmd_out and cmd_json, and
** the params the command checks learn from it (all but those in keep,
** the ones the user gave) join vo->params (params) before the rules run;
** so does the
** target they say the command runs the file at, unless target_given
** (--target, or the manifest's). */
static int check_file(const char *file, dsf_plugins *plugins,
                      const dsf_validate_opts *vo, bool target_given,
                      cJSON *params, const cJSON *keep, dsf_diags *out,
                      dsf_check_cmd *cmd, dsf_diags *cmd_out,
                      cJSON *cmd_json, bool last)
{
    cJSON *doc;
    dsf_jsrc *src;
    const char *text;
    size_t len;
    int rc = load(&doc, &src, &text, &len, file, out);
    if (rc)
        return rc;
    if (!strcmp(file, "-"))
        file = "<stdin>";
    dsf_checkdoc_duplicates(plugins, file, src, out);
    dsf_validate_opts cvo = *vo; /* with the file's, or command's, target */
    if (!cvo.target && cJSON_IsObject(doc))
        rc = dsf_plugins_recognise(plugins, doc, &cvo.target, out);
    if (!cvo.target)
        cvo.target = dsf_plugins_default_target(plugins);
    dsf_plugins_use_target(plugins, cvo.target);
    if (!rc && cJSON_IsObject(doc) && cmd) {
        rc = command_check(cmd, plugins, doc, src, file, &cvo,
                           target_given, cmd_out, cmd_json, params, keep,
                           out);
        if (!rc && cmd->cmd_target && !target_given)
            cvo.target = cmd->cmd_target;
        dsf_plugins_use_target(plugins, cvo.target);
    }
    cvo.text = text; /* ctx.json_extension */
    cvo.text_len = len;
    if (!rc) /* else the command check failed (a script error) */
        rc = dsf_checkdoc_rules(plugins, doc, src, file, &cvo, out);
    /* The last file of a run that exits next: its tree and positions go
    ** back to the OS with the process (core/teardown.h), not node by
    ** node (a million keys: 0.1 s). */
    if (last && dsf_teardown_by_exit())
        return rc;
    cJSON_Delete(doc);
    dsf_jsrc_free(src);
    return rc;
}

/* What each file of a run is checked with (check_par.h). */
typedef struct check_run {
    const char **files;
    size_t nfiles;
    bool serial;       /* one process checks every file, in order */
    dsf_plugins *plugins;
    const dsf_validate_opts *vo;
    bool target_given; /* by --target or the manifest */
    cJSON *params;
    const cJSON *keep;
    dsf_check_cmd *cmd;
    dsf_diags *cmd_out;
    cJSON *cmd_json;
} check_run;

static int check_one(void *ctx, size_t i, dsf_diags *found)
{
    const check_run *cr = ctx;
    return check_file(cr->files[i], cr->plugins, cr->vo, cr->target_given,
                      cr->params,
                      cr->keep, found, cr->cmd, cr->cmd_out, cr->cmd_json,
                      cr->serial && i + 1 == cr->nfiles);
}

/* Prints d, then the command's findings (more, may be NULL), as one
** JSON array. */
static void print_json(const dsf_diags *d, cJSON *more)
{
    cJSON *arr = cJSON_CreateArray();
    for (size_t i = 0; i < d->len; i++) {
        const dsf_diag *g = &d->items[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "file", g->file ? g->file : "");
        cJSON_AddNumberToObject(o, "line", g->line);
        cJSON_AddNumberToObject(o, "col", g->col);
        cJSON_AddStringToObject(o, "severity", dsf_severity_name(g->severity));
        if (g->rule)
            cJSON_AddStringToObject(o, "rule", g->rule);
        if (g->path)
            cJSON_AddStringToObject(o, "path", g->path);
        cJSON_AddStringToObject(o, "message", g->message);
        if (g->hint)
            cJSON_AddStringToObject(o, "fix", g->hint);
        cJSON *edits = g->edits ? cJSON_Parse(g->edits) : NULL;
        if (edits)
            cJSON_AddItemToObject(o, "edits", edits);
        cJSON_AddItemToArray(arr, o);
    }
    while (more && more->child)
        cJSON_AddItemToArray(arr, cJSON_DetachItemViaPointer(more,
                                                             more->child));
    char *s = dsf_json_print(arr, true);
    fputs(s, stdout);
    free(s);
    cJSON_Delete(arr);
}

/* The command line of one check run. */
typedef struct check_args {
    const char **files;        /* nfiles, from argv */
    size_t nfiles;
    long long jobs;
    const char *target;
    bool json, strict, target_given;
} check_args;

static int take_option(check_args *a, int id, const char *arg, dsf_diags *d)
{
    switch (id) {
    case DSF_OPT_POS:
        a->files[a->nfiles++] = arg;
        return 0;
    case OPT_TARGET:
        a->target = arg; /* one the plugins own: checked once loaded */
        a->target_given = true;
        return 0;
    case OPT_FORMAT:
        a->json = !strcmp(arg, "json");
        if (strcmp(arg, "text") && strcmp(arg, "json"))
            return dsf_diag_error(d, DSF_EUSAGE, NULL, 0, 0,
                                  "--format must be 'text' or 'json'");
        return 0;
    case OPT_STRICT:
        a->strict = true;
        return 0;
    case OPT_JOBS:
        return dsf_opt_int(&a->jobs, arg, 1, 64, "--jobs", d);
    default:
        return 0;
    }
}

/* The files and the command: what check can take. */
static int check_usage(const check_args *a, bool with_cmd, bool cmd_empty,
                       dsf_diags *d)
{
    if (!a->nfiles) {
        dsf_diag *g = dsf_diag_add(d, DSF_ERROR, NULL, 0, 0,
                                   "check needs at least one FILE");
        dsf_diag_set_hint(g, "try 'dsforge check --help'");
        return DSF_EUSAGE;
    }
    if (!with_cmd || (a->nfiles == 1 && !cmd_empty))
        return 0;
    dsf_diag *g =
        a->nfiles != 1
            ? dsf_diag_add(d, DSF_ERROR, NULL, 0, 0,
                           "check CONFIG -- COMMAND checks one CONFIG, "
                           "not %zu", a->nfiles)
            : dsf_diag_add(d, DSF_ERROR, NULL, 0, 0,
                           "check CONFIG -- COMMAND needs a COMMAND "
                           "after '--'");
    dsf_diag_set_hint(g, "give one CONFIG, then '--' and the training "
                         "command as typed in a shell");
    return DSF_EUSAGE;
}

/* The params the rules see: a gen -o output's (with a command), those
** the plugins' options give (given: over the output's) or default to.
** Caller deletes. */
static cJSON *params_of(const dsf_check_cmd *cmd,
                        const dsf_plugin_opt_values *v)
{
    cJSON *params = cmd && cmd->params ? cJSON_Duplicate(cmd->params, 1)
                                       : cJSON_CreateObject();
    for (const cJSON *m = v->params ? v->params->child : NULL; m;
         m = m->next) {
        cJSON_DeleteItemFromObjectCaseSensitive(params, m->string);
        cJSON_AddItemToObject(params, m->string, cJSON_Duplicate(m, 1));
    }
    for (const cJSON *m = v->defaults ? v->defaults->child : NULL; m;
         m = m->next)
        if (!cJSON_GetObjectItemCaseSensitive(params, m->string))
            cJSON_AddItemToObject(params, m->string, cJSON_Duplicate(m, 1));
    return params;
}

/* Prints the findings of the files (found) and of the command
** (cmd_found), which it empties: JSON, or text into d, bounded per rule
** (after the exit status is known). */
static void print_findings(bool json, int rc, dsf_diags *found,
                           dsf_diags *cmd_found, cJSON *cmd_json,
                           dsf_diags *d)
{
    /* The command's findings follow the file's, in the command's order. */
    dsf_diags_cap(found, DSF_CHECK_MAX_SHOWN);
    if (json && !rc) {
        print_json(found, cmd_json);
        dsf_diags_free(found);
        dsf_diags_free(cmd_found);
        return;
    }
    dsf_diags_move(found, cmd_found);
    dsf_diags_move(d, found);
    dsf_diags_free(found); /* the emptied array */
    dsf_diags_free(cmd_found);
}

/* Loads the plugins on the plugin path the common options of argv and
** the environment give (offline for --help): the options they add to
** check are parsed with its own. */
static int load_plugins(dsf_cli_env *lenv, int split, char **argv,
                        dsf_plugins **plugins, dsf_srccache *sources,
                        dsf_diags *warnings, bool *help, dsf_diags *d)
{
    *help = dsf_cli_prescan(lenv, split, argv);
    if (*help) {
        lenv->offline = lenv->repo.offline = true;
        lenv->repo.progress = false;
    }
    int rc = dsf_cli_env_finish(lenv, d);
    if (!rc)
        rc = dsf_plugins_load(plugins, &lenv->plugin_dirs, sources,
                              lenv->limits, warnings, d);
    if (!rc)
        rc = dsf_plugins_read_options(*plugins, d);
    if (!rc && *help) /* the texts they give check's help */
        rc = dsf_plugins_read_targets(*plugins, d);
    return rc;
}

/* How many processes check the files: one when standard input (read
** once) or a command (checked with one CONFIG) is among them, else -j's
** (default one per CPU), for at least MIN_FILES_PER_JOB files each. */
static size_t jobs_for(const check_args *a, bool with_cmd)
{
    bool stdin_file = false;
    for (size_t i = 0; i < a->nfiles; i++)
        stdin_file = stdin_file || !strcmp(a->files[i], "-");
    if (with_cmd || stdin_file)
        return 1;
    return dsf_workers_count((size_t)a->jobs, a->nfiles, MIN_FILES_PER_JOB);
}

static int run(int argc, char **argv)
{
    dsf_cli_env env, lenv; /* the parse's, and the plugins' (prescan) */
    dsf_cli_env_init(&env);
    dsf_cli_env_init(&lenv);
    dsf_diags d = DSF_DIAGS_INIT;
    /* check CONFIG -- COMMAND...: the options end at "--", the command
    ** follows. */
    int split = argc;
    for (int i = 1; i < argc && split == argc; i++)
        if (!strcmp(argv[i], "--"))
            split = i;
    dsf_plugins *plugins = NULL;
    dsf_srccache *sources = dsf_srccache_new();
    dsf_diags warnings = DSF_DIAGS_INIT;
    bool help;
    int lrc = load_plugins(&lenv, split, argv, &plugins, sources, &warnings,
                           &help, &d);
    dsf_plugin_opts po;
    dsf_plugin_opts_init(&po, &dsf_cmd_check, lrc ? NULL : plugins, help);
    dsf_cli_args cl;
    dsf_cli_args_init(&cl, split, argv, &po.cmd, &env, &d);
    check_args a;
    memset(&a, 0, sizeof a);
    a.files = dsf_xcalloc((size_t)argc + 1, sizeof *a.files);
    int rc = 0, id;
    const char *arg;
    while (!rc && (id = dsf_cli_next(&cl, &arg)) != DSF_OPT_END)
        if (!dsf_plugin_opts_take(&po, id, arg))
            rc = take_option(&a, id, arg, &d);
    if (!rc)
        rc = cl.rc;
    if (lrc) /* the plugins' error comes first */
        rc = lrc;
    dsf_plugin_opt_values pv;
    memset(&pv, 0, sizeof pv);
    if (!rc && !cl.help_shown)
        rc = dsf_plugin_opts_values(&po, plugins, &pv, &d);
    if (cl.help_shown && !lrc) {
        dsf_plugin_opt_values_free(&pv);
        dsf_plugin_opts_free(&po);
        if (!dsf_teardown_by_exit()) {
            dsf_plugins_free(plugins);
            dsf_srccache_free(sources);
        }
        free(a.files);
        dsf_diags_free(&d);
        dsf_diags_free(&warnings);
        dsf_cli_env_free(&lenv);
        dsf_cli_env_free(&env);
        return 0;
    }
    bool with_cmd = split < argc;
    if (!rc && !cl.help_shown)
        rc = check_usage(&a, with_cmd, split + 1 == argc, &d);
    dsf_check_cmd cmd;
    memset(&cmd, 0, sizeof cmd);
    dsf_diags cmd_found = DSF_DIAGS_INIT, mnotes = DSF_DIAGS_INIT;
    cJSON *cmd_json = a.json && with_cmd ? cJSON_CreateArray() : NULL;
    if (with_cmd) {
        dsf_check_cmd_init(&cmd, argv + split + 1, (size_t)(argc - split - 1));
        if (!rc) {
            dsf_check_cmd_manifest(&cmd, a.files[0], &mnotes);
            if (cmd.target && !a.target_given)
                a.target = cmd.target;
        }
    }
    dsf_diags_move(&mnotes, &warnings); /* notes about the file first */
    dsf_diags_move(&warnings, &mnotes);
    dsf_diags_free(&mnotes); /* (the emptied array) */
    if (!rc) /* which plugins judge which files */
        rc = dsf_plugins_read_targets(plugins, &d);
    if (!rc && a.target)
        rc = dsf_plugins_check_target(
            plugins, a.target, a.target_given ? "--target"
                                              : "the manifest's target",
            a.target_given ? DSF_EUSAGE : DSF_EINPUT, &d);
    cJSON *params = params_of(with_cmd ? &cmd : NULL, &pv);
    int input_error = 0;
    dsf_diags found = DSF_DIAGS_INIT;
    if (!rc) {
        dsf_validate_opts vo = {.target = a.target, .mode = "check",
                                .params = params, .values = pv.ctx,
                                .edits = a.json};
        check_run cr = {a.files, a.nfiles, false, plugins, &vo,
                        a.target_given || cmd.target, params, pv.params,
                        with_cmd ? &cmd : NULL, &cmd_found, cmd_json};
        size_t n_jobs = jobs_for(&a, with_cmd);
        cr.serial = n_jobs == 1;
        rc = dsf_check_par_run(a.nfiles, n_jobs, check_one, &cr, a.files,
                               &found, &input_error, &d);
    }
    /* --strict: the files' warnings fail, not the plugins' load notices. */
    bool errors = a.strict && (dsf_diags_count(&found, DSF_WARNING) > 0 ||
                               dsf_diags_count(&cmd_found, DSF_WARNING) > 0);
    dsf_diags_move(&found, &warnings);
    dsf_diags_sort(&found);
    errors = errors || dsf_diags_count(&found, DSF_ERROR) > 0 ||
             dsf_diags_count(&cmd_found, DSF_ERROR) > 0;
    print_findings(a.json, rc, &found, &cmd_found, cmd_json, &d);
    if (!rc)
        rc = input_error ? input_error : errors ? DSF_EVALID : 0;
    /* The plugin state goes back to the OS at exit (core/teardown.h). */
    if (!dsf_teardown_by_exit()) {
        dsf_plugins_free(plugins);
        dsf_srccache_free(sources);
    }
    cJSON_Delete(params);
    dsf_plugin_opt_values_free(&pv);
    dsf_plugin_opts_free(&po);
    cJSON_Delete(cmd_json);
    if (with_cmd)
        dsf_check_cmd_free(&cmd);
    dsf_diags_free(&warnings);
    free(a.files);
    int status = dsf_cli_finish(&env, &d, rc);
    dsf_cli_env_free(&env);
    dsf_cli_env_free(&lenv);
    return status;
}
