/* health.h - each group's back-end probe for the standard health service
 * (cp_service.health, dispatch/health.h). */
#ifndef CP_GROUPS_HEALTH_H
#define CP_GROUPS_HEALTH_H

#include "base/status.h"

typedef int (*cp_health_probe_fn)(void *ctx, cp_error *e);

/* The probe of group ("filesystem", ...) given the group's context;
 * NULL for a group with none. */
cp_health_probe_fn cp_groups_health_probe(const char *group);

#endif
