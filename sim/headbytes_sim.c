/* headbytes_sim.c - a fixture's "OFFSET:HEX" volume bytes (headbytes_sim.h). */
#include "sim/headbytes_sim.h"

#include <stdlib.h>
#include <string.h>

#include "base/hex.h"
#include "base/status.h"

int cp_sim_head_bytes(const char *item, uint8_t **head, size_t *len, const char **why)
{
    char *end;
    unsigned long long at = strtoull(item, &end, 10);
    if (end == item || *end != ':' || end[1] == '\0' || strlen(end + 1) % 2 != 0 ||
        at + strlen(end + 1) / 2 > CP_SIM_HEAD_MAX) {
        *why = "bytes: not \"OFFSET:HEX\" within 256 KiB: ";
        return CP_E_INVALID_ARGUMENT;
    }
    if (*head == NULL && (*head = calloc(1, CP_SIM_HEAD_MAX)) == NULL)
        return CP_E_NOMEM;
    *len = CP_SIM_HEAD_MAX;
    for (const char *h = end + 1; *h != '\0'; h += 2, at++) {
        int hi = cp_hexval((unsigned char)h[0]), lo = cp_hexval((unsigned char)h[1]);
        if (hi < 0 || lo < 0) {
            *why = "bytes: not hex: ";
            return CP_E_INVALID_ARGUMENT;
        }
        (*head)[at] = (uint8_t)(hi << 4 | lo);
    }
    return CP_OK;
}
