/* httpcheck.c - Wine test probe: an HTTP/1.1 client inside the prefix,
 * plain Winsock, that names the Host header itself (a Go client or curl
 * asked for http://localhost:8888/ connects to a loopback address and
 * sends "Host: localhost:8888"; this does the same with any Host).
 *
 *   httpcheck [-t SECS] [-m METHOD] [-p PATH] ADDR PORT HOST...
 *
 * For each HOST: connects to ADDR (a numeric IPv4 or IPv6 address) port
 * PORT, sends "METHOD PATH HTTP/1.1" (GET /metrics by default) with
 * "Host: HOST" and "Connection: close", reads the answer and prints one
 * line:
 *
 *   HOST STATUS BODY
 *
 * STATUS is the answer's status code, "timeout" (nothing within SECS
 * seconds, default 10), "refused" (nothing listens), "closed" (the
 * connection closed before a status line) or "error N" (Winsock error N).
 * BODY is "metrics" when the body holds a csi-proxy metric, else "-".
 * Exit 0 once every HOST is tried; 2 on bad usage.
 */
#define WIN32_LEAN_AND_MEAN
#include <winsock2.h>
#include <ws2tcpip.h>
#include <windows.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ANSWER_CAP 262144

static int usage(void)
{
    fprintf(stderr, "usage: httpcheck [-t SECS] [-m METHOD] [-p PATH] ADDR PORT HOST...\n");
    return 2;
}

/* True once buf[0..len) holds the headers and as many body bytes as
 * their Content-Length says (http.sys keeps the connection open after an
 * answer, whatever "Connection: close" asked). */
static int answer_complete(char *buf, int len)
{
    buf[len] = '\0';
    const char *end = strstr(buf, "\r\n\r\n");
    if (end == NULL)
        return 0;
    const char *cl = strstr(buf, "\r\nContent-Length:");
    if (cl == NULL || cl > end)
        return 0; /* no length: read until the server closes */
    long want = strtol(cl + 17, NULL, 10);
    return (long)(len - (end + 4 - buf)) >= want;
}

/* One request; the result line goes to stdout. */
static void probe(const struct addrinfo *ai, DWORD timeout_ms, const char *method, const char *path,
                  const char *host)
{
    SOCKET s = socket(ai->ai_family, SOCK_STREAM, IPPROTO_TCP);
    if (s == INVALID_SOCKET) {
        printf("%s error %d -\n", host, WSAGetLastError());
        return;
    }
    setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, (const char *)&timeout_ms, sizeof(timeout_ms));
    setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, (const char *)&timeout_ms, sizeof(timeout_ms));
    if (connect(s, ai->ai_addr, (int)ai->ai_addrlen) != 0) {
        int err = WSAGetLastError();
        if (err == WSAECONNREFUSED)
            printf("%s refused -\n", host);
        else
            printf("%s error %d -\n", host, err);
        closesocket(s);
        return;
    }
    char req[1024];
    int n = snprintf(req, sizeof(req),
                     "%s %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: httpcheck\r\n"
                     "Connection: close\r\n\r\n",
                     method, path, host);
    if (n < 0 || n >= (int)sizeof(req) || send(s, req, n, 0) != n) {
        printf("%s error %d -\n", host, WSAGetLastError());
        closesocket(s);
        return;
    }
    char *buf = malloc(ANSWER_CAP + 1);
    if (buf == NULL) {
        printf("%s error out-of-memory -\n", host);
        closesocket(s);
        return;
    }
    int len = 0, got = 0, err = 0;
    while (len < ANSWER_CAP && (got = recv(s, buf + len, ANSWER_CAP - len, 0)) > 0) {
        len += got;
        if (answer_complete(buf, len))
            break; /* a kept-alive connection would wait out the timeout */
    }
    if (got < 0)
        err = WSAGetLastError();
    buf[len] = '\0';
    int status = 0;
    if (len > 0 && sscanf(buf, "HTTP/1.%*d %d", &status) == 1) {
        const char *body = strstr(buf, "\r\n\r\n");
        int has = body != NULL && strstr(body, "csi_proxy_connections_open") != NULL;
        printf("%s %d %s\n", host, status, has ? "metrics" : "-");
    } else if (err == WSAETIMEDOUT) {
        printf("%s timeout -\n", host);
    } else if (err != 0) {
        printf("%s error %d -\n", host, err);
    } else {
        printf("%s closed -\n", host);
    }
    free(buf);
    closesocket(s);
}

int main(int argc, char **argv)
{
    DWORD timeout_ms = 10000;
    const char *method = "GET", *path = "/metrics";
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i += 2) {
        if (i + 1 >= argc)
            return usage();
        if (strcmp(argv[i], "-t") == 0)
            timeout_ms = (DWORD)atoi(argv[i + 1]) * 1000;
        else if (strcmp(argv[i], "-m") == 0)
            method = argv[i + 1];
        else if (strcmp(argv[i], "-p") == 0)
            path = argv[i + 1];
        else
            return usage();
    }
    if (argc - i < 3)
        return usage();
    const char *addr = argv[i], *port = argv[i + 1];
    WSADATA wsa;
    if (WSAStartup(MAKEWORD(2, 2), &wsa) != 0) {
        fprintf(stderr, "httpcheck: WSAStartup failed\n");
        return 1;
    }
    struct addrinfo hints, *ai = NULL;
    memset(&hints, 0, sizeof(hints));
    hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(addr, port, &hints, &ai) != 0 || ai == NULL) {
        fprintf(stderr, "httpcheck: not a numeric address and port: %s %s\n", addr, port);
        return 2;
    }
    for (int h = i + 2; h < argc; h++)
        probe(ai, timeout_ms, method, path, argv[h]);
    freeaddrinfo(ai);
    WSACleanup();
    return 0;
}
