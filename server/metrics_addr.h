/* metrics_addr.h - what -metrics-bind-address means.
 *
 * Upstream hands the value to Go's net.Listen("tcp", addr), default ""
 * (metrics off). We keep "" = off and the HOST:PORT form, but listen on
 * loopback unless the address names another interface:
 *
 *   ""                       metrics off (upstream's default)
 *   ":8888"                  127.0.0.1:8888 (Go: every interface)
 *   "localhost:8888"         127.0.0.1:8888
 *   "127.0.0.1:8888", "10.0.0.5:8888"   that IPv4 address
 *   "[::1]:8888"             IPv6 loopback
 *   "0.0.0.0:8888", "[::]:8888"         every interface, said explicitly
 *
 * Host names other than localhost are refused (we resolve no names), and
 * so are IPv6 literals other than [::1] and [::], port 0 (Go picks a free
 * port; nobody could scrape it) and anything that is not PORT 1-65535.
 * Portable C.
 */
#ifndef CP_METRICS_ADDR_H
#define CP_METRICS_ADDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "status.h"

typedef struct cp_metrics_addr {
    bool all;       /* every interface: the IP below is unused */
    bool ipv6;      /* ip is 16 bytes (::1), else 4 */
    uint8_t ip[16]; /* the interface's address, network order */
    uint16_t port;  /* 1-65535 */
    char host[48];  /* for a URL: "127.0.0.1", "[::1]", or "+" for all */
} cp_metrics_addr;

/* CP_OK and *out, or CP_E_INVALID_ARGUMENT with e naming the flag, the
 * value and what is wrong. text must not be "" (metrics off). */
int cp_metrics_addr_parse(const char *text, cp_metrics_addr *out, cp_error *e)
    __attribute__((warn_unused_result));

/* "http://127.0.0.1:8888/" (the HTTP Server API's UrlPrefix form). */
void cp_metrics_addr_url(const cp_metrics_addr *a, char *buf, size_t cap);

/* True when a request that arrived on the local address (family 4 or 6,
 * ip in network order) may be served: any, when the address is every
 * interface; else exactly the configured one. */
bool cp_metrics_addr_accepts(const cp_metrics_addr *a, int family, const uint8_t *ip);

#endif
