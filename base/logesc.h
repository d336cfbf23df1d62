/* logesc.h - keeping what a caller sent from forging log lines, audit
 * records and Event Log entries. Request strings reach these sinks
 * verbatim through error texts ("path contains invalid characters: ...",
 * service names, SMB remote paths); a CR LF followed by a whole klog line
 * would otherwise start a line of its own, and terminal escape codes would
 * act on whoever reads the log. So the sinks (the logger, the audit
 * formatter, the Event Log writer) escape, once, every character that is
 * not printable:
 *
 *   \n \r \t                     for LF, CR, TAB
 *   \xHH                         other C0 controls, DEL, and a byte that is
 *                                not part of well-formed UTF-8
 *   \uHHHH                       C1 controls (U+0080..U+009F, NEL and CSI
 *                                among them), U+2028 and U+2029 (line and
 *                                paragraph separators), and the bidirectional
 *                                controls (U+061C, U+200E, U+200F,
 *                                U+202A..U+202E, U+2066..U+2069) that
 *                                reorder what a reader sees
 *
 * A backslash is left as it is (Windows paths are full of them): the
 * escaping is idempotent, so a text escaped at one sink passes the next
 * unchanged. Portable C.
 */
#ifndef CP_LOGESC_H
#define CP_LOGESC_H

#include <stdbool.h>
#include <stddef.h>

/* Escapes the n bytes of in into out (cap bytes, NUL-terminated; an
 * escape is never cut). Returns the length written. in and out must not
 * overlap. */
size_t cp_logesc(const char *in, size_t n, char *out, size_t cap);

/* Whether any of the n bytes of s would be escaped. */
bool cp_logesc_needed(const char *s, size_t n);

/* Escapes s (NUL-terminated, cap bytes of room) in place; what does not
 * fit is cut at an escape boundary. Returns the new length. */
size_t cp_logesc_inplace(char *s, size_t cap);

#endif
