/* headbytes_sim.h - the bytes a test fixture puts at the start of a
 * volume, read the same way by the storage simulator (storage_fixture_sim.c)
 * and the device model (test/model/model_fixture.c): a list of
 * "OFFSET:HEX" items, each the bytes HEX (two hex digits a byte) the volume
 * holds from OFFSET (decimal) on, e.g. an ext4 superblock's magic
 * "1080:53ef", within the volume's first CP_SIM_HEAD_MAX bytes. Test
 * builds only. */
#ifndef CP_WINAPI_HEADBYTES_SIM_H
#define CP_WINAPI_HEADBYTES_SIM_H

#include <stddef.h>
#include <stdint.h>

#define CP_SIM_HEAD_MAX (256u * 1024u)

/* Writes the bytes of one item into *head, allocating it (CP_SIM_HEAD_MAX
 * zero bytes, *len set to that) on first use. CP_OK; CP_E_NOMEM;
 * CP_E_INVALID_ARGUMENT with *why the problem, a text the caller follows
 * with the item in its message (bytes before a bad hex digit are written). */
int cp_sim_head_bytes(const char *item, uint8_t **head, size_t *len, const char **why);

#endif
