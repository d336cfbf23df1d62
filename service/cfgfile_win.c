/* cfgfile_win.c - see cfgfile.h. The file is opened once (regfile_win.c)
 * and the descriptor judged is the one of that handle, which is then the
 * one read: nothing can swap the file between the check and the read.
 * GetSecurityInfo reads the owner and the DACL of an open handle, which
 * needs READ_CONTROL ("GetSecurityInfo function (aclapi.h)": "The handle
 * must have READ_CONTROL access"; GENERIC_READ, which regfile asks,
 * includes it). The folder is the one the handle's path names now
 * (GetFinalPathNameByHandleW, "GetFinalPathNameByHandleW function
 * (fileapi.h)"), opened without access rights beyond READ_CONTROL;
 * FILE_FLAG_BACKUP_SEMANTICS is what opens a directory ("CreateFileW
 * function (fileapi.h)": "You must set this flag to obtain a handle to a
 * directory"). Under Wine a file's descriptor is made from its Unix mode
 * (owner: the Wine user; Everyone: the "other" bits), which is what the
 * Wine tests plant. */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>

#include <aclapi.h>
#include <io.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "base/winutil_win.h"
#include "service/cfgfile.h"
#include "security/filesec.h"
#include "base/regfile.h"
#include "security/token_win.h"

#define MAX_ACES 64

/* The account name of sid ("BUILTIN\Users"), or "" ("LookupAccountSidW
 * function (winbase.h)"). */
static void account_name(const cp_sid *sid, char *out, size_t cap)
{
    out[0] = '\0';
    PSID p = cp_win_sid_to(sid);
    if (p == NULL)
        return;
    wchar_t name[256], dom[256];
    DWORD nn = 256, dn = 256;
    SID_NAME_USE use;
    if (LookupAccountSidW(NULL, p, name, &nn, dom, &dn, &use)) {
        wchar_t full[520];
        _snwprintf(full, 520, dn > 0 ? L"%ls\\%ls" : L"%ls%ls", dom, name);
        full[519] = L'\0';
        char *u = cp_win_wide_to_utf8(full);
        if (u != NULL)
            snprintf(out, cap, "%s", u);
        free(u);
    }
    LocalFree(p);
}

/* The service's own account, trusted like SYSTEM. False when unknown. */
static bool self_sid(cp_sid *out)
{
    HANDLE tok;
    if (!OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &tok))
        return false;
    BYTE buf[sizeof(TOKEN_USER) + SECURITY_MAX_SID_SIZE];
    DWORD len = 0;
    bool ok = GetTokenInformation(tok, TokenUser, buf, sizeof(buf), &len) &&
              cp_win_sid_from(((TOKEN_USER *)buf)->User.Sid, out);
    CloseHandle(tok);
    return ok;
}

/* One ACE of the DACL in portable form ("GetAce function
 * (securitybaseapi.h)"; the layouts: "ACCESS_ALLOWED_ACE structure",
 * "ACCESS_ALLOWED_OBJECT_ACE structure (winnt.h)": the SID follows Flags
 * and whichever of the two GUIDs its flags say are present). A trustee
 * that cannot be read becomes the NULL SID (S-1-0-0), which nobody
 * trusts: such an entry is judged by its rights alone. */
static void read_ace(const void *ace, cp_filesec_ace *out)
{
    const ACE_HEADER *h = ace;
    out->type = h->AceType;
    out->flags = h->AceFlags;
    out->mask = 0;
    cp_sid_parse("S-1-0-0", &out->sid);
    const BYTE *base = ace, *sid = NULL;
    size_t size = h->AceSize;
    switch (h->AceType) {
    case ACCESS_ALLOWED_ACE_TYPE:
    case ACCESS_DENIED_ACE_TYPE:
    case ACCESS_ALLOWED_CALLBACK_ACE_TYPE:
    case ACCESS_DENIED_CALLBACK_ACE_TYPE:
        out->mask = ((const ACCESS_ALLOWED_ACE *)ace)->Mask;
        sid = base + offsetof(ACCESS_ALLOWED_ACE, SidStart);
        break;
    case ACCESS_ALLOWED_OBJECT_ACE_TYPE:
    case ACCESS_DENIED_OBJECT_ACE_TYPE:
    case ACCESS_ALLOWED_CALLBACK_OBJECT_ACE_TYPE:
    case ACCESS_DENIED_CALLBACK_OBJECT_ACE_TYPE: {
        const ACCESS_ALLOWED_OBJECT_ACE *o = ace;
        out->mask = o->Mask;
        size_t off = offsetof(ACCESS_ALLOWED_OBJECT_ACE, ObjectType);
        if (o->Flags & ACE_OBJECT_TYPE_PRESENT)
            off += sizeof(GUID);
        if (o->Flags & ACE_INHERITED_OBJECT_TYPE_PRESENT)
            off += sizeof(GUID);
        sid = base + off;
        break;
    }
    default:
        if (size >= sizeof(ACE_HEADER) + sizeof(DWORD))
            out->mask = *(const DWORD *)(base + sizeof(ACE_HEADER));
        break;
    }
    if (sid != NULL && (size_t)(sid - base) + 8 <= size)
        cp_win_sid_from((PSID)sid, &out->sid);
}

/* Reads the owner and DACL of h and judges them. CP_OK, or a status with
 * e set: "<path>: refused: the <what> <why>". */
static int check_handle(HANDLE h, const char *path, const char *what, bool dir, cp_error *e)
{
    PSID owner = NULL;
    PACL dacl = NULL;
    PSECURITY_DESCRIPTOR sd = NULL;
    DWORD err = GetSecurityInfo(h, SE_FILE_OBJECT,
                                OWNER_SECURITY_INFORMATION | DACL_SECURITY_INFORMATION, &owner,
                                NULL, &dacl, NULL, &sd);
    if (err != ERROR_SUCCESS) {
        char why[256];
        return cp_error_set(e, CP_E_PERMISSION_DENIED,
                            "%s: refused: cannot read the security of the %s: GetSecurityInfo: "
                            "%s (error %lu)",
                            path, what, cp_win_errtext(err, why, sizeof(why)), (unsigned long)err);
    }
    cp_filesec_ace aces[MAX_ACES];
    cp_filesec_sd fsd = {.has_dacl = dacl != NULL, .aces = aces};
    fsd.has_owner = cp_win_sid_from(owner, &fsd.owner);
    int rc = CP_OK;
    if (dacl != NULL && dacl->AceCount > MAX_ACES) {
        rc = cp_error_set(e, CP_E_PERMISSION_DENIED,
                          "%s: refused: the %s has %u access entries, more than the check reads "
                          "(%d)",
                          path, what, (unsigned)dacl->AceCount, MAX_ACES);
        goto out;
    }
    for (DWORD i = 0; dacl != NULL && i < dacl->AceCount; i++) {
        void *ace = NULL;
        if (!GetAce(dacl, i, &ace)) {
            rc = cp_error_set(e, CP_E_PERMISSION_DENIED,
                              "%s: refused: the %s's DACL cannot be read (entry %lu)", path, what,
                              (unsigned long)i);
            goto out;
        }
        read_ace(ace, &aces[fsd.n_aces++]);
    }
    cp_sid self;
    bool has_self = self_sid(&self);
    cp_filesec_verdict v;
    if (!cp_filesec_judge(&fsd, has_self ? &self : NULL, &v)) {
        char name[520], why[1024];
        account_name(&v.who, name, sizeof(name));
        cp_filesec_describe(&v, dir, name, why, sizeof(why));
        rc = cp_error_set(e, CP_E_PERMISSION_DENIED,
                          "%s: refused: the %s %s; the configuration file and its folder must "
                          "be owned by SYSTEM or Administrators and writable by nobody else",
                          path, what, why);
    }
out:
    LocalFree(sd);
    return rc;
}

/* The folder the open file h is in now, judged. */
static int check_folder(HANDLE h, const char *path, cp_error *e)
{
    wchar_t full[MAX_PATH * 4];
    DWORD n =
        GetFinalPathNameByHandleW(h, full, MAX_PATH * 4, FILE_NAME_NORMALIZED | VOLUME_NAME_DOS);
    if (n == 0 || n >= MAX_PATH * 4) {
        DWORD err = n == 0 ? GetLastError() : ERROR_INSUFFICIENT_BUFFER;
        char why[256];
        return cp_error_set(e, CP_E_PERMISSION_DENIED,
                            "%s: refused: cannot tell which folder holds it: "
                            "GetFinalPathNameByHandleW: %s (error %lu)",
                            path, cp_win_errtext(err, why, sizeof(why)), (unsigned long)err);
    }
    wchar_t *slash = wcsrchr(full, L'\\');
    if (slash == NULL)
        return cp_error_set(e, CP_E_PERMISSION_DENIED,
                            "%s: refused: cannot tell which folder holds it", path);
    /* "\\?\C:\x.yaml": the folder is the drive's root, "\\?\C:\". */
    if (slash > full && slash[-1] == L':')
        slash[1] = L'\0';
    else
        slash[0] = L'\0';
    HANDLE d = CreateFileW(full, READ_CONTROL,
                           FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL,
                           OPEN_EXISTING, FILE_FLAG_BACKUP_SEMANTICS, NULL);
    if (d == INVALID_HANDLE_VALUE) {
        DWORD err = GetLastError();
        char why[256];
        return cp_error_set(e, CP_E_PERMISSION_DENIED,
                            "%s: refused: cannot open its folder to check it: %s (error %lu)", path,
                            cp_win_errtext(err, why, sizeof(why)), (unsigned long)err);
    }
    /* Named as the operator would write it: "C:\x", "\\server\share\x". */
    const wchar_t *shown = full;
    if (wcsncmp(full, L"\\\\?\\UNC\\", 8) == 0) {
        shown = full + 6;
        full[6] = L'\\';
    } else if (wcsncmp(full, L"\\\\?\\", 4) == 0) {
        shown = full + 4;
    }
    char *folder = cp_win_wide_to_utf8(shown);
    char what[MAX_PATH * 3 + 16];
    snprintf(what, sizeof(what), "folder %s", folder != NULL ? folder : "");
    free(folder);
    int rc = check_handle(d, path, what, true, e);
    CloseHandle(d);
    return rc;
}

FILE *cp_cfgfile_open(const char *path, cp_error *e)
{
    FILE *fp = cp_regfile_open(path, "rb", e);
    if (fp == NULL)
        return NULL;
    HANDLE h = (HANDLE)_get_osfhandle(_fileno(fp));
    if (h == INVALID_HANDLE_VALUE) {
        fclose(fp);
        cp_error_set(e, CP_E_INTERNAL, "%s: no handle for the open file", path);
        return NULL;
    }
    if (check_handle(h, path, "file", false, e) != CP_OK || check_folder(h, path, e) != CP_OK) {
        fclose(fp);
        return NULL;
    }
    return fp;
}
