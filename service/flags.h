/* flags.h - the command line, parsed with Go's flag syntax so that
 * upstream's install lines keep working:
 *
 *   -name value   -name=value   --name value   --name=value
 *   -bool         -bool=true    -bool=false    (never "-bool false")
 *   --            ends the flags; so does the first non-flag argument.
 *
 * Upstream's flags (-kubelet-path, -working-dir, -windows-service,
 * -require-privacy, -metrics-bind-address, -version), klog's flags (-v,
 * -log_file, -logtostderr, ...) and ours (-config, -socket-dir, -root).
 * Errors use Go's wording ("flag provided but not defined: -foo"); the
 * caller prints the message and cp_flags_usage() and exits with 2, as a Go
 * program does. Portable C.
 */
#ifndef CP_FLAGS_H
#define CP_FLAGS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "base/log.h"
#include "base/status.h"

#define CP_FLAGS_DEFAULT_KUBELET_PATH "C:\\var\\lib\\kubelet"

typedef struct cp_flags {
    /* upstream */
    const char *kubelet_path; /* default CP_FLAGS_DEFAULT_KUBELET_PATH */
    char **working_dirs;      /* -working-dir, repeatable, comma lists split */
    size_t n_working_dirs;
    bool windows_service;
    bool require_privacy;             /* default true */
    const char *metrics_bind_address; /* checked (metrics_addr.h); NULL if not given */
    bool version;
    /* klog */
    int v;
    const char *log_file; /* NULL if not given */
    const char *log_dir;
    bool logtostderr; /* default true */
    bool alsologtostderr;
    uint64_t log_file_max_size; /* megabytes; default 1800; 0 = unlimited */
    int stderrthreshold;        /* CP_SEV_*; default CP_SEV_ERROR */
    const char *vmodule;
    bool skip_headers;
    bool one_output;
    bool add_dir_header;
    const char *log_backtrace_at;
    bool skip_log_headers;
    /* ours */
    const char *config;      /* -config PATH */
    const char *socket_dir;  /* -socket-dir DIR (native build) */
    const char *root;        /* -root DIR (native build) */
    const char *sim_fixture; /* -sim-fixture PATH (native build: storage simulator) */
    /* -h or -help was given: print usage, exit 0 (as Go does). */
    bool help;
    /* Arguments after the flags (ignored, as upstream does). */
    char **args;
    int n_args;
    /* Which flags the command line gave (bit i: the i-th flag in the
     * table); see cp_flags_given. */
    uint64_t given;
} cp_flags;

/* Sets every field to its default. */
void cp_flags_init(cp_flags *f);

/* Initialises f and parses argv[1..argc-1]. String fields point into argv,
 * which must outlive f; working_dirs are copies owned by f. Returns CP_OK,
 * CP_E_INVALID_ARGUMENT with e->msg in Go's wording (the caller prints it
 * and the usage, exit code 2), or CP_E_NOMEM. Free f with cp_flags_free()
 * in every case. */
int cp_flags_parse(cp_flags *f, int argc, char **argv, cp_error *e)
#if defined(__GNUC__)
    __attribute__((warn_unused_result))
#endif
    ;

/* True when the command line gave flag name ("log_file", "v", ...):
 * the config file does not override those. */
bool cp_flags_given(const cp_flags *f, const char *name);

/* The logger's options (base/log.h) from klog's flags in f; the strings
 * point into f. */
void cp_flags_log_options(const cp_flags *f, cp_log_options *o);

/* Releases what parse allocated; f is left initialised. */
void cp_flags_free(cp_flags *f);

/* Prints "Usage of csi-proxy:" and every flag, Go style, to out. */
void cp_flags_usage(FILE *out);

#endif
