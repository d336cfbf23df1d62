/* system.c - the system group's logic (see system.h). */
#include "groups/system/system.h"

#include <stddef.h>
#include <string.h>
#include <strings.h>

static const cp_system_group_ctx *group_ctx(cp_call *call)
{
    return cp_call_ctx(call);
}

bool cp_system_allowed(const cp_system_group_ctx *ctx, const char *name)
{
    if (!ctx->restricted)
        return true;
    for (size_t i = 0; i < ctx->n_allowed; i++)
        if (strcasecmp(ctx->allowed[i], name) == 0) /* the SCM's names are case-insensitive */
            return true;
    return false;
}

/* The name rules: what the SCM could never take as a service name. */
static int check_name(cp_call *call, const char *method, const char *name)
{
    size_t n = strlen(name);
    if (n == 0)
        return cp_call_fail(call, CP_E_INVALID_ARGUMENT, "%s: service name empty", method);
    if (n > CP_SERVICE_NAME_MAX)
        return cp_call_fail(call, CP_E_INVALID_ARGUMENT,
                            "%s: service name of %lu bytes is longer than %d", method,
                            (unsigned long)n, CP_SERVICE_NAME_MAX);
    if (strpbrk(name, "\\/") != NULL)
        return cp_call_fail(call, CP_E_INVALID_ARGUMENT, "%s: service name %s contains '\\' or '/'",
                            method, name);
    return CP_OK;
}

static int check_allowed(cp_call *call, const char *method, const char *name)
{
    int rc = check_name(call, method, name);
    if (rc != CP_OK)
        return rc;
    const cp_system_group_ctx *ctx = group_ctx(call);
    if (!cp_system_allowed(ctx, name))
        return cp_call_fail(call, CP_E_PERMISSION_DENIED,
                            "%s: service %s is not in the system group's allowedServices %s",
                            method, name, ctx->allowed_text);
    return CP_OK;
}

int cp_system_handle_bios_serial(cp_call *call, const void *req, void *resp)
{
    (void)req;
    cp_system_response *out = resp;
    const cp_system_group_ctx *ctx = group_ctx(call);
    char serial[CP_BIOS_SERIAL_MAX];
    cp_error e;
    if (ctx->host.ops->bios_serial(ctx->host.ctx, serial, sizeof(serial), &e) != CP_OK)
        return cp_call_fail_error(call, &e);
    out->serial_number = cp_call_strdup(call, serial);
    if (out->serial_number == NULL)
        return cp_call_fail(call, CP_E_NOMEM, "GetBIOSSerialNumber: out of memory");
    return CP_OK;
}

int cp_system_handle_start(cp_call *call, const void *req, void *resp)
{
    (void)resp;
    const cp_system_request *in = req;
    int rc = check_allowed(call, "StartService", in->name);
    if (rc != CP_OK)
        return rc;
    const cp_system_group_ctx *ctx = group_ctx(call);
    cp_error e;
    if (ctx->host.ops->service_start(ctx->host.ctx, in->name, &e) != CP_OK)
        return cp_call_fail_error(call, &e);
    return CP_OK;
}

int cp_system_handle_stop(cp_call *call, const void *req, void *resp)
{
    (void)resp;
    const cp_system_request *in = req;
    int rc = check_allowed(call, "StopService", in->name);
    if (rc != CP_OK)
        return rc;
    const cp_system_group_ctx *ctx = group_ctx(call);
    cp_error e;
    if (ctx->host.ops->service_stop(ctx->host.ctx, in->name, in->force, &e) != CP_OK)
        return cp_call_fail_error(call, &e);
    return CP_OK;
}

/* Reading a service's state changes nothing: not limited by
 * allowedServices. */
int cp_system_handle_get(cp_call *call, const void *req, void *resp)
{
    const cp_system_request *in = req;
    cp_system_response *out = resp;
    int rc = check_name(call, "GetService", in->name);
    if (rc != CP_OK)
        return rc;
    const cp_system_group_ctx *ctx = group_ctx(call);
    cp_service_info info;
    cp_error e;
    if (ctx->host.ops->service_get(ctx->host.ctx, in->name, &info, &e) != CP_OK)
        return cp_call_fail_error(call, &e);
    out->display_name = cp_call_strdup(call, info.display_name);
    if (out->display_name == NULL)
        return cp_call_fail(call, CP_E_NOMEM, "GetService: out of memory");
    /* Values the proto does not know map as upstream's strings do: an
     * unknown start type to 0 (BOOT), an unknown state to 0 (UNKNOWN). */
    out->start_type = info.start_type >= 0 && info.start_type <= 4 ? info.start_type : 0;
    out->status = info.state >= 1 && info.state <= 7 ? info.state : 0;
    return CP_OK;
}
