/* flags.c - Go flag syntax over a table of flags. */
#include "service/flags.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/metrics_addr.h"

typedef enum ftype { F_BOOL, F_STRING, F_INT, F_UINT64, F_SEVERITY, F_TRACE, F_DIRS } ftype;

typedef struct flag_def {
    const char *name;
    ftype type;
    size_t off;      /* into cp_flags */
    const char *arg; /* the value's name in the usage; NULL for bools */
    const char *usage;
    const char *def; /* shown as "(default ...)"; NULL for a zero default */
} flag_def;

#define OFF(field) offsetof(cp_flags, field)

/* Sorted by name: the usage lists them in this order, as Go does. */
static const flag_def flag_defs[] = {
    {"add_dir_header", F_BOOL, OFF(add_dir_header), NULL,
     "If true, adds the file directory to the header of the log messages", NULL},
    {"alsologtostderr", F_BOOL, OFF(alsologtostderr), NULL,
     "log to standard error as well as files (no effect when -logtostderr=true)", NULL},
    {"config", F_STRING, OFF(config), "string",
     "YAML configuration file (pipe security, authorization, allow-lists)", NULL},
    {"kubelet-path", F_STRING, OFF(kubelet_path), "string",
     "Prefix path of the kubelet directory in the host file system",
     "\"C:\\\\var\\\\lib\\\\kubelet\""},
    {"log_backtrace_at", F_TRACE, OFF(log_backtrace_at), "value",
     "when logging hits line file:N, emit a stack trace", ":0"},
    {"log_dir", F_STRING, OFF(log_dir), "string",
     "If non-empty, write log files in this directory (no effect when -logtostderr=true)", NULL},
    {"log_file", F_STRING, OFF(log_file), "string",
     "If non-empty, use this log file (no effect when -logtostderr=true)", NULL},
    {"log_file_max_size", F_UINT64, OFF(log_file_max_size), "uint",
     "Defines the maximum size a log file can grow to (no effect when -logtostderr=true).\n"
     "Unit is megabytes. If the value is 0, the maximum file size is unlimited.",
     "1800"},
    {"logtostderr", F_BOOL, OFF(logtostderr), NULL, "log to standard error instead of files",
     "true"},
    {"metrics-bind-address", F_STRING, OFF(metrics_bind_address), "string",
     "The address the metric endpoint binds to. Defaults to empty in which case metrics are\n"
     "disabled. HOST:PORT; an empty HOST or localhost is 127.0.0.1, 0.0.0.0 every interface",
     NULL},
    {"one_output", F_BOOL, OFF(one_output), NULL,
     "If true, only write logs to their native severity level (vs also writing to each lower\n"
     "severity level; no effect when -logtostderr=true)",
     NULL},
    {"require-privacy", F_BOOL, OFF(require_privacy), NULL,
     "If true, SMB global mappings are created with RequirePrivacy", "true"},
    {"root", F_STRING, OFF(root), "string",
     "Native build: directory standing for the host's drives (C:\\ is <root>/C)", NULL},
    {"sim-fixture", F_STRING, OFF(sim_fixture), "string",
     "Native build: YAML fixture of the simulated disks, volumes, SMB servers and iSCSI portals (test/fixtures/storage.yaml)",
     NULL},
    {"skip_headers", F_BOOL, OFF(skip_headers), NULL,
     "If true, avoid header prefixes in the log messages", NULL},
    {"skip_log_headers", F_BOOL, OFF(skip_log_headers), NULL,
     "If true, avoid headers when opening log files (no effect when -logtostderr=true)", NULL},
    {"socket-dir", F_STRING, OFF(socket_dir), "string",
     "Native build: directory of the Unix sockets standing for the pipes", NULL},
    {"stderrthreshold", F_SEVERITY, OFF(stderrthreshold), "value",
     "logs at or above this threshold go to stderr when writing to files and stderr (no effect\n"
     "when -logtostderr=true or -alsologtostderr=true)",
     "2"},
    {"v", F_INT, OFF(v), "value", "number for the log level verbosity", NULL},
    {"version", F_BOOL, OFF(version), NULL, "Print the version and exit", NULL},
    {"vmodule", F_STRING, OFF(vmodule), "pattern=N,...",
     "comma-separated list of pattern=N settings for file-filtered logging", NULL},
    {"windows-service", F_BOOL, OFF(windows_service), NULL, "Configure as a Windows Service", NULL},
    {"working-dir", F_DIRS, OFF(working_dirs), "value",
     "Directory that callers may use besides -kubelet-path (repeatable, or a comma-separated\n"
     "list)",
     NULL},
};

#define N_FLAGS (sizeof(flag_defs) / sizeof(flag_defs[0]))

void cp_flags_init(cp_flags *f)
{
    memset(f, 0, sizeof(*f));
    f->kubelet_path = CP_FLAGS_DEFAULT_KUBELET_PATH;
    f->require_privacy = true;
    f->logtostderr = true;
    f->log_file_max_size = 1800;
    f->stderrthreshold = CP_SEV_ERROR;
}

void cp_flags_log_options(const cp_flags *f, cp_log_options *o)
{
    *o = (cp_log_options){
        .v = f->v,
        .log_file = f->log_file,
        .log_dir = f->log_dir,
        .logtostderr = f->logtostderr,
        .alsologtostderr = f->alsologtostderr,
        .log_file_max_size = f->log_file_max_size,
        .stderrthreshold = f->stderrthreshold,
        .skip_headers = f->skip_headers,
        .skip_log_headers = f->skip_log_headers,
        .add_dir_header = f->add_dir_header,
    };
}

void cp_flags_free(cp_flags *f)
{
    for (size_t i = 0; i < f->n_working_dirs; i++)
        free(f->working_dirs[i]);
    free(f->working_dirs);
    cp_flags_init(f);
}

static const flag_def *find_flag(const char *name, size_t len)
{
    for (size_t i = 0; i < N_FLAGS; i++)
        if (strlen(flag_defs[i].name) == len && memcmp(flag_defs[i].name, name, len) == 0)
            return &flag_defs[i];
    return NULL;
}

/* strconv.ParseBool */
static bool parse_bool(const char *s, bool *out)
{
    static const char *const yes[] = {"1", "t", "T", "TRUE", "true", "True"};
    static const char *const no[] = {"0", "f", "F", "FALSE", "false", "False"};
    for (size_t i = 0; i < 6; i++) {
        if (strcmp(s, yes[i]) == 0)
            return *out = true, true;
        if (strcmp(s, no[i]) == 0)
            return *out = false, true;
    }
    return false;
}

/* Go-style %q for the values in error messages. */
static void quote(char *out, size_t cap, const char *s)
{
    size_t n = 0;
    if (cap < 3) {
        if (cap > 0)
            out[0] = '\0';
        return;
    }
    out[n++] = '"';
    for (; *s != '\0' && n + 3 < cap; s++) {
        if (*s == '"' || *s == '\\')
            out[n++] = '\\';
        out[n++] = *s;
    }
    out[n++] = '"';
    out[n] = '\0';
}

/* A decimal integer (base 10 only, as klog's Level), in [lo, hi]. Returns
 * 0, or 1 for a syntax error, 2 for out of range. */
static int parse_int(const char *s, long long lo, long long hi, long long *out)
{
    const char *p = s;
    if (*p == '+' || *p == '-')
        p++;
    if (!isdigit((unsigned char)*p))
        return 1;
    for (; *p != '\0'; p++)
        if (!isdigit((unsigned char)*p))
            return 1;
    errno = 0;
    long long v = strtoll(s, NULL, 10);
    if (errno == ERANGE || v < lo || v > hi)
        return 2;
    *out = v;
    return 0;
}

/* strconv.ParseUint(s, 0, 64): decimal, 0x hex, 0o/0 octal, 0b binary. */
static int parse_uint64(const char *s, uint64_t *out)
{
    int base = 10;
    const char *p = s;
    if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
        base = 16, p += 2;
    else if (p[0] == '0' && (p[1] == 'o' || p[1] == 'O'))
        base = 8, p += 2;
    else if (p[0] == '0' && (p[1] == 'b' || p[1] == 'B'))
        base = 2, p += 2;
    else if (p[0] == '0' && p[1] != '\0')
        base = 8, p += 1;
    if (*p == '\0')
        return 1;
    uint64_t v = 0;
    for (; *p != '\0'; p++) {
        int d;
        if (isdigit((unsigned char)*p))
            d = *p - '0';
        else if (isalpha((unsigned char)*p))
            d = tolower((unsigned char)*p) - 'a' + 10;
        else
            return 1;
        if (d >= base)
            return 1;
        if (v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base)
            return 2;
        v = v * (uint64_t)base + (uint64_t)d;
    }
    *out = v;
    return 0;
}

static int add_dirs(cp_flags *f, const char *value)
{
    for (const char *p = value;;) {
        const char *end = strchr(p, ',');
        size_t len = end != NULL ? (size_t)(end - p) : strlen(p);
        if (len > 0) {
            char **dirs = realloc(f->working_dirs, (f->n_working_dirs + 1) * sizeof(*dirs));
            if (dirs == NULL)
                return CP_E_NOMEM;
            f->working_dirs = dirs;
            char *d = malloc(len + 1);
            if (d == NULL)
                return CP_E_NOMEM;
            memcpy(d, p, len);
            d[len] = '\0';
            dirs[f->n_working_dirs++] = d;
        }
        if (end == NULL)
            return CP_OK;
        p = end + 1;
    }
}

/* Returns 0, 1 for a syntax error, 2 for out of range, or CP_E_NOMEM. */
static int set_value(cp_flags *f, const flag_def *d, const char *value)
{
    void *field = (char *)f + d->off;
    long long ll;
    int rc;
    switch (d->type) {
    case F_BOOL:
        return parse_bool(value, (bool *)field) ? 0 : 1;
    case F_STRING:
        *(const char **)field = value;
        return 0;
    case F_INT:
        if ((rc = parse_int(value, INT32_MIN, INT32_MAX, &ll)) == 0)
            *(int *)field = (int)ll;
        return rc;
    case F_UINT64:
        return parse_uint64(value, (uint64_t *)field);
    case F_SEVERITY: {
        static const char *const names[] = {"INFO", "WARNING", "ERROR", "FATAL"};
        for (int i = 0; i < 4; i++) {
            size_t k = 0;
            while (names[i][k] != '\0' && toupper((unsigned char)value[k]) == names[i][k])
                k++;
            if (names[i][k] == '\0' && value[k] == '\0') {
                *(int *)field = i;
                return 0;
            }
        }
        if ((rc = parse_int(value, INT32_MIN, INT32_MAX, &ll)) == 0)
            *(int *)field = (int)ll;
        return rc;
    }
    case F_TRACE: { /* "" or file:N */
        const char *colon = strrchr(value, ':');
        if (value[0] != '\0' &&
            (colon == NULL || colon == value || parse_int(colon + 1, 0, INT32_MAX, &ll) != 0))
            return 1;
        *(const char **)field = value;
        return 0;
    }
    case F_DIRS:
        return add_dirs(f, value);
    }
    return 1;
}

int cp_flags_parse(cp_flags *f, int argc, char **argv, cp_error *e)
{
    cp_flags_init(f);
    cp_error_clear(e);
    int i = 1;
    while (i < argc) {
        const char *s = argv[i];
        if (strlen(s) < 2 || s[0] != '-')
            break; /* first non-flag argument */
        const char *name = s + 1;
        if (name[0] == '-') {
            name++;
            if (name[0] == '\0') { /* "--" ends the flags */
                i++;
                break;
            }
        }
        if (name[0] == '-' || name[0] == '=')
            return cp_error_set(e, CP_E_INVALID_ARGUMENT, "bad flag syntax: %s", s);
        i++;
        const char *eq = strchr(name, '=');
        size_t name_len = eq != NULL ? (size_t)(eq - name) : strlen(name);
        const char *value = eq != NULL ? eq + 1 : NULL;
        const flag_def *d = find_flag(name, name_len);
        if (d == NULL) {
            if ((name_len == 1 && name[0] == 'h') ||
                (name_len == 4 && memcmp(name, "help", 4) == 0)) {
                f->help = true;
                return CP_OK;
            }
            return cp_error_set(e, CP_E_INVALID_ARGUMENT, "flag provided but not defined: -%.*s",
                                (int)name_len, name);
        }
        if (d->type == F_BOOL && value == NULL) {
            value = "true";
        } else if (value == NULL) {
            if (i >= argc)
                return cp_error_set(e, CP_E_INVALID_ARGUMENT, "flag needs an argument: -%s",
                                    d->name);
            value = argv[i++];
        }
        int rc = set_value(f, d, value);
        if (rc == 0)
            f->given |= 1ull << (d - flag_defs);
        if (rc == CP_E_NOMEM)
            return cp_error_set(e, CP_E_NOMEM, "-%s: out of memory", d->name);
        if (rc != 0) {
            char q[256];
            quote(q, sizeof(q), value);
            const char *why = rc == 2 ? "value out of range" : "parse error";
            if (d->type == F_BOOL)
                return cp_error_set(e, CP_E_INVALID_ARGUMENT,
                                    "invalid boolean value %s for -%s: %s", q, d->name, why);
            return cp_error_set(e, CP_E_INVALID_ARGUMENT, "invalid value %s for flag -%s: %s", q,
                                d->name, why);
        }
    }
    f->args = argv + i;
    f->n_args = argc - i;
    /* Refused here, with the other flag errors, not when serving starts. */
    cp_metrics_addr addr;
    if (f->metrics_bind_address != NULL && f->metrics_bind_address[0] != '\0' &&
        cp_metrics_addr_parse(f->metrics_bind_address, &addr, e) != CP_OK)
        return CP_E_INVALID_ARGUMENT;
    return CP_OK;
}

bool cp_flags_given(const cp_flags *f, const char *name)
{
    const flag_def *d = find_flag(name, strlen(name));
    return d != NULL && (f->given & (1ull << (d - flag_defs))) != 0;
}

_Static_assert(N_FLAGS <= 64, "cp_flags.given has one bit per flag");

void cp_flags_usage(FILE *out)
{
    fprintf(out, "Usage of csi-proxy:\n");
    for (size_t i = 0; i < N_FLAGS; i++) {
        const flag_def *d = &flag_defs[i];
        fprintf(out, "  -%s", d->name);
        if (d->arg != NULL)
            fprintf(out, " %s", d->arg);
        fputs("\n    \t", out);
        for (const char *p = d->usage; *p != '\0'; p++) {
            if (*p == '\n')
                fputs("\n    \t", out);
            else
                fputc(*p, out);
        }
        if (d->def != NULL)
            fprintf(out, " (default %s)", d->def);
        fputc('\n', out);
    }
}
