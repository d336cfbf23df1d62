/* gbc.c - see gbc.h. HTTP/2 framing by hand (the client side of a unary
 * call is a handful of frame types); HPACK decoding by nghttp2. */
#include "test/bench/gbc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nghttp2/nghttp2.h>

#define PREFACE "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
#define SLOTS 1024 /* streams in flight per connection, at most */
#define RBUF (64 * 1024)
#define WBUF (64 * 1024)
#define MAX_FRAME 16384   /* our SETTINGS_MAX_FRAME_SIZE (the default) */
#define CONN_WINDOW 65535 /* our receive window (grpc-go's initial one) */

enum {
    F_DATA = 0,
    F_HEADERS = 1,
    F_RST = 3,
    F_SETTINGS = 4,
    F_PING = 6,
    F_GOAWAY = 7,
    F_WINDOW_UPDATE = 8,
    F_CONTINUATION = 9
};
enum {
    FL_END_STREAM = 0x1,
    FL_ACK = 0x1,
    FL_END_HEADERS = 0x4,
    FL_PADDED = 0x8,
    FL_PRIORITY = 0x20
};

/* grpc-go's BDP estimator ping payload (internal/transport/bdp_estimator.go). */
static const uint8_t bdp_ping[8] = {2, 4, 16, 16, 9, 14, 7, 7};

typedef struct stream {
    int32_t id; /* 0: free slot */
    void *user;
    int64_t start_ns;
    bool status_200, grpc_ok, saw_trailers, body_ok;
    int grpc_status; /* -1 until the trailers say */
    size_t body_len;
    uint8_t body[64];
    uint32_t req_bytes, resp_bytes;
} stream;

struct gbc {
    bu_pipe p;
    const gbc_tmpl *t;
    bool bdp;
    nghttp2_hd_inflater *inf;
    int32_t next_id;
    int32_t last_id;
    bool first_sent;
    bool ping_out;       /* a BDP ping awaits its ACK */
    uint32_t unacked;    /* connection DATA bytes received, not yet returned */
    int64_t send_window; /* connection window for our DATA */
    uint32_t max_streams;
    int outstanding;
    bool dead;
    stream slots[SLOTS];
    /* header block being assembled (HEADERS + CONTINUATION) */
    int32_t hb_stream;
    bool hb_end_stream;
    size_t hb_len;
    uint8_t hb[32 * 1024];
    size_t rlen;
    uint8_t rbuf[RBUF];
    size_t wlen;
    uint8_t wbuf[WBUF];
};

/* ---- output --------------------------------------------------------- */

static uint8_t *frame(gbc *c, uint8_t type, uint8_t flags, int32_t sid, size_t len)
{
    if (c->wlen + 9 + len > WBUF && !gbc_flush(c))
        return NULL;
    uint8_t *h = c->wbuf + c->wlen;
    h[0] = (uint8_t)(len >> 16);
    h[1] = (uint8_t)(len >> 8);
    h[2] = (uint8_t)len;
    h[3] = type;
    h[4] = flags;
    h[5] = (uint8_t)((uint32_t)sid >> 24 & 0x7f);
    h[6] = (uint8_t)((uint32_t)sid >> 16);
    h[7] = (uint8_t)((uint32_t)sid >> 8);
    h[8] = (uint8_t)sid;
    c->wlen += 9 + len;
    return h + 9;
}

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

bool gbc_flush(gbc *c)
{
    if (c->wlen == 0)
        return !c->dead;
    bool ok = !c->dead && bu_pipe_write(&c->p, c->wbuf, c->wlen);
    c->wlen = 0;
    if (!ok)
        c->dead = true;
    return ok;
}

static bool window_update(gbc *c, uint32_t inc)
{
    uint8_t *b = frame(c, F_WINDOW_UPDATE, 0, 0, 4);
    if (b == NULL)
        return false;
    put32(b, inc);
    return true;
}

/* ---- template ------------------------------------------------------- */

typedef struct hlist {
    char line[16][300];
    int n;
} hlist;

static bool decode_block(nghttp2_hd_inflater *inf, const uint8_t *in, size_t len, hlist *out)
{
    out->n = 0;
    for (;;) {
        nghttp2_nv nv;
        int fl = 0;
        ssize_t r = nghttp2_hd_inflate_hd2(inf, &nv, &fl, in, len, 1);
        if (r < 0)
            return false;
        in += r;
        len -= (size_t)r;
        if ((fl & NGHTTP2_HD_INFLATE_EMIT) && out->n < 16)
            snprintf(out->line[out->n++], 300, "%.*s: %.*s", (int)nv.namelen, nv.name,
                     (int)nv.valuelen, nv.value);
        if (fl & NGHTTP2_HD_INFLATE_FINAL) {
            nghttp2_hd_inflate_end_headers(inf);
            return true;
        }
        if (!(fl & NGHTTP2_HD_INFLATE_EMIT) && len == 0)
            return false;
    }
}

bool gbc_tmpl_load(gbc_tmpl *t, const char *path, const uint8_t *want, size_t want_len)
{
    memset(t, 0, sizeof(*t));
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr, "gbc: cannot open capture %s\n", path);
        return false;
    }
    uint8_t buf[8192];
    size_t n = fread(buf, 1, sizeof(buf), f);
    fclose(f);
    size_t off = sizeof(PREFACE) - 1;
    if (n < off || memcmp(buf, PREFACE, off) != 0) {
        fprintf(stderr, "gbc: %s does not start with the HTTP/2 preface\n", path);
        return false;
    }
    while (off + 9 <= n && (t->first_hdr_len == 0 || t->msg_len == 0)) {
        size_t len = (size_t)buf[off] << 16 | (size_t)buf[off + 1] << 8 | buf[off + 2];
        uint8_t type = buf[off + 3], flags = buf[off + 4];
        uint32_t sid = get32(buf + off + 5) & 0x7fffffff;
        const uint8_t *pl = buf + off + 9;
        if (off + 9 + len > n)
            break;
        if (sid == 1 && type == F_HEADERS && t->first_hdr_len == 0) {
            if (flags & (FL_PADDED | FL_PRIORITY) || !(flags & FL_END_HEADERS) ||
                len > sizeof(t->first_hdr)) {
                fprintf(stderr, "gbc: unexpected HEADERS layout in %s\n", path);
                return false;
            }
            memcpy(t->first_hdr, pl, len);
            t->first_hdr_len = len;
        } else if (sid == 1 && type == F_DATA && t->msg_len == 0) {
            if (flags & FL_PADDED || len > sizeof(t->msg)) {
                fprintf(stderr, "gbc: unexpected DATA layout in %s\n", path);
                return false;
            }
            memcpy(t->msg, pl, len);
            t->msg_len = len;
        }
        off += 9 + len;
    }
    if (t->first_hdr_len == 0 || t->msg_len == 0) {
        fprintf(stderr, "gbc: no request on stream 1 in %s\n", path);
        return false;
    }
    /* What grpc-go sends for the same call once the first one indexed its
     * five literals: :method and :scheme from the static table, then
     * dynamic entries 66 (:path) ... 62 (te). */
    static const uint8_t idx[] = {0x83, 0x86, 0xc2, 0xc1, 0xc0, 0xbf, 0xbe};
    memcpy(t->idx_hdr, idx, sizeof(idx));
    t->idx_hdr_len = sizeof(idx);
    nghttp2_hd_inflater *inf;
    hlist a, b;
    if (nghttp2_hd_inflate_new(&inf) != 0)
        return false;
    bool same = decode_block(inf, t->first_hdr, t->first_hdr_len, &a) &&
                decode_block(inf, t->idx_hdr, t->idx_hdr_len, &b) && a.n == b.n;
    for (int i = 0; same && i < a.n; i++)
        same = strcmp(a.line[i], b.line[i]) == 0;
    nghttp2_hd_inflate_del(inf);
    if (!same) {
        fprintf(stderr, "gbc: the indexed header block does not repeat the captured one\n");
        return false;
    }
    if (want_len > sizeof(t->want))
        return false;
    memcpy(t->want, want, want_len);
    t->want_len = want_len;
    return true;
}

/* ---- connection ----------------------------------------------------- */

static bool read_more(gbc *c)
{
    if (c->rlen == RBUF)
        return false; /* a frame larger than our buffer: not from csi-proxy */
    long n = bu_pipe_read(&c->p, c->rbuf + c->rlen, RBUF - c->rlen);
    if (n <= 0) {
        c->dead = true;
        return false;
    }
    c->rlen += (size_t)n;
    return true;
}

static stream *find(gbc *c, int32_t id)
{
    stream *s = &c->slots[(id >> 1) % SLOTS];
    return s->id == id ? s : NULL;
}

/* Handles a complete header block of stream s. */
static bool on_headers(gbc *c, stream *s)
{
    const uint8_t *in = c->hb;
    size_t len = c->hb_len;
    for (;;) {
        nghttp2_nv nv;
        int fl = 0;
        ssize_t r = nghttp2_hd_inflate_hd2(c->inf, &nv, &fl, in, len, 1);
        if (r < 0)
            return false;
        in += r;
        len -= (size_t)r;
        if ((fl & NGHTTP2_HD_INFLATE_EMIT) && s != NULL) {
            if (nv.namelen == 7 && memcmp(nv.name, ":status", 7) == 0)
                s->status_200 = nv.valuelen == 3 && memcmp(nv.value, "200", 3) == 0;
            else if (nv.namelen == 11 && memcmp(nv.name, "grpc-status", 11) == 0) {
                s->saw_trailers = true;
                s->grpc_ok = nv.valuelen == 1 && nv.value[0] == '0';
                s->grpc_status = 0;
                for (size_t i = 0; i < nv.valuelen && i < 3; i++)
                    s->grpc_status = s->grpc_status * 10 + (nv.value[i] - '0');
            }
        }
        if (fl & NGHTTP2_HD_INFLATE_FINAL) {
            nghttp2_hd_inflate_end_headers(c->inf);
            return true;
        }
        if (!(fl & NGHTTP2_HD_INFLATE_EMIT) && len == 0)
            return false;
    }
}

static void finish(gbc *c, stream *s, gbc_done *d)
{
    d->user = s->user;
    d->start_ns = s->start_ns;
    d->end_ns = bu_now_ns();
    d->ok = s->status_200 && s->grpc_ok && s->body_ok && s->body_len == c->t->want_len;
    d->grpc_status = s->grpc_status;
    d->req_bytes = s->req_bytes;
    d->resp_bytes = s->resp_bytes;
    s->id = 0;
    c->outstanding--;
}

/* Handles one frame; appends a completion to done when a stream ended.
 * Returns false on a connection error. */
static bool on_frame(gbc *c, uint8_t type, uint8_t flags, int32_t sid, const uint8_t *pl,
                     size_t len, gbc_done *done, int *ndone, int max)
{
    stream *s = sid != 0 ? find(c, sid) : NULL;
    if (s != NULL)
        s->resp_bytes += 9 + (uint32_t)len;
    switch (type) {
    case F_SETTINGS:
        if (flags & FL_ACK)
            return true;
        for (size_t i = 0; i + 6 <= len; i += 6) {
            uint16_t id = (uint16_t)(pl[i] << 8 | pl[i + 1]);
            uint32_t v = get32(pl + i + 2);
            if (id == 3) /* MAX_CONCURRENT_STREAMS */
                c->max_streams = v;
            if (id == 1 && v < 4096) { /* HEADER_TABLE_SIZE: our fixed blocks need 4096 */
                fprintf(stderr, "gbc: server shrank the HPACK table to %u\n", v);
                return false;
            }
        }
        return frame(c, F_SETTINGS, FL_ACK, 0, 0) != NULL;
    case F_PING:
        if (flags & FL_ACK) {
            if (len == 8 && memcmp(pl, bdp_ping, 8) == 0)
                c->ping_out = false;
            return true;
        }
        {
            uint8_t *b = frame(c, F_PING, FL_ACK, 0, 8);
            if (b == NULL || len != 8)
                return false;
            memcpy(b, pl, 8);
        }
        return true;
    case F_WINDOW_UPDATE:
        if (sid == 0 && len == 4)
            c->send_window += get32(pl) & 0x7fffffff;
        return true;
    case F_GOAWAY:
        fprintf(stderr, "gbc: server sent GOAWAY (error %u)\n", len >= 8 ? get32(pl + 4) : 0);
        return false;
    case F_RST:
        if (s != NULL && *ndone < max) {
            s->status_200 = false;
            finish(c, s, &done[(*ndone)++]);
        }
        return true;
    case F_HEADERS:
    case F_CONTINUATION: {
        size_t skip = 0, pad = 0;
        if (type == F_HEADERS) {
            if (flags & FL_PADDED) {
                if (len < 1)
                    return false;
                pad = pl[0];
                skip = 1;
            }
            if (flags & FL_PRIORITY)
                skip += 5;
            if (skip + pad > len)
                return false;
            c->hb_stream = sid;
            c->hb_end_stream = flags & FL_END_STREAM;
            c->hb_len = 0;
        } else if (sid != c->hb_stream) {
            return false;
        }
        size_t n = len - skip - pad;
        if (c->hb_len + n > sizeof(c->hb))
            return false;
        memcpy(c->hb + c->hb_len, pl + skip, n);
        c->hb_len += n;
        if (!(flags & FL_END_HEADERS))
            return true;
        if (!on_headers(c, s))
            return false;
        if (c->hb_end_stream && s != NULL && *ndone < max)
            finish(c, s, &done[(*ndone)++]);
        return true;
    }
    case F_DATA: {
        c->unacked += (uint32_t)len;
        size_t skip = 0, pad = 0;
        if (flags & FL_PADDED) {
            if (len < 1)
                return false;
            pad = pl[0];
            skip = 1;
        }
        if (skip + pad > len)
            return false;
        if (s != NULL) {
            size_t n = len - skip - pad;
            if (s->body_len + n <= sizeof(s->body))
                memcpy(s->body + s->body_len, pl + skip, n);
            s->body_len += n;
            s->body_ok = s->body_len == c->t->want_len &&
                         memcmp(s->body, c->t->want, c->t->want_len) == 0;
        }
        /* grpc-go (http2_client.go handleData): a BDP ping, preceded by the
         * connection window update, when none is outstanding; otherwise a
         * window update once a quarter of the window is used. */
        if (c->bdp && !c->ping_out) {
            if (c->unacked > 0 && !window_update(c, c->unacked))
                return false;
            c->unacked = 0;
            uint8_t *b = frame(c, F_PING, 0, 0, 8);
            if (b == NULL)
                return false;
            memcpy(b, bdp_ping, 8);
            c->ping_out = true;
        } else if (c->unacked >= CONN_WINDOW / 4) {
            if (!window_update(c, c->unacked))
                return false;
            c->unacked = 0;
        }
        if ((flags & FL_END_STREAM) && s != NULL && *ndone < max)
            finish(c, s, &done[(*ndone)++]);
        return true;
    }
    default:
        return true; /* PRIORITY and unknown types carry nothing for us */
    }
}

/* Parses every complete frame in the read buffer. */
static int parse(gbc *c, gbc_done *done, int max)
{
    int nd = 0;
    size_t off = 0;
    while (c->rlen - off >= 9 && nd < max) {
        const uint8_t *h = c->rbuf + off;
        size_t len = (size_t)h[0] << 16 | (size_t)h[1] << 8 | h[2];
        if (len > MAX_FRAME) {
            c->dead = true;
            return -1;
        }
        if (c->rlen - off < 9 + len)
            break;
        if (!on_frame(c, h[3], h[4], (int32_t)(get32(h + 5) & 0x7fffffff), h + 9, len, done, &nd,
                      max)) {
            c->dead = true;
            return -1;
        }
        off += 9 + len;
    }
    memmove(c->rbuf, c->rbuf + off, c->rlen - off);
    c->rlen -= off;
    return nd;
}

gbc *gbc_open(const char *pipe, const gbc_tmpl *t, bool bdp)
{
    gbc *c = calloc(1, sizeof(*c));
    DWORD err = 0;
    if (c == NULL || nghttp2_hd_inflate_new(&c->inf) != 0) {
        free(c);
        return NULL;
    }
    c->t = t;
    c->bdp = bdp;
    c->next_id = 1;
    c->send_window = 65535;
    c->max_streams = 100;
    if (!bu_pipe_open(&c->p, pipe, &err)) {
        fprintf(stderr, "gbc: cannot open \\\\.\\pipe\\%s: error %lu\n", pipe, err);
        nghttp2_hd_inflate_del(c->inf);
        free(c);
        return NULL;
    }
    memcpy(c->wbuf, PREFACE, sizeof(PREFACE) - 1);
    c->wlen = sizeof(PREFACE) - 1;
    if (frame(c, F_SETTINGS, 0, 0, 0) == NULL || !gbc_flush(c))
        goto fail;
    /* grpc-go waits for the server's SETTINGS before its first request. */
    for (;;) {
        if (c->rlen >= 9 && c->rbuf[3] == F_SETTINGS) {
            gbc_done none[1];
            if (parse(c, none, 1) < 0)
                goto fail;
            break;
        }
        if (c->rlen >= 9) {
            fprintf(stderr, "gbc: first server frame is not SETTINGS\n");
            goto fail;
        }
        if (!read_more(c))
            goto fail;
    }
    return c;
fail:
    fprintf(stderr, "gbc: HTTP/2 start on %s failed\n", pipe);
    bu_pipe_close(&c->p);
    nghttp2_hd_inflate_del(c->inf);
    free(c);
    return NULL;
}

void gbc_close(gbc *c)
{
    if (c == NULL)
        return;
    if (!c->dead) {
        static const char dbg[] = "client transport shutdown";
        uint8_t *b = frame(c, F_GOAWAY, 0, 0, 8 + sizeof(dbg) - 1);
        if (b != NULL) {
            put32(b, (uint32_t)c->last_id);
            put32(b + 4, 0);
            memcpy(b + 8, dbg, sizeof(dbg) - 1);
            gbc_flush(c);
        }
    }
    bu_pipe_close(&c->p);
    nghttp2_hd_inflate_del(c->inf);
    free(c);
}

bool gbc_start(gbc *c, void *user)
{
    const gbc_tmpl *t = c->t;
    if (c->dead || (uint32_t)c->outstanding >= c->max_streams || c->outstanding >= SLOTS ||
        c->send_window < (int64_t)t->msg_len)
        return false;
    stream *s = &c->slots[(c->next_id >> 1) % SLOTS];
    if (s->id != 0)
        return false;
    int32_t id = c->next_id;
    const uint8_t *hb = c->first_sent ? t->idx_hdr : t->first_hdr;
    size_t hl = c->first_sent ? t->idx_hdr_len : t->first_hdr_len;
    uint8_t *b = frame(c, F_HEADERS, FL_END_HEADERS, id, hl);
    if (b == NULL)
        return false;
    memcpy(b, hb, hl);
    b = frame(c, F_DATA, FL_END_STREAM, id, t->msg_len);
    if (b == NULL)
        return false;
    memcpy(b, t->msg, t->msg_len);
    memset(s, 0, sizeof(*s));
    s->id = id;
    s->grpc_status = -1;
    s->user = user;
    s->start_ns = bu_now_ns();
    s->req_bytes = (uint32_t)(18 + hl + t->msg_len);
    c->send_window -= (int64_t)t->msg_len;
    c->first_sent = true;
    c->last_id = id;
    c->next_id += 2;
    c->outstanding++;
    return true;
}

int gbc_poll(gbc *c, gbc_done *done, int max)
{
    if (c->dead)
        return -1;
    int nd = parse(c, done, max); /* frames left over from the last read */
    if (nd == 0) {
        if (!read_more(c))
            return -1;
        nd = parse(c, done, max);
    }
    if (nd < 0 || !gbc_flush(c)) /* control frames go out at once, as grpc-go's loopy does */
        return -1;
    return nd;
}

int gbc_outstanding(const gbc *c)
{
    return c->outstanding;
}

void gbc_bytes(const gbc *c, uint64_t *out, uint64_t *in)
{
    *out = c->p.bytes_out;
    *in = c->p.bytes_in;
}
