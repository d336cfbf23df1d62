/* model_fixture.c - the device model's YAML fixture (test/fixtures/
 * model.yaml documents the format). Keys are checked: a typo fails with
 * its line. Identity becomes the raw STORAGE_DEVICE_DESCRIPTOR /
 * STORAGE_DEVICE_ID_DESCRIPTOR bytes a disk reports ("STORAGE_DEVICE_
 * DESCRIPTOR structure", "STORAGE_DEVICE_ID_DESCRIPTOR structure",
 * "STORAGE_IDENTIFIER structure"). */
#include "test/model/model.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "host/storage_ids.h"
#include "sim/headbytes_sim.h"

typedef struct ld {
    yaml_document_t doc;
    const char *name;
    cp_error *e;
} ld;

static int bad(ld *l, const yaml_node_t *n, const char *what, const char *arg)
{
    return cp_error_set(l->e, CP_E_INVALID_ARGUMENT, "storage device model: %s line %lu: %s%s",
                        l->name, n != NULL ? (unsigned long)n->start_mark.line + 1 : 0ul, what,
                        arg);
}

static const char *scalar(const yaml_node_t *n)
{
    return n != NULL && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static yaml_node_t *get(ld *l, const yaml_node_t *map, const char *key)
{
    if (map == NULL || map->type != YAML_MAPPING_NODE)
        return NULL;
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
         p++) {
        const char *k = scalar(yaml_document_get_node(&l->doc, p->key));
        if (k != NULL && strcmp(k, key) == 0)
            return yaml_document_get_node(&l->doc, p->value);
    }
    return NULL;
}

static int keys(ld *l, const yaml_node_t *map, const char *const *ok)
{
    if (map == NULL || map->type != YAML_MAPPING_NODE)
        return bad(l, map, "expected a mapping", "");
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
         p++) {
        yaml_node_t *kn = yaml_document_get_node(&l->doc, p->key);
        const char *k = scalar(kn);
        bool found = false;
        for (size_t i = 0; k != NULL && ok[i] != NULL; i++)
            found = found || strcmp(k, ok[i]) == 0;
        if (!found)
            return bad(l, kn, "unknown key ", k != NULL ? k : "?");
    }
    return CP_OK;
}

/* A number with an optional KiB/MiB/GiB/TiB suffix. */
static int u64(ld *l, const yaml_node_t *map, const char *key, uint64_t *out)
{
    yaml_node_t *n = get(l, map, key);
    const char *s = scalar(n);
    if (n == NULL)
        return CP_OK;
    if (s == NULL || !isdigit((unsigned char)s[0]))
        return bad(l, n, "expected a number for ", key);
    char *end;
    uint64_t v = strtoull(s, &end, 10);
    static const char *const sfx[] = {"", "KiB", "MiB", "GiB", "TiB"};
    for (int i = 0; i < 5; i++)
        if (strcmp(end, sfx[i]) == 0) {
            *out = v << (10 * i);
            return CP_OK;
        }
    return bad(l, n, "bad size suffix for ", key);
}

static int flag(ld *l, const yaml_node_t *map, const char *key, bool *out)
{
    yaml_node_t *n = get(l, map, key);
    const char *s = scalar(n);
    if (n == NULL)
        return CP_OK;
    if (s != NULL && strcmp(s, "true") == 0)
        *out = true;
    else if (s != NULL && strcmp(s, "false") == 0)
        *out = false;
    else
        return bad(l, n, "expected true or false for ", key);
    return CP_OK;
}

static void wr32(uint8_t *p, uint32_t v)
{
    memcpy(p, &v, 4);
}

static void wr16(uint8_t *p, uint16_t v)
{
    memcpy(p, &v, 2);
}

static int guid(ld *l, const yaml_node_t *map, const char *key, GUID *g)
{
    yaml_node_t *n = get(l, map, key);
    uint8_t b[16];
    if (n == NULL || scalar(n) == NULL || !cp_guid_parse(scalar(n), b))
        return bad(l, n != NULL ? n : map, "expected a {GUID} for ", key);
    memcpy(g, b, sizeof(*g)); /* cp_guid_parse: memory layout */
    return CP_OK;
}

/* page83: [{code_set: binary|ascii|utf8, type: vendor_id|eui64|naa|
 * scsi_name_string, association: device|port|target, ascii|hex}] */
static int page83(ld *l, const yaml_node_t *list, m_disk *d)
{
    static const char *const k[] = {"code_set", "type", "association", "ascii", "hex", NULL};
    static const char *const cs[] = {"binary", "ascii", "utf8", NULL};
    static const uint32_t csv[] = {1, 2, 3};
    static const char *const ty[] = {"vendor_id", "eui64", "naa", "scsi_name_string", NULL};
    static const uint32_t tyv[] = {1, 2, 3, 8}; /* NAA: reported as StorageIdTypeFCPHName */
    static const char *const as[] = {"device", "port", "target", NULL};
    if (list->type != YAML_SEQUENCE_NODE)
        return bad(l, list, "page83 must be a list", "");
    size_t off = 12; /* Version, Size, NumberOfIdentifiers */
    uint32_t count = 0;
    for (yaml_node_item_t *it = list->data.sequence.items.start; it < list->data.sequence.items.top;
         it++) {
        yaml_node_t *n = yaml_document_get_node(&l->doc, *it);
        int rc = keys(l, n, k);
        if (rc != CP_OK)
            return rc;
        uint32_t v[3] = {1, 3, 0};
        const char *const *names[3] = {cs, ty, as};
        const uint32_t *vals[3] = {csv, tyv, NULL};
        const char *field[3] = {"code_set", "type", "association"};
        for (int f = 0; f < 3; f++) {
            const char *s = scalar(get(l, n, field[f]));
            if (s == NULL)
                continue;
            bool hit = false;
            for (uint32_t i = 0; names[f][i] != NULL; i++)
                if (strcmp(s, names[f][i]) == 0) {
                    v[f] = vals[f] != NULL ? vals[f][i] : i;
                    hit = true;
                }
            if (!hit)
                return bad(l, n, "unknown value for ", field[f]);
        }
        uint8_t val[256];
        size_t vlen = 0;
        const char *ascii = scalar(get(l, n, "ascii")), *hex = scalar(get(l, n, "hex"));
        if (ascii != NULL && strlen(ascii) <= sizeof(val)) {
            vlen = strlen(ascii);
            memcpy(val, ascii, vlen);
        } else if (hex != NULL) {
            for (const char *s = hex; *s != '\0'; s++) {
                if (*s == ' ')
                    continue;
                unsigned b;
                if (vlen == sizeof(val) || sscanf(s, "%2x", &b) != 1 ||
                    !isxdigit((unsigned char)s[1]))
                    return bad(l, n, "bad hex identifier", "");
                val[vlen++] = (uint8_t)b;
                s++;
            }
        } else {
            return bad(l, n, "an identifier needs ascii: or hex:", "");
        }
        size_t step = (20 + vlen + 3) / 4 * 4; /* STORAGE_IDENTIFIER: 20-byte header */
        if (off + step > M_DESC_MAX)
            return bad(l, n, "page83 too long", "");
        uint8_t *p = d->id + off;
        wr32(p, v[0]);
        wr32(p + 4, v[1]);
        wr16(p + 8, (uint16_t)vlen);
        wr16(p + 10, (uint16_t)step);
        wr32(p + 12, v[2]);
        memcpy(p + 16, val, vlen);
        off += step;
        count++;
    }
    if (count == 0)
        return CP_OK; /* no identification page: the query fails */
    wr32(d->id, 16);
    wr32(d->id + 4, (uint32_t)off);
    wr32(d->id + 8, count);
    d->id_len = off;
    return CP_OK;
}

/* vendor, product, serial -> STORAGE_DEVICE_DESCRIPTOR (40-byte fixed
 * part, the strings after it, offsets 0 when absent). */
static void device(ld *l, const yaml_node_t *n, m_disk *d)
{
    const char *s[3] = {scalar(get(l, n, "vendor")), scalar(get(l, n, "product")),
                        scalar(get(l, n, "serial"))};
    const size_t at[3] = {12, 16, 24};
    size_t off = 40;
    for (int i = 0; i < 3; i++) {
        if (s[i] == NULL || off + strlen(s[i]) + 1 > M_DESC_MAX)
            continue;
        memcpy(d->dev + off, s[i], strlen(s[i]) + 1);
        wr32(d->dev + at[i], (uint32_t)off);
        off += strlen(s[i]) + 1;
    }
    wr32(d->dev, 40);
    wr32(d->dev + 4, (uint32_t)off);
    d->dev[8] = d->cdrom ? 5 : 0; /* DeviceType: SCSI peripheral type */
    /* BusType: BusTypeNvme for a namespace (with a Storport SCSI address
     * when the fixture gives one, as stornvme's disks have), else
     * BusTypeScsi when addressed, BusTypeNvme when not */
    wr32(d->dev + 28, d->nvme || !d->has_scsi ? 17 : 1);
    d->dev_len = off;
}

static const GUID g_basic = {
    0xebd0a0a2, 0xb9e5, 0x4433, {0x87, 0xc0, 0x68, 0xb6, 0xb7, 0x26, 0x99, 0xc7}};
static const GUID g_esp = {
    0xc12a7328, 0xf81f, 0x11d2, {0xba, 0x4b, 0x00, 0xa0, 0xc9, 0x3e, 0xc9, 0x3b}};
static const GUID g_msr = {
    0xe3c9e316, 0x0b5c, 0x4db8, {0x81, 0x7d, 0xf9, 0x2d, 0xf0, 0x02, 0x15, 0xae}};
static const GUID g_rec = {
    0xde94bba4, 0x06d1, 0x4d40, {0xa1, 0x6a, 0xbf, 0xd5, 0x01, 0x79, 0xd6, 0xac}};

/* bytes: ["OFFSET:HEX", ...]: what the volume holds (headbytes_sim.h). */
static int head_bytes(ld *l, const yaml_node_t *list, m_vol *v)
{
    if (list->type != YAML_SEQUENCE_NODE)
        return bad(l, list, "bytes must be a list of \"OFFSET:HEX\"", "");
    for (yaml_node_item_t *it = list->data.sequence.items.start; it < list->data.sequence.items.top;
         it++) {
        const char *t = scalar(yaml_document_get_node(&l->doc, *it));
        const char *why = "";
        int rc = cp_sim_head_bytes(t != NULL ? t : "", &v->head, &v->head_len, &why);
        if (rc == CP_E_NOMEM)
            return bad(l, list, "out of memory", "");
        if (rc != CP_OK)
            return bad(l, list, why, t != NULL ? t : "");
    }
    return CP_OK;
}

static int volume(ld *l, const yaml_node_t *n, m_disk *d, m_part *p)
{
    static const char *const k[] = {"guid", "fs", "used", "drive", "bytes", NULL};
    int rc = keys(l, n, k);
    if (rc == CP_OK)
        rc = guid(l, n, "guid", &p->vol.guid);
    if (rc == CP_OK)
        rc = u64(l, n, "used", &p->vol.used);
    if (rc != CP_OK)
        return rc;
    const char *fs = scalar(get(l, n, "fs")), *drive = scalar(get(l, n, "drive"));
    p->vol.exists = true;
    if (fs != NULL) {
        snprintf(p->vol.fs, sizeof(p->vol.fs), "%s", fs);
        p->vol.fs_size = m_fs_size((uint64_t)p->pi.PartitionLength.QuadPart);
    }
    if (drive != NULL)
        p->vol.drive = (char)toupper((unsigned char)drive[0]);
    (void)d;
    yaml_node_t *b = get(l, n, "bytes");
    return b != NULL ? head_bytes(l, b, &p->vol) : CP_OK;
}

static int partitions(ld *l, const yaml_node_t *list, m_disk *d)
{
    static const char *const k[] = {"size", "type", "volume", NULL};
    if (list->type != YAML_SEQUENCE_NODE)
        return bad(l, list, "partitions must be a list", "");
    uint64_t at = M_MIB;
    for (yaml_node_item_t *it = list->data.sequence.items.start; it < list->data.sequence.items.top;
         it++) {
        yaml_node_t *n = yaml_document_get_node(&l->doc, *it);
        if (d->n_parts == M_MAX_PARTS)
            return bad(l, n, "too many partitions", "");
        m_part *p = &d->parts[d->n_parts];
        memset(p, 0, sizeof(*p));
        uint64_t size = 0;
        int rc = keys(l, n, k);
        if (rc == CP_OK)
            rc = u64(l, n, "size", &size);
        if (rc != CP_OK)
            return rc;
        const char *type = scalar(get(l, n, "type"));
        type = type != NULL ? type : "basic";
        PARTITION_INFORMATION_EX *pi = &p->pi;
        pi->PartitionStyle = d->style;
        pi->StartingOffset.QuadPart = (LONGLONG)at;
        pi->PartitionLength.QuadPart = (LONGLONG)size;
        pi->PartitionNumber = (DWORD)d->n_parts + 1;
        const GUID *tg = strcmp(type, "basic") == 0      ? &g_basic
                         : strcmp(type, "esp") == 0      ? &g_esp
                         : strcmp(type, "msr") == 0      ? &g_msr
                         : strcmp(type, "recovery") == 0 ? &g_rec
                                                         : NULL;
        if (tg == NULL || size == 0)
            return bad(l, n, "a partition needs a size and type basic, esp, msr or recovery", "");
        if (d->style == PARTITION_STYLE_GPT) {
            pi->Gpt.PartitionType = *tg;
            pi->Gpt.PartitionId.Data1 = 0x9a000000u | d->number << 8 | (unsigned)d->n_parts;
        } else {
            pi->Mbr.PartitionType = tg == &g_esp ? PARTITION_FAT32 : PARTITION_IFS;
            pi->Mbr.BootIndicator = tg == &g_esp;
            pi->Mbr.RecognizedPartition = TRUE;
            pi->Mbr.HiddenSectors = (DWORD)(at / d->sector);
        }
        yaml_node_t *v = get(l, n, "volume");
        if (v != NULL && (rc = volume(l, v, d, p)) != CP_OK)
            return rc;
        d->n_parts++;
        at = (at + size + M_MIB - 1) / M_MIB * M_MIB;
    }
    return CP_OK;
}

static int disk(ld *l, const yaml_node_t *n, m_disk *d, bool cdrom)
{
    static const char *const k[] = {
        "number",     "size",    "sector", "style",           "offline",   "read_only", "not_ready",
        "collision",  "grow_to", "vendor", "product",         "serial",    "page83",    "scsi",
        "partitions", "volume",  "nvme",   "write_protected", "wmi_fails", NULL};
    memset(d, 0, sizeof(*d));
    d->cdrom = cdrom;
    d->sector = cdrom ? 2048 : 512;
    uint64_t num = UINT64_MAX, sector = d->sector;
    int rc = keys(l, n, k);
    if (rc == CP_OK)
        rc = u64(l, n, "number", &num);
    if (rc == CP_OK)
        rc = u64(l, n, "size", &d->media);
    if (rc == CP_OK)
        rc = u64(l, n, "sector", &sector);
    if (rc == CP_OK)
        rc = u64(l, n, "grow_to", &d->grow_to);
    if (rc == CP_OK)
        rc = flag(l, n, "offline", &d->offline);
    if (rc == CP_OK)
        rc = flag(l, n, "read_only", &d->read_only);
    if (rc == CP_OK)
        rc = flag(l, n, "not_ready", &d->not_ready);
    if (rc == CP_OK)
        rc = flag(l, n, "collision", &d->collision);
    if (rc == CP_OK)
        rc = flag(l, n, "nvme", &d->nvme);
    rc = flag(l, n, "write_protected", &d->write_protected);
    if (rc == CP_OK)
        rc = flag(l, n, "wmi_fails", &d->wmi_fails);
    if (rc != CP_OK)
        return rc;
    if (num > 999 || d->media == 0 || (sector != 512 && sector != 4096 && sector != 2048))
        return bad(l, n, "a disk needs a number, a size and a sector of 512 or 4096", "");
    d->number = (uint32_t)num;
    d->sector = (uint32_t)sector;
    d->length = d->media;
    d->signature = 0x1000 + d->number;
    d->disk_id.Data1 = 0xd15c0000u + d->number;
    d->disk_id.Data3 = 0x4000;
    const char *style = scalar(get(l, n, "style"));
    d->style = style == NULL || strcmp(style, "raw") == 0 ? PARTITION_STYLE_RAW
               : strcmp(style, "gpt") == 0                ? PARTITION_STYLE_GPT
               : strcmp(style, "mbr") == 0                ? PARTITION_STYLE_MBR
                                                          : 99;
    if (d->style == 99)
        return bad(l, n, "style is raw, mbr or gpt", "");
    if (d->style == PARTITION_STYLE_GPT)
        m_gpt_usable(d);
    yaml_node_t *s = get(l, n, "scsi");
    if (s != NULL) {
        static const char *const sk[] = {"port", "path", "target", "lun", NULL};
        uint64_t v[4] = {0, 0, 0, 0};
        if ((rc = keys(l, s, sk)) != CP_OK)
            return rc;
        for (int i = 0; i < 4 && rc == CP_OK; i++)
            rc = u64(l, s, sk[i], &v[i]);
        if (rc != CP_OK)
            return rc;
        d->has_scsi = true;
        d->scsi = (SCSI_ADDRESS){sizeof(SCSI_ADDRESS), (UCHAR)v[0], (UCHAR)v[1], (UCHAR)v[2],
                                 (UCHAR)v[3]};
    }
    device(l, n, d);
    yaml_node_t *p83 = get(l, n, "page83");
    if (p83 != NULL && (rc = page83(l, p83, d)) != CP_OK)
        return rc;
    yaml_node_t *parts = get(l, n, "partitions");
    if (parts != NULL && !cdrom && (rc = partitions(l, parts, d)) != CP_OK)
        return rc;
    yaml_node_t *v = get(l, n, "volume");
    if (cdrom && v != NULL) { /* the medium's one volume */
        d->n_parts = 1;
        d->parts[0].pi.PartitionLength.QuadPart = (LONGLONG)d->media;
        if ((rc = volume(l, v, d, &d->parts[0])) != CP_OK)
            return rc;
    }
    return CP_OK;
}

static int load(ld *l)
{
    static const char *const k[] = {"volume_arrival_ms", "disks", "cdroms", NULL};
    yaml_node_t *root = yaml_document_get_root_node(&l->doc);
    int rc = keys(l, root, k);
    uint64_t arrival = 300;
    if (rc == CP_OK)
        rc = u64(l, root, "volume_arrival_ms", &arrival);
    if (rc != CP_OK)
        return rc;
    m_model.arrival_ms = (unsigned)arrival;
    const char *lists[2] = {"disks", "cdroms"};
    for (int c = 0; c < 2; c++) {
        yaml_node_t *list = get(l, root, lists[c]);
        if (list == NULL)
            continue;
        if (list->type != YAML_SEQUENCE_NODE)
            return bad(l, list, "expected a list: ", lists[c]);
        for (yaml_node_item_t *it = list->data.sequence.items.start;
             it < list->data.sequence.items.top; it++) {
            if (m_model.n_disks == M_MAX_DISKS)
                return bad(l, list, "too many disks", "");
            rc = disk(l, yaml_document_get_node(&l->doc, *it), &m_model.disks[m_model.n_disks],
                      c == 1);
            if (rc != CP_OK)
                return rc;
            m_model.n_disks++;
        }
    }
    return CP_OK;
}

int m_fixture_load(const char *path, cp_error *e)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return cp_error_set(e, CP_E_NOT_FOUND, "storage device model: cannot open %s", path);
    yaml_parser_t parser;
    ld l = {.name = path, .e = e};
    int rc = CP_OK;
    if (!yaml_parser_initialize(&parser)) {
        fclose(f);
        return cp_error_set(e, CP_E_NOMEM, "storage device model: out of memory");
    }
    yaml_parser_set_input_file(&parser, f);
    if (!yaml_parser_load(&parser, &l.doc))
        rc = cp_error_set(e, CP_E_INVALID_ARGUMENT, "storage device model: %s line %lu: %s", path,
                          (unsigned long)parser.problem_mark.line + 1,
                          parser.problem != NULL ? parser.problem : "bad YAML");
    else {
        rc = load(&l);
        yaml_document_delete(&l.doc);
    }
    yaml_parser_delete(&parser);
    fclose(f);
    return rc;
}
