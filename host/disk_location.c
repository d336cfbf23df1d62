/* disk_location.c - the ListDiskLocations rule for NVMe namespaces
 * (disk_location.h). */
#include "host/disk_location.h"

#include <stdio.h>
#include <string.h>

#include "base/hex.h"

static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint16_t rd16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

bool cp_disk_bus_is_nvme(const uint8_t *dev_desc, size_t len)
{
    return dev_desc != NULL && len >= 32 && rd32(dev_desc + 28) == CP_BUS_TYPE_NVME;
}

/* NVME_SCSI_NAME_STRING: PCIVendorID[4], ModelNumber[40], NamespaceID[4],
 * SerialNumber[20]. */
#define NAME_STRING_LEN 68
#define NAME_STRING_NSID 44

uint32_t cp_disk_nvme_nsid(const uint8_t *id_desc, size_t len)
{
    if (id_desc == NULL || len < CP_STORAGE_ID_HEADER)
        return 0;
    uint32_t count = rd32(id_desc + 8);
    size_t off = CP_STORAGE_ID_HEADER;
    for (uint32_t i = 0; i < count && off + CP_STORAGE_IDENT_HEADER <= len; i++) {
        const uint8_t *p = id_desc + off;
        uint32_t code_set = rd32(p), type = rd32(p + 4);
        uint16_t size = rd16(p + 8), next = rd16(p + 10);
        if (off + CP_STORAGE_IDENT_HEADER + size > len)
            return 0;
        if (type == CP_SID_TYPE_SCSI_NAME_STRING && size == NAME_STRING_LEN &&
            (code_set == CP_SID_CODESET_ASCII || code_set == CP_SID_CODESET_UTF8)) {
            const uint8_t *ns = p + CP_STORAGE_IDENT_HEADER + NAME_STRING_NSID;
            uint32_t v = 0;
            int k;
            for (k = 0; k < 4 && cp_hexval(ns[k]) >= 0; k++)
                v = v << 4 | (uint32_t)cp_hexval(ns[k]);
            if (k == 4 && v != 0)
                return v;
        }
        if (next == 0)
            return 0;
        off += next;
    }
    return 0;
}

static bool same_place(const cp_disk_location *a, const cp_disk_location *b)
{
    return strcmp(a->adapter, b->adapter) == 0 && strcmp(a->target, b->target) == 0 &&
           strcmp(a->lun, b->lun) == 0;
}

void cp_disk_locations_settle(cp_loc_entry *e, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        e[i].keep = true;
        if (e[i].nvme && e[i].nsid != 0)
            snprintf(e[i].loc.lun, sizeof(e[i].loc.lun), "%u", (unsigned)(e[i].nsid - 1));
    }
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++)
            if (same_place(&e[i].loc, &e[j].loc))
                e[i].keep = e[j].keep = false;
}
