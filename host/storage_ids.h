/* storage_ids.h - the identity strings drivers parse, made from the bytes
 * Windows reports, exactly as upstream csi-proxy makes them. Pure,
 * portable C (no windows.h): both storage hosts and the unit tests use it.
 *
 * Layouts are those of winioctl.h / ntddscsi.h (little-endian, natural
 * alignment), read byte by byte with bounds checks, so a short or corrupt
 * buffer yields "" rather than a read past its end:
 *
 *   STORAGE_DEVICE_ID_DESCRIPTOR   Version u32 @0, Size u32 @4,
 *                                  NumberOfIdentifiers u32 @8,
 *                                  Identifiers[] @12
 *   STORAGE_IDENTIFIER             CodeSet u32 @0, Type u32 @4,
 *                                  IdentifierSize u16 @8, NextOffset u16 @10,
 *                                  Association u32 @12, Identifier[] @16
 *   STORAGE_DEVICE_DESCRIPTOR      Version @0, Size @4, DeviceType u8 @8,
 *                                  DeviceTypeModifier @9, RemovableMedia @10,
 *                                  CommandQueueing @11, VendorIdOffset u32 @12,
 *                                  ProductIdOffset @16, ProductRevisionOffset
 *                                  @20, SerialNumberOffset @24, BusType @28,
 *                                  RawPropertiesLength @32, RawDeviceProperties @36
 *   SCSI_ADDRESS                   Length u32 @0, PortNumber u8 @4, PathId @5,
 *                                  TargetId @6, Lun @7
 *   GUID                           Data1 u32 LE @0, Data2 u16 LE @4,
 *                                  Data3 u16 LE @6, Data4[8] @8
 */
#ifndef CP_WINAPI_STORAGE_IDS_H
#define CP_WINAPI_STORAGE_IDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/status.h"

/* STORAGE_IDENTIFIER_CODE_SET, _TYPE, _ASSOCIATION (winioctl.h). */
enum {
    CP_SID_CODESET_BINARY = 1,
    CP_SID_CODESET_ASCII = 2,
    CP_SID_CODESET_UTF8 = 3,
};
enum {
    CP_SID_TYPE_VENDOR_SPECIFIC = 0,
    CP_SID_TYPE_VENDOR_ID = 1,
    CP_SID_TYPE_EUI64 = 2,
    CP_SID_TYPE_FCPH_NAME = 3,
    CP_SID_TYPE_PORT_RELATIVE = 4,
    CP_SID_TYPE_SCSI_NAME_STRING = 8,
};
enum {
    CP_SID_ASSOC_DEVICE = 0,
    CP_SID_ASSOC_PORT = 1,
    CP_SID_ASSOC_TARGET = 2,
};

#define CP_STORAGE_ID_HEADER 12    /* STORAGE_DEVICE_ID_DESCRIPTOR up to Identifiers */
#define CP_STORAGE_IDENT_HEADER 16 /* STORAGE_IDENTIFIER up to Identifier */
#define CP_STORAGE_DEVDESC_HEADER 36

/* Page 0x83 ID of ListDiskIDs / GetDiskNumberByName, upstream's rule: walk
 * the identifiers in order (NextOffset from each identifier's start); the
 * first one whose Association is "device" and whose CodeSet is ASCII or
 * binary wins: ASCII bytes as they are (a T10 vendor ID keeps its padding;
 * an NVMe "eui.<hex>" SCSI name string reported as ASCII comes out as that
 * text), binary bytes as lower-case hex (an EUI-64 or NAA designator). UTF-8
 * identifiers are skipped, as upstream skips them. No such identifier, or
 * an empty/short/corrupt buffer: "". An ASCII identifier is cut at its
 * first NUL byte (a protobuf string here is a C string).
 * Writes at most outlen-1 bytes and a NUL; returns the full length the
 * string would have (snprintf-style), so out is complete when the result
 * is < outlen. */
size_t cp_page83_format(const uint8_t *desc, size_t len, char *out, size_t outlen);

/* Serial number of ListDiskIDs (MSFT_Disk.SerialNumber): the NUL-terminated
 * string at SerialNumberOffset of a STORAGE_DEVICE_DESCRIPTOR, without the
 * leading and trailing blanks devices pad it with. Offset 0, an offset past
 * the buffer or a short buffer: "". Same return convention as above. */
size_t cp_serial_format(const uint8_t *desc, size_t len, char *out, size_t outlen);

/* MSFT_Disk.Location for a disk with a SCSI address:
 * "<prefix> : Adapter <port> : Port <path> : Target <target> : LUN <lun>".
 * prefix "" gives "Integrated". Same return convention. */
size_t cp_location_format(const char *prefix, unsigned port, unsigned path, unsigned target,
                          unsigned lun, char *out, size_t outlen);

/* Reads a SCSI_ADDRESS (IOCTL_SCSI_GET_ADDRESS output). False when len is
 * too short. */
bool cp_scsi_address_read(const uint8_t *buf, size_t len, unsigned *port, unsigned *path,
                          unsigned *target, unsigned *lun);

#define CP_LOCATION_FIELD_MAX 64

/* ListDiskLocations' fields, parsed from a Location string as upstream
 * does: split on ':'; at least 5 parts; each part, trimmed, split on single
 * spaces into exactly two words "Adapter N", "Bus N", "Target N", "LUN N"
 * fills that field (other two-word parts such as "Port 0" are ignored but
 * count as found; longer parts such as "PCI Slot 3" are ignored). Returns
 * true when the disk belongs in the map (5+ parts and a two-word part).
 * Values longer than CP_LOCATION_FIELD_MAX-1 bytes are cut. */
typedef struct cp_disk_location {
    char adapter[CP_LOCATION_FIELD_MAX];
    char bus[CP_LOCATION_FIELD_MAX];
    char target[CP_LOCATION_FIELD_MAX];
    char lun[CP_LOCATION_FIELD_MAX];
} cp_disk_location;

bool cp_location_parse(const char *location, cp_disk_location *out);

/* "\\?\Volume{xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx}\" for a 16-byte GUID in
 * memory layout, lower-case hex (what FindFirstVolumeW and
 * MSFT_Volume.UniqueId give). out needs CP_VOLUME_ID_LEN + 1 bytes. */
#define CP_VOLUME_ID_LEN 49
void cp_volume_id_format(const uint8_t guid[16], char out[CP_VOLUME_ID_LEN + 1]);

/* Checks that s is exactly a volume GUID path as above (hex in either
 * case, trailing backslash required) and writes the lower-case form to
 * norm (CP_VOLUME_ID_LEN + 1 bytes) and, if guid is not NULL, the GUID
 * bytes. CP_OK or CP_E_INVALID_ARGUMENT with e naming s. */
int cp_volume_id_parse(const char *s, char norm[CP_VOLUME_ID_LEN + 1], uint8_t guid[16],
                       cp_error *e);

/* Reads a "{xxxxxxxx-...}" or bare GUID text into its 16 bytes (fixtures,
 * WMI). True on success. */
bool cp_guid_parse(const char *s, uint8_t guid[16]);

/* Upstream's VolumeRegexp `Volume\{[\w-]*\}`: true when s contains
 * "Volume{" followed by word characters or '-' and a '}'. */
bool cp_has_volume_guid(const char *s);

/* Go's strconv.ParseUint(s, 10, 64) followed by the uint32 range check we
 * add (upstream truncates silently). CP_OK with *out set; otherwise
 * CP_E_INVALID_ARGUMENT and why is set to Go's error text,
 * `strconv.ParseUint: parsing "x": invalid syntax` / `...: value out of
 * range`, or ours for a value above 4294967295. */
int cp_parse_disk_number(const char *s, uint32_t *out, char *why, size_t whylen);

#endif
