#ifndef GUARDED_FETCH_H
#define GUARDED_FETCH_H

#include <stddef.h>

/// Which peer addresses a fetch may connect to. Checked on the address libcurl is about to
/// connect to (its open-socket callback), so a name that resolves differently later (DNS
/// rebinding) cannot slip past a check made earlier.
typedef enum {
    GF_ADDRESSES_PUBLIC = 0,   ///< no loopback, private, link-local, unique-local, CGNAT or multicast address
    GF_ADDRESSES_LOOPBACK = 1, ///< loopback only (plain-HTTP test servers)
    GF_ADDRESSES_ANY = 2,      ///< anything (an operator allowed private addresses)
} gf_address_policy;

typedef enum {
    GF_OK = 0,
    GF_TOO_LARGE = 1,
    GF_ADDRESS_REFUSED = 2,
    GF_TIMEOUT = 3,
    GF_TRANSFER_FAILED = 4,
    GF_OUT_OF_MEMORY = 5,
} gf_outcome;

typedef struct {
    gf_outcome outcome;
    long status;            ///< the HTTP status, when one was received
    unsigned char *body;    ///< malloc'd; free with gf_result_free
    size_t length;
    char message[256];      ///< libcurl's error text, for logs
} gf_result;

/// Connections (and TLS sessions and DNS answers) kept between requests, from any thread:
/// a request given them reuses an open connection to the same host and port rather than
/// opening one (and a TLS handshake) each time.
typedef struct gf_connections gf_connections;

/// NULL when out of memory.
gf_connections *gf_connections_new(void);
/// Closes the connections; no request may be using them.
void gf_connections_free(gf_connections *connections);

/// One GET of `url` with no redirects, no proxies, at most `max_bytes` of (decoded) body,
/// and `timeout_ms` for the whole transfer. `https_only` refuses every other scheme.
/// Blocking: call it off any event loop.
void gf_get(const char *url, long timeout_ms, size_t max_bytes, int https_only,
            gf_address_policy policy, gf_result *out);

/// The same for any request: `headers` are whole header lines ("Name: value"); with a `body`
/// (`body_length` bytes), a POST of it. Any status is returned in `out->status` (a body too,
/// up to `max_bytes`); only a transfer that failed is an outcome other than GF_OK. With
/// `connections` (NULL: a connection of its own), a connection is kept for the next request.
void gf_request(const char *url, const char *const *headers, size_t header_count, const unsigned char *body,
                size_t body_length, const char *user_agent, long timeout_ms, size_t max_bytes, int https_only,
                gf_address_policy policy, gf_connections *connections, gf_result *out);

void gf_result_free(gf_result *result);

#endif
