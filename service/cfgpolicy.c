/* cfgpolicy.c - see cfgpolicy.h. */
#include "service/cfgpolicy.h"

_Static_assert(CP_CONFIG_N_GROUPS <= CP_POLICY_MAX_GROUPS, "a policy holds every group");

void cp_config_policy(const cp_config *c, cp_policy *out)
{
    *out = (cp_policy){.n_groups = CP_CONFIG_N_GROUPS};
    for (size_t i = 0; i < CP_CONFIG_N_GROUPS; i++) {
        const cp_config_group *g = &c->groups[i];
        out->groups[i] = (cp_group_policy){
            .name = g->name,
            .allowed = g->allowed,
            .n_allowed = g->n_allowed,
            .pipe_sddl = g->pipe_sddl,
            .sddl_file = c->path,
            .sddl_line = g->pipe_sddl_line,
        };
    }
}
