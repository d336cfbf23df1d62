/* filesec.c - see filesec.h. */
#include "security/filesec.h"

#include <stdio.h>
#include <string.h>

#include "security/broad.h"

#define SYSTEM_SID "S-1-5-18"
#define ADMINS_SID "S-1-5-32-544"
#define TRUSTED_INSTALLER_SID "S-1-5-80-956008885-3418522649-1831038044-1853292631-2271478464"
#define OWNER_RIGHTS_SID "S-1-3-4" /* the object's owner, already judged */

static bool is(const cp_sid *sid, const char *s)
{
    cp_sid t;
    return cp_sid_parse(s, &t) && cp_sid_equal(&t, sid);
}

bool cp_filesec_trusted(const cp_sid *sid, const cp_sid *self)
{
    return is(sid, SYSTEM_SID) || is(sid, ADMINS_SID) || is(sid, TRUSTED_INSTALLER_SID) ||
           (self != NULL && cp_sid_equal(sid, self));
}

static bool allow_type(uint8_t t)
{
    return t == CP_ACE_ALLOWED || t == CP_ACE_ALLOWED_COMPOUND || t == CP_ACE_ALLOWED_OBJECT ||
           t == CP_ACE_ALLOWED_CALLBACK || t == CP_ACE_ALLOWED_CALLBACK_OBJECT;
}

static bool deny_type(uint8_t t)
{
    return t == CP_ACE_DENIED || t == CP_ACE_DENIED_OBJECT || t == CP_ACE_DENIED_CALLBACK ||
           t == CP_ACE_DENIED_CALLBACK_OBJECT;
}

bool cp_filesec_judge(const cp_filesec_sd *sd, const cp_sid *self, cp_filesec_verdict *v)
{
    memset(v, 0, sizeof(*v));
    if (!sd->has_owner) {
        v->what = CP_FILESEC_NO_OWNER;
        return false;
    }
    if (!cp_filesec_trusted(&sd->owner, self)) {
        v->what = CP_FILESEC_BAD_OWNER;
        v->who = sd->owner;
        return false;
    }
    if (!sd->has_dacl) {
        v->what = CP_FILESEC_NULL_DACL;
        return false;
    }
    for (size_t i = 0; i < sd->n_aces; i++) {
        const cp_filesec_ace *a = &sd->aces[i];
        if (a->flags & CP_ACE_INHERIT_ONLY)
            continue; /* applies to what is created inside, not to this object */
        if (deny_type(a->type))
            continue;
        if (!allow_type(a->type)) {
            v->what = CP_FILESEC_UNKNOWN_ACE;
            v->who = a->sid;
            v->ace_type = a->type;
            return false;
        }
        if (cp_filesec_trusted(&a->sid, self) || is(&a->sid, OWNER_RIGHTS_SID))
            continue;
        uint32_t beyond = a->mask & ~CP_FILESEC_READ_RIGHTS;
        if (beyond != 0) {
            v->what = CP_FILESEC_GRANTS;
            v->who = a->sid;
            v->mask = beyond;
            v->ace_type = a->type;
            return false;
        }
    }
    v->what = CP_FILESEC_OK;
    return true;
}

typedef struct right {
    uint32_t bit;
    const char *file, *dir;
} right;

static const right rights[] = {
    {0x00000001u, "FILE_READ_DATA", "FILE_LIST_DIRECTORY"},
    {0x00000002u, "FILE_WRITE_DATA", "FILE_ADD_FILE"},
    {0x00000004u, "FILE_APPEND_DATA", "FILE_ADD_SUBDIRECTORY"},
    {0x00000008u, "FILE_READ_EA", "FILE_READ_EA"},
    {0x00000010u, "FILE_WRITE_EA", "FILE_WRITE_EA"},
    {0x00000020u, "FILE_EXECUTE", "FILE_TRAVERSE"},
    {0x00000040u, "FILE_DELETE_CHILD", "FILE_DELETE_CHILD"},
    {0x00000080u, "FILE_READ_ATTRIBUTES", "FILE_READ_ATTRIBUTES"},
    {0x00000100u, "FILE_WRITE_ATTRIBUTES", "FILE_WRITE_ATTRIBUTES"},
    {0x00010000u, "DELETE", "DELETE"},
    {0x00020000u, "READ_CONTROL", "READ_CONTROL"},
    {0x00040000u, "WRITE_DAC", "WRITE_DAC"},
    {0x00080000u, "WRITE_OWNER", "WRITE_OWNER"},
    {0x00100000u, "SYNCHRONIZE", "SYNCHRONIZE"},
    {0x01000000u, "ACCESS_SYSTEM_SECURITY", "ACCESS_SYSTEM_SECURITY"},
    {0x02000000u, "MAXIMUM_ALLOWED", "MAXIMUM_ALLOWED"},
    {0x10000000u, "GENERIC_ALL", "GENERIC_ALL"},
    {0x20000000u, "GENERIC_EXECUTE", "GENERIC_EXECUTE"},
    {0x40000000u, "GENERIC_WRITE", "GENERIC_WRITE"},
    {0x80000000u, "GENERIC_READ", "GENERIC_READ"},
};

const char *cp_filesec_rights(uint32_t mask, bool dir, char *out, size_t cap)
{
    size_t n = 0;
    out[0] = '\0';
    uint32_t rest = mask;
    for (size_t i = 0; i < sizeof(rights) / sizeof(rights[0]); i++) {
        if (!(mask & rights[i].bit))
            continue;
        rest &= ~rights[i].bit;
        int k = snprintf(out + n, cap - n, "%s%s", n > 0 ? "|" : "",
                         dir ? rights[i].dir : rights[i].file);
        if (k < 0 || (size_t)k >= cap - n)
            return out;
        n += (size_t)k;
    }
    if (rest != 0)
        snprintf(out + n, cap - n, "%s0x%08lx", n > 0 ? "|" : "", (unsigned long)rest);
    return out;
}

/* "S-1-1-0 (Everyone)": the SID, and a name when one is known. */
static void principal(const cp_sid *sid, const char *name, char *out, size_t cap)
{
    char s[CP_SID_STR_MAX];
    cp_sid_format(sid, s, sizeof(s));
    if (name == NULL || name[0] == '\0')
        name = cp_broad_sid(sid);
    if (name != NULL && name[0] != '\0')
        snprintf(out, cap, "%s (%s)", s, name);
    else
        snprintf(out, cap, "%s", s);
}

const char *cp_filesec_describe(const cp_filesec_verdict *v, bool dir, const char *who_name,
                                char *out, size_t cap)
{
    char who[CP_SID_STR_MAX + 160], r[512];
    principal(&v->who, who_name, who, sizeof(who));
    switch (v->what) {
    case CP_FILESEC_OK:
        snprintf(out, cap, "is safe");
        break;
    case CP_FILESEC_NO_OWNER:
        snprintf(out, cap, "has no owner");
        break;
    case CP_FILESEC_BAD_OWNER:
        snprintf(out, cap,
                 "is owned by %s, not by SYSTEM or Administrators: its owner can change it at will",
                 who);
        break;
    case CP_FILESEC_NULL_DACL:
        snprintf(out, cap, "has no DACL: everyone has full access");
        break;
    case CP_FILESEC_GRANTS:
        snprintf(out, cap, "grants %s %s, more than reading: only SYSTEM and Administrators may %s",
                 who, cp_filesec_rights(v->mask, dir, r, sizeof(r)),
                 dir ? "add, remove or rename what it holds, or change it"
                     : "change, replace or delete it");
        break;
    default:
        snprintf(out, cap, "has an access entry of type %u for %s that the check does not know",
                 (unsigned)v->ace_type, who);
        break;
    }
    return out;
}
