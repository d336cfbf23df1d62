/* health_cmd.c - see health_cmd.h. */
#include "cli/health_cmd.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/health.h"
#include "groups/catalog.h"
#include "host/sysfiles.h"
#include "service/config.h"

#define EXIT_DOWN 1
#define EXIT_BAD_ARGS 3

/* The configuration the service reads: -config PATH, else the default
 * file when it exists (%ProgramData%: Windows), else none (*loaded false). */
static int load(cp_config *c, const char *path, bool *loaded)
{
    char def[1024];
    const char *pd = getenv("ProgramData");
    *loaded = false;
    if (path == NULL && pd == NULL)
        return 0;
    if (path == NULL) {
        snprintf(def, sizeof(def), "%s\\csi-proxy\\config.yaml", pd);
        path = def;
    }
    cp_error e;
    int rc = cp_config_load_file(c, path, cp_cli_resolver, NULL, &e);
    if (rc == CP_E_NOT_FOUND && path == def)
        return 0;
    if (rc != CP_OK) {
        fprintf(stderr, "csi-proxy-cli: health: -config %s: %s\n", path, e.msg);
        return EXIT_BAD_ARGS;
    }
    *loaded = true;
    return 0;
}

/* A page-file or crash-dump entry of this host whose volume cannot be told
 * (sysfiles.h): the service is up, but does not protect that volume. */
static void warn(void *ctx, const char *line)
{
    (void)ctx;
    printf("warning: %s\n", line);
}

int cp_cli_health(int argc, char **argv)
{
    cp_health_opts o = {.deadline_ms = CP_HEALTH_DEFAULT_DEADLINE_MS};
    const char *config = NULL;
    char **groups = calloc((size_t)argc + 1, sizeof(*groups));
    int n_groups = 0, code = EXIT_BAD_ARGS;
    cp_config c;
    bool loaded = false;
    memset(&c, 0, sizeof(c));
    if (groups == NULL)
        return 8;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (a[0] != '-') {
            groups[n_groups++] = argv[i];
            continue;
        }
        const char *name = a + (a[1] == '-' ? 2 : 1);
        const char *eq = strchr(name, '=');
        size_t nlen = eq != NULL ? (size_t)(eq - name) : strlen(name);
        const char *val = eq != NULL ? eq + 1 : (i + 1 < argc ? argv[i + 1] : NULL);
#define IS(opt) (nlen == strlen(opt) && strncmp(name, opt, nlen) == 0)
        if (IS("serving") && eq == NULL) {
            o.require_serving = true;
            continue;
        }
        if (!IS("deadline") && !IS("config") && !IS("socket-dir")) {
            fprintf(stderr,
                    "csi-proxy-cli: health: unknown option %s (options: -deadline D, "
                    "-config PATH, -socket-dir DIR, -serving)\n",
                    a);
            goto out;
        }
        if (val == NULL) {
            fprintf(stderr, "csi-proxy-cli: health: option %s needs a value\n", a);
            goto out;
        }
        if (eq == NULL)
            i++;
        if (IS("deadline")) {
            int64_t ns = cp_cli_parse_duration(val);
            if (ns < 1000000) {
                fprintf(stderr,
                        "csi-proxy-cli: health: -deadline \"%s\": want a duration like 5s or "
                        "500ms\n",
                        val);
                goto out;
            }
            o.deadline_ms = ns / 1000000;
        } else if (IS("config")) {
            config = val;
        } else {
            o.socket_dir = val;
        }
#undef IS
    }
    if ((code = load(&c, config, &loaded)) != 0)
        goto out;
    if (loaded && c.kubelet_path != NULL)
        o.kubelet_path = c.kubelet_path;
    cp_health_target t[64];
    const char *bad = NULL;
    if (cp_catalog_len > sizeof(t) / sizeof(t[0])) {
        code = 8;
        goto out;
    }
    bool served[64];
    if (loaded)
        cp_config_served_set(&c, served);
    int n = cp_health_targets(loaded ? served : NULL, groups, n_groups, t, &bad);
    if (n < 0) {
        fprintf(stderr,
                "csi-proxy-cli: health: no group \"%s\" (want a group like smb, or smb/v1; "
                "csi-proxy-cli --list shows them)\n",
                bad);
        code = EXIT_BAD_ARGS;
        goto out;
    }
    code = cp_health_check(t, n, &o, stdout, "") == 0 ? 0 : EXIT_DOWN;
    cp_sysfile_unresolved(warn, NULL); /* named, not counted as down */
out:
    if (loaded)
        cp_config_free(&c);
    free(groups);
    fflush(stdout);
    return code;
}
