/* fuzz_config.c - libFuzzer target: the YAML configuration parser
 * (service/config.h, libyaml underneath).
 *
 * Input: the file's bytes. Parsed with cp_config_load_string and an
 * account resolver that knows one name ("CORP\csi") and refuses the rest,
 * as LookupAccountNameW would.
 *
 * Oracles: the result is OK, INVALID_ARGUMENT or out-of-memory; a refusal
 * carries a message starting with the file name; an accepted file leaves
 * every group with a pipe security string and answers cp_config_serves for
 * every catalog entry; without security.allowBroadCallers no served group
 * admits a broad group (broad.h); the root check (roots.h) takes the
 * kubelet path and working dirs without harm; cp_config_free releases
 * everything in both cases (LeakSanitizer).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "groups/catalog.h"
#include "service/config.h"
#include "security/roots.h"

static bool resolve(void *ctx, const char *account, cp_sid *out, char *why, size_t cap)
{
    (void)ctx;
    if (strcmp(account, "CORP\\csi") == 0) {
        memset(out, 0, sizeof(*out));
        out->revision = 1;
        out->n_sub = 2;
        out->authority = 5;
        out->sub[0] = 21;
        out->sub[1] = 1104;
        return true;
    }
    snprintf(why, cap, "no such account");
    return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cp_config c;
    cp_error e = {0};
    int rc = cp_config_load_string(&c, "fuzz.yaml", (const char *)data, size, resolve, NULL, &e);
    if (rc != CP_OK && rc != CP_E_INVALID_ARGUMENT && rc != CP_E_NOMEM) {
        fprintf(stderr, "fuzz_config: unexpected status %d: %s\n", rc, e.msg);
        abort();
    }
    if (rc == CP_E_INVALID_ARGUMENT && strncmp(e.msg, "fuzz.yaml", 9) != 0) {
        fprintf(stderr, "fuzz_config: refusal without the file name: %s\n", e.msg);
        abort();
    }
    if (rc == CP_OK) {
        for (size_t i = 0; i < cp_catalog_len; i++) {
            (void)cp_config_serves(&c, cp_catalog[i].group, cp_catalog[i].version);
            const cp_config_group *g = cp_config_group_of(&c, cp_catalog[i].group);
            if (g == NULL || g->pipe_sddl == NULL) {
                fprintf(stderr, "fuzz_config: group %s without pipe security\n",
                        cp_catalog[i].group);
                abort();
            }
            char which[512];
            if (g->served && !c.allow_broad_callers &&
                cp_config_group_broad(g, which, sizeof(which))) {
                fprintf(stderr, "fuzz_config: group %s admits %s\n", g->name, which);
                abort();
            }
        }
        char why[512];
        if (c.kubelet_path != NULL)
            (void)cp_roots_judge(c.kubelet_path, cp_roots_portable, cp_roots_portable_n, why,
                                 sizeof(why));
        for (size_t i = 0; i < c.n_working_dirs; i++)
            (void)cp_roots_judge(c.working_dirs[i], cp_roots_portable, cp_roots_portable_n, why,
                                 sizeof(why));
    }
    cp_config_free(&c);
    return 0;
}
