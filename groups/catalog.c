/* catalog.c - the 23 services, in upstream's start order. */
#include "groups/catalog.h"

#include <string.h>

#include "filesystem/v1alpha1/api.pb-c.h"
#include "filesystem/v1beta1/api.pb-c.h"
#include "filesystem/v1beta2/api.pb-c.h"
#include "filesystem/v1/api.pb-c.h"
#include "filesystem/v2alpha1/api.pb-c.h"
#include "disk/v1alpha1/api.pb-c.h"
#include "disk/v1beta1/api.pb-c.h"
#include "disk/v1beta2/api.pb-c.h"
#include "disk/v1beta3/api.pb-c.h"
#include "disk/v1/api.pb-c.h"
#include "volume/v1alpha1/api.pb-c.h"
#include "volume/v1beta1/api.pb-c.h"
#include "volume/v1beta2/api.pb-c.h"
#include "volume/v1beta3/api.pb-c.h"
#include "volume/v1/api.pb-c.h"
#include "volume/v2alpha1/api.pb-c.h"
#include "smb/v1alpha1/api.pb-c.h"
#include "smb/v1beta1/api.pb-c.h"
#include "smb/v1beta2/api.pb-c.h"
#include "smb/v1/api.pb-c.h"
#include "system/v1alpha1/api.pb-c.h"
#include "iscsi/v1alpha1/api.pb-c.h"
#include "iscsi/v1alpha2/api.pb-c.h"

const cp_catalog_entry cp_catalog[] = {
    {"filesystem", "v1alpha1", &v1alpha1__filesystem__descriptor},
    {"filesystem", "v1beta1", &v1beta1__filesystem__descriptor},
    {"filesystem", "v1beta2", &v1beta2__filesystem__descriptor},
    {"filesystem", "v1", &v1__filesystem__descriptor},
    {"filesystem", "v2alpha1", &v2alpha1__filesystem__descriptor},
    {"disk", "v1alpha1", &v1alpha1__disk__descriptor},
    {"disk", "v1beta1", &v1beta1__disk__descriptor},
    {"disk", "v1beta2", &v1beta2__disk__descriptor},
    {"disk", "v1beta3", &v1beta3__disk__descriptor},
    {"disk", "v1", &v1__disk__descriptor},
    {"volume", "v1alpha1", &v1alpha1__volume__descriptor},
    {"volume", "v1beta1", &v1beta1__volume__descriptor},
    {"volume", "v1beta2", &v1beta2__volume__descriptor},
    {"volume", "v1beta3", &v1beta3__volume__descriptor},
    {"volume", "v1", &v1__volume__descriptor},
    {"volume", "v2alpha1", &v2alpha1__volume__descriptor},
    {"smb", "v1alpha1", &v1alpha1__smb__descriptor},
    {"smb", "v1beta1", &v1beta1__smb__descriptor},
    {"smb", "v1beta2", &v1beta2__smb__descriptor},
    {"smb", "v1", &v1__smb__descriptor},
    {"system", "v1alpha1", &v1alpha1__system__descriptor},
    {"iscsi", "v1alpha1", &v1alpha1__iscsi__descriptor},
    {"iscsi", "v1alpha2", &v1alpha2__iscsi__descriptor},
};

const size_t cp_catalog_len = sizeof(cp_catalog) / sizeof(cp_catalog[0]);

const cp_catalog_entry *cp_catalog_find(const char *group, const char *version)
{
    for (size_t i = 0; i < cp_catalog_len; i++)
        if (strcmp(cp_catalog[i].group, group) == 0 && strcmp(cp_catalog[i].version, version) == 0)
            return &cp_catalog[i];
    return NULL;
}
