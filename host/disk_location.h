/* disk_location.h - the ListDiskLocations rule for NVMe namespaces. Pure,
 * portable C (no windows.h): the disk group and the unit tests use it.
 *
 * Windows gives each disk its SCSI address (IOCTL_SCSI_GET_ADDRESS, made
 * into MSFT_Disk.Location). The namespaces of one NVMe controller (Azure
 * v6/v7 data disks) share the adapter and target, and nothing Microsoft
 * documents says their Lun differs: azuredisk found
 * Win32_DiskDrive.SCSILogicalUnit 0 on every one and derives the Azure LUN
 * as NSID - 1 itself. So, over one ListDiskLocations answer:
 *   1. an NVMe disk (STORAGE_DEVICE_DESCRIPTOR.BusType BusTypeNvme) whose
 *      namespace ID Windows reports (an NVME_SCSI_NAME_STRING identifier
 *      in its STORAGE_DEVICE_ID_DESCRIPTOR) answers LUN = NSID - 1;
 *   2. disks that would still answer the same (Adapter, Target, LUN) are
 *      all left out of the map (as upstream leaves out a disk whose
 *      location does not parse): a driver that picks the first disk at a
 *      LUN finds none, never another disk.
 * docs/reference/disk-locations.md holds the rule and its sources. */
#ifndef CP_HOST_DISK_LOCATION_H
#define CP_HOST_DISK_LOCATION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "host/storage_ids.h"

/* STORAGE_BUS_TYPE BusTypeNvme (winioctl.h). */
#define CP_BUS_TYPE_NVME 17

/* True when a STORAGE_DEVICE_DESCRIPTOR says BusTypeNvme (BusType u32 @28).
 * False for a short or missing buffer. */
bool cp_disk_bus_is_nvme(const uint8_t *dev_desc, size_t len);

/* The namespace ID from the first NVME_SCSI_NAME_STRING identifier of a
 * STORAGE_DEVICE_ID_DESCRIPTOR: a SCSI name string identifier of exactly
 * 68 bytes, PCIVendorID[4] ModelNumber[40] NamespaceID[4] SerialNumber[20]
 * (nvme.h), the namespace ID in four hexadecimal digits. 0 when there is
 * none (an "eui." or "naa." name string, a binary EUI-64, a bad buffer). */
uint32_t cp_disk_nvme_nsid(const uint8_t *id_desc, size_t len);

/* One disk of a ListDiskLocations answer. */
typedef struct cp_loc_entry {
    cp_disk_location loc; /* as cp_location_parse gave it */
    bool nvme;            /* cp_disk_bus_is_nvme */
    uint32_t nsid;        /* cp_disk_nvme_nsid; 0: unknown */
    bool keep;            /* out: false when the disk is left out */
} cp_loc_entry;

/* Applies rules 1 and 2 to e[0..n): rewrites loc.lun of NVMe disks with a
 * known namespace ID, then sets keep. */
void cp_disk_locations_settle(cp_loc_entry *e, size_t n);

#endif
