/* policy.h - who may use each group and how its pipes are secured: what
 * the caller gate (gate_win.h) and the pipes' security descriptors
 * (pipesec_win.h) are built from. The service fills it from its
 * configuration. Portable C. */
#ifndef CP_POLICY_H
#define CP_POLICY_H

#include <stddef.h>

#include "security/sid.h"

#define CP_POLICY_MAX_GROUPS 8

typedef struct cp_group_policy {
    const char *name;      /* "smb" */
    const cp_sid *allowed; /* callers allowed (CheckTokenMembership on any) */
    size_t n_allowed;
    const char *pipe_sddl; /* the pipes' security descriptor, SDDL */
    const char *sddl_file; /* where pipe_sddl was written, for messages (NULL: "config") */
    int sddl_line;         /* its line there; 0 when derived from allowed */
} cp_group_policy;

/* The strings and SIDs point into the caller's storage, which must
 * outlive the policy and whatever is built from it. */
typedef struct cp_policy {
    cp_group_policy groups[CP_POLICY_MAX_GROUPS];
    size_t n_groups;
} cp_policy;

#endif
