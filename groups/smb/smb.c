/* smb.c - the smb group's logic (see smb.h). */
#include "smb.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "../common/hostpath.h"
#include "selfaddr.h"

#define SMB_PATH_MAX 1024

static const cp_smb_group_ctx *group_ctx(cp_call *call)
{
    return cp_call_ctx(call);
}

/* "\\server\share" from the first two non-empty components of norm, case
 * kept, as upstream's getRootMappingPath finds them. */
static int root_of(const char *norm, char *root, size_t rootlen, cp_error *e)
{
    const char *part[2] = {NULL, NULL};
    size_t plen[2] = {0, 0}, k = 0;
    for (const char *s = norm; *s != '\0' && k < 2;) {
        while (*s == '\\')
            s++;
        if (*s == '\0')
            break;
        const char *end = strchr(s, '\\');
        size_t l = end != NULL ? (size_t)(end - s) : strlen(s);
        part[k] = s;
        plen[k++] = l;
        s += l;
    }
    if (k < 2)
        return cp_error_set(e, CP_E_INVALID_ARGUMENT, "remote path (%s) is invalid", norm);
    if (plen[0] + plen[1] + 4 > rootlen)
        return cp_error_set(e, CP_E_INVALID_ARGUMENT, "remote path (%s) is too long", norm);
    snprintf(root, rootlen, "\\\\%.*s\\%.*s", (int)plen[0], part[0], (int)plen[1], part[1]);
    return CP_OK;
}

int cp_smb_normalize(const char *remote, char *norm, size_t normlen, char *root, size_t rootlen,
                     cp_error *e)
{
    size_t n = strlen(remote);
    if (n == 0)
        return cp_error_set(e, CP_E_INVALID_ARGUMENT, "remote path is empty");
    if (n >= normlen)
        return cp_error_set(e, CP_E_INVALID_ARGUMENT, "remote path of %lu bytes is too long",
                            (unsigned long)n);
    for (size_t i = 0; i <= n; i++)
        norm[i] = remote[i] == '/' ? '\\' : remote[i];
    if (root_of(norm, root, rootlen, e) != CP_OK)
        return e->status;
    for (char *c = root; *c != '\0'; c++)
        *c = (char)tolower((unsigned char)*c);
    return CP_OK;
}

bool cp_smb_server_matches(const char *pattern, const char *server)
{
    if (strncmp(pattern, "*.", 2) == 0) {
        size_t pl = strlen(pattern + 1), sl = strlen(server);
        return sl > pl && strcasecmp(server + sl - pl, pattern + 1) == 0;
    }
    return strcasecmp(pattern, server) == 0;
}

static bool named_exactly(const cp_smb_policy *p, const char *server)
{
    for (size_t i = 0; p->restricted && i < p->n_allowed; i++)
        if (strncmp(p->allowed[i], "*.", 2) != 0 && strcasecmp(p->allowed[i], server) == 0)
            return true;
    return false;
}

/* This machine, by any name a share of it could be reached through: its
 * loopback names, any address of it in any form Windows reads as one
 * (selfaddr.h), its NetBIOS name (alone or with a domain) and DNS name. */
static bool is_self(const cp_smb_policy *p, const char *server)
{
    static const char *const local[] = {"localhost", "localhost.localdomain"};
    for (size_t i = 0; i < sizeof(local) / sizeof(local[0]); i++)
        if (strcasecmp(server, local[i]) == 0)
            return true;
    size_t sl = strlen(server), ll = strlen(".localhost"); /* RFC 6761 6.3 */
    if (sl > ll && strcasecmp(server + sl - ll, ".localhost") == 0)
        return true;
    cp_smb_addr a;
    if (cp_smb_parse_addr(server, &a) && cp_smb_addr_is_self(&a, p->local, p->n_local))
        return true;
    if (p->self != NULL && p->self[0] != '\0') {
        size_t nl = strlen(p->self); /* "NODE" or "NODE.anything" */
        if (strncasecmp(server, p->self, nl) == 0 && (sl == nl || server[nl] == '.'))
            return true;
    }
    return p->self_dns != NULL && p->self_dns[0] != '\0' && strcasecmp(server, p->self_dns) == 0;
}

int cp_smb_check_remote(const cp_smb_policy *p, const char *norm, cp_error *e)
{
    if (strncmp(norm, "\\\\", 2) != 0 || norm[2] == '\\')
        return cp_error_set(e, CP_E_INVALID_ARGUMENT,
                            "remote path %s is not of the form \\\\server\\share[\\path]", norm);
    char server[CP_SMB_NAME_MAX];
    const char *s = norm + 2, *end = strchr(s, '\\');
    size_t sl = end != NULL ? (size_t)(end - s) : strlen(s);
    if (sl == 0 || sl >= sizeof(server) || end == NULL || end[1] == '\0' || end[1] == '\\')
        return cp_error_set(e, CP_E_INVALID_ARGUMENT,
                            "remote path %s is not of the form \\\\server\\share[\\path]", norm);
    memcpy(server, s, sl);
    server[sl] = '\0';
    if (strcmp(server, "?") == 0 || strcmp(server, ".") == 0)
        return cp_error_set(e, CP_E_INVALID_ARGUMENT,
                            "remote path %s is a device or \\\\?\\ path, not a share", norm);
    for (size_t i = 0; i < sl; i++) {
        unsigned char c = (unsigned char)server[i];
        if (!isalnum(c) && c != '-' && c != '_' && c != '.' && c != ':')
            return cp_error_set(e, CP_E_INVALID_ARGUMENT,
                                "remote path %s: server name %s is not a host name or address",
                                norm, server);
    }
    if (server[0] == '.' || server[0] == '-' || server[sl - 1] == '.' ||
        (strchr(server, ':') != NULL && strcmp(server, "::1") != 0))
        return cp_error_set(e, CP_E_INVALID_ARGUMENT,
                            "remote path %s: server name %s is not a host name or address", norm,
                            server);
    /* Components after the server: no '.', '..', drive or stream forms,
     * no control characters. */
    for (const char *c = end + 1; *c != '\0';) {
        const char *ce = strchr(c, '\\');
        size_t cl = ce != NULL ? (size_t)(ce - c) : strlen(c);
        if ((cl == 1 && c[0] == '.') || (cl == 2 && c[0] == '.' && c[1] == '.'))
            return cp_error_set(e, CP_E_INVALID_ARGUMENT,
                                "remote path %s has a '.' or '..' component", norm);
        for (size_t i = 0; i < cl; i++)
            if ((unsigned char)c[i] < 0x20 || c[i] == ':' || c[i] == '*' || c[i] == '?' ||
                c[i] == '"' || c[i] == '<' || c[i] == '>' || c[i] == '|')
                return cp_error_set(e, CP_E_INVALID_ARGUMENT,
                                    "remote path %s has a character a share path cannot hold",
                                    norm);
        c += cl;
        while (*c == '\\')
            c++;
    }
    const char *share = end + 1;
    const char *share_end = strchr(share, '\\');
    size_t shl = share_end != NULL ? (size_t)(share_end - share) : strlen(share);
    /* Windows drops a name's trailing dots and spaces: "C$. " is C$. */
    while (shl > 0 && (share[shl - 1] == '.' || share[shl - 1] == ' '))
        shl--;
    if (shl == 0)
        return cp_error_set(e, CP_E_INVALID_ARGUMENT,
                            "remote path %s: the share name is only dots and spaces", norm);
    bool named = named_exactly(p, server);
    if (!named && is_self(p, server))
        return cp_error_set(e, CP_E_INVALID_ARGUMENT,
                            "remote path %s: server %s is this machine; its shares lead to the "
                            "node's own disks (name it in groups.smb.allowedServers to allow it)",
                            norm, server);
    if (!named && shl > 0 && share[shl - 1] == '$')
        return cp_error_set(e, CP_E_INVALID_ARGUMENT,
                            "remote path %s: %.*s is an administrative share (name the server in "
                            "groups.smb.allowedServers to allow it)",
                            norm, (int)shl, share);
    if (p->restricted) {
        bool ok = false;
        for (size_t i = 0; i < p->n_allowed && !ok; i++)
            ok = cp_smb_server_matches(p->allowed[i], server);
        if (!ok)
            return cp_error_set(e, CP_E_INVALID_ARGUMENT,
                                "remote path %s: server %s is not in groups.smb.allowedServers",
                                norm, server);
    }
    return CP_OK;
}

static int fail(cp_call *call, const cp_error *e)
{
    return cp_call_fail_error(call, e);
}

/* The remote path normalised (norm, SMB_PATH_MAX bytes), its \\server\share
 * root (root, SMB_PATH_MAX bytes, lower-cased), and the remote-path rules
 * checked on the whole path (New: the link points at it) or on the root
 * alone (Remove: only the root is unmapped, so the rest of the path is
 * upstream's to ignore, one leading backslash or none included). A server
 * written as an address is compared with this machine's addresses, asked
 * of the host now: they change while the service runs. */
static int remote_of(const cp_smb_group_ctx *ctx, const char *remote, bool whole, char *norm,
                     char *root, cp_error *e)
{
    if (cp_smb_normalize(remote, norm, SMB_PATH_MAX, root, SMB_PATH_MAX, e) != CP_OK)
        return e->status;
    char checked[SMB_PATH_MAX], server[CP_SMB_NAME_MAX];
    if (!whole && root_of(norm, checked, sizeof(checked), e) != CP_OK)
        return e->status;
    const char *s = root + 2, *end = strchr(s, '\\');
    snprintf(server, sizeof(server), "%.*s", (int)(end - s), s);
    cp_smb_policy pol = ctx->policy;
    cp_smb_addr a, local[CP_SMB_ADDRS_MAX];
    if (cp_smb_parse_addr(server, &a)) {
        size_t n = 0;
        cp_error le;
        if (ctx->host.ops->local_addresses(ctx->host.ctx, local, CP_SMB_ADDRS_MAX, &n, &le) !=
            CP_OK)
            return cp_error_set(e, le.status,
                                "remote path %s: cannot tell whether %s is this machine: %s", norm,
                                server, le.msg);
        pol.local = local;
        pol.n_local = n < CP_SMB_ADDRS_MAX ? n : CP_SMB_ADDRS_MAX;
    }
    return cp_smb_check_remote(&pol, whole ? norm : checked, e);
}

int cp_smb_handle_new(cp_call *call, const void *req, void *resp)
{
    (void)resp;
    const cp_smb_request *r = req;
    const cp_smb_group_ctx *ctx = group_ctx(call);
    char norm[SMB_PATH_MAX], root[SMB_PATH_MAX];
    cp_error e;
    if (remote_of(ctx, r->remote_path, true, norm, root, &e) != CP_OK)
        return fail(call, &e);
    /* local_path before anything is mapped: a refused link leaves no mapping. */
    const char *link = NULL;
    if (r->local_path[0] != '\0') {
        if (cp_pathrules_check(ctx->rules, r->local_path, &e) != CP_OK ||
            cp_hostpath_confine(call, ctx->rules, &ctx->fs, r->local_path, true, CP_PATH_REPLACE,
                                &link, &e) != CP_OK)
            return fail(call, &e);
    }
    cp_smb_state st = CP_SMB_UNMAPPED;
    if (ctx->host.ops->state(ctx->host.ctx, root, &st, &e) != CP_OK)
        st = CP_SMB_UNMAPPED; /* upstream: an error asking is "not mapped" */
    if (st == CP_SMB_UNREACHABLE) {
        if (ctx->host.ops->unmap(ctx->host.ctx, root, &e) != CP_OK)
            return cp_call_fail(call, e.status, "NewSmbGlobalMapping failed. %s", e.msg);
        st = CP_SMB_UNMAPPED;
    }
    if (st == CP_SMB_UNMAPPED && ctx->host.ops->map(ctx->host.ctx, root, r->username,
                                                    r->username[0] != '\0' ? r->password : "",
                                                    ctx->require_privacy, &e) != CP_OK)
        return cp_call_fail(call, e.status, "NewSmbGlobalMapping failed. %s", e.msg);
    if (link != NULL) {
        size_t n = strlen(norm);
        char target[SMB_PATH_MAX + 1];
        snprintf(target, sizeof(target), "%s%s", norm, n > 0 && norm[n - 1] == '\\' ? "" : "\\");
        if (ctx->fs.ops->symlink(ctx->fs.ctx, link, target, &e) != CP_OK)
            return cp_call_fail(call, e.status, "creating link %s to %s failed with error: %s",
                                r->local_path, norm, e.msg);
    }
    return CP_OK;
}

int cp_smb_handle_remove(cp_call *call, const void *req, void *resp)
{
    (void)resp;
    const cp_smb_request *r = req;
    const cp_smb_group_ctx *ctx = group_ctx(call);
    char norm[SMB_PATH_MAX], root[SMB_PATH_MAX];
    cp_error e;
    /* The same rules as NewSmbGlobalMapping on the root: nothing refused
     * there can be mapped, so nothing else is ours to remove. */
    if (remote_of(ctx, r->remote_path, false, norm, root, &e) != CP_OK)
        return fail(call, &e);
    /* A mapping that is already gone is success: csi-driver-smb has dropped
     * its refcount before this call, so an error here would fail every
     * unstage retry for ever (DRIVER-CONTRACTS §2.4 and Q5). */
    if (ctx->host.ops->unmap(ctx->host.ctx, root, &e) != CP_OK && e.status != CP_E_NOT_FOUND)
        return cp_call_fail(call, e.status, "RemoveSmbGlobalMapping failed. %s", e.msg);
    return CP_OK;
}

const cp_fieldmap cp_smb_map_new[] = {
    {"remote_path", offsetof(cp_smb_request, remote_path), CP_F_STRING},
    {"local_path", offsetof(cp_smb_request, local_path), CP_F_STRING},
    {"username", offsetof(cp_smb_request, username), CP_F_STRING},
    {"password", offsetof(cp_smb_request, password), CP_F_STRING},
    {NULL},
};
const cp_fieldmap cp_smb_map_remove[] = {
    {"remote_path", offsetof(cp_smb_request, remote_path), CP_F_STRING},
    {NULL},
};
