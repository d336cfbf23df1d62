/* entry_posix.c - the native csi-proxy-cli's entry point. */
#include "cli/entry.h"
#include "cli/health_cmd.h"

const cp_config_resolve_fn cp_cli_resolver = NULL; /* well-known names only */

int main(int argc, char **argv)
{
    return cp_cli_main(argc, argv);
}
