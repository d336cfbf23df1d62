/* group_call.h - one call through the real dispatch path, for the unit
 * tests of the groups: a request message is encoded, run by
 * cp_dispatch_run on a group's service, and the response decoded. Fields
 * are set by name, so one test can send the same request to every version
 * of a group. Failures of the harness itself (no such service, method or
 * field) fail the running test, naming what is missing. */
#ifndef CP_TEST_GROUP_CALL_H
#define CP_TEST_GROUP_CALL_H

#include <protobuf-c/protobuf-c.h>
#include <stdbool.h>

#include "base/status.h"
#include "dispatch/dispatch.h"
#include "groups/groups.h"

typedef struct gcall_reply {
    int status;                 /* CP_OK or CP_E_* */
    char msg[CP_ERROR_MSG_MAX]; /* the call's error message */
    char note[512];             /* what the call noted for its audit record */
    ProtobufCMessage *resp;     /* decoded when OK, else NULL: gcall_reply_free */
} gcall_reply;

/* The service of group at version. */
const cp_service *gcall_service(const cp_groups *g, const char *group, const char *version);

/* A new, initialised request message for svc's method (free with free()). */
ProtobufCMessage *gcall_request(const cp_service *svc, const char *method);

/* Sets field to value, parsed by the field's type (string, uint32, int64,
 * bool "true"/"false"). The message must have the field. */
void gcall_set(ProtobufCMessage *m, const char *field, const char *value);
/* Sets field when the message has it and value is not NULL; false when skipped. */
bool gcall_set_if(ProtobufCMessage *m, const char *field, const char *value);
/* Sets a bool field when the message has it. */
void gcall_set_bool_if(ProtobufCMessage *m, const char *field, bool value);

/* A filesystem group request: path, source_path, target_path and force,
 * each set where the method's message has it (NULL strings are skipped). */
ProtobufCMessage *gcall_fs_request(const cp_service *svc, const char *method, const char *path,
                                   const char *source, const char *target, bool force);

/* Encodes req, runs svc's method through cp_dispatch_run, decodes the answer. */
gcall_reply gcall_run(const cp_service *svc, const char *method, const ProtobufCMessage *req);
void gcall_reply_free(gcall_reply *r);

/* Fails the test unless status is want and, when in_msg is not NULL, msg
 * contains in_msg. */
void gcall_check(int status, const char *msg, int want, const char *in_msg);

#endif
