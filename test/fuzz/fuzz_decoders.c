/* fuzz_decoders.c - libFuzzer target: protobuf-c against nanopb.
 *
 * Input: byte 0 picks one of the 139 methods (fuzz_messages.c's order,
 * modulo 139), bit 0 of byte 1 its request (0) or response (1) type; the
 * rest is the message. cp_dd_check (decoders_diff.h) must find the two
 * decoders agreeing, or a deliberate rule naming the case; anything else
 * aborts with what differs (or, with CP_DD_KEEP_GOING set, prints it and
 * goes on, writing each finding into the directory CP_DD_KEEP_GOING names
 * when not empty: for sorting a run's findings). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test/fuzz/decoders_diff.h"

static size_t n_methods;
static const char *keep_going;
static unsigned long n_found;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    n_methods = cp_dd_init();
    keep_going = getenv("CP_DD_KEEP_GOING");
    if (n_methods != 139) {
        fprintf(stderr, "fuzz_decoders: expected 139 methods, found %zu\n", n_methods);
        abort();
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    size_t m = data[0] % n_methods;
    int response = data[1] & 1;
    cp_dd_result r;
    if (cp_dd_check(m, response, data + 2, size - 2, &r) == CP_DD_DISAGREE) {
        fprintf(
            stderr,
            "fuzz_decoders: %s (method %zu %s, %s %s; protobuf-c %s, nanopb %s%s%s, wire check %d)\n",
            r.why, m, cp_dd_method_name(m), response ? "response" : "request",
            cp_dd_pbc_type(m, response)->name, r.pbc_ok ? "accepts" : "refuses",
            r.npb_ok ? "accepts" : "refuses", r.npb_error ? ": " : "",
            r.npb_error ? r.npb_error : "", r.wire_check);
        if (keep_going == NULL)
            abort();
        if (keep_going[0] != '\0') {
            char path[4096];
            snprintf(path, sizeof(path), "%s/%c%c-%s-%lu", keep_going, r.pbc_ok ? 'P' : 'p',
                     r.npb_ok ? 'N' : 'n', r.npb_error ? r.npb_error : "x", n_found++);
            for (char *c = path + strlen(keep_going) + 1; *c; c++)
                if (*c == ' ' || *c == '\'')
                    *c = '_';
            FILE *f = fopen(path, "wb");
            if (f != NULL) {
                fwrite(data, 1, size, f);
                fclose(f);
            }
        }
    }
    return 0;
}
