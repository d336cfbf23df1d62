/* fuzz_messages.c - libFuzzer target: every request message decoder.
 *
 * Input: byte 0 picks one of the 139 methods of the 23 services (in
 * groups/catalog.c order, then the proto's method order, modulo 139); the
 * rest is the request message as it would arrive in a gRPC frame.
 *
 * For each input: cp_wire_check_strings (what dispatch runs before any
 * handler) and protobuf_c_message_unpack, then, when both accept it (what
 * dispatch hands to a converter):
 *   - every string the decoder produced is valid UTF-8 whenever the wire
 *     check passed (the check and the decoder agree on what a string is);
 *   - pack -> unpack -> pack is stable and the re-packed bytes pass the
 *     wire check's parser (never "malformed").
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <protobuf-c/protobuf-c.h>

#include "groups/catalog.h"
#include "dispatch/wirecheck.h"

#define MAX_METHODS 512

static const ProtobufCMessageDescriptor *req_desc[MAX_METHODS];
static const char *names[MAX_METHODS];
static size_t n_methods;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    for (size_t i = 0; i < cp_catalog_len; i++) {
        const ProtobufCServiceDescriptor *d = cp_catalog[i].desc;
        for (unsigned j = 0; j < d->n_methods && n_methods < MAX_METHODS; j++) {
            req_desc[n_methods] = d->methods[j].input;
            names[n_methods] = d->methods[j].name;
            n_methods++;
        }
    }
    if (n_methods != 139) {
        fprintf(stderr, "fuzz_messages: expected 139 methods, found %zu\n", n_methods);
        abort();
    }
    return 0;
}

static void bad(const char *what, size_t m)
{
    fprintf(stderr, "fuzz_messages: %s (method %zu: %s, %s)\n", what, m, names[m],
            req_desc[m]->name);
    abort();
}

/* Every string reachable in msg is valid UTF-8. */
static bool strings_valid(const ProtobufCMessage *msg, int depth)
{
    if (msg == NULL || depth > 64)
        return true;
    const ProtobufCMessageDescriptor *d = msg->descriptor;
    for (unsigned i = 0; i < d->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &d->fields[i];
        if (f->type != PROTOBUF_C_TYPE_STRING && f->type != PROTOBUF_C_TYPE_MESSAGE)
            continue;
        const char *base = (const char *)msg;
        if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
            uint32_t which = *(const uint32_t *)(base + f->quantifier_offset);
            if (which != f->id)
                continue;
        }
        size_t n = 1;
        const void *const *items = (const void *const *)(base + f->offset);
        if (f->label == PROTOBUF_C_LABEL_REPEATED) {
            n = *(const size_t *)(base + f->quantifier_offset);
            items = *(const void *const *const *)(base + f->offset);
        }
        for (size_t k = 0; k < n; k++) {
            const void *v = items[k];
            if (v == NULL)
                continue;
            if (f->type == PROTOBUF_C_TYPE_STRING) {
                const char *s = v;
                if (!cp_utf8_valid((const uint8_t *)s, strlen(s)))
                    return false;
            } else if (!strings_valid(v, depth + 1)) {
                return false;
            }
        }
    }
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    size_t m = data[0] % n_methods;
    const ProtobufCMessageDescriptor *d = req_desc[m];
    const uint8_t *b = data + 1;
    size_t len = size - 1;

    char field[160];
    int wc = cp_wire_check_strings(d, b, len, field, sizeof(field));
    if (wc != CP_WIRE_OK && field[0] == '\0' && wc != CP_WIRE_MALFORMED)
        bad("wire check refused a string without naming its field", m);

    ProtobufCMessage *m1 = protobuf_c_message_unpack(d, NULL, len, b);
    if (m1 == NULL)
        return 0;
    if (wc != CP_WIRE_OK) {
        /* Dispatch refuses it (a NUL or bad UTF-8: INVALID_ARGUMENT; what
         * the wire format forbids but protobuf-c took, e.g. a field number
         * of 0 or above 2^29-1: INTERNAL, as grpc-go), so no handler sees
         * it. */
        protobuf_c_message_free_unpacked(m1, NULL);
        return 0;
    }
    if (!strings_valid(m1, 0))
        bad("the wire check passed a string that is not UTF-8", m);

    size_t n1 = protobuf_c_message_get_packed_size(m1);
    uint8_t *p1 = malloc(n1 ? n1 : 1);
    if (protobuf_c_message_pack(m1, p1) != n1)
        bad("pack wrote a size other than get_packed_size", m);
    if (cp_wire_check_strings(d, p1, n1, field, sizeof(field)) == CP_WIRE_MALFORMED)
        bad("the wire check calls protobuf-c's own encoding malformed", m);

    ProtobufCMessage *m2 = protobuf_c_message_unpack(d, NULL, n1, p1);
    if (m2 == NULL)
        bad("a re-packed message does not decode", m);
    size_t n2 = protobuf_c_message_get_packed_size(m2);
    uint8_t *p2 = malloc(n2 ? n2 : 1);
    protobuf_c_message_pack(m2, p2);
    if (n1 != n2 || memcmp(p1, p2, n1) != 0)
        bad("pack(unpack(pack(x))) differs from pack(x)", m);

    free(p2);
    protobuf_c_message_free_unpacked(m2, NULL);
    free(p1);
    protobuf_c_message_free_unpacked(m1, NULL);
    return 0;
}
