/* entry_win.c - csi-proxy-cli.exe's entry point. The exe is linked with
 * -municode: the C runtime hands wmain the command line in UTF-16 (main's
 * argv would be in the ANSI code page), and it is converted to UTF-8 here
 * (CommandLineToArgvW is not needed, so the exe does not import SHELL32). */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>

#include <stdio.h>
#include <stdlib.h>
#include <wchar.h>

#include "cli/entry.h"
#include "cli/health_cmd.h"
#include "security/account_win.h"

const cp_config_resolve_fn cp_cli_resolver = cp_win_resolve_account;

static char *to_utf8(const wchar_t *w)
{
    int n = WideCharToMultiByte(CP_UTF8, 0, w, -1, NULL, 0, NULL, NULL);
    if (n <= 0)
        return NULL;
    char *s = malloc((size_t)n);
    if (s != NULL && WideCharToMultiByte(CP_UTF8, 0, w, -1, s, n, NULL, NULL) != n) {
        free(s);
        s = NULL;
    }
    return s;
}

int wmain(int argc, wchar_t **wargv)
{
    char **argv = calloc((size_t)argc + 1, sizeof(*argv));
    int code = 8; /* the CLI's exit code for a local failure */
    if (argv == NULL) {
        fputs("csi-proxy-cli: out of memory\n", stderr);
        return code;
    }
    int i = 0;
    for (; i < argc; i++) {
        if ((argv[i] = to_utf8(wargv[i])) == NULL) {
            fputs("csi-proxy-cli: out of memory reading the command line\n", stderr);
            goto out;
        }
    }
    code = cp_cli_main(argc, argv);
out:
    for (int j = 0; j < i; j++)
        free(argv[j]);
    free(argv);
    return code;
}
