/* main.c - csi-proxy-cli: call one csi-proxy method from the command line.
 *
 * Flow: arguments -> catalog lookup -> request JSON -> protobuf -> dial ->
 * gRPC call(s) -> response JSON and a status line. Exit code is the gRPC
 * status code (0 OK, 3 for a bad command line or request, 14 when the
 * service cannot be reached).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/dial.h"
#include "cli/entry.h"
#include "client/h2client.h"
#include "cli/health_cmd.h"
#include "cli/json.h"
#include "groups/catalog.h"
#include "base/arena.h"
#include "base/status.h"
#include "service/version.h"

#define CLI_VERSION CP_VERSION /* the release version, as csi-proxy.exe -version */
#define MAX_REQUEST_FILE (64u * 1024 * 1024)

static const char usage_text[] =
    "usage: csi-proxy-cli [options] <group> <version> <Method> [REQUEST]\n"
    "       csi-proxy-cli --list [group [version]]\n"
    "       csi-proxy-cli health [-deadline 5s] [-config PATH] [-serving] [group[/version]...]\n"
    "\n"
    "Calls one csi-proxy gRPC method and prints the response as JSON.\n"
    "\n"
    "REQUEST is the request message as JSON (proto field names or lowerCamelCase\n"
    "names; 64-bit integers as numbers or strings; enums as names or numbers),\n"
    "@FILE to read it from a file, or - to read it from stdin. Default: {}.\n"
    "\n"
    "options:\n"
    "  --pipe NAME_OR_PATH  Windows: pipe name or full \\\\.\\pipe\\... path\n"
    "                       (default \\\\.\\pipe\\csi-proxy-<group>-<version>);\n"
    "                       native build: socket path, or a name in the socket dir\n"
    "  --socket-dir DIR     native build: connect to DIR/csi-proxy-<group>-<version>.sock\n"
    "                       (default $CSI_PROXY_SOCKET_DIR)\n"
    "  --timeout DURATION   send grpc-timeout and give up locally after it\n"
    "                       (e.g. 5s, 200ms, 1m30s)\n"
    "  --emit-defaults      also print fields that hold their default value\n"
    "  --raw-path PATH      send to PATH (/pkg.Service/Method) instead of Method's path;\n"
    "                       the request is Method's JSON, or empty if no Method is given\n"
    "                       (then the response is printed as \"raw: <hex>\")\n"
    "  --hold MS            keep the connection open MS ms after the reply\n"
    "  --repeat N           make N calls in a row on one connection, print the last\n"
    "                       (stops at the first error)\n"
    "  --list               list services and methods (request -> response types)\n"
    "  --version, --help\n"
    "\n"
    "Output: the response as one line of JSON, then \"status: OK\". On a gRPC error\n"
    "\"status: <CODE_NAME> (<code>): <message>\" and the exit code is the gRPC code.\n"
    "Cannot connect: a message on stderr, exit 14. Bad arguments or request JSON:\n"
    "a message on stderr, exit 3, nothing sent.\n";

typedef struct opts {
    const char *pipe;
    const char *socket_dir;
    const char *raw_path;
    int64_t timeout_ns;
    int64_t hold_ms;
    long repeat;
    bool emit_defaults, list, help, version;
    const char *pos[5];
    int npos;
} opts;

#define EXIT_BAD_ARGS 3 /* INVALID_ARGUMENT */

static int fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int fail(int code, const char *fmt, ...)
{
    va_list ap;
    fputs("csi-proxy-cli: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return code;
}

/* Go-style duration ("1m30s", "1.5s", "200ms", "100us", "10ns", "2h") in
 * nanoseconds; -1 if malformed or not positive. */
int64_t cp_cli_parse_duration(const char *s)
{
    static const struct {
        const char *unit;
        double ns;
    } units[] = {{"ns", 1},  {"us", 1e3}, {"\xc2\xb5s", 1e3}, {"ms", 1e6},
                 {"s", 1e9}, {"m", 60e9}, {"h", 3600e9}};
    double total = 0;
    if (*s == '\0')
        return -1;
    while (*s != '\0') {
        char *end;
        if (!(*s >= '0' && *s <= '9') && *s != '.')
            return -1;
        double v = strtod(s, &end);
        if (end == s)
            return -1;
        s = end;
        size_t best = 0, best_len = 0;
        for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
            size_t n = strlen(units[i].unit);
            if (strncmp(s, units[i].unit, n) == 0 && n > best_len)
                best = i, best_len = n;
        }
        if (best_len == 0)
            return -1;
        total += v * units[best].ns;
        s += best_len;
    }
    if (!(total >= 1) || total > 9.2e18)
        return -1;
    return (int64_t)total;
}

static bool parse_long(const char *s, long min, long *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || v < min)
        return false;
    *out = v;
    return true;
}

/* Options may come before, between or after the positional arguments;
 * "-" is a positional argument (stdin); "--" ends the options. Both -opt
 * and --opt, with the value as the next argument or after '='. */
static int parse_args(int argc, char **argv, opts *o)
{
    bool options_done = false;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (options_done || arg[0] != '-' || arg[1] == '\0') {
            if (o->npos == (int)(sizeof(o->pos) / sizeof(o->pos[0])))
                return fail(EXIT_BAD_ARGS, "too many arguments (at \"%s\"); try --help", arg);
            o->pos[o->npos++] = arg;
            continue;
        }
        if (strcmp(arg, "--") == 0) {
            options_done = true;
            continue;
        }
        const char *name = arg + (arg[1] == '-' ? 2 : 1);
        const char *eq = strchr(name, '=');
        size_t nlen = eq != NULL ? (size_t)(eq - name) : strlen(name);
#define IS(opt) (nlen == strlen(opt) && strncmp(name, opt, nlen) == 0)
        if (IS("emit-defaults") || IS("list") || IS("help") || IS("h") || IS("version")) {
            if (eq != NULL)
                return fail(EXIT_BAD_ARGS, "option -%.*s takes no value", (int)nlen, name);
            if (IS("emit-defaults"))
                o->emit_defaults = true;
            else if (IS("list"))
                o->list = true;
            else if (IS("version"))
                o->version = true;
            else
                o->help = true;
            continue;
        }
        if (!(IS("pipe") || IS("socket-dir") || IS("timeout") || IS("raw-path") || IS("hold") ||
              IS("repeat")))
            return fail(EXIT_BAD_ARGS, "unknown option %s; try --help", arg);
        const char *val = eq != NULL ? eq + 1 : NULL;
        if (val == NULL) {
            if (i + 1 >= argc)
                return fail(EXIT_BAD_ARGS, "option %s needs a value", arg);
            val = argv[++i];
        }
        if (IS("pipe")) {
            o->pipe = val;
        } else if (IS("socket-dir")) {
            o->socket_dir = val;
        } else if (IS("raw-path")) {
            if (val[0] != '/')
                return fail(EXIT_BAD_ARGS, "--raw-path must start with '/': \"%s\"", val);
            o->raw_path = val;
        } else if (IS("timeout")) {
            if ((o->timeout_ns = cp_cli_parse_duration(val)) < 0)
                return fail(EXIT_BAD_ARGS,
                            "--timeout \"%s\": want a positive duration like 5s, 200ms, 1m30s",
                            val);
        } else if (IS("hold")) {
            long v;
            if (!parse_long(val, 0, &v))
                return fail(EXIT_BAD_ARGS, "--hold \"%s\": want milliseconds >= 0", val);
            o->hold_ms = v;
        } else {
            if (!parse_long(val, 1, &o->repeat))
                return fail(EXIT_BAD_ARGS, "--repeat \"%s\": want a count >= 1", val);
        }
#undef IS
    }
    return 0;
}

static int list_services(const opts *o)
{
    const char *group = o->npos > 0 ? o->pos[0] : NULL;
    const char *version = o->npos > 1 ? o->pos[1] : NULL;
    if (o->npos > 2)
        return fail(EXIT_BAD_ARGS, "--list takes at most a group and a version");
    bool any = false;
    for (size_t i = 0; i < cp_catalog_len; i++) {
        const cp_catalog_entry *s = &cp_catalog[i];
        if ((group != NULL && strcmp(group, s->group) != 0) ||
            (version != NULL && strcmp(version, s->version) != 0))
            continue;
        any = true;
        printf("%s %s  %s  (csi-proxy-%s-%s)\n", s->group, s->version, s->desc->name, s->group,
               s->version);
        for (unsigned m = 0; m < s->desc->n_methods; m++) {
            const ProtobufCMethodDescriptor *md = &s->desc->methods[m];
            printf("  %s  %s -> %s\n", md->name, md->input->name, md->output->name);
        }
    }
    if (!any)
        return fail(EXIT_BAD_ARGS, "no service %s%s%s; run --list to see them all",
                    group != NULL ? group : "", version != NULL ? " " : "",
                    version != NULL ? version : "");
    return 0;
}

static const ProtobufCMethodDescriptor *find_method(const ProtobufCServiceDescriptor *d,
                                                    const char *name)
{
    const ProtobufCMethodDescriptor *m = protobuf_c_service_descriptor_get_method_by_name(d, name);
    if (m != NULL)
        return m;
    /* Operators type "pathexists" too; accept a unique case-insensitive match. */
    const ProtobufCMethodDescriptor *found = NULL;
    for (unsigned i = 0; i < d->n_methods; i++) {
        const char *a = d->methods[i].name, *b = name;
        while (*a != '\0' && *b != '\0' && (*a | 0x20) == (*b | 0x20))
            a++, b++;
        if (*a == '\0' && *b == '\0') {
            if (found != NULL)
                return NULL;
            found = &d->methods[i];
        }
    }
    return found;
}

/* Reads all of f into the arena. */
static int read_all(cp_arena *a, FILE *f, const char *what, char **out, size_t *out_len)
{
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    if (buf == NULL)
        return fail(8, "out of memory");
    for (;;) {
        if (len == cap) {
            if (cap >= MAX_REQUEST_FILE) {
                free(buf);
                return fail(EXIT_BAD_ARGS, "%s: larger than %u bytes", what, MAX_REQUEST_FILE);
            }
            char *nb = realloc(buf, cap * 2);
            if (nb == NULL) {
                free(buf);
                return fail(8, "out of memory");
            }
            buf = nb;
            cap *= 2;
        }
        size_t n = fread(buf + len, 1, cap - len, f);
        len += n;
        if (n == 0)
            break;
    }
    if (ferror(f)) {
        free(buf);
        return fail(EXIT_BAD_ARGS, "cannot read %s", what);
    }
    *out = cp_arena_strndup(a, buf, len);
    *out_len = len;
    free(buf);
    return *out == NULL ? fail(8, "out of memory") : 0;
}

static int load_request(cp_arena *a, const char *arg, char **text, size_t *len)
{
    if (arg == NULL) {
        *text = "{}";
        *len = 2;
        return 0;
    }
    if (strcmp(arg, "-") == 0)
        return read_all(a, stdin, "stdin", text, len);
    if (arg[0] == '@') {
        FILE *f = fopen(arg + 1, "rb");
        if (f == NULL)
            return fail(EXIT_BAD_ARGS, "cannot open request file %s: %s", arg + 1, strerror(errno));
        int rc = read_all(a, f, arg + 1, text, len);
        fclose(f);
        return rc;
    }
    *text = (char *)arg;
    *len = strlen(arg);
    return 0;
}

static void print_hex(const uint8_t *p, size_t n)
{
    fputs("raw: ", stdout);
    for (size_t i = 0; i < n; i++)
        printf("%02x", p[i]);
    fputc('\n', stdout);
}

/* Prints the outcome of the last call; returns the exit code. */
static int report(cp_arena *a, const opts *o, const ProtobufCMethodDescriptor *md,
                  const cp_h2c_response *r)
{
    int code = r->grpc_status;
    const char *msg = r->grpc_message;
    if (code == 0) {
        if (md == NULL) {
            print_hex(r->body, r->len);
        } else {
            ProtobufCMessage *m =
                protobuf_c_message_unpack(md->output, cp_arena_allocator(a), r->len, r->body);
            char *json = NULL;
            cp_error e;
            if (m == NULL) {
                code = 13;
                msg = "grpc: failed to unmarshal the received message";
            } else if (cp_json_from_message(a, m, o->emit_defaults ? CP_JSON_EMIT_DEFAULTS : 0,
                                            &json, &e) != CP_OK) {
                return fail(8, "%s", e.msg);
            } else {
                printf("%s\n", json);
            }
        }
    }
    if (code == 0) {
        printf("status: OK\n");
        return 0;
    }
    if (code > 0 && code <= 16)
        printf("status: %s (%d)", cp_status_name(-code), code);
    else
        printf("status: Code(%d) (%d)", code, code);
    if (msg != NULL && msg[0] != '\0')
        printf(": %s", msg);
    printf("\n");
    /* Exit codes are 0..255; a status outside gRPC's range is UNKNOWN. */
    return code > 0 && code <= 16 ? code : 2;
}

static int run(cp_arena *a, const opts *o)
{
    if (o->npos < 2 || (o->npos < 3 && o->raw_path == NULL))
        return fail(EXIT_BAD_ARGS, "need <group> <version> <Method> [REQUEST]; try --help");
    if (o->npos > 4)
        return fail(EXIT_BAD_ARGS, "too many arguments; try --help");
    const char *group = o->pos[0], *version = o->pos[1];
    const cp_catalog_entry *svc = cp_catalog_find(group, version);
    if (svc == NULL)
        return fail(EXIT_BAD_ARGS, "no service \"%s %s\"; run --list to see them", group, version);

    const ProtobufCMethodDescriptor *md = NULL;
    if (o->npos >= 3) {
        md = find_method(svc->desc, o->pos[2]);
        if (md == NULL) {
            fprintf(stderr, "csi-proxy-cli: %s has no method \"%s\"; it has:", svc->desc->name,
                    o->pos[2]);
            for (unsigned i = 0; i < svc->desc->n_methods; i++)
                fprintf(stderr, " %s", svc->desc->methods[i].name);
            fputc('\n', stderr);
            return EXIT_BAD_ARGS;
        }
    }

    /* Request: built and packed before anything is dialled. */
    uint8_t *body = NULL;
    size_t body_len = 0;
    if (md != NULL) {
        char *text;
        size_t len;
        int rc = load_request(a, o->npos >= 4 ? o->pos[3] : NULL, &text, &len);
        if (rc != 0)
            return rc;
        ProtobufCMessage *req;
        cp_error e;
        if ((rc = cp_json_text_to_message(a, text, len, md->input, &req, &e)) != CP_OK)
            return fail(cp_status_to_grpc(rc), "request %s: %s", md->input->name, e.msg);
        body_len = protobuf_c_message_get_packed_size(req);
        if ((body = cp_arena_alloc(a, body_len)) == NULL)
            return fail(8, "out of memory");
        protobuf_c_message_pack(req, body);
    } else if (o->npos >= 4) {
        return fail(EXIT_BAD_ARGS, "a REQUEST needs a Method to give it a type");
    }

    char *path = o->raw_path != NULL ? (char *)o->raw_path
                                     : cp_arena_printf(a, "/%s/%s", svc->desc->name, md->name);
    char *target;
    cp_error e;
    int rc;
    if (path == NULL)
        return fail(8, "out of memory");
    if ((rc = cp_dial_resolve(a, o->pipe, o->socket_dir, group, version, &target, &e)) != CP_OK)
        return fail(cp_status_to_grpc(rc), "%s", e.msg);

    cp_dial *d = NULL;
    cp_h2c *c = NULL;
    int code;
    if ((rc = cp_dial_open(target, &d, &e)) != CP_OK) {
        code = fail(cp_status_to_grpc(rc), "%s", e.msg);
        goto out;
    }
    cp_h2c_io io = cp_dial_io(d);
    if ((rc = cp_h2c_new(&io, "csi-proxy-cli/" CLI_VERSION, &c, &e)) != CP_OK) {
        code = fail(cp_status_to_grpc(rc), "%s", e.msg);
        goto out;
    }
    cp_h2c_request req = {.path = path, .body = body, .len = body_len, .timeout_ns = o->timeout_ns};
    cp_h2c_response resp = {0}; /* n >= 1: cp_h2c_call fills it at least once */
    long n = o->repeat > 0 ? o->repeat : 1;
    for (long i = 0; i < n; i++) {
        if ((rc = cp_h2c_call(c, &req, a, &resp, &e)) != CP_OK) {
            code = fail(cp_status_to_grpc(rc), "%s %s (call %ld of %ld): %s", target, path, i + 1,
                        n, e.msg);
            goto out;
        }
        if (resp.grpc_status != 0)
            break;
    }
    code = report(a, o, md, &resp);
    fflush(stdout);
    if (o->hold_ms > 0 && cp_h2c_idle(c, o->hold_ms, &e) != CP_OK)
        fprintf(stderr, "csi-proxy-cli: while holding the connection: %s\n", e.msg);
out:
    cp_h2c_free(c);
    cp_dial_close(d);
    return code;
}

int cp_cli_main(int argc, char **argv)
{
    cp_arena *a = cp_arena_new();
    int code;
    if (a == NULL)
        return fail(8, "out of memory");
    opts o = {0};
    if (argc > 1 && strcmp(argv[1], "health") == 0) {
        code = cp_cli_health(argc - 1, argv + 1);
        goto out;
    }
    if ((code = parse_args(argc, argv, &o)) != 0)
        goto out;
    if (o.help) {
        fputs(usage_text, stdout);
        code = 0;
    } else if (o.version) {
        printf("csi-proxy-cli %s\n", CLI_VERSION);
        code = 0;
    } else if (o.list) {
        code = list_services(&o);
    } else if (o.npos == 0) {
        fputs(usage_text, stderr);
        code = EXIT_BAD_ARGS;
    } else {
        code = run(a, &o);
    }
out:
    fflush(stdout);
    cp_arena_free(a);
    return code;
}
