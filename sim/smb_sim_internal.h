/* smb_sim_internal.h - the SMB simulator's model, as its fixture section
 * describes it (smb_fixture_sim.c reads it, smb_sim.c runs it). Not for
 * other modules. */
#ifndef CP_WINAPI_SMB_SIM_INTERNAL_H
#define CP_WINAPI_SMB_SIM_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "host/smb_host.h"

typedef struct smb_cred {
    char user[CP_SMB_NAME_MAX];     /* a pattern ('*') */
    char password[CP_SMB_NAME_MAX]; /* compared, never echoed */
} smb_cred;

typedef struct smb_server {
    char name[CP_SMB_NAME_MAX];      /* a pattern ('*'); the first server that matches answers */
    bool reachable;                  /* false: does not answer */
    bool drops;                      /* answers a mapping, then no longer */
    char (*shares)[CP_SMB_NAME_MAX]; /* patterns; none listed: any share */
    size_t n_shares;
    smb_cred *creds; /* none listed: any credentials */
    size_t n_creds;
    uint64_t total, free_bytes; /* each share's size and free bytes */
} smb_server;

typedef struct smb_mapping_def {
    char root[CP_SMB_NAME_MAX]; /* \\server\share, lower-cased */
    char user[CP_SMB_NAME_MAX];
} smb_mapping_def;

typedef struct smb_model {
    char netbios[CP_SMB_NAME_MAX], dns[CP_SMB_NAME_MAX]; /* this machine */
    smb_server *servers;
    size_t n_servers;
    smb_mapping_def *mappings; /* global mappings that exist at start */
    size_t n_mappings;
} smb_model;

/* The server of root "\\server\share" (first match), or NULL. */
const smb_server *cp_smb_model_server(const smb_model *m, const char *root);

/* "\\server\share" -> "server" / "share" in out. */
void cp_smb_root_part(const char *root, int part, char *out, size_t len);

/* Reads the smb: section of the fixture file path (or of text when path is
 * NULL) into m (zeroed first; no section: no server, this machine SIMNODE
 * / simnode.sim.local). CP_OK, or CP_E_INVALID_ARGUMENT with e naming the
 * file, line, key and cause (m then freed), CP_E_NOT_FOUND when the file
 * cannot be opened. */
int cp_smb_model_load(const char *path, const char *text, smb_model *m, cp_error *e);
void cp_smb_model_free(smb_model *m);

#endif
