/* pipesec_win.c - see pipesec_win.h. */
#include "pipesec_win.h"

#include <sddl.h>
#include <stdlib.h>
#include <string.h>

#include "../winapi/winutil.h"

struct cp_pipesec {
    const char *group[CP_CONFIG_N_GROUPS];
    PSECURITY_DESCRIPTOR sd[CP_CONFIG_N_GROUPS]; /* LocalAlloc'd by the conversion */
    SECURITY_ATTRIBUTES sa[CP_CONFIG_N_GROUPS];
};

/* Where a group's SDDL came from, for messages. */
static void origin(const cp_config *c, const cp_config_group *g, char *buf, size_t cap)
{
    if (g->pipe_sddl_line > 0)
        snprintf(buf, cap, "%s:%d: %s pipe security", c->path != NULL ? c->path : "config",
                 g->pipe_sddl_line, g->name);
    else
        snprintf(buf, cap, "%s pipe security (derived from allowedCallers)", g->name);
}

static int build(const cp_config *c, const cp_config_group *g, PSECURITY_DESCRIPTOR *out,
                 cp_error *e)
{
    char where[300], why[256];
    origin(c, g, where, sizeof(where));
    wchar_t *w = cp_win_utf8_to_wide(g->pipe_sddl);
    if (w == NULL)
        return cp_error_set(e, CP_E_NOMEM, "%s: out of memory", where);
    PSECURITY_DESCRIPTOR sd = NULL;
    BOOL ok = ConvertStringSecurityDescriptorToSecurityDescriptorW(w, SDDL_REVISION_1, &sd, NULL);
    DWORD err = ok ? 0 : GetLastError();
    free(w);
    if (!ok)
        return cp_error_set(e, CP_E_INVALID_ARGUMENT, "%s: Windows refuses \"%s\": %s (error %lu)",
                            where, g->pipe_sddl, cp_win_errtext(err, why, sizeof(why)),
                            (unsigned long)err);
    /* Fail closed on what the syntax check may have missed: the descriptor
     * itself must carry a real, protected DACL. */
    SECURITY_DESCRIPTOR_CONTROL ctl = 0;
    DWORD rev = 0;
    BOOL present = FALSE, defaulted = FALSE;
    PACL dacl = NULL;
    if (!GetSecurityDescriptorControl(sd, &ctl, &rev) ||
        !GetSecurityDescriptorDacl(sd, &present, &dacl, &defaulted) || !present || dacl == NULL ||
        !(ctl & SE_DACL_PROTECTED) || !IsValidSecurityDescriptor(sd)) {
        LocalFree(sd);
        return cp_error_set(e, CP_E_INVALID_ARGUMENT, "%s: \"%s\" does not give a protected DACL",
                            where, g->pipe_sddl);
    }
    *out = sd;
    return CP_OK;
}

cp_pipesec *cp_pipesec_new(const cp_config *c, cp_error *e)
{
    cp_pipesec *ps = calloc(1, sizeof(*ps));
    if (ps == NULL) {
        cp_error_set(e, CP_E_NOMEM, "pipe security: out of memory");
        return NULL;
    }
    for (int i = 0; i < CP_CONFIG_N_GROUPS; i++) {
        const cp_config_group *g = &c->groups[i];
        ps->group[i] = g->name;
        if (build(c, g, &ps->sd[i], e) != CP_OK) {
            cp_pipesec_free(ps);
            return NULL;
        }
        ps->sa[i].nLength = sizeof(ps->sa[i]);
        ps->sa[i].lpSecurityDescriptor = ps->sd[i];
        ps->sa[i].bInheritHandle = FALSE;
    }
    return ps;
}

const SECURITY_ATTRIBUTES *cp_pipesec_attrs(const cp_pipesec *ps, const char *group)
{
    for (int i = 0; i < CP_CONFIG_N_GROUPS; i++)
        if (ps->group[i] != NULL && strcmp(ps->group[i], group) == 0)
            return &ps->sa[i];
    return NULL;
}

void cp_pipesec_free(cp_pipesec *ps)
{
    if (ps == NULL)
        return;
    for (int i = 0; i < CP_CONFIG_N_GROUPS; i++)
        if (ps->sd[i] != NULL)
            LocalFree(ps->sd[i]);
    free(ps);
}
