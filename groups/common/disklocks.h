/* disklocks.h - per-disk serialization for the disk and volume groups.
 *
 * Calls that act on one disk (or on a volume, through the disk holding it)
 * take that disk's lock for the duration of their host operations, so two
 * calls on the same disk run one after the other while calls on different
 * disks run in parallel. Locks are keyed by disk number and exist only
 * while held or awaited. Shared by every version of both groups (one
 * instance per process, owned by groups.c). Portable C.
 */
#ifndef CP_GROUPS_DISKLOCKS_H
#define CP_GROUPS_DISKLOCKS_H

#include <stdint.h>

typedef struct cp_disklocks cp_disklocks;

/* NULL when out of memory. Free with cp_disklocks_free (no lock held). */
cp_disklocks *cp_disklocks_new(void);
void cp_disklocks_free(cp_disklocks *l);

/* Blocks until the caller holds disk's lock. Not re-entrant: a holder must
 * not lock the same disk again. */
void cp_disklocks_lock(cp_disklocks *l, uint32_t disk);
void cp_disklocks_unlock(cp_disklocks *l, uint32_t disk);

#endif
