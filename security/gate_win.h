/* gate_win.h - per-group caller authorization on each pipe connection
 * (the transport's cp_authorize_fn). Windows build only.
 *
 * On a connection's first bytes, while the client holds it open:
 *   1. the client process: GetNamedPipeClientProcessId -> OpenProcess ->
 *      OpenProcessToken. The process must still be running, must have been
 *      created before the connection was (a recycled pid is not the
 *      client), and must still be the pipe's client afterwards;
 *   2. impersonation, when the client allowed it (SECURITY_IDENTIFICATION
 *      or more; grpc-go clients connect at SECURITY_ANONYMOUS and give none):
 *      ImpersonateNamedPipeClient -> OpenThreadToken -> RevertToSelf;
 *   3. each token obtained must pass both the pure decision (authz.h) and
 *      the system's: one of the group's allowed SIDs enabled in it, with
 *      CheckTokenMembership's semantics, asked in one AccessCheck
 *      (osjudge_win.h). Any failure along the way denies (fail closed).
 * A refused connection gets PERMISSION_DENIED on every call and an audit
 * record naming the caller, the pid, the group and why.
 *
 * An allowed connection stays allowed only while the process that opened
 * it lives: the hook hands the transport a handle on that process
 * (cp_pipe_client.process), and once it has exited the transport calls
 * cp_gate_revoke before the next bytes reach the connection. A named pipe
 * says who opened it, never who writes: a process the opener handed its
 * handle to cannot be identified, so its calls are refused. (While the
 * opener still runs, the two cannot be told apart.)
 */
#ifndef CP_GATE_WIN_H
#define CP_GATE_WIN_H

#include <stddef.h>
#include <stdint.h>

#include "dispatch/method.h"
#include "base/status.h"
#include "security/audit.h"
#include "security/policy.h"

typedef struct cp_gate cp_gate;

/* Copies the groups' allowed SIDs from p (the group names must outlive
 * the gate). audit may be NULL. NULL with e set on out-of-memory. */
cp_gate *cp_gate_new(const cp_policy *p, cp_audit *audit, cp_error *e);

/* cp_authorize_fn; ctx is the cp_gate, os_handle a cp_pipe_client*. */
const char *cp_gate_authorize(void *ctx, const cp_service *svc, uint32_t pid, void *os_handle,
                              char *peer_id, size_t peer_id_cap);

/* cp_revoke_fn; ctx is the cp_gate. Audits one call refused on a handed-on
 * connection ("denied caller=unknown pid=<opener> ...: call <path> refused:
 * it was read after the process that opened this connection ... had
 * exited ..."). */
void cp_gate_revoke(void *ctx, const cp_service *svc, uint32_t pid, const char *peer_id,
                    const char *path);

void cp_gate_free(cp_gate *g);

#endif
