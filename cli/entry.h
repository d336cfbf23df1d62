/* entry.h - csi-proxy-cli's body, called by the platform's entry point:
 * entry_win.c (wmain: the command line in UTF-16, converted to UTF-8) or
 * entry_posix.c (main: argv as given). */
#ifndef CP_CLI_ENTRY_H
#define CP_CLI_ENTRY_H

/* argv in UTF-8; returns the process's exit code. */
int cp_cli_main(int argc, char **argv);

#endif
