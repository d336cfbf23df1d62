/* storage_ids.c - identity strings from raw Windows storage structures.
 * See storage_ids.h for the layouts and upstream's rules. */
#include "host/storage_ids.h"

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

/* Appends n bytes to out (snprintf-style accounting in *pos). */
static void put(char *out, size_t outlen, size_t *pos, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++, (*pos)++)
        if (*pos + 1 < outlen)
            out[*pos] = s[i];
    if (outlen > 0)
        out[*pos < outlen ? *pos : outlen - 1] = '\0';
}

size_t cp_page83_format(const uint8_t *desc, size_t len, char *out, size_t outlen)
{
    static const char hex[] = "0123456789abcdef";
    size_t pos = 0;
    put(out, outlen, &pos, "", 0);
    if (desc == NULL || len < CP_STORAGE_ID_HEADER)
        return 0;
    uint32_t count = rd32(desc + 8);
    size_t off = CP_STORAGE_ID_HEADER;
    for (uint32_t i = 0; i < count; i++) {
        if (off > len || len - off < CP_STORAGE_IDENT_HEADER)
            return 0;
        const uint8_t *id = desc + off;
        uint32_t code_set = rd32(id);
        uint16_t size = rd16(id + 8);
        uint16_t next = rd16(id + 10);
        uint32_t assoc = rd32(id + 12);
        if (assoc == CP_SID_ASSOC_DEVICE &&
            (code_set == CP_SID_CODESET_BINARY || code_set == CP_SID_CODESET_ASCII)) {
            if (len - off - CP_STORAGE_IDENT_HEADER < size)
                return 0; /* identifier runs past the buffer */
            const uint8_t *v = id + CP_STORAGE_IDENT_HEADER;
            if (code_set == CP_SID_CODESET_ASCII) {
                size_t n = 0;
                while (n < size && v[n] != 0)
                    n++;
                put(out, outlen, &pos, (const char *)v, n);
            } else {
                for (uint16_t k = 0; k < size; k++) {
                    char two[2] = {hex[v[k] >> 4], hex[v[k] & 15]};
                    put(out, outlen, &pos, two, 2);
                }
            }
            return pos;
        }
        /* Upstream would loop forever on NextOffset 0; we stop. */
        if (next == 0)
            return 0;
        off += next;
    }
    return 0;
}

static bool blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

size_t cp_serial_format(const uint8_t *desc, size_t len, char *out, size_t outlen)
{
    size_t pos = 0;
    put(out, outlen, &pos, "", 0);
    if (desc == NULL || len < CP_STORAGE_DEVDESC_HEADER)
        return 0;
    uint32_t off = rd32(desc + 24);
    if (off == 0 || off >= len)
        return 0;
    const char *s = (const char *)desc + off;
    size_t n = 0;
    while (off + n < len && s[n] != '\0')
        n++;
    while (n > 0 && blank(*s))
        s++, n--;
    while (n > 0 && blank(s[n - 1]))
        n--;
    put(out, outlen, &pos, s, n);
    return pos;
}

size_t cp_location_format(const char *prefix, unsigned port, unsigned path, unsigned target,
                          unsigned lun, char *out, size_t outlen)
{
    int n = snprintf(out, outlen, "%s : Adapter %u : Port %u : Target %u : LUN %u",
                     prefix != NULL && prefix[0] != '\0' ? prefix : "Integrated", port, path,
                     target, lun);
    return n < 0 ? 0 : (size_t)n;
}

bool cp_scsi_address_read(const uint8_t *buf, size_t len, unsigned *port, unsigned *path,
                          unsigned *target, unsigned *lun)
{
    if (buf == NULL || len < 8)
        return false;
    *port = buf[4];
    *path = buf[5];
    *target = buf[6];
    *lun = buf[7];
    return true;
}

/* Go's strings.TrimSpace for ASCII input. */
static void trim(const char **s, size_t *n)
{
    while (*n > 0 && blank(**s))
        (*s)++, (*n)--;
    while (*n > 0 && blank((*s)[*n - 1]))
        (*n)--;
}

static void copy_field(char dst[CP_LOCATION_FIELD_MAX], const char *s, size_t n)
{
    trim(&s, &n);
    if (n >= CP_LOCATION_FIELD_MAX)
        n = CP_LOCATION_FIELD_MAX - 1;
    memcpy(dst, s, n);
    dst[n] = '\0';
}

static bool word_is(const char *s, size_t n, const char *w)
{
    trim(&s, &n);
    return n == strlen(w) && memcmp(s, w, n) == 0;
}

bool cp_location_parse(const char *location, cp_disk_location *out)
{
    memset(out, 0, sizeof(*out));
    if (location == NULL)
        return false;
    size_t parts = 1;
    for (const char *p = location; *p != '\0'; p++)
        parts += *p == ':';
    if (parts < 5)
        return false;
    bool found = false;
    const char *part = location;
    for (;;) {
        const char *end = strchr(part, ':');
        size_t n = end != NULL ? (size_t)(end - part) : strlen(part);
        const char *item = part;
        trim(&item, &n);
        /* strings.Split(item, " ") must give exactly two words. */
        const char *sp = memchr(item, ' ', n);
        if (sp != NULL && memchr(sp + 1, ' ', n - (size_t)(sp + 1 - item)) == NULL) {
            found = true;
            size_t klen = (size_t)(sp - item);
            const char *val = sp + 1;
            size_t vlen = n - klen - 1;
            if (word_is(item, klen, "Adapter"))
                copy_field(out->adapter, val, vlen);
            else if (word_is(item, klen, "Bus"))
                copy_field(out->bus, val, vlen);
            else if (word_is(item, klen, "Target"))
                copy_field(out->target, val, vlen);
            else if (word_is(item, klen, "LUN"))
                copy_field(out->lun, val, vlen);
        }
        if (end == NULL)
            break;
        part = end + 1;
    }
    return found;
}

void cp_volume_id_format(const uint8_t g[16], char out[CP_VOLUME_ID_LEN + 1])
{
    snprintf(out, CP_VOLUME_ID_LEN + 1,
             "\\\\?\\Volume{%08x-%04x-%04x-%02x%02x-%02x%02x%02x%02x%02x%02x}\\", (unsigned)rd32(g),
             (unsigned)rd16(g + 4), (unsigned)rd16(g + 6), g[8], g[9], g[10], g[11], g[12], g[13],
             g[14], g[15]);
}

/* Reads "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (36 chars) at s. */
static bool guid36(const char *s, uint8_t g[16])
{
    uint8_t b[16];
    size_t k = 0;
    for (size_t i = 0; i < 36; i++) {
        if (i == 8 || i == 13 || i == 18 || i == 23) {
            if (s[i] != '-')
                return false;
            continue;
        }
        int hi = cp_hexval(s[i]);
        int lo = hi < 0 ? -1 : cp_hexval(s[i + 1]);
        if (hi < 0 || lo < 0)
            return false;
        b[k++] = (uint8_t)(hi << 4 | lo);
        i++;
    }
    /* text order -> memory layout: Data1..3 are little-endian */
    uint8_t m[16] = {b[3], b[2], b[1], b[0], b[5], b[4], b[7], b[6]};
    memcpy(m + 8, b + 8, 8);
    memcpy(g, m, 16);
    return true;
}

bool cp_guid_parse(const char *s, uint8_t guid[16])
{
    if (s == NULL)
        return false;
    size_t n = strlen(s);
    if (n == 38 && s[0] == '{' && s[37] == '}')
        return guid36(s + 1, guid);
    return n == 36 && guid36(s, guid);
}

int cp_volume_id_parse(const char *s, char norm[CP_VOLUME_ID_LEN + 1], uint8_t guid[16],
                       cp_error *e)
{
    static const char head[] = "\\\\?\\Volume{";
    uint8_t g[16];
    size_t hl = sizeof(head) - 1;
    if (s == NULL || strlen(s) != CP_VOLUME_ID_LEN || strncmp(s, head, hl) != 0 ||
        !guid36(s + hl, g) || s[hl + 36] != '}' || s[hl + 37] != '\\')
        return cp_error_set(e, CP_E_INVALID_ARGUMENT,
                            "volume id %s is not a volume GUID path (\\\\?\\Volume{GUID}\\)",
                            s != NULL ? s : "(null)");
    cp_volume_id_format(g, norm);
    if (guid != NULL)
        memcpy(guid, g, 16);
    return CP_OK;
}

bool cp_has_volume_guid(const char *s)
{
    for (const char *p = strstr(s, "Volume{"); p != NULL; p = strstr(p + 1, "Volume{")) {
        const char *q = p + 7;
        while ((*q >= '0' && *q <= '9') || (*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') ||
               *q == '_' || *q == '-')
            q++;
        if (*q == '}')
            return true;
    }
    return false;
}

/* strconv.Quote for the ASCII a disk ID holds; other bytes as \xNN. */
static void go_quote(const char *s, char *out, size_t outlen)
{
    size_t pos = 0;
    put(out, outlen, &pos, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; p++) {
        char buf[8];
        if (*p == '"' || *p == '\\') {
            buf[0] = '\\', buf[1] = (char)*p;
            put(out, outlen, &pos, buf, 2);
        } else if (*p >= 0x20 && *p < 0x7f) {
            put(out, outlen, &pos, (const char *)p, 1);
        } else {
            snprintf(buf, sizeof(buf), "\\x%02x", *p);
            put(out, outlen, &pos, buf, 4);
        }
    }
    put(out, outlen, &pos, "\"", 1);
}

int cp_parse_disk_number(const char *s, uint32_t *out, char *why, size_t whylen)
{
    char q[128];
    go_quote(s != NULL ? s : "", q, sizeof(q));
    if (s == NULL || *s == '\0') {
        snprintf(why, whylen, "strconv.ParseUint: parsing %s: invalid syntax", q);
        return CP_E_INVALID_ARGUMENT;
    }
    uint64_t v = 0;
    /* Go stops at the first bad byte or at the first overflow. */
    for (const char *p = s; *p != '\0'; p++) {
        if (*p < '0' || *p > '9') {
            snprintf(why, whylen, "strconv.ParseUint: parsing %s: invalid syntax", q);
            return CP_E_INVALID_ARGUMENT;
        }
        unsigned d = (unsigned)(*p - '0');
        if (v > (UINT64_MAX - d) / 10) {
            snprintf(why, whylen, "strconv.ParseUint: parsing %s: value out of range", q);
            return CP_E_INVALID_ARGUMENT;
        }
        v = v * 10 + d;
    }
    if (v > UINT32_MAX) {
        snprintf(why, whylen, "disk number %s is out of range (at most 4294967295)", s);
        return CP_E_INVALID_ARGUMENT;
    }
    *out = (uint32_t)v;
    return CP_OK;
}
