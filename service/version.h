/* version.h - the version -version prints and the log shows at start. */
#ifndef CP_VERSION_H
#define CP_VERSION_H

#define CP_VERSION "v1.3.0-c.0"

#endif
