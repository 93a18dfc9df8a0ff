#include "guarded_fetch.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

static pthread_once_t global_init_once = PTHREAD_ONCE_INIT;
static void global_init(void) { curl_global_init(CURL_GLOBAL_DEFAULT); }

/* libcurl's share interface: its connection cache, TLS sessions and DNS answers, used by
   requests on any thread; libcurl calls these around every use of a kind of shared data. */
struct gf_connections {
    CURLSH *share;
    pthread_mutex_t locks[CURL_LOCK_DATA_LAST];
};

static void share_lock(CURL *handle, curl_lock_data data, curl_lock_access access, void *context) {
    (void)handle;
    (void)access;
    pthread_mutex_lock(&((gf_connections *)context)->locks[data]);
}

static void share_unlock(CURL *handle, curl_lock_data data, void *context) {
    (void)handle;
    pthread_mutex_unlock(&((gf_connections *)context)->locks[data]);
}

gf_connections *gf_connections_new(void) {
    pthread_once(&global_init_once, global_init);
    gf_connections *connections = calloc(1, sizeof *connections);
    if (!connections) return NULL;
    connections->share = curl_share_init();
    if (!connections->share) {
        free(connections);
        return NULL;
    }
    for (int i = 0; i < CURL_LOCK_DATA_LAST; i++) pthread_mutex_init(&connections->locks[i], NULL);
    curl_share_setopt(connections->share, CURLSHOPT_LOCKFUNC, share_lock);
    curl_share_setopt(connections->share, CURLSHOPT_UNLOCKFUNC, share_unlock);
    curl_share_setopt(connections->share, CURLSHOPT_USERDATA, connections);
    curl_share_setopt(connections->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_CONNECT);
    curl_share_setopt(connections->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
    curl_share_setopt(connections->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
    return connections;
}

void gf_connections_free(gf_connections *connections) {
    if (!connections) return;
    curl_share_cleanup(connections->share);
    for (int i = 0; i < CURL_LOCK_DATA_LAST; i++) pthread_mutex_destroy(&connections->locks[i]);
    free(connections);
}

typedef struct {
    gf_address_policy policy;
    int refused;
    unsigned char *body;
    size_t length;
    size_t capacity;
    size_t max_bytes;
    int too_large;
    int out_of_memory;
} transfer;

static int ipv4_is_loopback(uint32_t a) { return (a >> 24) == 127; }

static int ipv4_is_special(uint32_t a) {
    return (a >> 24) == 0 || (a >> 24) == 10 || (a >> 24) == 127   /* this network, private, loopback */
        || (a >> 20) == ((172u << 4) | 1)                           /* 172.16.0.0/12 */
        || (a >> 16) == ((192u << 8) | 168)                         /* 192.168.0.0/16 */
        || (a >> 16) == ((169u << 8) | 254)                         /* link-local, cloud metadata */
        || (a >> 22) == ((100u << 2) | 1)                           /* 100.64.0.0/10 carrier-grade NAT */
        || (a >> 28) >= 14;                                         /* multicast, reserved, broadcast */
}

/// 1 when the peer may be connected to under `policy`.
static int address_allowed(const struct sockaddr *address, gf_address_policy policy) {
    if (policy == GF_ADDRESSES_ANY) return 1;
    if (address->sa_family == AF_INET) {
        uint32_t a = ntohl(((const struct sockaddr_in *)address)->sin_addr.s_addr);
        return policy == GF_ADDRESSES_LOOPBACK ? ipv4_is_loopback(a) : !ipv4_is_special(a);
    }
    if (address->sa_family == AF_INET6) {
        const struct in6_addr *a6 = &((const struct sockaddr_in6 *)address)->sin6_addr;
        if (IN6_IS_ADDR_V4MAPPED(a6)) {
            uint32_t a;
            memcpy(&a, &a6->s6_addr[12], 4);
            a = ntohl(a);
            return policy == GF_ADDRESSES_LOOPBACK ? ipv4_is_loopback(a) : !ipv4_is_special(a);
        }
        if (policy == GF_ADDRESSES_LOOPBACK) return IN6_IS_ADDR_LOOPBACK(a6);
        return !(IN6_IS_ADDR_LOOPBACK(a6) || IN6_IS_ADDR_UNSPECIFIED(a6) || IN6_IS_ADDR_LINKLOCAL(a6)
                 || IN6_IS_ADDR_SITELOCAL(a6) || IN6_IS_ADDR_MULTICAST(a6)
                 || (a6->s6_addr[0] & 0xfe) == 0xfc /* fc00::/7 unique local */);
    }
    return 0;
}

static curl_socket_t open_socket(void *context, curlsocktype purpose, struct curl_sockaddr *address) {
    transfer *t = context;
    (void)purpose;
    if (!address_allowed(&address->addr, t->policy)) {
        t->refused = 1;
        return CURL_SOCKET_BAD;
    }
    return socket(address->family, address->socktype, address->protocol);
}

static size_t write_body(char *data, size_t size, size_t count, void *context) {
    transfer *t = context;
    size_t n = size * count;
    if (n > t->max_bytes - t->length) {
        t->too_large = 1;
        return 0; /* aborts the transfer */
    }
    if (t->length + n > t->capacity) {
        size_t capacity = t->capacity ? t->capacity : 16384;
        while (capacity < t->length + n) capacity *= 2;
        if (capacity > t->max_bytes) capacity = t->max_bytes;
        unsigned char *grown = realloc(t->body, capacity);
        if (!grown) {
            t->out_of_memory = 1;
            return 0;
        }
        t->body = grown;
        t->capacity = capacity;
    }
    memcpy(t->body + t->length, data, n);
    t->length += n;
    return n;
}

void gf_request(const char *url, const char *const *headers, size_t header_count, const unsigned char *body,
                size_t body_length, const char *user_agent, long timeout_ms, size_t max_bytes, int https_only,
                gf_address_policy policy, gf_connections *connections, gf_result *out) {
    memset(out, 0, sizeof *out);
    pthread_once(&global_init_once, global_init);
    transfer t = {.policy = policy, .max_bytes = max_bytes};
    CURL *curl = curl_easy_init();
    if (!curl) {
        out->outcome = GF_OUT_OF_MEMORY;
        snprintf(out->message, sizeof out->message, "curl_easy_init failed");
        return;
    }
    char error[CURL_ERROR_SIZE] = {0};
    curl_easy_setopt(curl, CURLOPT_URL, url);
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
    curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(curl, CURLOPT_PROXY, "");   /* a proxy would be the peer the address check sees */
#if LIBCURL_VERSION_NUM >= 0x075500 /* 7.85: CURLOPT_PROTOCOLS_STR */
    curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, https_only ? "https" : "http,https");
#else
    curl_easy_setopt(curl, CURLOPT_PROTOCOLS, https_only ? (long)CURLPROTO_HTTPS : (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
    curl_easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, 2L);
    curl_easy_setopt(curl, CURLOPT_USERAGENT, user_agent);
    curl_easy_setopt(curl, CURLOPT_ACCEPT_ENCODING, "");
    curl_easy_setopt(curl, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)max_bytes);
    curl_easy_setopt(curl, CURLOPT_OPENSOCKETFUNCTION, open_socket);
    curl_easy_setopt(curl, CURLOPT_OPENSOCKETDATA, &t);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, write_body);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &t);
    /* A kept connection had its address checked when it was opened, under the same policy:
       one set of connections serves one fetcher, whose policy is fixed. */
    if (connections) curl_easy_setopt(curl, CURLOPT_SHARE, connections->share);
    struct curl_slist *header_list = NULL;
    int out_of_memory = 0;
    for (size_t i = 0; i < header_count && !out_of_memory; i++) {
        struct curl_slist *grown = curl_slist_append(header_list, headers[i]);
        if (!grown) out_of_memory = 1; else header_list = grown;
    }
    if (out_of_memory) {
        curl_slist_free_all(header_list);
        curl_easy_cleanup(curl);
        out->outcome = GF_OUT_OF_MEMORY;
        snprintf(out->message, sizeof out->message, "curl_slist_append failed");
        return;
    }
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, header_list);
    if (body) {
        /* A POST of exactly these bytes; no "Expect: 100-continue" round trip. */
        curl_easy_setopt(curl, CURLOPT_POST, 1L);
        curl_easy_setopt(curl, CURLOPT_POSTFIELDS, (const char *)body);
        curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_length);
    }

    CURLcode code = curl_easy_perform(curl);
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &out->status);
    if (t.too_large || code == CURLE_FILESIZE_EXCEEDED) {
        out->outcome = GF_TOO_LARGE;
    } else if (t.out_of_memory) {
        out->outcome = GF_OUT_OF_MEMORY;
    } else if (t.refused) {
        out->outcome = GF_ADDRESS_REFUSED;
    } else if (code == CURLE_OPERATION_TIMEDOUT) {
        out->outcome = GF_TIMEOUT;
    } else if (code != CURLE_OK) {
        out->outcome = GF_TRANSFER_FAILED;
    }
    if (out->outcome != GF_OK) {
        snprintf(out->message, sizeof out->message, "%s", error[0] ? error : curl_easy_strerror(code));
        free(t.body);
    } else {
        out->body = t.body;
        out->length = t.length;
    }
    curl_slist_free_all(header_list);
    curl_easy_cleanup(curl);
}

void gf_get(const char *url, long timeout_ms, size_t max_bytes, int https_only,
            gf_address_policy policy, gf_result *out) {
    const char *headers[] = {"Accept: application/json"};
    gf_request(url, headers, 1, NULL, 0, "habitsync-server key fetch", timeout_ms, max_bytes, https_only, policy, NULL, out);
}

void gf_result_free(gf_result *result) {
    free(result->body);
    result->body = NULL;
    result->length = 0;
}
