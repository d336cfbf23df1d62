/* group_env.c - the groups on simulated hosts (group_env.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <ftw.h>
#include <sys/stat.h>

#include "host/mountpoints.h"
#include "sim/smb_sim.h"
#include "sim/storage_sim.h"
#include "test/unit/group_env.h"

static int rm_entry(const char *p, const struct stat *st, int flag, struct FTW *f)
{
    (void)st, (void)flag, (void)f;
    return remove(p);
}

void genv_host_path(const genv *t, const char *wpath, char *out, size_t n)
{
    snprintf(out, n, "%s/%c/%s", t->root, wpath[0], wpath + 3);
    for (char *s = out + strlen(t->root); *s != '\0'; s++)
        if (*s == '\\')
            *s = '/';
}

void genv_mkdirs(const genv *t, const char *wpath)
{
    char p[512];
    genv_host_path(t, wpath, p, sizeof(p));
    for (char *s = p + strlen(t->root) + 1; *s != '\0'; s++) {
        if (*s == '/') {
            *s = '\0';
            mkdir(p, 0755);
            *s = '/';
        }
    }
    mkdir(p, 0755);
}

int genv_open(const genv_opts *o, genv **out)
{
    genv *t = calloc(1, sizeof(*t));
    if (t == NULL)
        return -1;
    snprintf(t->root, sizeof(t->root), "/tmp/cp-%s-XXXXXX", o->tag);
    if (mkdtemp(t->root) == NULL) {
        print_error("mkdtemp %s failed\n", t->root);
        free(t);
        return -1;
    }
    for (const char *const *d = o->dirs; d != NULL && *d != NULL; d++)
        genv_mkdirs(t, *d);
    cp_error e;
    if (cp_fs_host_posix_new(t->root, &t->fs, &e) != CP_OK ||
        (o->storage_yaml != NULL &&
         cp_storage_sim_new_from_string(o->storage_yaml, &t->storage, &e) != CP_OK) ||
        (o->smb_yaml != NULL && cp_smb_sim_new_from_string(o->smb_yaml, &t->smb, &e) != CP_OK)) {
        print_error("%s\n", e.msg);
        (void)genv_close(t);
        return -1;
    }
    cp_mount_points mp;
    if (o->mount_points && cp_storage_sim_mount_points(&t->storage, &mp) == CP_OK)
        cp_fs_host_posix_set_mount_points(&t->fs, &mp);
    cp_groups_config cfg = o->cfg;
    cfg.fs = t->fs;
    if (o->storage_yaml != NULL)
        cfg.storage = t->storage;
    if (o->smb_yaml != NULL)
        cfg.smb_host = t->smb;
    t->groups = cp_groups_new(&cfg, &e);
    if (t->groups == NULL) {
        print_error("%s\n", e.msg);
        (void)genv_close(t);
        return -1;
    }
    *out = t;
    return 0;
}

int genv_close(genv *t)
{
    if (t == NULL)
        return 0;
    if (t->groups != NULL)
        cp_groups_free(t->groups);
    if (t->storage.ops != NULL)
        t->storage.ops->destroy(t->storage.ctx);
    if (t->smb.ops != NULL)
        t->smb.ops->destroy(t->smb.ctx);
    if (t->fs.ops != NULL)
        cp_fs_host_posix_free(&t->fs);
    int rc = nftw(t->root, rm_entry, 16, FTW_DEPTH | FTW_PHYS) == 0 ? 0 : -1;
    free(t);
    return rc;
}
