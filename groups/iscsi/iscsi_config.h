/* iscsi_config.h - the iscsi group's own settings (groups.iscsi in the
 * configuration file; service/config.c fills them). Portable C. */
#ifndef CP_ISCSI_CONFIG_H
#define CP_ISCSI_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

typedef struct cp_iscsi_config {
    /* groups.iscsi.allowedPortals: when portals_restricted (the key was
     * given, even as []), the only portals the initiator may be sent to
     * ("addr", "name", "*.suffix"); entries named exactly also lift the
     * loopback, link-local and unspecified rule. The groups copy the
     * list. */
    bool portals_restricted;
    const char *const *allowed_portals;
    size_t n_allowed_portals;
} cp_iscsi_config;

#endif
