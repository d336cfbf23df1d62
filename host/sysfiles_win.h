/* sysfiles_win.h - the registry's page-file and crash-dump entries and the
 * volume each names (sysfiles_win.c), for the storage host's role
 * detection and cp_sysfile_unresolved. */
#ifndef CP_SYSFILES_WIN_H
#define CP_SYSFILES_WIN_H

#include <stdbool.h>
#include <stddef.h>
#include <wchar.h>

#include "base/status.h"
#include "host/storage_calls_win.h"
#include "host/sysfiles.h"

/* The normalized ID of the volume holding path (which need not exist),
 * through sc's calls, or the system's when sc is NULL: false when no
 * local volume holds it (GetLastError says why). */
bool cp_sysfile_volume_of(const cp_storage_calls *sc, const wchar_t *path,
                          char id[CP_VOLUME_ID_LEN + 1]);

/* A registry value under HKLM as a malloc'd list of strings ending with
 * an empty string, or *out NULL when the value does not exist. */
int cp_sysfile_read_strings(const wchar_t *key, const wchar_t *value, const char *name,
                            wchar_t **out, cp_error *e);

/* The volume of one entry of a value, in id: true. false with *none when
 * the entry names nothing to look up, else with why (cap bytes). */
bool cp_sysfile_entry_volume(const cp_storage_calls *sc, const wchar_t *entry, bool paging,
                             char id[CP_VOLUME_ID_LEN + 1], bool *none, char *why, size_t cap);

/* The registry key holding src's value. */
const wchar_t *cp_sysfile_key(const cp_sysfile_source *src);

#endif
