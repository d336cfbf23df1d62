/* storage_fixture_sim.c - the YAML fixture that seeds the storage
 * simulator (test/fixtures/storage.yaml documents the format). Keys are
 * checked (a typo fails loudly with its line), sizes take KiB..TiB
 * suffixes, and each disk's identity is turned into the raw
 * STORAGE_DEVICE_ID_DESCRIPTOR / STORAGE_DEVICE_DESCRIPTOR bytes a Windows
 * disk reports (storage_desc_sim.c), so storage_ids.c formats simulated
 * and real disks alike. */
#include "sim/storage_sim_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/headbytes_sim.h"

static int nomem(cp_error *e)
{
    return cp_error_set(e, CP_E_NOMEM, "storage simulator: out of memory");
}

typedef struct loader {
    yaml_document_t *doc;
    const char *name; /* file name for messages */
    cp_error *e;
} loader;

static int bad(loader *l, const yaml_node_t *n, const char *fmt, const char *what)
{
    return cp_error_set(l->e, CP_E_INVALID_ARGUMENT, "storage simulator: fixture %s line %lu: %s%s",
                        l->name, n != NULL ? (unsigned long)n->start_mark.line + 1 : 0UL, fmt,
                        what);
}

static const char *scalar(const yaml_node_t *n)
{
    return n != NULL && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static yaml_node_t *map_get(loader *l, const yaml_node_t *map, const char *key)
{
    if (map == NULL || map->type != YAML_MAPPING_NODE)
        return NULL;
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
         p++) {
        const char *k = scalar(yaml_document_get_node(l->doc, p->key));
        if (k != NULL && strcmp(k, key) == 0)
            return yaml_document_get_node(l->doc, p->value);
    }
    return NULL;
}

/* Every key of map must be in allowed (NULL-terminated): typos fail loudly. */
static int only_keys(loader *l, const yaml_node_t *map, const char *const *allowed)
{
    if (map == NULL || map->type != YAML_MAPPING_NODE)
        return bad(l, map, "expected a mapping", "");
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
         p++) {
        yaml_node_t *kn = yaml_document_get_node(l->doc, p->key);
        const char *k = scalar(kn);
        bool ok = false;
        for (size_t i = 0; k != NULL && allowed[i] != NULL; i++)
            ok = ok || strcmp(k, allowed[i]) == 0;
        if (!ok)
            return bad(l, kn, "unknown key ", k != NULL ? k : "(not a scalar)");
    }
    return CP_OK;
}

/* Integers with an optional KiB/MiB/GiB/TiB suffix. */
static int get_u64(loader *l, const yaml_node_t *map, const char *key, uint64_t *out)
{
    yaml_node_t *n = map_get(l, map, key);
    if (n == NULL)
        return CP_OK;
    const char *s = scalar(n);
    if (s == NULL || !isdigit((unsigned char)s[0]))
        return bad(l, n, "expected a number for ", key);
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    static const struct {
        const char *sfx;
        uint64_t mul;
    } units[] = {
        {"", 1}, {"KiB", 1024}, {"MiB", MIB}, {"GiB", 1024 * MIB}, {"TiB", 1024 * 1024 * MIB}};
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
        if (strcmp(end, units[i].sfx) == 0) {
            *out = (uint64_t)v * units[i].mul;
            return CP_OK;
        }
    return bad(l, n, "bad number (use an integer with KiB, MiB, GiB or TiB) for ", key);
}

static int get_u32(loader *l, const yaml_node_t *map, const char *key, uint32_t *out)
{
    uint64_t v = *out;
    int rc = get_u64(l, map, key, &v);
    if (rc == CP_OK && v > UINT32_MAX)
        return bad(l, map_get(l, map, key), "number too large for ", key);
    *out = (uint32_t)v;
    return rc;
}

static int get_bool(loader *l, const yaml_node_t *map, const char *key, bool *out)
{
    yaml_node_t *n = map_get(l, map, key);
    if (n == NULL)
        return CP_OK;
    const char *s = scalar(n);
    if (s != NULL && (strcmp(s, "true") == 0 || strcmp(s, "yes") == 0))
        *out = true;
    else if (s != NULL && (strcmp(s, "false") == 0 || strcmp(s, "no") == 0))
        *out = false;
    else
        return bad(l, n, "expected true or false for ", key);
    return CP_OK;
}

static const char *get_str(loader *l, const yaml_node_t *map, const char *key)
{
    return scalar(map_get(l, map, key));
}

static int hexdig(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c = (char)tolower((unsigned char)c);
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* "60 02 24 ..." or "600224..." (':' and '-' allowed as separators). */
static int hex_bytes(const char *s, uint8_t *out, size_t cap, size_t *n)
{
    size_t k = 0;
    for (; *s != '\0'; s++) {
        if (*s == ' ' || *s == ':' || *s == '-')
            continue;
        int hi = hexdig(s[0]), lo = hi < 0 ? -1 : hexdig(s[1]);
        if (hi < 0 || lo < 0 || k == cap)
            return -1;
        out[k++] = (uint8_t)(hi << 4 | lo);
        s++;
    }
    *n = k;
    return 0;
}

static int lookup(loader *l, const yaml_node_t *n, const char *key, const char *const *names,
                  const uint32_t *values, uint32_t *out)
{
    const char *s = get_str(l, n, key);
    if (s == NULL)
        return CP_OK;
    for (size_t i = 0; names[i] != NULL; i++)
        if (strcmp(s, names[i]) == 0) {
            *out = values[i];
            return CP_OK;
        }
    if (isdigit((unsigned char)s[0])) {
        *out = (uint32_t)strtoul(s, NULL, 10);
        return CP_OK;
    }
    return bad(l, map_get(l, n, key), "unknown value for ", key);
}

/* page83: a list of identifiers -> STORAGE_DEVICE_ID_DESCRIPTOR bytes. */
static int load_page83(loader *l, const yaml_node_t *list, sim_disk *d)
{
    static const char *const cs_names[] = {"binary", "ascii", "utf8", NULL};
    static const uint32_t cs_vals[] = {CP_SID_CODESET_BINARY, CP_SID_CODESET_ASCII,
                                       CP_SID_CODESET_UTF8};
    static const char *const type_names[] = {
        "vendor_specific",  "vendor_id", "eui64", "fcph_name", "port_relative", "naa",
        "scsi_name_string", NULL};
    /* NAA designators are reported as FCPH names (type 3) by Windows. */
    static const uint32_t type_vals[] = {CP_SID_TYPE_VENDOR_SPECIFIC, CP_SID_TYPE_VENDOR_ID,
                                         CP_SID_TYPE_EUI64,           CP_SID_TYPE_FCPH_NAME,
                                         CP_SID_TYPE_PORT_RELATIVE,   CP_SID_TYPE_FCPH_NAME,
                                         CP_SID_TYPE_SCSI_NAME_STRING};
    static const char *const as_names[] = {"device", "port", "target", NULL};
    static const uint32_t as_vals[] = {CP_SID_ASSOC_DEVICE, CP_SID_ASSOC_PORT, CP_SID_ASSOC_TARGET};
    static const char *const keys[] = {"code_set", "type", "association", "ascii", "hex", NULL};
    if (list->type != YAML_SEQUENCE_NODE)
        return bad(l, list, "page83 must be a list of identifiers", "");
    cp_sim_no_idents(d); /* an empty list still reports a descriptor */
    for (yaml_node_item_t *it = list->data.sequence.items.start; it < list->data.sequence.items.top;
         it++) {
        yaml_node_t *n = yaml_document_get_node(l->doc, *it);
        int rc = only_keys(l, n, keys);
        uint32_t cs = CP_SID_CODESET_BINARY, type = CP_SID_TYPE_FCPH_NAME,
                 assoc = CP_SID_ASSOC_DEVICE;
        if (rc == CP_OK)
            rc = lookup(l, n, "code_set", cs_names, cs_vals, &cs);
        if (rc == CP_OK)
            rc = lookup(l, n, "type", type_names, type_vals, &type);
        if (rc == CP_OK)
            rc = lookup(l, n, "association", as_names, as_vals, &assoc);
        if (rc != CP_OK)
            return rc;
        uint8_t val[256];
        size_t vlen = 0;
        const char *ascii = get_str(l, n, "ascii"), *hex = get_str(l, n, "hex");
        if (ascii != NULL && strlen(ascii) <= sizeof(val)) {
            vlen = strlen(ascii);
            memcpy(val, ascii, vlen);
        } else if (hex == NULL || hex_bytes(hex, val, sizeof(val), &vlen) != 0) {
            return bad(l, n, "an identifier needs ascii: TEXT or hex: BYTES (at most 256)", "");
        }
        if (cp_sim_add_ident(d, cs, type, assoc, val, vlen) != 0)
            return bad(l, n, "page83 identifiers too long", "");
    }
    return CP_OK;
}

/* vendor, product, serial -> STORAGE_DEVICE_DESCRIPTOR bytes (strings kept
 * byte for byte, padding included). */
static int load_device(loader *l, const yaml_node_t *disk, sim_disk *d)
{
    uint32_t bus = 0;
    int rc = get_u32(l, disk, "bus_type", &bus);
    if (rc != CP_OK)
        return rc;
    if (cp_sim_set_device(d, get_str(l, disk, "vendor"), get_str(l, disk, "product"),
                          get_str(l, disk, "serial"), bus) != 0)
        return bad(l, disk, "vendor/product/serial too long", "");
    return CP_OK;
}

/* roles: [system, boot, pagefile, crashdump] (any of them, any order). */
static int load_roles(loader *l, const yaml_node_t *list, unsigned *roles)
{
    static const struct {
        const char *name;
        unsigned bit;
    } names[] = {{"system", CP_VOLUME_ROLE_SYSTEM},
                 {"boot", CP_VOLUME_ROLE_BOOT},
                 {"pagefile", CP_VOLUME_ROLE_PAGEFILE},
                 {"crashdump", CP_VOLUME_ROLE_CRASHDUMP}};
    *roles = 0;
    if (list == NULL)
        return CP_OK;
    if (list->type != YAML_SEQUENCE_NODE)
        return bad(l, list, "roles must be a list of system, boot, pagefile, crashdump", "");
    for (yaml_node_item_t *it = list->data.sequence.items.start; it < list->data.sequence.items.top;
         it++) {
        yaml_node_t *n = yaml_document_get_node(l->doc, *it);
        const char *r = scalar(n);
        unsigned bit = 0;
        for (size_t i = 0; r != NULL && i < sizeof(names) / sizeof(names[0]); i++)
            if (strcmp(r, names[i].name) == 0)
                bit = names[i].bit;
        if (bit == 0)
            return bad(l, n, "unknown volume role (system, boot, pagefile, crashdump): ",
                       r != NULL ? r : "(not a scalar)");
        *roles |= bit;
    }
    return CP_OK;
}

/* volume bytes: ["OFFSET:HEX", ...] (headbytes_sim.h). */
static int load_bytes(loader *l, const yaml_node_t *list, sim_part *p)
{
    if (list->type != YAML_SEQUENCE_NODE)
        return bad(l, list, "bytes must be a list of \"OFFSET:HEX\"", "");
    for (yaml_node_item_t *it = list->data.sequence.items.start; it < list->data.sequence.items.top;
         it++) {
        yaml_node_t *n = yaml_document_get_node(l->doc, *it);
        const char *t = n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : "";
        const char *why = "";
        int rc = cp_sim_head_bytes(t, &p->head, &p->head_len, &why);
        if (rc == CP_E_NOMEM)
            return nomem(l->e);
        if (rc != CP_OK)
            return bad(l, n, why, t);
    }
    return CP_OK;
}

static int load_volume(loader *l, const yaml_node_t *v, sim_disk *d, sim_part *p)
{
    static const char *const keys[] = {"guid",  "fs",    "used",  "size",
                                       "drive", "roles", "bytes", NULL};
    int rc = only_keys(l, v, keys);
    if (rc != CP_OK)
        return rc;
    uint8_t g[16];
    const char *guid = get_str(l, v, "guid");
    if (guid == NULL || !cp_guid_parse(guid, g))
        return bad(l, v, "a volume needs guid: {xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx}", "");
    p->has_volume = true;
    cp_volume_id_format(g, p->id);
    const char *fs = get_str(l, v, "fs");
    if (fs != NULL && strcmp(fs, "RAW") != 0 && strcmp(fs, "") != 0)
        snprintf(p->fs, sizeof(p->fs), "%s", fs);
    p->vol_size = p->size;
    if ((rc = get_u64(l, v, "size", &p->vol_size)) != CP_OK ||
        (rc = get_u64(l, v, "used", &p->used)) != CP_OK)
        return rc;
    const char *drive = get_str(l, v, "drive");
    if (drive != NULL) {
        if (!isalpha((unsigned char)drive[0]) || (drive[1] != '\0' && drive[1] != ':'))
            return bad(l, v, "drive must be a letter", "");
        p->drive = (char)toupper((unsigned char)drive[0]);
    }
    (void)d;
    yaml_node_t *bytes = map_get(l, v, "bytes");
    if (bytes != NULL && (rc = load_bytes(l, bytes, p)) != CP_OK)
        return rc;
    return load_roles(l, map_get(l, v, "roles"), &p->roles);
}

static int load_partitions(loader *l, const yaml_node_t *list, sim_disk *d)
{
    static const char *const keys[] = {"number", "offset", "size", "type", "volume", NULL};
    static const char *const kinds[] = {"basic",    "system",   "esp",   "msr",
                                        "reserved", "recovery", "other", NULL};
    static const uint32_t kind_vals[] = {CP_PART_BASIC,    CP_PART_SYSTEM,   CP_PART_SYSTEM,
                                         CP_PART_RESERVED, CP_PART_RESERVED, CP_PART_OTHER,
                                         CP_PART_OTHER};
    if (list->type != YAML_SEQUENCE_NODE)
        return bad(l, list, "partitions must be a list", "");
    uint64_t next = MIB;
    for (yaml_node_item_t *it = list->data.sequence.items.start; it < list->data.sequence.items.top;
         it++) {
        yaml_node_t *n = yaml_document_get_node(l->doc, *it);
        int rc = only_keys(l, n, keys);
        sim_part p = {.number = (uint32_t)d->n_parts + 1, .offset = next};
        uint32_t kind = CP_PART_BASIC;
        if (rc == CP_OK)
            rc = get_u32(l, n, "number", &p.number);
        if (rc == CP_OK)
            rc = get_u64(l, n, "offset", &p.offset);
        if (rc == CP_OK)
            rc = get_u64(l, n, "size", &p.size);
        if (rc == CP_OK)
            rc = lookup(l, n, "type", kinds, kind_vals, &kind);
        if (rc != CP_OK)
            return rc;
        p.kind = (cp_part_kind)kind;
        if (p.size == 0 || p.offset + p.size > d->size)
            return bad(l, n, "a partition needs a size that fits on its disk", "");
        yaml_node_t *v = map_get(l, n, "volume");
        if (v != NULL && (rc = load_volume(l, v, d, &p)) != CP_OK) {
            free(p.head);
            return rc;
        }
        if (cp_sim_add_part(d, &p) != CP_OK) {
            free(p.head);
            return nomem(l->e);
        }
        next = (p.offset + p.size + MIB - 1) / MIB * MIB;
    }
    return CP_OK;
}

static int load_disk(loader *l, const yaml_node_t *n, sim_disk *d)
{
    static const char *const keys[] = {
        "number",     "size",      "grow_to",   "online",          "boot",   "system", "style",
        "vendor",     "product",   "serial",    "bus_type",        "page83", "scsi",   "location",
        "partitions", "not_ready", "read_only", "write_protected", NULL};
    static const char *const styles[] = {"raw", "mbr", "gpt", NULL};
    static const uint32_t style_vals[] = {CP_PART_STYLE_RAW, CP_PART_STYLE_MBR, CP_PART_STYLE_GPT};
    int rc = only_keys(l, n, keys);
    if (rc != CP_OK)
        return rc;
    if (map_get(l, n, "number") == NULL || map_get(l, n, "size") == NULL)
        return bad(l, n, "a disk needs number: and size:", "");
    d->online = true;
    uint32_t style = CP_PART_STYLE_RAW;
    if ((rc = get_u32(l, n, "number", &d->number)) != CP_OK ||
        (rc = get_u64(l, n, "size", &d->size)) != CP_OK ||
        (rc = get_u64(l, n, "grow_to", &d->grow_to)) != CP_OK ||
        (rc = get_bool(l, n, "online", &d->online)) != CP_OK ||
        (rc = get_bool(l, n, "boot", &d->boot)) != CP_OK ||
        (rc = get_bool(l, n, "system", &d->system)) != CP_OK ||
        (rc = get_bool(l, n, "not_ready", &d->not_ready)) != CP_OK ||
        (rc = get_bool(l, n, "read_only", &d->read_only)) != CP_OK ||
        (rc = get_bool(l, n, "write_protected", &d->write_protected)) != CP_OK ||
        (rc = lookup(l, n, "style", styles, style_vals, &style)) != CP_OK)
        return rc;
    d->style = (cp_part_style)style;
    yaml_node_t *p83 = map_get(l, n, "page83");
    if (p83 != NULL && (rc = load_page83(l, p83, d)) != CP_OK)
        return rc;
    if ((rc = load_device(l, n, d)) != CP_OK)
        return rc;
    const char *loc = get_str(l, n, "location");
    yaml_node_t *scsi = map_get(l, n, "scsi");
    if (loc != NULL) {
        snprintf(d->location, sizeof(d->location), "%s", loc);
    } else if (scsi != NULL) {
        static const char *const skeys[] = {"port", "path", "target", "lun", NULL};
        uint32_t a[4] = {0};
        if ((rc = only_keys(l, scsi, skeys)) != CP_OK ||
            (rc = get_u32(l, scsi, "port", &a[0])) != CP_OK ||
            (rc = get_u32(l, scsi, "path", &a[1])) != CP_OK ||
            (rc = get_u32(l, scsi, "target", &a[2])) != CP_OK ||
            (rc = get_u32(l, scsi, "lun", &a[3])) != CP_OK)
            return rc;
        cp_location_format("", a[0], a[1], a[2], a[3], d->location, sizeof(d->location));
    }
    yaml_node_t *parts = map_get(l, n, "partitions");
    if (parts != NULL && (rc = load_partitions(l, parts, d)) != CP_OK)
        return rc;
    if (d->n_parts > 0 && d->style == CP_PART_STYLE_RAW)
        return bad(l, n, "a disk with partitions needs style: gpt or mbr", "");
    return CP_OK;
}

int cp_sim_fixture_load(sim *s, yaml_parser_t *parser, const char *name, cp_error *e)
{
    yaml_document_t doc;
    if (!yaml_parser_load(parser, &doc))
        return cp_error_set(e, CP_E_INVALID_ARGUMENT, "storage simulator: fixture %s line %lu: %s",
                            name, (unsigned long)parser->problem_mark.line + 1,
                            parser->problem != NULL ? parser->problem : "YAML error");
    loader l = {.doc = &doc, .name = name, .e = e};
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    int rc = CP_OK;
    /* smb: and iscsi: seed the SMB and iSCSI simulators (smb_fixture_sim.c,
     * iscsi_fixture_sim.c), which read the same file. */
    static const char *const keys[] = {
        "latency_ms", "format_ms", "volume_arrival_ms", "disks", "smb", "iscsi", NULL};
    if (root != NULL && (rc = only_keys(&l, root, keys)) == CP_OK) {
        uint32_t lat = 0, fmt = 0, arrival = 0;
        rc = get_u32(&l, root, "latency_ms", &lat);
        if (rc == CP_OK)
            rc = get_u32(&l, root, "format_ms", &fmt);
        if (rc == CP_OK)
            rc = get_u32(&l, root, "volume_arrival_ms", &arrival);
        s->latency_ms = lat;
        s->format_ms = fmt;
        s->arrival_ms = arrival;
        yaml_node_t *disks = map_get(&l, root, "disks");
        if (rc == CP_OK && disks != NULL) {
            if (disks->type != YAML_SEQUENCE_NODE) {
                rc = bad(&l, disks, "disks must be a list", "");
            } else {
                size_t n =
                    (size_t)(disks->data.sequence.items.top - disks->data.sequence.items.start);
                s->disks = calloc(n > 0 ? n : 1, sizeof(*s->disks));
                if (s->disks == NULL)
                    rc = nomem(e);
                for (size_t i = 0; rc == CP_OK && i < n; i++) {
                    yaml_node_t *dn =
                        yaml_document_get_node(&doc, disks->data.sequence.items.start[i]);
                    if ((s->disks[i] = calloc(1, sizeof(*s->disks[i]))) == NULL) {
                        rc = nomem(e);
                        break;
                    }
                    s->n_disks = i + 1;
                    rc = load_disk(&l, dn, s->disks[i]);
                    for (size_t j = 0; rc == CP_OK && j < i; j++)
                        if (s->disks[j]->number == s->disks[i]->number)
                            rc = bad(&l, dn, "duplicate disk number", "");
                }
            }
        }
    }
    yaml_document_delete(&doc);
    return rc;
}
