/* iscsi_sim_internal.h - the iSCSI simulator's model, as its fixture
 * section describes it (iscsi_fixture_sim.c reads it, iscsi_sim.c runs
 * it). Not for other modules. */
#ifndef CP_WINAPI_ISCSI_SIM_INTERNAL_H
#define CP_WINAPI_ISCSI_SIM_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "host/iscsi_host.h"

#define CP_ISCSI_SIM_SERIAL_MAX 64
#define CP_ISCSI_SIM_SECRET_MAX 17 /* Windows takes 12 to 16 bytes */

struct cp_storage_sim_media; /* storage_sim.h */

typedef struct iscsi_lun {
    uint64_t size;
    char serial[CP_ISCSI_SIM_SERIAL_MAX]; /* "" = derived from the IQN and LUN */
    struct cp_storage_sim_media *media;   /* run time: its data while logged out */
} iscsi_lun;

typedef struct iscsi_target {
    char iqn[CP_ISCSI_NAME_MAX];
    bool chap; /* logins need CHAP with these */
    char chap_user[CP_ISCSI_NAME_MAX];
    char chap_secret[CP_ISCSI_SIM_SECRET_MAX]; /* compared, never echoed */
    iscsi_lun *luns;
    size_t n_luns;
} iscsi_target;

typedef struct iscsi_portal_def {
    cp_iscsi_portal portal;
    bool reachable;  /* false: AddTargetPortal fails UNAVAILABLE */
    bool registered; /* a send-target portal at start */
    iscsi_target *targets;
    size_t n_targets;
} iscsi_portal_def;

typedef struct iscsi_session_def {
    size_t portal, target; /* indexes into the model */
} iscsi_session_def;

typedef struct iscsi_model {
    iscsi_portal_def *portals;
    size_t n_portals;
    iscsi_session_def *sessions; /* logged in at start */
    size_t n_sessions;
    bool stopped; /* initiator_stopped: the initiator service does not run */
} iscsi_model;

/* Reads the iscsi: section of the fixture file path (or of text when path
 * is NULL) into m (zeroed first; no section: an empty model). CP_OK, or
 * CP_E_INVALID_ARGUMENT with e naming the file, line, key and cause (m
 * then freed), CP_E_NOT_FOUND when the file cannot be opened. */
int cp_iscsi_model_load(const char *path, const char *text, iscsi_model *m, cp_error *e);
void cp_iscsi_model_free(iscsi_model *m);

#endif
