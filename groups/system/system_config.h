/* system_config.h - the system group's own settings (groups.system in the
 * configuration file; service/config.c fills them). Portable C. */
#ifndef CP_SYSTEM_CONFIG_H
#define CP_SYSTEM_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

typedef struct cp_system_config {
    /* groups.system.allowedServices: when services_restricted (the key was
     * given, even as []), the only services StartService/StopService may
     * touch. The groups copy the list. */
    bool services_restricted;
    const char *const *allowed_services;
    size_t n_allowed_services;
} cp_system_config;

#endif
