/* smb_sim.h - the simulated SMB client (smb_sim.c), seeded from the smb:
 * section of the simulators' YAML fixture (test/fixtures/storage.yaml
 * documents it). For the native build, its tests and csi-proxy-sim.exe;
 * never csi-proxy.exe. */
#ifndef CP_WINAPI_SMB_SIM_H
#define CP_WINAPI_SMB_SIM_H

#include "host/smb_host.h"

/* From the fixture file at path (NULL: no server answers). CP_OK and *out
 * set; CP_E_INVALID_ARGUMENT with e naming the file, the line, the key and
 * the cause; CP_E_NOT_FOUND when the file cannot be opened. Release with
 * out->ops->destroy(out->ctx). */
int cp_smb_sim_new(const char *path, cp_smb_host *out, cp_error *e);

/* Same, from YAML text (unit tests). */
int cp_smb_sim_new_from_string(const char *yaml, cp_smb_host *out, cp_error *e);

#endif
