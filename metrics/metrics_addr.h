/* metrics_addr.h - what -metrics-bind-address means.
 *
 * Upstream hands the value to Go's net.Listen("tcp", addr), default ""
 * (metrics off). We keep "" = off and the HOST:PORT form, but listen on
 * loopback unless the address names another interface:
 *
 *   ""                       metrics off (upstream's default)
 *   ":8888"                  127.0.0.1:8888 (Go: every interface)
 *   "localhost:8888"         127.0.0.1:8888 and [::1]:8888 (upstream's CI
 *                            and integration suite use this form)
 *   "127.0.0.1:8888", "10.0.0.5:8888"   that IPv4 address
 *   "[::1]:8888"             IPv6 loopback
 *   "0.0.0.0:8888", "[::]:8888"         every interface, said explicitly
 *
 * Host names other than localhost are refused (we resolve no names), and
 * so are IPv6 literals other than [::1] and [::], port 0 (Go picks a free
 * port; nobody could scrape it) and anything that is not PORT 1-65535.
 *
 * What a request must show to be served: it arrived on the configured
 * interface (cp_metrics_addr_accepts), and, when that is a loopback one,
 * its Host header names loopback (cp_metrics_addr_host_ok: localhost,
 * 127.0.0.1 or [::1], any case, with this port or none), as a local
 * client asking for any of those URLs sends it. A loopback server thus
 * answers no page fetched under another name (DNS rebinding).
 * Portable C.
 */
#ifndef CP_METRICS_ADDR_H
#define CP_METRICS_ADDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/status.h"

typedef struct cp_metrics_addr {
    bool all;       /* every interface: the IP below is unused */
    bool loopback;  /* 127.0.0.1, [::1] or localhost: Host must name loopback */
    bool localhost; /* "localhost": [::1] as well as 127.0.0.1 (ip) */
    bool ipv6;      /* ip is 16 bytes (::1), else 4 */
    uint8_t ip[16]; /* the interface's address, network order */
    uint16_t port;  /* 1-65535 */
    char host[48];  /* for a URL: "127.0.0.1", "[::1]", or "+" for all */
} cp_metrics_addr;

/* CP_OK and *out, or CP_E_INVALID_ARGUMENT with e naming the flag, the
 * value and what is wrong. text must not be "" (metrics off). */
int cp_metrics_addr_parse(const char *text, cp_metrics_addr *out, cp_error *e)
    __attribute__((warn_unused_result));

/* "http://127.0.0.1:8888/": the interface's URL ("+" for every one). */
void cp_metrics_addr_url(const cp_metrics_addr *a, char *buf, size_t cap);

/* The URL as the operator wrote it, for messages: "http://localhost:8888/"
 * for the localhost form, else cp_metrics_addr_url's. */
void cp_metrics_addr_name(const cp_metrics_addr *a, char *buf, size_t cap);

/* "http://+:8888/": the HTTP Server API UrlPrefix registered, whatever the
 * interface. http.sys routes a host-specific or IP-bound prefix by the
 * request's Host header (Wine's http.sys matches the Host text only, and
 * leaves a request no prefix matches unanswered), so only the strong
 * wildcard brings every request for the port to csi-proxy, which then
 * answers each one itself: served, 400, 403, 404 or 405. */
void cp_metrics_addr_prefix(const cp_metrics_addr *a, char *buf, size_t cap);

/* True when a request that arrived on the local address (family 4 or 6,
 * ip in network order; an IPv4-mapped IPv6 address counts as the IPv4
 * one) may be served: any, when the address is every interface; both
 * loopback addresses for localhost; else exactly the configured one. */
bool cp_metrics_addr_accepts(const cp_metrics_addr *a, int family, const uint8_t *ip);

/* True when a request with this Host header value (len bytes, not
 * terminated; "name" or "name:port") may be served: always, unless the
 * address is a loopback one; then the name must be localhost, 127.0.0.1
 * or [::1] (ASCII case ignored) and a port, if given, this one. */
bool cp_metrics_addr_host_ok(const cp_metrics_addr *a, const char *host, size_t len);

#endif
