/* storage_desc_sim.c - a simulated disk's identity as the raw bytes a
 * Windows disk reports: STORAGE_DEVICE_ID_DESCRIPTOR (the page 83
 * identifiers) and STORAGE_DEVICE_DESCRIPTOR (vendor, product, serial,
 * bus type), little-endian, so storage_ids.c reads simulated and real
 * disks alike. For the fixture (storage_fixture_sim.c) and the disks that
 * arrive at run time (storage_hotplug_sim.c). */
#include <string.h>

#include "sim/storage_sim_internal.h"

static void wr32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8), p[2] = (uint8_t)(v >> 16),
    p[3] = (uint8_t)(v >> 24);
}

static void wr16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8);
}

static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

void cp_sim_no_idents(sim_disk *d)
{
    wr32(d->id_desc, CP_STORAGE_ID_HEADER + 4);
    wr32(d->id_desc + 4, CP_STORAGE_ID_HEADER);
    wr32(d->id_desc + 8, 0);
    d->id_desc_len = CP_STORAGE_ID_HEADER;
}

int cp_sim_add_ident(sim_disk *d, uint32_t code_set, uint32_t type, uint32_t assoc,
                     const uint8_t *val, size_t len)
{
    size_t off = d->id_desc_len > 0 ? d->id_desc_len : CP_STORAGE_ID_HEADER;
    size_t step = (CP_STORAGE_IDENT_HEADER + len + 3) / 4 * 4;
    if (len > 0xffff || off + step > DESC_MAX)
        return -1;
    uint8_t *p = d->id_desc + off;
    wr32(p, code_set);
    wr32(p + 4, type);
    wr16(p + 8, (uint16_t)len);
    wr16(p + 10, (uint16_t)step);
    wr32(p + 12, assoc);
    memcpy(p + CP_STORAGE_IDENT_HEADER, val, len);
    uint32_t count = d->id_desc_len > 0 ? rd32(d->id_desc + 8) : 0;
    wr32(d->id_desc, CP_STORAGE_ID_HEADER + 4);
    wr32(d->id_desc + 4, (uint32_t)(off + step));
    wr32(d->id_desc + 8, count + 1);
    d->id_desc_len = off + step;
    return 0;
}

int cp_sim_set_device(sim_disk *d, const char *vendor, const char *product, const char *serial,
                      uint32_t bus)
{
    uint8_t *p = d->dev_desc;
    size_t off = CP_STORAGE_DEVDESC_HEADER;
    const char *strs[3] = {vendor, product, serial};
    const size_t at[3] = {12, 16, 24};
    memset(p, 0, CP_STORAGE_DEVDESC_HEADER);
    for (int i = 0; i < 3; i++) {
        if (strs[i] == NULL)
            continue;
        size_t n = strlen(strs[i]) + 1;
        if (off + n > DESC_MAX)
            return -1;
        memcpy(p + off, strs[i], n);
        wr32(p + at[i], (uint32_t)off);
        off += n;
    }
    wr32(p, 40); /* sizeof(STORAGE_DEVICE_DESCRIPTOR) */
    wr32(p + 4, (uint32_t)off);
    wr32(p + 28, bus);
    d->dev_desc_len = off;
    return 0;
}
