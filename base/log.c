/* log.c - see log.h. */
#define _POSIX_C_SOURCE 200809L /* localtime_r, gettimeofday (also on mingw) */
#ifndef __USE_MINGW_ANSI_STDIO
#define __USE_MINGW_ANSI_STDIO                                                                     \
    1 /* mingw: C99 printf formats (as the Makefile); no effect elsewhere */
#endif
#include "base/log.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include "base/thread.h"
#include "base/regfile.h"
#include "base/logesc.h"

#define LINE_MAX_BYTES 8192

/* The one logger: set by cp_log_init before other threads exist. */
static struct {
    cp_mutex *mu;
    FILE *file;
    char *path;
    uint64_t max_bytes, size;
    int v, threshold;
    bool stderr_only, also_stderr, skip_headers, skip_log_headers, add_dir_header;
    unsigned long pid;
} lg = {.stderr_only = true, .threshold = CP_SEV_ERROR};

static int sev_index(char sev)
{
    switch (sev) {
    case 'I':
        return CP_SEV_INFO;
    case 'W':
        return CP_SEV_WARNING;
    case 'E':
        return CP_SEV_ERROR;
    default:
        return CP_SEV_FATAL;
    }
}

static void write_file_header(void)
{
    if (lg.skip_log_headers || lg.file == NULL)
        return;
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    int n = fprintf(lg.file,
                    "Log file created at: %04d/%02d/%02d %02d:%02d:%02d\n"
                    "Log line format: [IWEF]mmdd hh:mm:ss.uuuuuu threadid file:line] msg\n",
                    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
    if (n > 0)
        lg.size += (uint64_t)n;
}

/* A regular file only (regfile.h): -log_file NUL or a pipe's name is
 * refused, not written to. */
static FILE *open_append(const char *path, uint64_t *size, cp_error *e)
{
    FILE *fp = cp_regfile_open(path, "a", e);
    if (fp == NULL)
        return NULL;
    long end = fseek(fp, 0, SEEK_END) == 0 ? ftell(fp) : 0;
    *size = end > 0 ? (uint64_t)end : 0;
    return fp;
}

int cp_log_init(const cp_log_options *o, unsigned long pid, cp_error *e)
{
    if (lg.mu == NULL && (lg.mu = cp_mutex_new()) == NULL)
        return cp_error_set(e, CP_E_NOMEM, "logger: out of memory");
    cp_mutex_lock(lg.mu);
    lg.pid = pid;
    lg.v = o->v;
    lg.threshold = o->stderrthreshold;
    lg.skip_headers = o->skip_headers;
    lg.skip_log_headers = o->skip_log_headers;
    lg.add_dir_header = o->add_dir_header;
    lg.also_stderr = o->alsologtostderr;
    lg.max_bytes =
        o->log_file_max_size > UINT64_MAX / (1024 * 1024) ? 0 : o->log_file_max_size * 1024 * 1024;
    lg.stderr_only = true;
    int rc = CP_OK;
    cp_error oe;
    bool has_file = o->log_file != NULL && o->log_file[0] != '\0';
    bool has_dir = o->log_dir != NULL && o->log_dir[0] != '\0';
    if (!o->logtostderr && (has_file || has_dir)) {
        char *path;
        if (has_file) {
            path = malloc(strlen(o->log_file) + 1);
            if (path != NULL)
                strcpy(path, o->log_file);
        } else {
            /* <dir>\csi-proxy.<yyyymmdd-hhmmss>.<pid>.log, klog-like */
            time_t now = time(NULL);
            struct tm tm;
            localtime_r(&now, &tm);
            size_t dl = strlen(o->log_dir), cap = dl + 64;
            const char *sep = o->log_dir[dl - 1] == '/' || o->log_dir[dl - 1] == '\\' ? ""
                              : strchr(o->log_dir, '\\') != NULL                      ? "\\"
                                                                                      : "/";
            path = malloc(cap);
            if (path != NULL)
                snprintf(path, cap, "%s%scsi-proxy.%04d%02d%02d-%02d%02d%02d.%lu.log", o->log_dir,
                         sep, tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
                         tm.tm_sec, pid);
        }
        FILE *fp = NULL;
        if (path == NULL) {
            rc = cp_error_set(e, CP_E_NOMEM, "logger: out of memory");
        } else if ((fp = open_append(path, &lg.size, &oe)) == NULL) {
            rc = cp_error_set(e, oe.status == CP_E_FAILED_PRECONDITION ? oe.status : CP_E_IO,
                              "open log file %s", oe.msg);
            free(path);
        } else {
            if (lg.file != NULL)
                fclose(lg.file);
            free(lg.path);
            lg.file = fp;
            lg.path = path;
            lg.stderr_only = false;
            write_file_header();
        }
    }
    cp_mutex_unlock(lg.mu);
    return rc;
}

void cp_log_close(void)
{
    if (lg.mu == NULL)
        return;
    cp_mutex_lock(lg.mu);
    if (lg.file != NULL)
        fclose(lg.file);
    lg.file = NULL;
    free(lg.path);
    lg.path = NULL;
    lg.stderr_only = true;
    cp_mutex_unlock(lg.mu);
}

bool cp_log_reaches_stderr(char sev)
{
    return lg.stderr_only || lg.also_stderr || sev_index(sev) >= lg.threshold;
}

bool cp_log_enabled(int level)
{
    return level <= lg.v;
}

/* Under the lock: <path> -> <path>.1, then a fresh <path>. */
static void rotate(void)
{
    size_t n = strlen(lg.path) + 3;
    char *old = malloc(n);
    if (old == NULL)
        return;
    snprintf(old, n, "%s.1", lg.path);
    fclose(lg.file);
    remove(old);
    rename(lg.path, old);
    free(old);
    lg.size = 0;
    cp_error oe;
    lg.file = open_append(lg.path, &lg.size, &oe);
    if (lg.file == NULL)
        lg.stderr_only = true; /* nowhere else to go */
    else
        write_file_header();
}

void cp_logva(char sev, const char *file, int line, const char *fmt, va_list ap)
{
    int saved_errno = errno;
    char buf[LINE_MAX_BYTES];
    size_t n = 0;
    if (!lg.skip_headers) {
        struct timeval tv;
        gettimeofday(&tv, NULL);
        time_t secs = tv.tv_sec;
        struct tm tm;
        localtime_r(&secs, &tm);
        const char *base = file;
        if (!lg.add_dir_header)
            for (const char *p = file; *p != '\0'; p++)
                if (*p == '/' || *p == '\\')
                    base = p + 1;
        int k = snprintf(buf, sizeof(buf), "%c%02d%02d %02d:%02d:%02d.%06ld %7lu %s:%d] ",
                         sev == 'F' ? 'E' : sev, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
                         tm.tm_sec, (long)tv.tv_usec, lg.pid, base, line);
        n = k < 0 ? 0 : ((size_t)k < sizeof(buf) ? (size_t)k : sizeof(buf) - 1);
    }
    /* The message, with what a caller sent escaped (logesc.h): one line
     * per record, whatever the text quotes. A newline that ends the
     * message is the line's own. */
    char msg[LINE_MAX_BYTES];
    int k = vsnprintf(msg, sizeof(msg), fmt, ap);
    size_t mlen = k < 0 ? 0 : ((size_t)k < sizeof(msg) ? (size_t)k : sizeof(msg) - 1);
    if (mlen > 0 && msg[mlen - 1] == '\n')
        mlen--;
    n += cp_logesc(msg, mlen, buf + n, sizeof(buf) - n - 1);
    buf[n++] = '\n';

    int si = sev_index(sev);
    if (lg.mu != NULL)
        cp_mutex_lock(lg.mu);
    if (!lg.stderr_only && lg.file != NULL) {
        if (lg.max_bytes > 0 && lg.size > 0 && lg.size + n > lg.max_bytes)
            rotate();
        if (lg.file != NULL && fwrite(buf, 1, n, lg.file) == n) {
            lg.size += n;
            fflush(lg.file);
        }
    }
    if (lg.stderr_only || lg.also_stderr || si >= lg.threshold) { /* as cp_log_reaches_stderr */
        fwrite(buf, 1, n, stderr);
        fflush(stderr);
    }
    if (lg.mu != NULL)
        cp_mutex_unlock(lg.mu);
    errno = saved_errno;
}

void cp_log(char sev, const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cp_logva(sev, file, line, fmt, ap);
    va_end(ap);
}
