/* cfgfile_posix.c - see cfgfile.h: the native build reads the file the
 * simulators and tests give it; only its kind is checked. */
#include "service/cfgfile.h"

#include "base/regfile.h"

FILE *cp_cfgfile_open(const char *path, cp_error *e)
{
    return cp_regfile_open(path, "rb", e);
}
