/* sysfiles_posix.c - the native build has no page files or crash dumps to
 * protect (sysfiles.h). */
#include "host/sysfiles.h"

int cp_sysfile_unresolved(void (*report)(void *ctx, const char *line), void *ctx)
{
    (void)report;
    (void)ctx;
    return 0;
}
