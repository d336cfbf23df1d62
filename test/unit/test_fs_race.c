/* test_fs_race.c - path confinement holds while a caller that can write
 * under a root swaps a parent directory for a link between the group's
 * check and the host's act.
 *
 * A plugin owns K\plugins\drv. There it keeps a real directory and a link
 * to a directory outside every root, and exchanges the two names in a
 * tight loop (renameat2 RENAME_EXCHANGE: atomic, so each name is always
 * either the directory or the link). Meanwhile the filesystem group is
 * asked to act below the directory's name, once per mode, 300 times each:
 * Rmdir with force, Rmdir of a file, RmdirContents, Mkdir (one new level
 * and two), CreateSymlink, and RmdirContents of a name swapped with a link
 * to the kubelet directory itself. The outside directory (and the kubelet
 * directory's own data) must come out untouched every time: whatever a
 * call answers, it may only act inside the roots. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/stat.h>
#include <unistd.h>

#include "groups/filesystem/filesystem.h"
#include "groups/groups.h"
#include "dispatch/dispatch.h"
#include "test/unit/group_call.h"
#include "test/unit/group_env.h"

#define K "C:\\var\\lib\\kubelet"
#define DRV K "\\plugins\\drv"
#define TRIES 300

typedef genv env;

static int setup(void **state)
{
    static const char *const wd[] = {"C:\\work"};
    genv_opts o = {.tag = "fsrace", .cfg = {.working_dirs = wd, .n_working_dirs = 1}};
    return genv_open(&o, (genv **)state);
}

static int teardown(void **state)
{
    return genv_close(*state);
}

/* --- calling the group through dispatch ------------------------------------ */

/* v2alpha1 has every filesystem RPC. Returns the call's status. */
static int call(const env *t, const char *method, const char *path, const char *source,
                const char *target, bool force)
{
    const cp_service *svc = gcall_service(t->groups, "filesystem", "v2alpha1");
    ProtobufCMessage *req = gcall_fs_request(svc, method, path, source, target, force);
    gcall_reply g = gcall_run(svc, method, req);
    free(req);
    if (getenv("RACE_DEBUG") != NULL && g.status != CP_OK) /* why calls were refused */
        fprintf(stderr, "%s: %s\n", method, g.msg);
    gcall_reply_free(&g);
    return g.status;
}

/* --- the swapper ------------------------------------------------------------ */

typedef struct swapper {
    char a[512], b[512]; /* the two names exchanged */
    atomic_bool stop;
    atomic_long swaps;
    pthread_t thread;
} swapper;

static void *swap_loop(void *arg)
{
    swapper *s = arg;
    while (!atomic_load(&s->stop))
        if (renameat2(AT_FDCWD, s->a, AT_FDCWD, s->b, RENAME_EXCHANGE) == 0)
            atomic_fetch_add(&s->swaps, 1);
    return NULL;
}

/* Makes the real directory at dir_w (kept open as *real) and a link at
 * link_w to the host directory away, then starts exchanging the names. */
static void swap_start(const env *t, swapper *s, const char *dir_w, const char *link_w,
                       const char *away, int *real)
{
    genv_host_path(t, dir_w, s->a, sizeof(s->a));
    genv_host_path(t, link_w, s->b, sizeof(s->b));
    genv_mkdirs(t, dir_w);
    assert_int_equal(symlink(away, s->b), 0);
    *real = open(s->a, O_RDONLY | O_DIRECTORY);
    assert_true(*real >= 0);
    atomic_store(&s->stop, false);
    atomic_store(&s->swaps, 0);
    assert_int_equal(pthread_create(&s->thread, NULL, swap_loop, s), 0);
}

static void swap_stop(swapper *s)
{
    atomic_store(&s->stop, true);
    pthread_join(s->thread, NULL);
    assert_true(atomic_load(&s->swaps) > 0);
}

/* --- the modes ------------------------------------------------------------- */

typedef enum mode {
    RMDIR_FORCE,    /* Rmdir(force) of a tree */
    RMDIR_FILE,     /* Rmdir of a file */
    RMDIR_CONTENTS, /* RmdirContents of a directory */
    MKDIR,          /* Mkdir of one new level */
    MKDIR_DEEP,     /* Mkdir of two new levels */
    CREATE_SYMLINK, /* CreateSymlink's new link */
} mode;

static const char *const mode_names[] = {"Rmdir(force)", "Rmdir(file)", "RmdirContents",
                                         "Mkdir",        "Mkdir(deep)", "CreateSymlink"};

/* The object a try expects at fd (the real directory or the outside one),
 * made afresh. */
static void plant(int fd, mode m)
{
    switch (m) {
    case RMDIR_FORCE:
    case RMDIR_CONTENTS:
        mkdirat(fd, "v", 0755);
        mkdirat(fd, "v/sub", 0755);
        close(openat(fd, "v/sub/f", O_WRONLY | O_CREAT, 0644));
        break;
    case RMDIR_FILE:
        close(openat(fd, "v", O_WRONLY | O_CREAT, 0644));
        break;
    default:
        break;
    }
}

/* True when the outside directory (fd) is no longer as planted. */
static bool touched(int fd, mode m)
{
    struct stat st;
    switch (m) {
    case RMDIR_FORCE:
    case RMDIR_CONTENTS:
        return fstatat(fd, "v/sub/f", &st, AT_SYMLINK_NOFOLLOW) != 0;
    case RMDIR_FILE:
        return fstatat(fd, "v", &st, AT_SYMLINK_NOFOLLOW) != 0;
    default: /* something was made there */
        return fstatat(fd, "v", &st, AT_SYMLINK_NOFOLLOW) == 0;
    }
}

/* Empties fd of what any mode planted or made. */
static void clean(int fd)
{
    unlinkat(fd, "v/w", AT_REMOVEDIR);
    unlinkat(fd, "v/sub/f", 0);
    unlinkat(fd, "v/sub", AT_REMOVEDIR);
    if (unlinkat(fd, "v", AT_REMOVEDIR) != 0)
        unlinkat(fd, "v", 0);
}

/* One mode, TRIES calls; returns how many of them touched the outside. */
static int race(env *t, mode m, int real, int away, int *ok)
{
    int escapes = 0;
    *ok = 0;
    clean(away);
    plant(away, m);
    for (int i = 0; i < TRIES; i++) {
        plant(real, m);
        switch (m) {
        case RMDIR_FORCE:
            *ok += call(t, "Rmdir", DRV "\\d\\v", NULL, NULL, true) == CP_OK;
            break;
        case RMDIR_FILE:
            *ok += call(t, "Rmdir", DRV "\\d\\v", NULL, NULL, false) == CP_OK;
            break;
        case RMDIR_CONTENTS:
            *ok += call(t, "RmdirContents", DRV "\\d\\v", NULL, NULL, false) == CP_OK;
            break;
        case MKDIR:
            *ok += call(t, "Mkdir", DRV "\\d\\v", NULL, NULL, false) == CP_OK;
            break;
        case MKDIR_DEEP:
            *ok += call(t, "Mkdir", DRV "\\d\\v\\w", NULL, NULL, false) == CP_OK;
            break;
        case CREATE_SYMLINK:
            *ok += call(t, "CreateSymlink", NULL, K "\\src", DRV "\\d\\v", false) == CP_OK;
            break;
        }
        if (touched(away, m)) {
            escapes++;
            clean(away);
            plant(away, m);
        }
        clean(real);
    }
    clean(away);
    return escapes;
}

/* Every mode below a parent swapped for a link to a directory outside the
 * roots: nothing outside is created, emptied or removed. */
static void test_parent_swapped_for_link_out(void **state)
{
    env *t = *state;
    genv_mkdirs(t, K "\\src");
    genv_mkdirs(t, "C:\\outside");
    char away_h[512];
    genv_host_path(t, "C:\\outside", away_h, sizeof(away_h));
    int away = open(away_h, O_RDONLY | O_DIRECTORY);
    assert_true(away >= 0);
    swapper s;
    int real = -1;
    swap_start(t, &s, DRV "\\d", DRV "\\l", away_h, &real);
    int total = 0;
    char report[1024] = "";
    for (mode m = RMDIR_FORCE; m <= CREATE_SYMLINK; m++) {
        int ok = 0;
        int n = race(t, m, real, away, &ok);
        total += n;
        size_t used = strlen(report);
        snprintf(report + used, sizeof(report) - used, " %s %d/%d (%d OK);", mode_names[m], n,
                 TRIES, ok);
    }
    swap_stop(&s);
    close(real);
    close(away);
    print_message("escapes:%s (%ld swaps)\n", report, (long)atomic_load(&s.swaps));
    if (total != 0)
        fail_msg("acted outside the roots:%s", report);
}

/* RmdirContents of a name swapped with a link to the kubelet directory:
 * the kubelet directory is never emptied. */
static void test_link_to_root_swapped_in(void **state)
{
    env *t = *state;
    genv_mkdirs(t, K "\\pods\\p1");
    char keep[512], kh[512];
    genv_host_path(t, K "\\pods\\p1\\data", keep, sizeof(keep));
    genv_host_path(t, K, kh, sizeof(kh));
    swapper s;
    int real = -1;
    swap_start(t, &s, DRV "\\up", DRV "\\upl", kh, &real);
    int escapes = 0;
    for (int i = 0; i < TRIES; i++) {
        close(open(keep, O_WRONLY | O_CREAT, 0644));
        close(openat(real, "x", O_WRONLY | O_CREAT, 0644));
        call(t, "RmdirContents", DRV "\\up", NULL, NULL, false);
        struct stat st;
        if (lstat(keep, &st) != 0) {
            escapes++;
            genv_mkdirs(t, K "\\pods\\p1");
        }
    }
    swap_stop(&s);
    close(real);
    print_message("kubelet directory emptied %d/%d times\n", escapes, TRIES);
    assert_int_equal(escapes, 0);
    genv_mkdirs(t, K "\\plugins\\drv");
}

/* Without a swap the same calls still act: the guard refuses races, not
 * work. */
static void test_no_swap_still_works(void **state)
{
    env *t = *state;
    genv_mkdirs(t, DRV "\\d");
    genv_mkdirs(t, K "\\src");
    assert_int_equal(call(t, "Mkdir", DRV "\\d\\a\\b", NULL, NULL, false), CP_OK);
    assert_int_equal(call(t, "CreateSymlink", NULL, K "\\src", DRV "\\d\\a\\ln", false), CP_OK);
    assert_int_equal(call(t, "RmdirContents", DRV "\\d\\a", NULL, NULL, false), CP_OK);
    assert_int_equal(call(t, "Rmdir", DRV "\\d\\a", NULL, NULL, false), CP_OK);
    assert_int_equal(call(t, "Rmdir", DRV "\\d", NULL, NULL, true), CP_OK);
    char p[512];
    struct stat st;
    genv_host_path(t, DRV "\\d", p, sizeof(p));
    assert_int_not_equal(lstat(p, &st), 0);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_no_swap_still_works),
        T(test_parent_swapped_for_link_out),
        T(test_link_to_root_swapped_in),
    };
    return cmocka_run_group_tests_name("fs_race", tests, NULL, NULL);
}
