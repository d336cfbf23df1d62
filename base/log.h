/* log.h - a small logger writing klog's format:
 *
 *   I1122 10:20:30.123456    1234 main_win.c:42] serving 23 pipes
 *
 * (severity, month, day, local time, process id, file:line, message),
 * routed like klog by its flags: -logtostderr (default) writes to stderr
 * only; otherwise to -log_file (or a file in -log_dir), plus stderr for
 * -alsologtostderr or severities at/above -stderrthreshold. -v gates
 * CP_LOG_V. -log_file_max_size rotates the file to <file>.1. -vmodule,
 * -one_output and -log_backtrace_at are accepted and ignored. Portable C.
 *
 * One logger per process. Before cp_log_init() (and after cp_log_close())
 * lines go to stderr. Thread-safe after cp_log_init(); call it before
 * starting other threads. Logging saves and restores errno.
 */
#ifndef CP_LOG_H
#define CP_LOG_H

#include <stdarg.h>
#include <stdbool.h>

#include <stdint.h>

#include "base/status.h"

/* klog severities, for the stderr threshold. */
enum { CP_SEV_INFO = 0, CP_SEV_WARNING = 1, CP_SEV_ERROR = 2, CP_SEV_FATAL = 3 };

/* How the logger routes lines: the meaning of klog's flags of the same
 * names (the service fills it from its command line). */
typedef struct cp_log_options {
    int v;                      /* CP_LOG_V(level) logs when level <= v */
    const char *log_file;       /* NULL or "" if none */
    const char *log_dir;        /* NULL or "" if none */
    bool logtostderr;           /* stderr only, no file */
    bool alsologtostderr;       /* every line to stderr as well as the file */
    uint64_t log_file_max_size; /* megabytes; 0 = unlimited */
    int stderrthreshold;        /* CP_SEV_*: at/above it a line also goes to stderr */
    bool skip_headers;          /* no "I1122 ... file:line]" prefix */
    bool skip_log_headers;      /* no "Log file created at" header */
    bool add_dir_header;        /* the source file's directory in the prefix */
} cp_log_options;

/* Configures the logger from o and opens the log file, if any. pid goes
 * into every line. Returns CP_OK, or CP_E_IO/CP_E_NOMEM with e naming the
 * file and the cause (the logger then keeps to stderr). The options'
 * strings are copied. */
int cp_log_init(const cp_log_options *o, unsigned long pid, cp_error *e);

/* Flushes and closes the file; later lines go to stderr. */
void cp_log_close(void);

/* True when a line of severity sev reaches stderr (startup errors that
 * must be seen on the console print there themselves when it does not). */
bool cp_log_reaches_stderr(char sev);

/* True when -v is at least level. */
bool cp_log_enabled(int level);

/* sev is 'I', 'W', 'E' (or 'F': logged as an error; never aborts). */
void cp_log(char sev, const char *file, int line, const char *fmt, ...) CP_PRINTF(4, 5);
void cp_logva(char sev, const char *file, int line, const char *fmt, va_list ap);

#define CP_LOG_INFO(...) cp_log('I', __FILE__, __LINE__, __VA_ARGS__)
#define CP_LOG_WARN(...) cp_log('W', __FILE__, __LINE__, __VA_ARGS__)
#define CP_LOG_ERROR(...) cp_log('E', __FILE__, __LINE__, __VA_ARGS__)
#define CP_LOG_V(level, ...)                                                                       \
    do {                                                                                           \
        if (cp_log_enabled(level))                                                                 \
            cp_log('I', __FILE__, __LINE__, __VA_ARGS__);                                          \
    } while (0)

#endif
