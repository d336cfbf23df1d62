/* pipesec_win.h - the pipes' security descriptors: one per group, built
 * from the policy's SDDL (policy.h; the service's configuration gives it,
 * or derives it from the allowed callers) with ConvertStringSecurityDescriptorToSecurityDescriptorW
 * and checked to carry a present, non-NULL, protected DACL before any pipe
 * is created with it. Security at creation: CreateNamedPipeW gets it, so
 * the kernel checks it at every open (Wine stores it but does not enforce
 * it). Windows build only. */
#ifndef CP_PIPESEC_WIN_H
#define CP_PIPESEC_WIN_H

#define WIN32_LEAN_AND_MEAN
#include <windows.h>

#include "base/status.h"
#include "security/policy.h"

typedef struct cp_pipesec cp_pipesec;

/* Builds every group's descriptor. NULL with e set when Windows refuses an
 * SDDL string or the result is not a protected DACL: "<file>:<line>:
 * groups.smb.pipeSecurity: ..." (INVALID_ARGUMENT), or CP_E_NOMEM. */
cp_pipesec *cp_pipesec_new(const cp_policy *p, cp_error *e);

/* The security attributes for group's pipes (never NULL for a group of the
 * policy); owned by ps. The group names must outlive ps. */
const SECURITY_ATTRIBUTES *cp_pipesec_attrs(const cp_pipesec *ps, const char *group);

void cp_pipesec_free(cp_pipesec *ps);

#endif
