/* sddl.c - see sddl.h. A recursive-descent reading of the subset. */
#include "security/sddl.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

typedef struct rd {
    const char *s, *p;
    char *why;
    size_t cap;
    bool failed;
} rd;

static bool fail(rd *r, const char *fmt, const char *arg)
{
    if (!r->failed) {
        char msg[320];
        snprintf(msg, sizeof(msg), fmt, arg);
        snprintf(r->why, r->cap, "at offset %d: %s", (int)(r->p - r->s), msg);
    }
    r->failed = true;
    return false;
}

static bool in_list(const char *two, const char *const *list)
{
    for (; *list != NULL; list++)
        if (strncmp(*list, two, 2) == 0)
            return true;
    return false;
}

/* A SID: "S-1-..." up to the next ';' or ')' (in an ACE) or the next
 * component letter (O:/G:), or a two-letter alias. */
static bool read_sid(rd *r, bool in_ace)
{
    char buf[CP_SID_STR_MAX];
    size_t n = 0;
    if (r->p[0] == 'S' && r->p[1] == '-') {
        while (r->p[n] != '\0' && r->p[n] != ';' && r->p[n] != ')' && n + 1 < sizeof(buf) &&
               (in_ace || !(isupper((unsigned char)r->p[n]) && r->p[n + 1] == ':' && n > 0)))
            n++;
        memcpy(buf, r->p, n);
        buf[n] = '\0';
        cp_sid sid;
        if (!cp_sid_parse(buf, &sid))
            return fail(r, "malformed SID \"%s\"", buf);
        r->p += n;
        return true;
    }
    if (!isupper((unsigned char)r->p[0]) || !isupper((unsigned char)r->p[1]))
        return fail(r, "expected a SID (S-1-... or a two-letter alias)%s", "");
    memcpy(buf, r->p, 2);
    buf[2] = '\0';
    if (!cp_sid_alias_known(buf))
        return fail(r, "unknown SID alias \"%s\"", buf);
    r->p += 2;
    return true;
}

/* Reads two-letter codes from list until term; returns how many. */
static int read_codes(rd *r, const char *const *list, char term, const char *what)
{
    int n = 0;
    while (*r->p != term) {
        if (r->p[0] == '\0' || r->p[1] == '\0' || !in_list(r->p, list)) {
            char code[3] = {r->p[0], r->p[0] != '\0' ? r->p[1] : '\0', '\0'};
            char msg[64];
            snprintf(msg, sizeof(msg), "unknown %s \"%%s\"", what);
            fail(r, msg, code);
            return -1;
        }
        r->p += 2;
        n++;
    }
    return n;
}

static const char *const ace_flags[] = {"CI", "OI", "NP", "IO", "ID", "SA", "FA", NULL};
static const char *const rights[] = {"GA", "GR", "GW", "GX", "RC", "SD", "WD", "WO", "RP", "WP",
                                     "CC", "DC", "LC", "SW", "LO", "DT", "CR", "FA", "FR", "FW",
                                     "FX", "KA", "KR", "KW", "KX", "NR", "NW", "NX", NULL};

/* (type;flags;rights;;;sid). Returns the ACE type letter or 0. */
static char read_ace(rd *r, bool sacl)
{
    if (*r->p++ != '(')
        return fail(r, "expected '('%s", ""), 0;
    char type = 0;
    if (!sacl && (r->p[0] == 'A' || r->p[0] == 'D') && r->p[1] == ';')
        type = r->p[0];
    else if (sacl && strncmp(r->p, "AU;", 3) == 0)
        /* "SACL for a New Object" (Microsoft Learn): the creator of an
         * object whose SACL holds more than resource attributes must have
         * SE_SECURITY_NAME enabled. */
        return fail(r,
                    "audit entries (AU) are not supported: a pipe with a SACL needs "
                    "SeSecurityPrivilege, which LocalSystem holds disabled, so CreateNamedPipeW "
                    "fails (ERROR_PRIVILEGE_NOT_HELD); csi-proxy audits its calls itself%s",
                    ""),
               0;
    else if (sacl && strncmp(r->p, "ML;", 3) == 0)
        type = r->p[0];
    if (type == 0) {
        fail(r,
             sacl ? "unsupported SACL entry type (only ML, a mandatory label)%s"
                  : "unsupported ACE type (A or D; no object or callback entries)%s",
             "");
        return 0;
    }
    r->p += sacl ? 3 : 2;
    if (read_codes(r, ace_flags, ';', "ACE flag") < 0)
        return 0;
    r->p++;
    if (r->p[0] == '0' && (r->p[1] == 'x' || r->p[1] == 'X')) {
        const char *q = r->p + 2;
        while (isxdigit((unsigned char)*q))
            q++;
        if (q == r->p + 2 || q - r->p > 10 || *q != ';')
            return fail(r, "malformed access mask%s", ""), 0;
        r->p = q;
    } else {
        int n = read_codes(r, rights, ';', "access right");
        if (n < 0)
            return 0;
        if (n == 0)
            return fail(r, "an ACE without access rights%s", ""), 0;
    }
    r->p++;
    if (r->p[0] != ';' || r->p[1] != ';')
        return fail(r, "object GUIDs are not supported in pipe security%s", ""), 0;
    r->p += 2;
    if (!read_sid(r, true))
        return 0;
    if (*r->p != ')')
        return fail(r, "expected ')' after the ACE's SID%s", ""), 0;
    r->p++;
    return type;
}

static bool read_acl(rd *r, bool sacl, bool *protected_out, int *allows)
{
    *protected_out = false;
    for (;;) {
        if (strncmp(r->p, "NO_ACCESS_CONTROL", 17) == 0)
            return fail(r, "NO_ACCESS_CONTROL would let anyone in%s", "");
        if (r->p[0] == 'P') {
            *protected_out = true;
            r->p++;
        } else if (strncmp(r->p, "AI", 2) == 0 || strncmp(r->p, "AR", 2) == 0) {
            r->p += 2;
        } else {
            break;
        }
    }
    int n = 0;
    while (*r->p == '(') {
        char t = read_ace(r, sacl);
        if (t == 0)
            return false;
        if (t == 'A')
            (*allows)++;
        n++;
    }
    if (sacl && n == 0)
        return fail(r,
                    "a SACL without a mandatory label (ML): an empty SACL needs "
                    "SeSecurityPrivilege as audit entries do; leave S: out%s",
                    "");
    return true;
}

bool cp_sddl_check(const char *s, char *why, size_t cap)
{
    rd r = {.s = s, .p = s, .why = why, .cap = cap};
    if (cap > 0)
        why[0] = '\0';
    bool seen[4] = {false}; /* O G D S */
    bool dacl_protected = false;
    int allows = 0;
    if (s == NULL || *s == '\0')
        return fail(&r, "empty security descriptor%s", "");
    while (*r.p != '\0') {
        const char *order = "OGDS", *k = strchr(order, r.p[0]);
        if (k == NULL || r.p[0] == '\0' || r.p[1] != ':')
            return fail(&r, "expected O:, G:, D: or S:%s", "");
        int idx = (int)(k - order);
        if (seen[idx])
            return fail(&r, "%s: given twice", (char[]){r.p[0], 0});
        seen[idx] = true;
        r.p += 2;
        bool prot = false;
        if (idx < 2) {
            if (!read_sid(&r, false))
                return false;
        } else if (!read_acl(&r, idx == 3, &prot, &allows)) {
            return false;
        } else if (idx == 2) {
            dacl_protected = prot;
        }
    }
    r.p = s + strlen(s);
    if (!seen[2])
        return fail(&r, "no DACL (D:...): the pipe would be open to everyone%s", "");
    if (!dacl_protected)
        return fail(&r, "the DACL must be protected (D:P...) so that nothing is inherited%s", "");
    if (allows == 0)
        return fail(&r, "the DACL allows no one%s", "");
    return true;
}

/* The SID of an ACE's last field (alias or S-1-...); false when it names
 * none this machine-independent reading can resolve (domain aliases). */
static bool ace_sid(const char *p, size_t n, cp_sid *out)
{
    char buf[CP_SID_STR_MAX];
    if (n == 0 || n >= sizeof(buf))
        return false;
    memcpy(buf, p, n);
    buf[n] = '\0';
    return n == 2 ? cp_sid_alias(buf, out) : cp_sid_parse(buf, out);
}

/* The mask of a rights field [p, p+n) written as a number ("0x...");
 * false when the field is two-letter codes. */
static bool hex_mask(const char *p, size_t n, unsigned long *m)
{
    if (n <= 2 || p[0] != '0' || (p[1] != 'x' && p[1] != 'X'))
        return false;
    *m = 0;
    for (size_t i = 2; i < n; i++)
        *m = *m * 16 + (unsigned long)(isdigit((unsigned char)p[i])
                                           ? p[i] - '0'
                                           : tolower((unsigned char)p[i]) - 'a' + 10);
    return true;
}

/* Whether the two-letter codes [p, p+n) hold any of list. */
static bool has_code(const char *p, size_t n, const char *const *list)
{
    for (size_t i = 0; i + 1 < n; i += 2)
        if (in_list(p + i, list))
            return true;
    return false;
}

/* Whether the rights field [p, p+n) is full access. */
static bool full_access(const char *p, size_t n)
{
    unsigned long m;
    if (hex_mask(p, n, &m))
        return (m & 0x10000000ul) != 0 || (m & 0x1F01FFul) == 0x1F01FFul;
    static const char *const full[] = {"GA", "FA", NULL};
    return has_code(p, n, full);
}

/* Whether the rights field [p, p+n) takes away any right a pipe's server
 * end needs for a new instance: FILE_GENERIC_READ | FILE_GENERIC_WRITE
 * (0x12019f, which holds FILE_CREATE_PIPE_INSTANCE, 0x4) or a generic right
 * that maps onto them. Two-letter codes by their SDDL access masks
 * ("ACE Strings": CC 0x1, DC 0x2, LC 0x4, SW 0x8, RP 0x10, LO 0x80, CR
 * 0x100, RC READ_CONTROL, FA/FR/FW/FX and the generic ones). */
static bool takes_needed(const char *p, size_t n)
{
    unsigned long m;
    if (hex_mask(p, n, &m))
        return (m & (0x12019Ful | 0x10000000ul | 0x20000000ul | 0x40000000ul | 0x80000000ul)) != 0;
    static const char *const hit[] = {"GA", "GR", "GW", "GX", "FA", "FR", "FW",
                                      "FX", "CC", "DC", "LC", "SW", "RP", "LO",
                                      "CR", "RC", "KA", "KR", "KW", "KX", NULL};
    return has_code(p, n, hit);
}

/* Whether the ACE flags [p, p+n) hold IO (inherit only). */
static bool inherit_only(const char *p, size_t n)
{
    static const char *const io[] = {"IO", NULL};
    return has_code(p, n, io);
}

/* The six ';'-separated fields of the ACE whose '(' is at p, into f and
 * len; false when it has another number of fields. */
static bool ace_fields(const char *p, const char *f[6], size_t len[6])
{
    const char *q = p + 1;
    for (int k = 0; k < 6; k++) {
        size_t m = strcspn(q, ";)");
        f[k] = q;
        len[k] = m;
        q += m;
        if (*q != ';')
            return k == 5;
        q++;
    }
    return false;
}

bool cp_sddl_grants(const char *s, const cp_sid *account, const cp_sid *held, size_t n_held,
                    char *why, size_t cap)
{
    char name[CP_SID_STR_MAX];
    const char *alias = cp_sid_alias_of(account);
    const char *who = alias != NULL ? alias : cp_sid_format(account, name, sizeof(name));
    const char *as = alias != NULL && strcmp(alias, "SY") == 0 ? "SYSTEM" : who;
    bool granted = false;
    if (cap > 0)
        why[0] = '\0';
    /* After cp_sddl_check, every "(A;" / "(D;" entry is a DACL entry (the
     * SACL holds AU and ML only) with six ';'-separated fields. */
    for (const char *p = strchr(s, '('); p != NULL; p = strchr(p + 1, '(')) {
        const char *f[6];
        size_t len[6];
        if (!ace_fields(p, f, len) || len[0] != 1 || (f[0][0] != 'A' && f[0][0] != 'D') ||
            inherit_only(f[1], len[1]))
            continue;
        cp_sid sid;
        if (!ace_sid(f[5], len[5], &sid))
            continue;
        bool mine = cp_sid_equal(&sid, account);
        bool held_group = false;
        for (size_t i = 0; i < n_held && !mine; i++)
            held_group = held_group || cp_sid_equal(&sid, &held[i]);
        if (f[0][0] == 'D' && (mine || held_group) && takes_needed(f[2], len[2])) {
            snprintf(why, cap,
                     "it denies %.*s, which %s: csi-proxy, running as %s, must create each "
                     "instance of the pipe (FILE_CREATE_PIPE_INSTANCE), or the group serves one "
                     "connection at a time",
                     (int)len[5], f[5],
                     mine ? "is the service's account" : "the service's account holds", as);
            return false;
        }
        if (f[0][0] == 'A' && mine && full_access(f[2], len[2]))
            granted = true;
    }
    if (!granted)
        snprintf(why, cap,
                 "it does not give %s full access: csi-proxy, running as %s, must create each "
                 "instance of the pipe (FILE_CREATE_PIPE_INSTANCE), or the group serves one "
                 "connection at a time; add (A;;GA;;;%s)",
                 who, as, who);
    return granted;
}

bool cp_sddl_grants_system(const char *s, char *why, size_t cap)
{
    cp_sid sy, held[3];
    if (!cp_sid_parse("S-1-5-18", &sy) || !cp_sid_parse("S-1-1-0", &held[0]) ||
        !cp_sid_parse("S-1-5-11", &held[1]) || !cp_sid_parse("S-1-5-32-544", &held[2])) {
        snprintf(why, cap, "internal error: well-known SIDs");
        return false;
    }
    return cp_sddl_grants(s, &sy, held, 3, why, cap);
}

size_t cp_sddl_for_sids(const cp_sid *sids, size_t n, char *out, size_t cap)
{
    cp_sid sy;
    if (!cp_sid_parse("S-1-5-18", &sy))
        return 0;
    size_t len = (size_t)snprintf(out, cap, "D:P(A;;GA;;;SY)");
    for (size_t i = 0; i < n && len < cap; i++) {
        if (cp_sid_equal(&sids[i], &sy))
            continue;
        char buf[CP_SID_STR_MAX];
        const char *a = cp_sid_alias_of(&sids[i]);
        len += (size_t)snprintf(out + len, cap - len, "(A;;" CP_SDDL_CALLER_RIGHTS ";;;%s)",
                                a != NULL ? a : cp_sid_format(&sids[i], buf, sizeof(buf)));
    }
    return len < cap ? len : 0;
}

/* Whether the rights field [p, p+n) holds a right a client never needs:
 * GENERIC_ALL (GA, 0x10000000), FILE_ALL_ACCESS (FA), KEY_ALL_ACCESS
 * (KA), WRITE_DAC (WD, 0x40000), WRITE_OWNER (WO, 0x80000), DELETE (SD,
 * 0x10000) or ACCESS_SYSTEM_SECURITY (0x1000000); by their masks in "ACE
 * Strings" and "Access Mask", Microsoft Learn. */
static bool beyond_client(const char *p, size_t n)
{
    unsigned long m;
    if (hex_mask(p, n, &m))
        return (m & (0x10000000ul | 0x1000000ul | 0x40000ul | 0x80000ul | 0x10000ul)) != 0;
    static const char *const hit[] = {"GA", "FA", "KA", "WD", "WO", "SD", NULL};
    return has_code(p, n, hit);
}

bool cp_sddl_caller_excess(const char *s, char *which, size_t cap)
{
    cp_sid sy;
    size_t len = 0;
    if (cap > 0)
        which[0] = '\0';
    if (!cp_sid_parse("S-1-5-18", &sy))
        return false;
    for (const char *p = strchr(s, '('); p != NULL; p = strchr(p + 1, '(')) {
        const char *f[6];
        size_t flen[6];
        if (!ace_fields(p, f, flen) || flen[0] != 1 || f[0][0] != 'A' ||
            inherit_only(f[1], flen[1]) || !beyond_client(f[2], flen[2]))
            continue;
        cp_sid sid;
        if (ace_sid(f[5], flen[5], &sid) && cp_sid_equal(&sid, &sy))
            continue;
        if (len < cap)
            len += (size_t)snprintf(which + len, cap - len, "%s%.*s (%.*s)", len > 0 ? ", " : "",
                                    (int)flen[5], f[5], (int)flen[2], f[2]);
    }
    return len > 0;
}
