/* decoders_diff.c - protobuf-c against nanopb (decoders_diff.h). */
#include "test/fuzz/decoders_diff.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pb_decode.h>
#include <pb_encode.h>

#include "dispatch/wirecheck.h"
#include "groups/catalog.h"

#define DD_MAX_METHODS 256

static struct {
    const char *name;
    const ProtobufCMessageDescriptor *pbc[2];
    const cp_npb_type *npb[2];
} methods[DD_MAX_METHODS];
static size_t n_methods;

static const cp_npb_type *npb_find(const char *pbc_name)
{
    char want[200];
    size_t n = strlen(pbc_name);
    if (n >= sizeof(want))
        return NULL;
    for (size_t i = 0; i <= n; i++)
        want[i] = pbc_name[i] == '.' ? '_' : pbc_name[i];
    for (size_t i = 0; i < cp_npb_types_len; i++)
        if (strcmp(cp_npb_types[i].name, want) == 0)
            return &cp_npb_types[i];
    return NULL;
}

size_t cp_dd_init(void)
{
    if (n_methods)
        return n_methods;
    size_t n = 0;
    for (size_t i = 0; i < cp_catalog_len; i++) {
        const ProtobufCServiceDescriptor *d = cp_catalog[i].desc;
        for (unsigned j = 0; j < d->n_methods && n < DD_MAX_METHODS; j++, n++) {
            methods[n].name = d->methods[j].name;
            methods[n].pbc[0] = d->methods[j].input;
            methods[n].pbc[1] = d->methods[j].output;
            for (int k = 0; k < 2; k++) {
                methods[n].npb[k] = npb_find(methods[n].pbc[k]->name);
                if (methods[n].npb[k] == NULL) {
                    fprintf(stderr, "decoders_diff: no nanopb type for %s\n",
                            methods[n].pbc[k]->name);
                    return 0;
                }
            }
        }
    }
    n_methods = n;
    return n;
}

const char *cp_dd_method_name(size_t m)
{
    return methods[m].name;
}
const ProtobufCMessageDescriptor *cp_dd_pbc_type(size_t m, int response)
{
    return methods[m].pbc[response != 0];
}
const cp_npb_type *cp_dd_npb_type(size_t m, int response)
{
    return methods[m].npb[response != 0];
}

/* ---- protobuf-c side ------------------------------------------------- */

/* Drops every unknown field protobuf-c kept (nanopb keeps none), at every
 * level, freeing them as protobuf_c_message_free_unpacked would with the
 * default allocator. */
static void strip_unknown(ProtobufCMessage *msg, int depth)
{
    if (msg == NULL || depth > 64)
        return;
    for (unsigned i = 0; i < msg->n_unknown_fields; i++)
        free(msg->unknown_fields[i].data);
    free(msg->unknown_fields);
    msg->unknown_fields = NULL;
    msg->n_unknown_fields = 0;
    const ProtobufCMessageDescriptor *d = msg->descriptor;
    for (unsigned i = 0; i < d->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &d->fields[i];
        if (f->type != PROTOBUF_C_TYPE_MESSAGE)
            continue;
        char *base = (char *)msg;
        if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
            if (*(const uint32_t *)(base + f->quantifier_offset) != f->id)
                continue;
        }
        if (f->label == PROTOBUF_C_LABEL_REPEATED) {
            size_t n = *(const size_t *)(base + f->quantifier_offset);
            ProtobufCMessage **items = *(ProtobufCMessage ***)(base + f->offset);
            for (size_t k = 0; k < n; k++)
                strip_unknown(items[k], depth + 1);
        } else {
            strip_unknown(*(ProtobufCMessage **)(base + f->offset), depth + 1);
        }
    }
}

/* protobuf-c's packing of msg without unknown fields; *n its size. */
static uint8_t *pbc_canon(ProtobufCMessage *msg, size_t *n)
{
    strip_unknown(msg, 0);
    *n = protobuf_c_message_get_packed_size(msg);
    uint8_t *p = malloc(*n ? *n : 1);
    if (p != NULL)
        protobuf_c_message_pack(msg, p);
    return p;
}

/* ---- nanopb side ----------------------------------------------------- */

/* Decodes b with nanopb; returns the struct (release with npb_free) or
 * NULL with *err set. */
static void *npb_decode(const cp_npb_type *t, const uint8_t *b, size_t len, const char **err)
{
    void *s = calloc(1, t->size ? t->size : 1);
    if (s == NULL) {
        *err = "out of memory";
        return NULL;
    }
    pb_istream_t in = pb_istream_from_buffer(b, len);
    if (!pb_decode(&in, t->desc, s)) {
        /* pb_decode releases what it allocated when it fails */
        *err = PB_GET_ERROR(&in);
        free(s);
        return NULL;
    }
    *err = NULL;
    return s;
}

static void npb_free(const cp_npb_type *t, void *s)
{
    if (s == NULL)
        return;
    pb_release(t->desc, s);
    free(s);
}

static uint8_t *npb_encode(const cp_npb_type *t, const void *s, size_t *n)
{
    size_t sz = 0;
    if (!pb_get_encoded_size(&sz, t->desc, s))
        return NULL;
    uint8_t *p = malloc(sz ? sz : 1);
    if (p == NULL)
        return NULL;
    pb_ostream_t out = pb_ostream_from_buffer(p, sz);
    if (!pb_encode(&out, t->desc, s) || out.bytes_written != sz) {
        free(p);
        return NULL;
    }
    *n = sz;
    return p;
}

/* ---- the check ------------------------------------------------------- */

static int disagree(cp_dd_result *r, const char *what)
{
    r->verdict = CP_DD_DISAGREE;
    snprintf(r->why, sizeof(r->why), "%s", what);
    return r->verdict;
}

static int one_side(const ProtobufCMessageDescriptor *d, const uint8_t *b, size_t len,
                    cp_dd_result *r)
{
    /* 2: both accept, and read different fields */
    int refuser = r->pbc_ok && r->npb_ok ? 2 : r->npb_ok ? 1 : 0;
    for (size_t i = 0; i < cp_dd_rules_len; i++) {
        const cp_dd_rule *k = &cp_dd_rules[i];
        if (k->refuser != refuser)
            continue;
        if (refuser == 0 && k->npb_error &&
            (r->npb_error == NULL || strcmp(k->npb_error, r->npb_error) != 0))
            continue;
        if (k->matches != NULL && !k->matches(d, b, len))
            continue;
        r->verdict = CP_DD_RULE;
        r->rule = k->name;
        return r->verdict;
    }
    snprintf(r->why, sizeof(r->why), "%s refuses (%s), %s accepts, and no rule names the case",
             refuser ? "protobuf-c" : "nanopb", refuser ? "-" : (r->npb_error ? r->npb_error : "?"),
             refuser ? "nanopb" : "protobuf-c");
    r->verdict = CP_DD_DISAGREE;
    return r->verdict;
}

int cp_dd_check(size_t m, int response, const uint8_t *b, size_t len, cp_dd_result *r)
{
    memset(r, 0, sizeof(*r));
    const ProtobufCMessageDescriptor *d = cp_dd_pbc_type(m, response);
    const cp_npb_type *t = cp_dd_npb_type(m, response);
    char field[160];
    r->wire_check = cp_wire_check_strings(d, b, len, field, sizeof(field));

    ProtobufCMessage *a = protobuf_c_message_unpack(d, NULL, len, b);
    void *s = npb_decode(t, b, len, &r->npb_error);
    r->pbc_ok = a != NULL;
    r->npb_ok = s != NULL;
    if (!r->pbc_ok && !r->npb_ok) {
        r->verdict = CP_DD_REFUSED;
        return r->verdict;
    }
    if (!r->pbc_ok || !r->npb_ok) {
        if (a != NULL)
            protobuf_c_message_free_unpacked(a, NULL);
        npb_free(t, s);
        return one_side(d, b, len, r);
    }

    /* Both accept: the same fields? Canonical form: protobuf-c's packing
     * without unknown fields, of each decoding (nanopb's through its own
     * encoding). */
    size_t n1 = 0, ne = 0, n2 = 0, n3 = 0;
    uint8_t *c1 = pbc_canon(a, &n1);
    protobuf_c_message_free_unpacked(a, NULL);
    uint8_t *e = npb_encode(t, s, &ne);
    npb_free(t, s);
    uint8_t *c2 = NULL, *e3 = NULL;
    int v = CP_DD_SAME;
    if (c1 == NULL) {
        v = disagree(r, "protobuf-c could not pack what it decoded");
        goto out;
    }
    if (e == NULL) {
        v = disagree(r, "nanopb could not encode what it decoded");
        goto out;
    }
    ProtobufCMessage *a2 = protobuf_c_message_unpack(d, NULL, ne, e);
    if (a2 == NULL) {
        v = disagree(r, "protobuf-c refuses nanopb's encoding of what both accepted");
        goto out;
    }
    c2 = pbc_canon(a2, &n2);
    protobuf_c_message_free_unpacked(a2, NULL);
    if (c2 == NULL || n1 != n2 || memcmp(c1, c2, n1) != 0) {
        if (one_side(d, b, len, r) == CP_DD_RULE)
            v = CP_DD_RULE;
        else
            v = disagree(r, "the two decoders read different fields");
        goto out;
    }
    /* The canonical form carries no choice the wire leaves open (no
     * unknown fields, no default values written out, one field order):
     * nanopb must write it back byte for byte. */
    const char *err = NULL;
    void *s3 = npb_decode(t, c1, n1, &err);
    if (s3 == NULL) {
        /* e.g. a negative enum, written in 10 bytes: a rule may name it */
        cp_dd_result r3 = {.pbc_ok = 1, .npb_error = err};
        if (one_side(d, c1, n1, &r3) == CP_DD_RULE) {
            v = CP_DD_RULE;
            r->rule = r3.rule;
        } else {
            v = disagree(r, "nanopb refuses protobuf-c's canonical encoding");
        }
        goto out;
    }
    e3 = npb_encode(t, s3, &n3);
    npb_free(t, s3);
    if (e3 == NULL || n3 != n1 || memcmp(e3, c1, n1) != 0)
        v = disagree(r, "nanopb re-encodes the canonical form differently");
out:
    free(c1);
    free(c2);
    free(e);
    free(e3);
    r->verdict = v;
    return v;
}
