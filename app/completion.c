/* completion.c: gsmooth --completion bash|zsh: the shell's completion script, written from the options table the parser uses. */
#include "completion.h"

#include <string.h>

#include "report.h"

/* A choice goes into the scripts unquoted, so it may hold only characters no shell
 * treats specially. */
static int plain_word(const char *s)
{
    return *s && strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._,+-") ==
                     strlen(s);
}

/* Every option with a value says what it is, and every choice is a plain word: an entry
 * that cannot be completed stops the script (and so the build that writes it). */
static gsmooth_status check_table(const gs_option_spec *t, size_t n, char *err, size_t err_size)
{
    for (size_t i = 0; i < n; ++i) {
        const char *name = t[i].getopt.name;
        const int takes = t[i].getopt.has_arg != no_argument;
        if (takes && t[i].value == GS_VALUE_NONE)
            return gs_app_fail(err, err_size, GSMOOTH_ERR_IO,
                               "completion: --%s takes a value but its entry gives no kind", name);
        if (!takes && t[i].value != GS_VALUE_NONE)
            return gs_app_fail(err, err_size, GSMOOTH_ERR_IO,
                               "completion: --%s takes no value but its entry gives a kind", name);
        const int choosing = t[i].value == GS_VALUE_CHOICE || t[i].value == GS_VALUE_PLUGIN;
        if (choosing != (t[i].choices != NULL))
            return gs_app_fail(err, err_size, GSMOOTH_ERR_IO,
                               "completion: --%s: choices go with a choice kind, and only there", name);
        for (const gs_named_value *v = t[i].choices; v && v->name; ++v)
            if (!plain_word(v->name))
                return gs_app_fail(err, err_size, GSMOOTH_ERR_IO,
                                   "completion: --%s: choice '%s' would need quoting", name, v->name);
    }
    return GSMOOTH_OK;
}

/* The option's short form, or 0. */
static char short_form(const gs_option_spec *o) { return o->getopt.val < 256 ? (char)o->getopt.val : 0; }

/* "x y xy": the choices, separated by spaces. */
static void put_choices(FILE *to, const gs_named_value *v)
{
    for (const gs_named_value *first = v; v->name; ++v) fprintf(to, "%s%s", v == first ? "" : " ", v->name);
}

/* "-o|--output-dir" or "--axis": a case pattern for the option's spellings. */
static void put_pattern(FILE *to, const gs_option_spec *o)
{
    if (short_form(o)) fprintf(to, "-%c|", short_form(o));
    fprintf(to, "--%s", o->getopt.name);
}

/* The spellings of every option whose value is of kind `a` or `b` ("-o|--output-dir|--relative-to"),
 * or of every option whose value is required (kind -1); 0 if there is none. */
static int put_patterns(FILE *to, const gs_option_spec *t, size_t n, int a, int b)
{
    int put = 0;
    for (size_t i = 0; i < n; ++i) {
        const int kind = (int)t[i].value;
        if (a == -1 ? t[i].getopt.has_arg != required_argument : kind != a && kind != b) continue;
        if (put++) fputc('|', to);
        put_pattern(to, &t[i]);
    }
    return put;
}

static void write_bash(FILE *to, const gs_option_spec *t, size_t n)
{
    fputs("# gsmooth: bash completion, written by `gsmooth --completion bash` from the options\n"
          "# table its parser uses. Load it with `source FILE`; from\n"
          "# share/bash-completion/completions, bash-completion loads it when first needed.\n"
          "\n"
          "# _gsmooth_add COMPGEN-ARGUMENTS: add compgen's candidates for $cur, one a line (so a\n"
          "# file name keeps its spaces and is never expanded as a pattern).\n"
          "_gsmooth_add()\n"
          "{\n"
          "    local line\n"
          "    while IFS= read -r line; do COMPREPLY+=(\"$line\"); done < <(compgen \"$@\" -- \"$cur\")\n"
          "}\n"
          "\n"
          "# _gsmooth_paths [dirs|so]: complete $cur as a file name (only directories; only\n"
          "# *.so files and directories), with bash-completion's _filedir where it is loaded,\n"
          "# else with compgen alone.\n"
          "_gsmooth_paths()\n"
          "{\n"
          "    if declare -F _filedir >/dev/null; then\n"
          "        case ${1-} in\n"
          "        dirs) _filedir -d ;;\n"
          "        so) _filedir so ;;\n"
          "        *) _filedir ;;\n"
          "        esac\n"
          "        return 0\n"
          "    fi\n"
          "    compopt -o filenames 2>/dev/null\n"
          "    case ${1-} in\n"
          "    dirs) _gsmooth_add -d ;;\n"
          "    so) _gsmooth_add -d; _gsmooth_add -f -X '!*.so' ;;\n"
          "    *) _gsmooth_add -f ;;\n"
          "    esac\n"
          "}\n"
          "\n"
          "# _gsmooth_value OPTION: complete $cur as OPTION's value.\n"
          "_gsmooth_value()\n"
          "{\n"
          "    case $1 in\n",
          to);
    for (size_t i = 0; i < n; ++i) {
        const gs_option_spec *o = &t[i];
        if (o->value != GS_VALUE_CHOICE && o->value != GS_VALUE_PLUGIN) continue;
        fputs("    ", to);
        put_pattern(to, o);
        fputs(") _gsmooth_add -W '", to);
        put_choices(to, o->choices);
        fputs(o->value == GS_VALUE_PLUGIN ? "'; _gsmooth_paths so ;;\n" : "' ;;\n", to);
    }
    fputs("    ", to);
    if (put_patterns(to, t, n, GS_VALUE_FILE, GS_VALUE_FILE)) fputs(") _gsmooth_paths ;;\n    ", to);
    if (put_patterns(to, t, n, GS_VALUE_DIR, GS_VALUE_DIR)) fputs(") _gsmooth_paths dirs ;;\n    ", to);
    if (put_patterns(to, t, n, GS_VALUE_NUMBER, GS_VALUE_TEXT)) fputs(") ;; # a number or text: nothing to offer\n    ", to);
    fputs("esac\n"
          "}\n"
          "\n"
          "_gsmooth()\n"
          "{\n"
          "    local cur=${COMP_WORDS[COMP_CWORD]} prev='' opt='' i\n"
          "    COMPREPLY=()\n"
          "    (( COMP_CWORD > 0 )) && prev=${COMP_WORDS[COMP_CWORD-1]}\n"
          "    # After --, every word is a file.\n"
          "    for (( i = 1; i < COMP_CWORD; i++ )); do\n"
          "        [[ ${COMP_WORDS[i]} == -- ]] && { _gsmooth_paths; return 0; }\n"
          "    done\n"
          "    # --OPTION=VALUE: bash splits it into --OPTION, = and VALUE (= is in\n"
          "    # COMP_WORDBREAKS), and replaces only VALUE ...\n"
          "    if [[ $cur == = && $prev == --* ]]; then\n"
          "        cur=''\n"
          "        _gsmooth_value \"$prev\"\n"
          "        return 0\n"
          "    fi\n"
          "    if [[ $prev == = ]] && (( COMP_CWORD > 1 )) && [[ ${COMP_WORDS[COMP_CWORD-2]} == --* ]]; then\n"
          "        _gsmooth_value \"${COMP_WORDS[COMP_CWORD-2]}\"\n"
          "        return 0\n"
          "    fi\n"
          "    # ... or, where = is no word break, keeps one word and replaces it whole.\n"
          "    if [[ $cur == --*=* ]]; then\n"
          "        opt=${cur%%=*} cur=${cur#*=}\n"
          "        _gsmooth_value \"$opt\"\n"
          "        COMPREPLY=(\"${COMPREPLY[@]/#/$opt=}\")\n"
          "        return 0\n"
          "    fi\n"
          "    # --OPTION VALUE: the next word is the value only where the value is required\n"
          "    # (an optional one is given as --OPTION=VALUE).\n"
          "    case $prev in\n"
          "    ",
          to);
    put_patterns(to, t, n, -1, -1);
    fputs(")\n"
          "        _gsmooth_value \"$prev\"\n"
          "        return 0\n"
          "        ;;\n"
          "    esac\n"
          "    if [[ $cur == -* ]]; then\n"
          "        _gsmooth_add -W '",
          to);
    for (size_t i = 0; i < n; ++i) fprintf(to, "%s--%s", i ? " " : "", t[i].getopt.name);
    for (size_t i = 0; i < n; ++i)
        if (short_form(&t[i])) fprintf(to, " -%c", short_form(&t[i]));
    fputs("'\n"
          "        return 0\n"
          "    fi\n"
          "    _gsmooth_paths\n"
          "}\n"
          "complete -F _gsmooth gsmooth\n",
          to);
}

/* `s` inside a single-quoted zsh word and an _arguments description: ' closes and reopens
 * the quotes; : [ ] \ are _arguments' own, so they are escaped. */
static void put_zsh_text(FILE *to, const char *s)
{
    for (; *s; ++s) {
        if (*s == '\'') fputs("'\\''", to);
        else {
            if (strchr(":[]\\", *s)) fputc('\\', to);
            fputc(*s, to);
        }
    }
}

static void write_zsh(FILE *to, const gs_option_spec *t, size_t n)
{
    fputs("#compdef gsmooth\n"
          "# gsmooth: zsh completion, written by `gsmooth --completion zsh` from the options\n"
          "# table its parser uses. Put it in a directory of $fpath as _gsmooth.\n"
          "\n"
          "# _gsmooth_plugin NAMES: a backend, one of NAMES or a plugin's path (NAMES comes\n"
          "# last: _arguments puts compadd's options before it).\n"
          "_gsmooth_plugin() {\n"
          "  _alternative \"names:backend:(${@[-1]})\" 'files:plugin:_files -g \"*.so(-.)\"'\n"
          "}\n"
          "\n"
          "_arguments -s -S : \\\n",
          to);
    for (size_t i = 0; i < n; ++i) {
        const gs_option_spec *o = &t[i];
        const char s = short_form(o);
        const int has = o->getopt.has_arg;
        /* --NAME=: the value after = or as the next word; --NAME=-: after = only (optional). */
        const char *eq = has == required_argument ? "=" : has == optional_argument ? "=-" : "";
        fputs("  ", to);
        if (s) fprintf(to, "'(-%c --%s)'{-%c%s,--%s%s}'", s, o->getopt.name, s,
                       has == required_argument ? "+" : "", o->getopt.name, eq);
        else fprintf(to, "'--%s%s", o->getopt.name, eq);
        fputc('[', to);
        put_zsh_text(to, o->about ? o->about : o->getopt.name);
        fputc(']', to);
        if (o->value != GS_VALUE_NONE) {
            fputs(has == optional_argument ? "::" : ":", to);
            put_zsh_text(to, o->metavar ? o->metavar : "value");
            fputc(':', to);
            switch (o->value) {
            case GS_VALUE_CHOICE:
                fputc('(', to);
                put_choices(to, o->choices);
                fputc(')', to);
                break;
            case GS_VALUE_PLUGIN:
                fputs("_gsmooth_plugin \"", to);
                put_choices(to, o->choices);
                fputc('"', to);
                break;
            case GS_VALUE_FILE: fputs("_files", to); break;
            case GS_VALUE_DIR: fputs("_files -/", to); break;
            default: fputc(' ', to); break; /* a number or text: the message alone */
            }
        }
        fputs("' \\\n", to);
    }
    fputs("  '*:image file:_files'\n", to);
}

gsmooth_status gs_completion_write(FILE *to, gs_shell shell, char *err, size_t err_size)
{
    size_t n;
    const gs_option_spec *t = gs_options_table(&n);
    gsmooth_status rc = check_table(t, n, err, err_size);
    if (rc != GSMOOTH_OK) return rc;
    if (shell == GS_SHELL_ZSH) write_zsh(to, t, n);
    else write_bash(to, t, n);
    if (fflush(to) != 0 || ferror(to))
        return gs_app_fail(err, err_size, GSMOOTH_ERR_IO, "cannot write the completion script");
    return GSMOOTH_OK;
}
