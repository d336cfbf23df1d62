/* smbios.h - reading strings out of a raw SMBIOS structure table, as
 * GetSystemFirmwareTable('RSMB') returns it (after its 8-byte
 * RawSMBIOSData header). Portable, so it is unit-tested on raw bytes. */
#ifndef CP_WINAPI_SMBIOS_H
#define CP_WINAPI_SMBIOS_H

#include <stddef.h>
#include <stdint.h>

#define CP_SMBIOS_TYPE_SYSTEM 1
#define CP_SMBIOS_SYSTEM_SERIAL 0x07 /* offset of the serial's string number */

/* The string that byte `offset` of the first structure of `type` names
 * (DMTF DSP0134: strings follow the formatted area, numbered from 1, the
 * set ends with two NULs). Bytes outside printable ASCII become '.', so
 * the result is valid UTF-8. Returns 1 and fills out when found; 0 when
 * there is no such structure, the byte is past its formatted area, or the
 * string number is 0 (out = ""); -1 when the table is malformed. */
int cp_smbios_string(const uint8_t *table, size_t len, uint8_t type, uint8_t offset, char *out,
                     size_t outlen);

#endif
