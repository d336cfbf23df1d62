/* cfgdir_win.c - see cfgdir_win.h. */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>

#include <aclapi.h>
#include <sddl.h>
#include <stdio.h>
#include <stdlib.h>
#include <wchar.h>

#include "base/winutil_win.h"
#include "service/cfgdir_win.h"
#include "security/filesec.h"
#include "security/token_win.h"

static int report(const char *dir, const char *what, DWORD err)
{
    char why[256];
    fprintf(stderr, "csi-proxy: install: %s: %s: %s (error %lu)\n", dir, what,
            cp_win_errtext(err, why, sizeof(why)), (unsigned long)err);
    return 1;
}

/* %ProgramData%\csi-proxy, or "" when ProgramData is not set. */
static void folder_path(wchar_t *out, size_t cap)
{
    wchar_t pd[MAX_PATH];
    DWORD n = GetEnvironmentVariableW(L"ProgramData", pd, MAX_PATH);
    out[0] = L'\0';
    if (n > 0 && n < MAX_PATH)
        _snwprintf(out, cap, L"%ls\\csi-proxy", pd);
    out[cap - 1] = L'\0';
}

/* The folder's owner and DACL, judged (filesec.h). Fills owner_ok. */
static DWORD judge(HANDLE h, bool *owner_ok, bool *safe, char *why, size_t cap)
{
    PSID owner = NULL;
    PACL dacl = NULL;
    PSECURITY_DESCRIPTOR sd = NULL;
    /* "GetSecurityInfo function (aclapi.h)". */
    DWORD err = GetSecurityInfo(h, SE_FILE_OBJECT,
                                OWNER_SECURITY_INFORMATION | DACL_SECURITY_INFORMATION, &owner,
                                NULL, &dacl, NULL, &sd);
    if (err != ERROR_SUCCESS)
        return err;
    cp_filesec_ace aces[64];
    cp_filesec_sd fsd = {.has_dacl = dacl != NULL, .aces = aces};
    fsd.has_owner = cp_win_sid_from(owner, &fsd.owner);
    bool readable = true;
    for (DWORD i = 0; dacl != NULL && i < dacl->AceCount && i < 64; i++) {
        void *ace = NULL;
        /* Plain allow/deny entries are all a folder made by Windows tools
         * holds; anything else makes the DACL "not safe", to be replaced. */
        if (!GetAce(dacl, i, &ace)) {
            readable = false;
            break;
        }
        const ACE_HEADER *hd = ace;
        aces[i].type = hd->AceType;
        aces[i].flags = hd->AceFlags;
        aces[i].mask = ((const ACCESS_ALLOWED_ACE *)ace)->Mask;
        if (hd->AceType != ACCESS_ALLOWED_ACE_TYPE && hd->AceType != ACCESS_DENIED_ACE_TYPE)
            readable = false;
        else if (!cp_win_sid_from((PSID) & ((const ACCESS_ALLOWED_ACE *)ace)->SidStart,
                                  &aces[i].sid))
            readable = false;
        fsd.n_aces++;
    }
    if (dacl != NULL && dacl->AceCount > 64)
        readable = false;
    cp_sid self;
    bool has_self = false;
    HANDLE tok;
    if (OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &tok)) {
        BYTE buf[sizeof(TOKEN_USER) + SECURITY_MAX_SID_SIZE];
        DWORD len;
        has_self = GetTokenInformation(tok, TokenUser, buf, sizeof(buf), &len) &&
                   cp_win_sid_from(((TOKEN_USER *)buf)->User.Sid, &self);
        CloseHandle(tok);
    }
    cp_filesec_verdict v;
    *safe = readable && cp_filesec_judge(&fsd, has_self ? &self : NULL, &v);
    *owner_ok = fsd.has_owner && cp_filesec_trusted(&fsd.owner, has_self ? &self : NULL);
    if (!*safe && readable)
        cp_filesec_describe(&v, true, NULL, why, cap);
    else if (!readable)
        snprintf(why, cap, "has access entries the check does not read");
    LocalFree(sd);
    return ERROR_SUCCESS;
}

int cp_install_config_dir(void)
{
    wchar_t dir[MAX_PATH + 16];
    folder_path(dir, sizeof(dir) / sizeof(dir[0]));
    if (dir[0] == L'\0') {
        fprintf(stderr, "csi-proxy: install: %%ProgramData%% is not set: cannot make the "
                        "configuration folder\n");
        return 1;
    }
    char *dir8 = cp_win_wide_to_utf8(dir);
    const char *d8 = dir8 != NULL ? dir8 : "%ProgramData%\\csi-proxy";
    int rc = 1;
    PSECURITY_DESCRIPTOR want = NULL;
    /* "ConvertStringSecurityDescriptorToSecurityDescriptorW function
     * (sddl.h)". The owner is the creator's default owner: Administrators
     * for an elevated administrator, SYSTEM for SYSTEM. */
    if (!ConvertStringSecurityDescriptorToSecurityDescriptorW(CP_CONFIG_DIR_SDDL, SDDL_REVISION_1,
                                                              &want, NULL)) {
        rc = report(d8, "ConvertStringSecurityDescriptorToSecurityDescriptor", GetLastError());
        goto out;
    }
    SECURITY_ATTRIBUTES sa = {sizeof(sa), want, FALSE};
    /* "CreateDirectoryW function (fileapi.h)": lpSecurityAttributes gives
     * the new directory's descriptor. */
    if (CreateDirectoryW(dir, &sa)) {
        printf("csi-proxy: install: made %s (SYSTEM and Administrators only)\n", d8);
        rc = 0;
        goto out;
    }
    DWORD err = GetLastError();
    if (err != ERROR_ALREADY_EXISTS) {
        rc = report(d8, "CreateDirectory", err);
        goto out;
    }
    /* It exists. Opened as itself, not through a link: a junction planted
     * there must not have its target's DACL replaced ("CreateFileW
     * function": FILE_FLAG_OPEN_REPARSE_POINT, FILE_FLAG_BACKUP_SEMANTICS
     * to open a directory). */
    HANDLE h = CreateFileW(dir, READ_CONTROL | WRITE_DAC | FILE_READ_ATTRIBUTES,
                           FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL,
                           OPEN_EXISTING, FILE_FLAG_BACKUP_SEMANTICS | FILE_FLAG_OPEN_REPARSE_POINT,
                           NULL);
    if (h == INVALID_HANDLE_VALUE) {
        rc = report(d8, "open", GetLastError());
        goto out;
    }
    BY_HANDLE_FILE_INFORMATION info;
    if (!GetFileInformationByHandle(h, &info)) {
        rc = report(d8, "GetFileInformationByHandle", GetLastError());
    } else if (!(info.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY) ||
               (info.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT)) {
        fprintf(stderr,
                "csi-proxy: install: %s is %s, not a folder: someone else may have made it; "
                "inspect and remove it, then run install again\n",
                d8,
                (info.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT) ? "a link (reparse point)"
                                                                       : "a file");
    } else {
        bool owner_ok = false, safe = false;
        char why[768] = "";
        err = judge(h, &owner_ok, &safe, why, sizeof(why));
        if (err != ERROR_SUCCESS) {
            rc = report(d8, "GetSecurityInfo", err);
        } else if (safe) {
            rc = 0;
        } else if (!owner_ok) {
            fprintf(stderr,
                    "csi-proxy: install: %s %s; someone else may have made it or put files in "
                    "it: inspect and remove it, then run install again\n",
                    d8, why);
        } else {
            /* Ours (owned by SYSTEM or Administrators) but open to others,
             * as a folder made with mkdir under ProgramData is: the DACL
             * is replaced by the protected one, which Windows propagates
             * to what the folder holds ("SetSecurityInfo function
             * (aclapi.h)": inheritable entries are propagated to existing
             * child objects). */
            BOOL present = FALSE, defaulted = FALSE;
            PACL dacl = NULL;
            GetSecurityDescriptorDacl(want, &present, &dacl, &defaulted);
            err = SetSecurityInfo(h, SE_FILE_OBJECT,
                                  DACL_SECURITY_INFORMATION | PROTECTED_DACL_SECURITY_INFORMATION,
                                  NULL, NULL, dacl, NULL);
            if (err != ERROR_SUCCESS) {
                rc = report(d8, "SetSecurityInfo", err);
            } else {
                printf("csi-proxy: install: %s %s: its DACL is now SYSTEM and Administrators "
                       "only\n",
                       d8, why);
                rc = 0;
            }
        }
    }
    CloseHandle(h);
out:
    LocalFree(want);
    free(dir8);
    return rc;
}
