/* simfixture_sim.h - a section of the simulators' YAML fixture
 * (test/fixtures/storage.yaml), for the SMB and iSCSI simulators: the
 * storage simulator reads the disks from the same file, these read their
 * own top-level key (smb:, iscsi:). Walked with base/yamlwalk.h, so a
 * problem is reported as "<who>: fixture <file>:<line>: <key path>: <why>"
 * (CP_E_INVALID_ARGUMENT). Simulator builds only. */
#ifndef CP_WINAPI_SIMFIXTURE_SIM_H
#define CP_WINAPI_SIMFIXTURE_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/yamlwalk.h"

/* Items in any list of a fixture. */
#define CP_SIMFX_MAX_LIST 256

/* The fixture file the simulator builds seed their default hosts from:
 * the value of CP_STORAGE_SIM_FIXTURE_ENV (host/storage.h), NULL when it
 * is unset or empty (then the hosts start empty). */
const char *cp_simfx_default_path(void);

/* Reads the YAML document of file `path`, or of `text` when path is NULL,
 * and calls fn with the node of its top-level `section` (not at all when
 * the document has no such key). who names the simulator in messages.
 * CP_OK, fn's status, CP_E_NOT_FOUND when the file cannot be opened, or
 * CP_E_INVALID_ARGUMENT for a document that is not YAML. */
typedef int (*cp_simfx_fn)(cp_yw *w, const yaml_node_t *section, void *ctx);
int cp_simfx_load(const char *who, const char *path, const char *text, const char *section,
                  cp_simfx_fn fn, void *ctx, cp_error *e);

/* The value of `key` in mapping n, or NULL. */
const yaml_node_t *cp_simfx_get(cp_yw *w, const yaml_node_t *n, const char *key);

/* A list at key `key` of mapping m, at most CP_SIMFX_MAX_LIST items
 * (absent: *list NULL, *n 0), and its item i. */
int cp_simfx_list(cp_yw *w, const yaml_node_t *m, const char *where, const char *key,
                  const yaml_node_t **list, size_t *n);
const yaml_node_t *cp_simfx_item(cp_yw *w, const yaml_node_t *list, size_t i);

/* Refuses any key of mapping n (at key path `where`) not in the
 * NULL-terminated `known`, and keys given twice. */
int cp_simfx_keys(cp_yw *w, const yaml_node_t *n, const char *where, const char *const *known);

/* A size in bytes, with an optional KiB/MiB/GiB/TiB suffix, at least 1 MiB. */
int cp_simfx_size(cp_yw *w, const yaml_node_t *n, const char *key, uint64_t *out);

/* A non-empty string of at most cap-1 bytes, copied into out. */
int cp_simfx_text(cp_yw *w, const yaml_node_t *n, const char *key, char *out, size_t cap);

/* Optional values: leave *out alone when `key` is absent from mapping m. */
int cp_simfx_opt_bool(cp_yw *w, const yaml_node_t *m, const char *where, const char *key,
                      bool *out);
int cp_simfx_opt_text(cp_yw *w, const yaml_node_t *m, const char *where, const char *key, char *out,
                      size_t cap);

/* A key path such as "iscsi.portals[0].port" in out (cut to cap). */
const char *cp_simfx_path(char *out, size_t cap, const char *fmt, ...) CP_PRINTF(3, 4);

/* Shell-style match, '*' any run of characters, ASCII case ignored. */
bool cp_simfx_match(const char *pattern, const char *s);

#endif
