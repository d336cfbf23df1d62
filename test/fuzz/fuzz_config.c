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
 * every catalog entry; cp_config_free releases everything in both cases
 * (LeakSanitizer).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "groups/catalog.h"
#include "service/config.h"

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
        }
    }
    cp_config_free(&c);
    return 0;
}
