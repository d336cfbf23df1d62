/* version.h - the version -version prints and the log shows at start.
 *
 * CP_VERSION_BASE is edited by hand at a release; CP_VERSION, what the
 * programs print, is generated from it and git by scripts/dist/version.sh
 * into build/gen/cp_version.h (see that script for the scheme). */
#ifndef CP_VERSION_H
#define CP_VERSION_H

#define CP_VERSION_BASE "v1.3.0-c.0"

#include "cp_version.h"

#endif
