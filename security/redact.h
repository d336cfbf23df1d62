/* redact.h - keeping secrets (SMB passwords, CHAP secrets) out of logs.
 *
 * A field is secret by its name: one containing "password", "passwd" or
 * "secret" in any case, underscores ignored (smb password, iscsi
 * chap_secret, SetMutualChapSecret's MutualChapSecret), or one the
 * configuration names (log.redactFields: the same comparison, whole
 * name). Messages are
 * rendered for the log with every secret field's value replaced by
 * "<redacted>", at any depth; and any text (an error message a handler
 * built) can be scrubbed of the secret values a request carried. Portable
 * C (protobuf-c reflection).
 */
#ifndef CP_REDACT_H
#define CP_REDACT_H

#include <stdbool.h>
#include <stddef.h>
#include <protobuf-c/protobuf-c.h>

#define CP_REDACTED "<redacted>"

/* True for a field name that holds a secret. */
bool cp_redact_is_secret(const char *field_name);

#define CP_REDACT_MAX_EXTRA 32

/* More field names to treat as secret (log.redactFields), replacing any
 * given before; at most CP_REDACT_MAX_EXTRA names of under 64 bytes
 * (false otherwise, nothing changed). Call at start-up, before calls are
 * served: the list is read without a lock. */
bool cp_redact_set_extra(char *const *names, size_t n);

/* Writes m as one line of compact JSON-like text ({"path":"C:\\x",
 * "force":true}; bytes as <N bytes>; long strings cut with "...") with
 * secrets replaced by CP_REDACTED. Always NUL-terminates out (cap > 0);
 * returns the length written. */
size_t cp_redact_render(const ProtobufCMessage *m, char *out, size_t cap);

/* Replaces, in place, every occurrence in text of the value of a secret
 * field of m (values shorter than 3 bytes excepted, so that a secret "a"
 * does not mangle the text) with CP_REDACTED, truncating if needed.
 * Returns how many occurrences were replaced. */
size_t cp_redact_scrub(const ProtobufCMessage *m, char *text, size_t cap);

#endif
