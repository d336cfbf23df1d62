/* regfile.h - opening a file the service was given by name (the config
 * file, the log file, the native build's -sim-fixture) only when it is a
 * regular file on disk. A name can mean something else: on Windows
 * "C:\cfg\nul.yaml", "CON" or "COM1" open a device (reading NUL gives an
 * empty file, i.e. the default policy), "\\.\pipe\x" connects to a pipe
 * (whose server could impersonate the service), and a directory is no
 * file; on POSIX a FIFO blocks the open and /dev/null reads empty. Each is
 * refused with a message naming the file and what it is.
 *
 * Two implementations: regfile_win.c (CreateFileW without impersonation
 * rights for the other end, then GetFileType == FILE_TYPE_DISK and
 * GetFileInformationByHandle not a directory) and regfile_posix.c
 * (open(O_NONBLOCK), fstat S_ISREG).
 */
#ifndef CP_REGFILE_H
#define CP_REGFILE_H

#include <stdio.h>

#include "base/status.h"

/* mode "rb": an existing file, for reading; "a": appending, created if
 * missing. Returns the stream, or NULL with e set: CP_E_NOT_FOUND when it
 * does not exist ("rb"), CP_E_FAILED_PRECONDITION when it is not a regular
 * file ("<path>: not a regular file: a directory"), CP_E_IO otherwise
 * ("<path>: <the system's reason>"). */
FILE *cp_regfile_open(const char *path, const char *mode, cp_error *e);

#endif
