/* health_cmd.h - `csi-proxy-cli health [options] [group[/version]...]`
 * (see health.h for what "up" means):
 *
 *   -deadline D     all pipes must answer within D (default 5s)
 *   -config PATH    which groups and versions are served, and the kubelet
 *                   path the filesystem probe reads (default: the service's
 *                   default file %ProgramData%\csi-proxy\config.yaml when
 *                   it exists, else everything upstream serves)
 *   -socket-dir DIR native build: the Unix sockets' directory
 *   -serving        a pipe whose group's back end does not work (health
 *                   NOT_SERVING) counts as down; without it such a pipe is
 *                   up and its line says NOT_SERVING
 *
 * Prints one line per pipe; exit 0 when every one answers, 1 when any
 * does not, 3 for a bad command line or configuration file. */
#ifndef CP_CLI_HEALTH_CMD_H
#define CP_CLI_HEALTH_CMD_H

#include <stdint.h>

#include "service/config.h"

/* argv[0] is "health". */
int cp_cli_health(int argc, char **argv);

/* Go-style duration ("5s", "200ms", "1m30s") in nanoseconds; -1 if
 * malformed or not positive (main.c). */
int64_t cp_cli_parse_duration(const char *s);

/* Resolves account names in the configuration file: LookupAccountNameW
 * on Windows (entry_win.c), none in the native build (entry_posix.c). */
extern const cp_config_resolve_fn cp_cli_resolver;

#endif
