/* pathrules.h - which host paths a request may name.
 *
 * A cp_pathrules holds the directories requests are confined to: every
 * -working-dir value followed by -kubelet-path (upstream's order, which
 * shows in the "not within the working directories: [...]" message).
 *
 * cp_pathrules_check() applies upstream's validatePathWindows rules
 * (WIRE-API §4.1) in upstream's order, so every case upstream rejects is
 * rejected with upstream's text inside our message, plus rules upstream
 * lacks. A path is accepted only when all of these hold:
 *
 *   1. at most 260 bytes (UTF-8, as upstream measures);
 *   2. it does not start with '\': no UNC (\\server\share), device
 *      (\\.\) or \\?\ paths;
 *   3. after the "X:\" prefix: none of " / : ? * | < > (':' would name an
 *      alternate data stream; '/' is an alternative separator Windows
 *      accepts, which would make the textual confinement test ambiguous -
 *      upstream rejects it too), no control character (0x01-0x1f), valid
 *      UTF-8, and no ".." anywhere (upstream rejects the substring, which
 *      covers every ".." component; we keep that, so "a..b" is refused as
 *      upstream does);
 *   4. it is absolute: a drive letter, ':' and '\';
 *   5. every component is non-empty (no "\\" inside), is not ".", and does
 *      not end in '.' or ' ' (Win32 strips those, so the name we would
 *      create through a \\?\ path and the one kubelet sees would differ).
 *      One trailing '\' is allowed ("C:\var\lib\kubelet\" is the root);
 *   6. it lies in a configured directory or is that directory, compared
 *      ASCII-case-insensitively with a separator boundary:
 *      C:\var\lib\kubelet-evil is outside C:\var\lib\kubelet.
 *
 * Non-ASCII letters are compared byte for byte, so a path that differs from
 * a configured directory only in the case of a non-ASCII letter is refused
 * (fails closed). Reserved device names (CON, NUL, ...) are not refused:
 * the Win32 host opens every path through a \\?\ prefix, where they are
 * plain names. Embedded NUL bytes cannot reach here: protobuf-c hands us C
 * strings, and the host acts on the same C string we checked.
 *
 * Every violation is CP_E_INVALID_ARGUMENT with a message naming the path
 * and the rule. Paths in messages are cut at 300 bytes on a UTF-8
 * character boundary (cp_utf8_cut), so a message is never made invalid
 * UTF-8 by the cut.
 *
 * A configured directory itself may be named (rule 6: "or is that
 * directory") by requests that read it or create it when missing; one
 * that would remove, empty, replace or mount over it also calls
 * cp_pathrules_check_keeps_roots(), which refuses a configured directory
 * and every ancestor of one.
 */
#ifndef CP_PATHRULES_H
#define CP_PATHRULES_H

#include <stddef.h>
#include <stdint.h>

#include "base/status.h"

#define CP_PATHRULES_MAX_LEN 260

typedef struct cp_pathrules cp_pathrules;

/* Creates the policy. kubelet_path is required; working_dirs may be NULL
 * when n_working_dirs is 0. Every directory must itself pass rules 1-5
 * (absolute, no "..", ...); trailing separators are dropped ("C:\k\" and
 * "C:\k" are the same directory, "C:\" stays the drive root). All strings
 * are copied. Returns CP_OK and sets *out (caller frees with
 * cp_pathrules_free), or CP_E_INVALID_ARGUMENT / CP_E_NOMEM with e set. */
int cp_pathrules_new(const char *kubelet_path, const char *const *working_dirs,
                     size_t n_working_dirs, cp_pathrules **out, cp_error *e)
    __attribute__((warn_unused_result));
void cp_pathrules_free(cp_pathrules *r);

/* Paths the three checks below refused so far (CP_E_INVALID_ARGUMENT),
 * for the metrics. Thread-safe. */
uint64_t cp_pathrules_refused(const cp_pathrules *r);

/* CP_OK when path passes every rule above, else CP_E_INVALID_ARGUMENT with
 * e set. */
int cp_pathrules_check(const cp_pathrules *r, const char *path, cp_error *e)
    __attribute__((warn_unused_result));

/* The second check, after links are resolved: resolved (what the host's
 * resolve op made of path) must be a drive-absolute path inside a
 * configured directory (same boundary rule), with no "." or ".."
 * component. path only names the request in the message. CP_OK or
 * CP_E_INVALID_ARGUMENT with e set. */
int cp_pathrules_check_resolved(const cp_pathrules *r, const char *path, const char *resolved,
                                cp_error *e) __attribute__((warn_unused_result));

/* For requests that remove, empty, replace or mount over what path names
 * (Rmdir, RmdirContents, CreateSymlink's target_path, MountVolume,
 * UnmountVolume): CP_E_INVALID_ARGUMENT when path - or resolved, what the
 * host's resolve made of it, when not NULL - is a configured directory or
 * contains one, compared as rule 6 compares (ASCII case folded, a trailing
 * '\' ignored, separator boundary), so "c:\VAR\lib\kubelet\" is the root
 * C:\var\lib\kubelet. The message names the path, what it resolves to,
 * the directory and its flag (-kubelet-path / -working-dir). CP_OK
 * otherwise. Call only for a path cp_pathrules_check() accepted; a resolved
 * path that is not drive-absolute is refused. */
int cp_pathrules_check_keeps_roots(const cp_pathrules *r, const char *path, const char *resolved,
                                   cp_error *e) __attribute__((warn_unused_result));

/* The configured directories, normalized, working dirs first then the
 * kubelet path. Borrowed; valid until cp_pathrules_free. */
size_t cp_pathrules_count(const cp_pathrules *r);
const char *cp_pathrules_dir(const cp_pathrules *r, size_t i);

#endif
