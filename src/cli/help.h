/*
** help.h -- what a command declares about itself, and the texts made
** from it: --help, the man page and the shell completion scripts. Nothing
** here parses arguments or runs a command.
*/
#ifndef DSF_HELP_H
#define DSF_HELP_H

#include <stdbool.h>
#include <stdio.h>

#include "cli/opts.h"

/* One command: its option table and the words that explain it. The same
** struct describes the built-in commands (static tables in cmd_*.c) and
** the ones plugins declare (built at run time by plugin_cmd.c). */
typedef struct dsf_command {
    const char *name;
    const char *summary;     /* one line, for the command list */
    const char *usage;       /* after "dsforge ", one line per form */
    const char *description; /* paragraphs separated by blank lines */
    const dsf_opt *opts;     /* the command's own options (may be NULL) */
    bool common;             /* also takes the common options */
    const char *notes;       /* paragraphs after the options, or NULL */
    const char *positional;  /* completes positionals: "profile", "file",
                             ** or NULL */
    const char *const *subcommands; /* NULL-terminated, or NULL */
    int (*run)(int argc, char **argv); /* NULL for a plugin command */
    const char *plugin;      /* the declaring plugin, NULL when built in */
} dsf_command;

/* Prints c's --help: usage, description, options, notes, and the table
** common: under "Common options" when c takes them, else (just --help)
** with c's options. */
void dsf_help_print(FILE *out, const dsf_command *c, const dsf_opt *common);

/* text with each "@F " (the mark of the config family's name in the
** built-in commands' texts) replaced by family and a space, or by
** nothing when family is NULL (no plugin names one: the plugins' targets,
** plugin/targets.h). Caller frees. */
char *dsf_help_fill(const char *text, const char *family);

/* Prints the top-level help: every command of cmds[0..n) with its
** summary (the built-in ones first, then those of plugins), then the text
** tail (exit codes, environment); family as for dsf_help_fill. */
void dsf_help_top(FILE *out, const dsf_command *const *cmds, size_t n,
                  const char *tail, const char *family);

/* Prints the man page dsforge(1) in roff (-man): every command of
** cmds[0..n), the common options, then tail's paragraphs as sections
** (each paragraph "TITLE:\nbody"). version goes in the title line;
** family as for dsf_help_fill. */
void dsf_help_man(FILE *out, const dsf_command *const *cmds, size_t n,
                  const dsf_opt *common, const char *tail,
                  const char *version,
                  const char *family);

/* Prints the completion script for shell ("bash", "zsh", "fish"); the
** script asks `dsforge __complete WORD...` for the candidates. false for
** an unknown shell (nothing printed). */
bool dsf_help_completion(FILE *out, const char *shell);

/* Prints text wrapped to width columns, every line indented by indent
** spaces; blank lines separate paragraphs and are kept. */
void dsf_help_wrap(FILE *out, const char *text, int indent, int width);

#endif
