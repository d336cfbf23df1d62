/* fuzz_conn.c - libFuzzer target: the bytes a client sends into one
 * connection (HTTP/2 framing, HPACK, gRPC message framing, dispatch, the
 * filesystem group on the POSIX host under a temporary root).
 *
 * Input layout:
 *   byte 0   which service the connection is bound to (index into the
 *            23 services of cp_groups, modulo their count)
 *   byte 1   flags: bits 0-3 chunk size (0: all at once, k: 1 << (k-1)
 *            bytes per cp_conn_recv), bit 4 close the connection before
 *            finished jobs are completed, bit 5 graceful shutdown (GOAWAY)
 *            half-way, bit 6 expire every deadline at the end, bit 7 tight
 *            limits (64-byte messages, 256 header bytes, 4 streams)
 *   rest     the client's byte stream (preface first), e.g. a recorded
 *            grpc-go or grpcio connection
 *
 * The harness plays the transport: it feeds chunks with cp_conn_recv,
 * drains cp_conn_send, waits for the jobs the connection handed to the
 * worker pool and completes them on this thread, as the I/O thread would.
 * Oracles: ASan/UBSan/LSan, plus every byte the server writes must parse
 * as HTTP/2 frames whose header blocks HPACK-decode.
 */
#include <ftw.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nghttp2/nghttp2.h>

#include "groups/groups.h"
#include "rpc/conn.h"
#include "rpc/pool.h"
#include "base/thread.h"
#include "host/fs.h"

static cp_pool *pool;
static cp_groups *groups;
static cp_fs_host fs;
static char root[64];

static cp_mutex *mu;
static cp_cond *cv;
static cp_job **done;
static size_t n_done, cap_done;

static void post(void *ctx, cp_job *job)
{
    (void)ctx;
    cp_mutex_lock(mu);
    if (n_done == cap_done) {
        cap_done = cap_done ? cap_done * 2 : 64;
        done = realloc(done, cap_done * sizeof(*done));
        if (done == NULL)
            abort();
    }
    done[n_done++] = job;
    cp_cond_signal(cv);
    cp_mutex_unlock(mu);
}

static int rm_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(p);
}

static void cleanup(void)
{
    if (root[0] != '\0')
        nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void mkdirs(const char *rel)
{
    char p[256];
    snprintf(p, sizeof(p), "%s/%s", root, rel);
    for (char *s = p + strlen(root) + 1; *s != '\0'; s++) {
        if (*s == '/') {
            *s = '\0';
            mkdir(p, 0755);
            *s = '/';
        }
    }
    mkdir(p, 0755);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    snprintf(root, sizeof(root), "/tmp/cp-fuzz-conn-XXXXXX");
    if (mkdtemp(root) == NULL)
        abort();
    atexit(cleanup);
    mkdirs("C/var/lib/kubelet/pods/p1/volumes");
    mkdirs("C/var/lib/kubelet/plugins/x");
    mkdirs("C/csi-work/a");
    cp_error e = {0};
    if (cp_fs_host_posix_new(root, &fs, &e) != CP_OK) {
        fprintf(stderr, "fuzz_conn: %s\n", e.msg);
        abort();
    }
    static const char *const wd[] = {"C:\\csi-work"};
    cp_groups_config gc = {.kubelet_path = NULL, .working_dirs = wd, .n_working_dirs = 1, .fs = fs};
    groups = cp_groups_new(&gc, &e);
    mu = cp_mutex_new();
    cv = cp_cond_new();
    pool = cp_pool_new(2);
    if (groups == NULL || mu == NULL || cv == NULL || pool == NULL) {
        fprintf(stderr, "fuzz_conn: set-up failed: %s\n", e.msg);
        abort();
    }
    return 0;
}

/* ---- server output: collected, then checked frame by frame ------------ */

typedef struct outbuf {
    uint8_t *b;
    size_t len, cap;
} outbuf;

static void drain(cp_conn *c, outbuf *o)
{
    for (;;) {
        if (o->cap - o->len < 16384) {
            o->cap = o->cap ? o->cap * 2 : 65536;
            o->b = realloc(o->b, o->cap);
            if (o->b == NULL)
                abort();
        }
        long n = cp_conn_send(c, o->b + o->len, o->cap - o->len);
        if (n <= 0)
            return;
        o->len += (size_t)n;
    }
}

/* What the server wrote must be HTTP/2 frames: lengths within the default
 * SETTINGS_MAX_FRAME_SIZE, header blocks that decode with a fresh HPACK
 * decoder kept across the connection, no frame cut short. */
static void check_output(const outbuf *o)
{
    nghttp2_hd_inflater *inf;
    if (nghttp2_hd_inflate_new(&inf) != 0)
        abort();
    size_t off = 0;
    uint8_t *block = NULL;
    size_t blen = 0;
    while (off < o->len) {
        if (o->len - off < 9) {
            fprintf(stderr, "server output ends inside a frame header\n");
            abort();
        }
        const uint8_t *h = o->b + off;
        size_t flen = (size_t)h[0] << 16 | (size_t)h[1] << 8 | h[2];
        uint8_t type = h[3], flags = h[4];
        if (flen > 16384 || o->len - off - 9 < flen) {
            fprintf(stderr, "server frame of %zu bytes is too long or cut short\n", flen);
            abort();
        }
        const uint8_t *pl = h + 9;
        if (type == NGHTTP2_HEADERS || type == NGHTTP2_CONTINUATION) {
            size_t skip = 0, pad = 0;
            if (type == NGHTTP2_HEADERS && (flags & NGHTTP2_FLAG_PADDED))
                pad = pl[skip++] + 0u;
            if (type == NGHTTP2_HEADERS && (flags & NGHTTP2_FLAG_PRIORITY))
                skip += 5;
            if (skip + pad > flen)
                abort();
            block = realloc(block, blen + flen);
            if (block == NULL && blen + flen > 0)
                abort();
            memcpy(block + blen, pl + skip, flen - skip - pad);
            blen += flen - skip - pad;
            if (flags & NGHTTP2_FLAG_END_HEADERS) {
                const uint8_t *in = block;
                size_t left = blen;
                for (;;) {
                    nghttp2_nv nv;
                    int fl = 0;
                    ssize_t k = nghttp2_hd_inflate_hd2(inf, &nv, &fl, in, left, 1);
                    if (k < 0) {
                        fprintf(stderr, "server header block does not decode: %zd\n", k);
                        abort();
                    }
                    in += k;
                    left -= (size_t)k;
                    if (fl & NGHTTP2_HD_INFLATE_FINAL) {
                        nghttp2_hd_inflate_end_headers(inf);
                        break;
                    }
                    if (k == 0 && left == 0 && !(fl & NGHTTP2_HD_INFLATE_EMIT))
                        break;
                }
                blen = 0;
            }
        }
        off += 9 + flen;
    }
    free(block);
    nghttp2_hd_inflate_del(inf);
}

/* ---- jobs ------------------------------------------------------------ */

/* Waits until every job the connection started has been posted back. */
static size_t wait_jobs(size_t want)
{
    cp_mutex_lock(mu);
    while (n_done < want)
        if (cp_cond_timedwait(cv, mu, 10000) != 0 && n_done < want) {
            fprintf(stderr, "fuzz_conn: a job did not finish in 10 s\n");
            abort();
        }
    size_t n = n_done;
    cp_mutex_unlock(mu);
    return n;
}

static void complete_all(cp_conn *c, bool conn_open, outbuf *o)
{
    size_t n = wait_jobs(conn_open ? cp_conn_inflight(c) : 0);
    cp_mutex_lock(mu);
    n = n_done;
    n_done = 0;
    cp_mutex_unlock(mu);
    for (size_t i = 0; i < n; i++) {
        cp_conn *r = cp_job_complete(done[i]);
        if (conn_open && r != c)
            abort();
        if (!conn_open && r != NULL)
            abort();
    }
    if (conn_open)
        drain(c, o);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    const cp_service *svc = cp_groups_service(groups, data[0] % cp_groups_count(groups));
    uint8_t fl = data[1];
    data += 2;
    size -= 2;
    size_t chunk = (fl & 15) == 0 ? (size ? size : 1) : (size_t)1 << ((fl & 15) - 1);
    cp_conn_opts opts = {0};
    if (fl & 0x80) {
        opts.max_recv_msg = 64;
        opts.max_header_bytes = 256;
        opts.max_streams = 4;
    }
    cp_conn *c = cp_conn_new(svc, pool, &opts, post, NULL);
    if (c == NULL)
        abort();
    outbuf o = {0};
    drain(c, &o);
    size_t off = 0;
    bool shut = false;
    while (off < size) {
        size_t n = size - off < chunk ? size - off : chunk;
        int rc = cp_conn_recv(c, data + off, n);
        off += n;
        drain(c, &o);
        bool last = rc != CP_OK || off >= size;
        if (fl & 0x40) {
            /* Deadlines pass while the jobs still run. */
            cp_conn_expire(c, cp_now_ms() + 1000LL * 3600 * 1000 * 1000);
            drain(c, &o);
        }
        if (last && (fl & 0x10))
            break; /* leave the jobs in flight for the close below */
        complete_all(c, true, &o);
        if (rc != CP_OK || !cp_conn_wants_io(c))
            break;
        if ((fl & 0x20) && !shut && off >= size / 2) {
            shut = true;
            cp_conn_shutdown(c);
            drain(c, &o);
        }
    }
    if (fl & 0x10) {
        /* The client is gone while jobs may still be in flight: they
         * finish later and find the connection closed. */
        size_t pending = cp_conn_inflight(c);
        cp_conn_close(c);
        wait_jobs(pending);
        complete_all(NULL, false, NULL);
    } else {
        complete_all(c, true, &o);
        cp_conn_abort_calls(c, "fuzz: stopping");
        drain(c, &o);
        cp_conn_close(c);
    }
    check_output(&o);
    free(o.b);
    return 0;
}
