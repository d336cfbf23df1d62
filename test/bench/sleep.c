/* sleep.c - the empty Wine process the bench compares csi-proxy.exe's
 * memory with: same toolchain and link flags, does nothing.
 *
 *   bench-sleep [MS]     sleeps MS milliseconds (default: forever)
 */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>

#include <stdlib.h>

int main(int argc, char **argv)
{
    Sleep(argc > 1 ? (DWORD)strtoul(argv[1], NULL, 10) : INFINITE);
    return 0;
}
