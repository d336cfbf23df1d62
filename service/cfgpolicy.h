/* cfgpolicy.h - the security policy (security/policy.h) the caller gate
 * and the pipes' security are built from, taken from the configuration.
 * Portable C. */
#ifndef CP_CFGPOLICY_H
#define CP_CFGPOLICY_H

#include "security/policy.h"
#include "service/config.h"

/* Fills out with every group of c, in c's order: name, allowed callers,
 * the effective pipe SDDL and where it was written. out points into c,
 * which must outlive it and what is built from it. */
void cp_config_policy(const cp_config *c, cp_policy *out);

#endif
