/* roots_posix.c - see roots.h. The native build serves Windows paths
 * mapped under -root: the portable list decides, on the path as given. */
#include "security/roots.h"

int cp_roots_check(const char *what, const char *path, cp_error *e)
{
    char why[512];
    if (cp_roots_judge(path, cp_roots_portable, cp_roots_portable_n, why, sizeof(why)))
        return CP_OK;
    return cp_error_set(e, CP_E_INVALID_ARGUMENT, "%s %s: refused as a root: %s", what, path, why);
}
