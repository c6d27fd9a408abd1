/* help.c -- see help.h. */
#include "help.h"

#include <stdlib.h>
#include <string.h>

#include "core/buf.h"

#define WIDTH 78
#define OPT_COL 24

void dsf_help_wrap(FILE *out, const char *text, int indent, int width)
{
    const char *p = text;
    int col = 0;
    bool first_word = true;
    while (*p) {
        if (p[0] == '\n' && p[1] == '\n') {
            fputs("\n\n", out);
            while (*p == '\n')
                p++;
            col = 0;
            first_word = true;
            continue;
        }
        if (*p == ' ' || *p == '\n') {
            p++;
            continue;
        }
        size_t n = strcspn(p, " \n");
        if (!first_word && col + 1 + (int)n > width) {
            fputc('\n', out);
            col = 0;
            first_word = true;
        }
        if (first_word) {
            fprintf(out, "%*s", indent, "");
            col = indent;
        } else {
            fputc(' ', out);
            col++;
        }
        fwrite(p, 1, n, out);
        col += (int)n;
        first_word = false;
        p += n;
    }
    if (col)
        fputc('\n', out);
}

/* "  -o, --output DIR" */
static int opt_label(char *buf, size_t size, const dsf_opt *o)
{
    int n = o->short_name
                ? snprintf(buf, size, "  -%c, --%s", o->short_name, o->name)
                : snprintf(buf, size, "  --%s", o->name);
    if (o->arg && n > 0 && (size_t)n < size)
        n += snprintf(buf + n, size - (size_t)n, " %s", o->arg);
    return n;
}

static void print_opts(FILE *out, const dsf_opt *opts)
{
    for (const dsf_opt *o = opts; o && o->id; o++) {
        char label[128];
        int n = opt_label(label, sizeof label, o);
        fputs(label, out);
        if (n + 2 > OPT_COL) {
            fputc('\n', out);
            n = 0;
        }
        /* the first line of the help goes after the label */
        fprintf(out, "%*s", OPT_COL - n, "");
        const char *h = o->help ? o->help : "";
        /* wrap with the first line already indented */
        int col = OPT_COL;
        bool first = true;
        while (*h) {
            if (*h == ' ' || *h == '\n') {
                h++;
                continue;
            }
            size_t w = strcspn(h, " \n");
            if (!first && col + 1 + (int)w > WIDTH) {
                fprintf(out, "\n%*s", OPT_COL, "");
                col = OPT_COL;
                first = true;
            }
            if (!first) {
                fputc(' ', out);
                col++;
            }
            fwrite(h, 1, w, out);
            col += (int)w;
            first = false;
            h += w;
        }
        fputc('\n', out);
    }
}

static void print_usage(FILE *out, const char *usage)
{
    const char *p = usage;
    bool several = strchr(usage, '\n') != NULL;
    fputs(several ? "Usage:\n" : "Usage: ", out);
    while (*p) {
        size_t n = strcspn(p, "\n");
        fprintf(out, "%sdsforge %.*s\n", several ? "  " : "", (int)n, p);
        p += n;
        if (*p)
            p++;
    }
}

char *dsf_help_fill(const char *text, const char *family)
{
    dsf_buf b = DSF_BUF_INIT;
    for (const char *m; (m = strstr(text, "@F ")) != NULL; text = m + 3) {
        dsf_buf_add(&b, text, (size_t)(m - text));
        if (family)
            dsf_buf_printf(&b, "%s ", family);
    }
    dsf_buf_puts(&b, text);
    return dsf_buf_take(&b);
}

void dsf_help_print(FILE *out, const dsf_command *c, const dsf_opt *common)
{
    print_usage(out, c->usage);
    if (c->description && *c->description) {
        fputc('\n', out);
        char *t = dsf_help_fill(c->description, NULL);
        dsf_help_wrap(out, t, 0, WIDTH);
        free(t);
    }
    if ((c->opts && c->opts->id) || !c->common) {
        fputs("\nOptions:\n", out);
        print_opts(out, c->opts);
        if (!c->common) /* common is just --help */
            print_opts(out, common);
    }
    if (c->notes && *c->notes) {
        fputc('\n', out);
        dsf_help_wrap(out, c->notes, 0, WIDTH);
    }
    if (c->common) {
        fputs("\nCommon options:\n", out);
        print_opts(out, common);
    }
}

void dsf_help_top(FILE *out, const dsf_command *const *cmds, size_t n,
                  const char *tail, const char *family)
{
    char *t = dsf_help_fill("Usage: dsforge <command> [options]\n"
                            "       dsforge help <command>\n"
                            "       dsforge --version\n\n"
                            "Generates, validates and explains @F configs "
                            "from Lua profiles.\n\nCommands:\n", family);
    fputs(t, out);
    free(t);
    for (size_t i = 0; i < n; i++)
        if (!cmds[i]->plugin) {
            t = dsf_help_fill(cmds[i]->summary, NULL);
            fprintf(out, "  %-11s %s\n", cmds[i]->name, t);
            free(t);
        }
    bool header = false;
    for (size_t i = 0; i < n; i++) {
        if (!cmds[i]->plugin)
            continue;
        if (!header)
            fputs("\nCommands from plugins:\n", out);
        header = true;
        fprintf(out, "  %-11s %s (plugin %s)\n", cmds[i]->name,
                cmds[i]->summary, cmds[i]->plugin);
    }
    fputs("\nOptions:\n"
          "  -h, --help  show this help\n"
          "  -V, --version\n"
          "              print the version\n\n"
          "Run 'dsforge help <command>' (or 'dsforge <command> --help') for "
          "a\ncommand's options, 'dsforge completion bash|zsh|fish' for "
          "shell completion.\n\n", out);
    fputs(tail, out);
}

/* ------------------------------------------------------------------ */
/* The man page. */

/* Text for roff: a backslash is \e, a dash \-, and a line never starts
** with a control character. */
static void roff(FILE *out, const char *s, size_t n)
{
    bool bol = true;
    for (size_t i = 0; i < n; i++) {
        char ch = s[i];
        if (bol && (ch == '.' || ch == '\''))
            fputs("\\&", out);
        if (ch == '\\')
            fputs("\\e", out);
        else if (ch == '-')
            fputs("\\-", out);
        else
            fputc(ch, out);
        bol = ch == '\n';
    }
}

static void roff_s(FILE *out, const char *s)
{
    roff(out, s, strlen(s));
}

/* Paragraphs (blank-line separated) as .PP blocks, lines joined. */
static void roff_paras(FILE *out, const char *text)
{
    const char *p = text;
    while (*p) {
        while (*p == '\n')
            p++;
        if (!*p)
            break;
        const char *end = strstr(p, "\n\n");
        size_t n = end ? (size_t)(end - p) : strlen(p);
        while (n && p[n - 1] == '\n')
            n--;
        fputs(".PP\n", out);
        for (size_t i = 0; i < n; i++) {
            size_t k = strcspn(p + i, "\n");
            if (k > n - i)
                k = n - i;
            const char *w = p + i;
            while (k && *w == ' ')
                w++, k--, i++;
            roff(out, w, k);
            fputc('\n', out);
            i += k;
        }
        p += n;
    }
}

static void roff_opts(FILE *out, const dsf_opt *opts)
{
    for (const dsf_opt *o = opts; o && o->id; o++) {
        fputs(".TP\n", out);
        if (o->short_name)
            fprintf(out, "\\fB\\-%c\\fR, ", o->short_name);
        fputs("\\fB\\-\\-", out);
        roff_s(out, o->name);
        fputs("\\fR", out);
        if (o->arg) {
            fputs(" \\fI", out);
            roff_s(out, o->arg);
            fputs("\\fR", out);
        }
        fputc('\n', out);
        roff_s(out, o->help ? o->help : "");
        fputc('\n', out);
    }
}

void dsf_help_man(FILE *out, const dsf_command *const *cmds, size_t n,
                  const dsf_opt *common, const char *tail,
                  const char *version, const char *family)
{
    fputs(".TH DSFORGE 1 \"\" \"dsforge ", out);
    roff_s(out, version);
    char *t = dsf_help_fill(
        "\" \"User Commands\"\n"
        ".SH NAME\n"
        "dsforge \\- generate, validate and explain @F configs "
        "from Lua profiles\n"
        ".SH SYNOPSIS\n"
        ".B dsforge\n\\fIcommand\\fR [\\fIoptions\\fR]\n"
        ".br\n.B dsforge help\n\\fIcommand\\fR\n"
        ".br\n.B dsforge \\-\\-version\n"
        ".SH DESCRIPTION\n"
        "Generates, validates and explains @F configs from "
        "sandboxed Lua profiles.\n"
        "Each command below takes \\fB\\-\\-help\\fR.\n"
        ".SH COMMANDS\n", family);
    fputs(t, out);
    free(t);
    for (size_t i = 0; i < n; i++) {
        const dsf_command *c = cmds[i];
        fputs(".SS ", out);
        roff_s(out, c->name);
        fputs("\n", out);
        const char *u = c->usage;
        while (*u) {
            size_t k = strcspn(u, "\n");
            fputs(".PP\n\\fBdsforge\\fR ", out);
            roff(out, u, k);
            fputc('\n', out);
            u += k;
            if (*u)
                u++;
        }
        if (c->plugin) {
            fputs(".PP\nDeclared by the plugin \\fB", out);
            roff_s(out, c->plugin);
            fputs("\\fR.\n", out);
        }
        if (c->description) {
            t = dsf_help_fill(c->description, NULL);
            roff_paras(out, t);
            free(t);
        }
        if (c->opts && c->opts->id) {
            fputs(".PP\nOptions:\n.RS\n", out);
            roff_opts(out, c->opts);
            fputs(".RE\n", out);
        }
        if (c->notes)
            roff_paras(out, c->notes);
    }
    fputs(".SH COMMON OPTIONS\n"
          "Every command that loads profiles or plugins takes these.\n",
          out);
    roff_opts(out, common);
    /* tail: "Title:\n  lines" paragraphs */
    const char *p = tail;
    while (*p) {
        while (*p == '\n')
            p++;
        if (!*p)
            break;
        const char *end = strstr(p, "\n\n");
        size_t len = end ? (size_t)(end - p) : strlen(p);
        size_t tl = strcspn(p, ":\n");
        fputs(".SH ", out);
        for (size_t i = 0; i < tl; i++)
            fputc(p[i] >= 'a' && p[i] <= 'z' ? p[i] - 'a' + 'A' : p[i], out);
        fputc('\n', out);
        const char *body = p + tl + (p[tl] == ':' ? 1 : 0);
        const char *bend = p + len;
        while (body < bend && (*body == ' ' || *body == '\n'))
            body++;
        /* each line of the body is its own line (.br between) */
        while (body < bend) {
            size_t k = strcspn(body, "\n");
            if (body + k > bend)
                k = (size_t)(bend - body);
            const char *w = body;
            while (k && *w == ' ')
                w++, k--;
            roff(out, w, k);
            fputs("\n.br\n", out);
            body = w + k;
            if (body < bend)
                body++;
        }
        p += len;
    }
    fputs(".SH SEE ALSO\n"
          "The README and contrib/docs/ of the dsforge source.\n", out);
}

/* ------------------------------------------------------------------ */
/* Completion scripts: they ask the binary, so new profiles, tiers and
** plugin commands complete without regenerating them. */

static const char bash_script[] =
    "# bash completion for dsforge (dsforge completion bash)\n"
    "_dsforge() {\n"
    "    local cur=${COMP_WORDS[COMP_CWORD]} IFS=$'\\n'\n"
    "    COMPREPLY=($(\"${COMP_WORDS[0]}\" __complete "
    "\"${COMP_WORDS[@]:1:COMP_CWORD}\" 2>/dev/null))\n"
    "    if [[ ${#COMPREPLY[@]} -eq 1 && ${COMPREPLY[0]} == *= ]]; then\n"
    "        compopt -o nospace 2>/dev/null\n"
    "    fi\n"
    "}\n"
    "complete -o default -o bashdefault -F _dsforge dsforge\n";

static const char zsh_script[] =
    "#compdef dsforge\n"
    "# zsh completion for dsforge (dsforge completion zsh)\n"
    "_dsforge() {\n"
    "    local -a c\n"
    "    c=(${(f)\"$(${words[1]} __complete \"${(@)words[2,CURRENT]}\" "
    "2>/dev/null)\"})\n"
    "    if (( ${#c} )); then\n"
    "        local -a eq plain\n"
    "        eq=(${(M)c:#*=})\n"
    "        plain=(${c:#*=})\n"
    "        (( ${#eq} )) && compadd -S '' -- $eq\n"
    "        (( ${#plain} )) && compadd -- $plain\n"
    "    else\n"
    "        _files\n"
    "    fi\n"
    "}\n"
    "if [[ $zsh_eval_context[-1] == loadautofunc ]]; then\n"
    "    _dsforge \"$@\"\n"
    "else\n"
    "    compdef _dsforge dsforge\n"
    "fi\n";

static const char fish_script[] =
    "# fish completion for dsforge (dsforge completion fish)\n"
    "function __dsforge_complete\n"
    "    set -l words (commandline -opc) (commandline -ct)\n"
    "    set -l c ($words[1] __complete $words[2..-1] 2>/dev/null)\n"
    "    if test (count $c) -gt 0\n"
    "        printf '%s\\n' $c\n"
    "    else\n"
    "        __fish_complete_path (commandline -ct)\n"
    "    end\n"
    "end\n"
    "complete -c dsforge -f -a '(__dsforge_complete)'\n";

bool dsf_help_completion(FILE *out, const char *shell)
{
    const char *s = !strcmp(shell, "bash")   ? bash_script
                    : !strcmp(shell, "zsh")  ? zsh_script
                    : !strcmp(shell, "fish") ? fish_script
                                             : NULL;
    if (s)
        fputs(s, out);
    return s != NULL;
}
