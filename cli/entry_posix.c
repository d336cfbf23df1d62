/* entry_posix.c - the native csi-proxy-cli's entry point. */
#include "cli/entry.h"

int main(int argc, char **argv)
{
    return cp_cli_main(argc, argv);
}
