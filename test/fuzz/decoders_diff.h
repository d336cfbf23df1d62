/* decoders_diff.h - protobuf-c against nanopb on the same bytes.
 *
 * The product decodes with protobuf-c; nanopb (generated from the same
 * api/ files, every string, bytes and repeated field allocated, so no
 * size limit of its own) is an independent second decoder. For one of
 * the 139 methods' request or response types and some bytes,
 * cp_dd_check decides:
 *   - both accept: the fields must be the same (each decoding re-packed
 *     by protobuf-c without unknown fields must give identical bytes),
 *     and nanopb must re-encode that canonical form byte for byte;
 *   - both refuse: agreed;
 *   - one accepts, the other refuses, or both accept and read different
 *     fields: a disagreement, unless a rule of the table in
 *     decoders_rules.c (cp_dd_rules) names the case and the reason;
 *     docs/testing.md describes each rule.
 * Used by the libFuzzer target fuzz_decoders.c and by test_decoders.c. */
#ifndef CP_DECODERS_DIFF_H
#define CP_DECODERS_DIFF_H

#include <stddef.h>
#include <stdint.h>

#include <pb.h>
#include <protobuf-c/protobuf-c.h>

/* One nanopb message type (the generated table, scripts/nanopb_table.py). */
typedef struct cp_npb_type {
    const char *name; /* "v1_ListDiskIDsRequest" */
    const pb_msgdesc_t *desc;
    size_t size; /* of the generated struct */
} cp_npb_type;
extern const cp_npb_type cp_npb_types[];
extern const size_t cp_npb_types_len;

enum {
    CP_DD_SAME = 0,     /* both accept, same fields, same re-encoding */
    CP_DD_REFUSED = 1,  /* both refuse */
    CP_DD_RULE = 2,     /* one refuses, a deliberate rule names why */
    CP_DD_DISAGREE = -1 /* anything else: a finding */
};

typedef struct cp_dd_result {
    int verdict;
    const char *rule;      /* CP_DD_RULE: the rule's name */
    int pbc_ok;            /* protobuf-c accepted */
    int npb_ok;            /* nanopb accepted */
    const char *npb_error; /* nanopb's message when it refused */
    int wire_check;        /* cp_wire_check_strings (what dispatch runs first) */
    char why[256];         /* CP_DD_DISAGREE: what differs */
} cp_dd_result;

/* A deliberate difference: which decoder refuses, and why. */
typedef struct cp_dd_rule {
    const char *name;
    int refuser;           /* 0: nanopb refuses what protobuf-c takes; 1: the reverse */
    const char *npb_error; /* nanopb's error text for the case (refuser 0) */
    /* Confirms the case from the bytes (the error text alone is not
     * enough: nanopb reports one text for several causes). */
    int (*matches)(const ProtobufCMessageDescriptor *d, const uint8_t *b, size_t len);
    const char *product; /* what the product answers for such bytes */
    const char *reason;
} cp_dd_rule;
extern const cp_dd_rule cp_dd_rules[];
extern const size_t cp_dd_rules_len;

/* Builds the method table (catalog order, then the proto's method order);
 * returns the number of methods (139) or 0 when a type has no nanopb twin. */
size_t cp_dd_init(void);
const char *cp_dd_method_name(size_t m);
const ProtobufCMessageDescriptor *cp_dd_pbc_type(size_t m, int response);
const cp_npb_type *cp_dd_npb_type(size_t m, int response);
int cp_dd_check(size_t m, int response, const uint8_t *b, size_t len, cp_dd_result *r);

#endif
