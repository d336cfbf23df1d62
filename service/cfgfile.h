/* cfgfile.h - opening the configuration file for reading. The file is a
 * regular file (regfile.h), and on Windows it must also be one only the
 * trusted can change (filesec.h): the descriptor of the handle that is
 * then read, and of the folder that holds it, are judged; a file owned by
 * someone else, or that someone else may write, delete or re-permission,
 * or that sits in a folder where someone else may add, remove or rename
 * files, is refused with a message naming the file, the principal and the
 * rights. The native build (simulators, tests) checks only that it is a
 * regular file.
 */
#ifndef CP_CFGFILE_H
#define CP_CFGFILE_H

#include <stdio.h>

#include "base/status.h"

/* As cp_regfile_open(path, "rb", e), plus the check above: NULL with
 * CP_E_PERMISSION_DENIED and "<path>: refused: ..." when it fails. */
FILE *cp_cfgfile_open(const char *path, cp_error *e);

#endif
