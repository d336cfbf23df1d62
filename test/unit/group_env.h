/* group_env.h - the groups on simulated hosts, for the unit tests that call
 * them: a temporary directory as the root of the POSIX file-system host,
 * optionally the storage and smb simulators from YAML text, and the groups
 * over them. cmocka's setup and teardown call genv_open and genv_close. */
#ifndef CP_TEST_GROUP_ENV_H
#define CP_TEST_GROUP_ENV_H

#include <stdbool.h>
#include <stddef.h>

#include "groups/groups.h"

typedef struct genv {
    char root[64]; /* the fs host's root: "C:\x" is <root>/C/x */
    cp_fs_host fs;
    cp_storage_host storage; /* ops NULL unless opened with storage_yaml */
    cp_smb_host smb;         /* ops NULL unless opened with smb_yaml */
    cp_groups *groups;
} genv;

typedef struct genv_opts {
    const char *tag;          /* names the temporary directory: /tmp/cp-<tag>-XXXXXX */
    const char *storage_yaml; /* NULL: cfg.storage (ops NULL: the groups' default) */
    const char *smb_yaml;     /* NULL: cfg.smb_host, likewise */
    bool mount_points;        /* hand the storage simulator's mount points to the fs
                                 host, as service/main_posix.c does */
    const char *const *dirs;  /* Windows paths made under the root first, NULL-ended */
    cp_groups_config cfg;     /* the groups' settings (and hosts of the test's own);
                                 fs, and the simulators opened here, are filled in */
} genv_opts;

/* 0 and *out, or -1 with the cause printed. */
int genv_open(const genv_opts *o, genv **out);
/* Frees the groups and hosts and removes the root with all below it:
 * 0, or -1 when something under the root could not be removed. */
int genv_close(genv *t);

/* "C:\a\b" -> "<root>/C/a/b" (as the POSIX fs host maps it) */
void genv_host_path(const genv *t, const char *wpath, char *out, size_t n);
/* Makes the directory wpath and its parents on the host. */
void genv_mkdirs(const genv *t, const char *wpath);

#endif
