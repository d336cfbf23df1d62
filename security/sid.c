/* sid.c - see sid.h. */
#include "security/sid.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* Parses a decimal (or, with hex_ok, 0x-hex) number up to max from *p;
 * advances *p. */
static bool parse_num(const char **p, uint64_t max, bool hex_ok, uint64_t *out)
{
    const char *s = *p;
    uint64_t v = 0;
    int base = 10;
    if (hex_ok && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        base = 16;
        s += 2;
    }
    const char *start = s;
    for (;; s++) {
        int d;
        if (*s >= '0' && *s <= '9')
            d = *s - '0';
        else if (base == 16 && isxdigit((unsigned char)*s))
            d = tolower((unsigned char)*s) - 'a' + 10;
        else
            break;
        if (v > (max - (uint64_t)d) / (uint64_t)base)
            return false;
        v = v * (uint64_t)base + (uint64_t)d;
    }
    if (s == start || s - start > 20)
        return false;
    *p = s;
    *out = v;
    return true;
}

bool cp_sid_parse(const char *s, cp_sid *out)
{
    if (s == NULL || (s[0] != 'S' && s[0] != 's') || s[1] != '-')
        return false;
    const char *p = s + 2;
    uint64_t v;
    if (!parse_num(&p, 255, false, &v) || v != 1 || *p++ != '-')
        return false;
    cp_sid sid = {.revision = 1};
    if (!parse_num(&p, 0xffffffffffffULL, true, &sid.authority))
        return false;
    while (*p == '-') {
        p++;
        if (sid.n_sub == CP_SID_MAX_SUB || !parse_num(&p, 0xffffffffULL, false, &v))
            return false;
        sid.sub[sid.n_sub++] = (uint32_t)v;
    }
    if (*p != '\0' || sid.n_sub == 0)
        return false;
    *out = sid;
    return true;
}

const char *cp_sid_format(const cp_sid *sid, char *buf, size_t cap)
{
    int n = sid->authority >> 32 ? snprintf(buf, cap, "S-%u-0x%012llX", sid->revision,
                                            (unsigned long long)sid->authority)
                                 : snprintf(buf, cap, "S-%u-%llu", sid->revision,
                                            (unsigned long long)sid->authority);
    for (unsigned i = 0; i < sid->n_sub && n > 0 && (size_t)n < cap; i++)
        n += snprintf(buf + n, cap - (size_t)n, "-%lu", (unsigned long)sid->sub[i]);
    return buf;
}

bool cp_sid_equal(const cp_sid *a, const cp_sid *b)
{
    if (a->revision != b->revision || a->n_sub != b->n_sub || a->authority != b->authority)
        return false;
    return memcmp(a->sub, b->sub, a->n_sub * sizeof(a->sub[0])) == 0;
}

/* ---- tables ------------------------------------------------------------ */

typedef struct named_sid {
    const char *name;
    const char *sid; /* NULL: valid alias that needs a domain */
} named_sid;

static const named_sid names[] = {
    {"SYSTEM", "S-1-5-18"},
    {"NT AUTHORITY\\SYSTEM", "S-1-5-18"},
    {"LocalSystem", "S-1-5-18"},
    {"LOCAL SERVICE", "S-1-5-19"},
    {"NT AUTHORITY\\LOCAL SERVICE", "S-1-5-19"},
    {"NETWORK SERVICE", "S-1-5-20"},
    {"NT AUTHORITY\\NETWORK SERVICE", "S-1-5-20"},
    {"Authenticated Users", "S-1-5-11"},
    {"NT AUTHORITY\\Authenticated Users", "S-1-5-11"},
    {"INTERACTIVE", "S-1-5-4"},
    {"NT AUTHORITY\\INTERACTIVE", "S-1-5-4"},
    {"Everyone", "S-1-1-0"},
    {"Administrators", "S-1-5-32-544"},
    {"BUILTIN\\Administrators", "S-1-5-32-544"},
    {"Users", "S-1-5-32-545"},
    {"BUILTIN\\Users", "S-1-5-32-545"},
    {"ContainerAdministrator", "S-1-5-93-2-1"},
    {"User Manager\\ContainerAdministrator", "S-1-5-93-2-1"},
    {"ContainerUser", "S-1-5-93-2-2"},
    {"User Manager\\ContainerUser", "S-1-5-93-2-2"},
};

/* From Microsoft's "SID strings" table. */
static const named_sid aliases[] = {
    {"AA", "S-1-5-32-579"}, {"AC", "S-1-15-2-1"},   {"AN", "S-1-5-7"},
    {"AO", "S-1-5-32-548"}, {"AP", NULL},           {"AU", "S-1-5-11"},
    {"BA", "S-1-5-32-544"}, {"BG", "S-1-5-32-546"}, {"BO", "S-1-5-32-551"},
    {"BU", "S-1-5-32-545"}, {"CA", NULL},           {"CD", "S-1-5-32-574"},
    {"CG", "S-1-3-1"},      {"CN", NULL},           {"CO", "S-1-3-0"},
    {"CY", "S-1-5-32-569"}, {"DA", NULL},           {"DC", NULL},
    {"DD", NULL},           {"DG", NULL},           {"DU", NULL},
    {"EA", NULL},           {"ED", "S-1-5-9"},      {"EK", NULL},
    {"ER", "S-1-5-32-573"}, {"ES", "S-1-5-32-576"}, {"HA", "S-1-5-32-578"},
    {"HI", "S-1-16-12288"}, {"IS", "S-1-5-32-568"}, {"IU", "S-1-5-4"},
    {"KA", NULL},           {"LA", NULL},           {"LG", NULL},
    {"LS", "S-1-5-19"},     {"LU", "S-1-5-32-559"}, {"LW", "S-1-16-4096"},
    {"ME", "S-1-16-8192"},  {"MP", "S-1-16-8448"},  {"MS", "S-1-5-32-577"},
    {"MU", "S-1-5-32-558"}, {"NO", "S-1-5-32-556"}, {"NS", "S-1-5-20"},
    {"NU", "S-1-5-2"},      {"OW", "S-1-3-4"},      {"PA", NULL},
    {"PO", "S-1-5-32-550"}, {"PS", "S-1-5-10"},     {"PU", "S-1-5-32-547"},
    {"RA", "S-1-5-32-575"}, {"RC", "S-1-5-12"},     {"RD", "S-1-5-32-555"},
    {"RE", "S-1-5-32-552"}, {"RM", "S-1-5-32-580"}, {"RO", NULL},
    {"RS", NULL},           {"RU", "S-1-5-32-554"}, {"SA", NULL},
    {"SI", "S-1-16-16384"}, {"SO", "S-1-5-32-549"}, {"SS", "S-1-18-2"},
    {"SU", "S-1-5-6"},      {"SY", "S-1-5-18"},     {"UD", "S-1-5-84-0-0-0-0-0"},
    {"WD", "S-1-1-0"},      {"WR", "S-1-5-33"},
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

bool cp_sid_well_known_name(const char *name, cp_sid *out)
{
    for (size_t i = 0; i < COUNT(names); i++)
        if (strcasecmp(names[i].name, name) == 0)
            return cp_sid_parse(names[i].sid, out);
    return false;
}

static const named_sid *find_alias(const char *a)
{
    if (strlen(a) != 2)
        return NULL;
    for (size_t i = 0; i < COUNT(aliases); i++)
        if (strcmp(aliases[i].name, a) == 0)
            return &aliases[i];
    return NULL;
}

bool cp_sid_alias_known(const char *alias2)
{
    return find_alias(alias2) != NULL;
}

bool cp_sid_alias(const char *alias2, cp_sid *out)
{
    const named_sid *a = find_alias(alias2);
    return a != NULL && a->sid != NULL && cp_sid_parse(a->sid, out);
}

const char *cp_sid_alias_of(const cp_sid *sid)
{
    for (size_t i = 0; i < COUNT(aliases); i++) {
        cp_sid s;
        if (aliases[i].sid != NULL && cp_sid_parse(aliases[i].sid, &s) && cp_sid_equal(&s, sid))
            return aliases[i].name;
    }
    return NULL;
}
