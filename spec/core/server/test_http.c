/*
 * test_http.c: the HTTP server wrapper (query, raw query, bodies and their
 * cap, extra headers, a streaming response open while the server stops) and
 * self-signed TLS certificates verified by libcurl with the certificate
 * itself as the CA, by IP address and by name.
 */
#include "server/http.h"
#include "server/tls.h"
#include "test.h"

#include <curl/curl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* A tick at once, then one every 0.5 s until the server stops. */
static bool endless(void *ud, ls_buf *out, const volatile bool *stopping)
{
    int *calls = ud;
    if ((*calls)++)
        for (int i = 0; i < 50 && !*stopping; i++)
            usleep(10000);
    if (*stopping)
        return false;
    ls_buf_adds(out, "tick\n");
    return true;
}

static void handler(void *ud, const ls_http_request *rq, ls_http_response *rs)
{
    (void)ud;
    if (strcmp(rq->path, "/stream") == 0) {
        ls_http_respond_stream(rs, 200, "text/plain", endless, ls_xcalloc(1, sizeof(int)), free);
        return;
    }
    ls_buf b = {0};
    const char *q = ls_http_query(rq, "q");
    ls_buf_addf(&b, "%s %s q=%s raw=%s body=%s", rq->method, rq->path, q ? q : "-", rq->query, rq->body);
    ls_http_respond(rs, 200, "text/plain", b.data, b.len);
    ls_http_add_header(rs, "X-Test", "yes");
    ls_buf_free(&b);
}

static size_t collect(char *p, size_t size, size_t n, void *ud)
{
    ls_buf_add(ud, p, size * n);
    return size * n;
}

static ls_buf last_headers;

static long fetch(const char *url, const char *post, const char *ca_pem, long timeout_ms, ls_buf *body)
{
    CURL *c = curl_easy_init();
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, body);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms);
    last_headers.len = 0;
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, collect);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, &last_headers);
    if (post)
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, post);
    struct curl_blob blob = {.data = (void *)ca_pem, .len = ca_pem ? strlen(ca_pem) : 0, .flags = CURL_BLOB_COPY};
    if (ca_pem)
        curl_easy_setopt(c, CURLOPT_CAINFO_BLOB, &blob);
    long code = 0;
    if (curl_easy_perform(c) == CURLE_OK || body->len)
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
    curl_easy_cleanup(c);
    return code;
}

static void test_http(void)
{
    ls_error err;
    ls_http_server_opts o = {.host = "127.0.0.1", .port = 0, .handler = handler, .max_body = 16};
    ls_http_server *s = ls_http_server_start(&o, &err);
    CHECK(s != NULL);
    if (!s)
        return;
    char url[128];
    ls_buf b = {0};
    snprintf(url, sizeof url, "http://127.0.0.1:%u/x/y?q=a%%20b&r=1", ls_http_server_port(s));
    CHECK_INT(fetch(url, NULL, NULL, 5000, &b), 200);
    CHECK_STR(b.data, "GET /x/y q=a b raw=q=a%20b&r=1 body=");
    CHECK_CONTAINS(last_headers.data, "X-Test: yes");
    CHECK_CONTAINS(last_headers.data, "Content-Type: text/plain");
    b.len = 0;
    CHECK_INT(fetch(url, "hello", NULL, 5000, &b), 200);
    CHECK_STR(b.data, "POST /x/y q=a b raw=q=a%20b&r=1 body=hello");
    b.len = 0;
    CHECK_INT(fetch(url, "this body is longer than sixteen bytes", NULL, 5000, &b), 413);
    b.len = 0;
    /* A stream open while stopping: stop returns promptly. */
    snprintf(url, sizeof url, "http://127.0.0.1:%u/stream", ls_http_server_port(s));
    CHECK_INT(fetch(url, NULL, NULL, 300, &b), 200);
    CHECK(b.len >= 5 && strncmp(b.data, "tick\n", 5) == 0);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    ls_http_server_stop(s);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    CHECK((t1.tv_sec - t0.tv_sec) < 3);
    ls_buf_free(&b);

    ls_http_server_opts bad = {.host = "not-an-address", .handler = handler};
    CHECK(ls_http_server_start(&bad, &err) == NULL);
    CHECK_CONTAINS(err.msg, "not-an-address");
}

static void test_tls(void)
{
    const char *hosts[] = {"127.0.0.1", "localhost"};
    char *cert = NULL, *key = NULL;
    ls_error err;
    CHECK(ls_tls_self_signed(hosts, 2, &cert, &key, &err));
    CHECK_CONTAINS(cert, "-----BEGIN CERTIFICATE-----");
    CHECK_CONTAINS(key, "-----BEGIN PRIVATE KEY-----");
    ls_http_server_opts o = {.host = "127.0.0.1", .handler = handler, .tls_cert_pem = cert, .tls_key_pem = key};
    ls_http_server *s = ls_http_server_start(&o, &err);
    CHECK(s != NULL);
    if (s) {
        char url[128];
        ls_buf b = {0};
        /* Verified against the certificate itself as the CA, by IP and by name. */
        snprintf(url, sizeof url, "https://127.0.0.1:%u/tls", ls_http_server_port(s));
        CHECK_INT(fetch(url, NULL, cert, 5000, &b), 200);
        b.len = 0;
        snprintf(url, sizeof url, "https://localhost:%u/tls", ls_http_server_port(s));
        CHECK_INT(fetch(url, NULL, cert, 5000, &b), 200);
        ls_buf_free(&b);
        ls_http_server_stop(s);
    }
    char path[] = "/tmp/ls_tls_XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    CHECK(ls_tls_write_pem(path, cert, 0600, &err));
    char *back = ls_tls_read_pem(path, &err);
    CHECK_STR(back, cert);
    free(back);
    unlink(path);
    CHECK(ls_tls_read_pem("/nonexistent/x.pem", &err) == NULL);
    CHECK_CONTAINS(err.msg, "/nonexistent/x.pem");
    free(cert);
    free(key);
}

/* A request built without a connection (the fuzz target and tests): query
 * values are percent- and '+'-decoded from the raw query, headers come from
 * the request's list, names matched without case. */
static void test_request_without_connection(void)
{
    static const char *const headers[] = {"Content-Type", "application/json", "Authorization", "Bearer t", NULL};
    ls_http_request rq = {.method = "GET", .path = "/api/v1/pods",
                          .query = "labelSelector=app%3Dweb%2Ctier+in+%28a%29&limit=5&watch&empty=",
                          .body = "", .headers = headers};
    CHECK_STR(ls_http_query(&rq, "labelSelector"), "app=web,tier in (a)");
    CHECK_STR(ls_http_query(&rq, "limit"), "5");
    CHECK(ls_http_query(&rq, "watch") == NULL);   /* a key without '=' has no value, as libmicrohttpd says */
    CHECK_STR(ls_http_query(&rq, "empty"), "");
    CHECK(ls_http_query(&rq, "continue") == NULL);
    CHECK_STR(ls_http_header(&rq, "content-type"), "application/json");
    CHECK_STR(ls_http_header(&rq, "AUTHORIZATION"), "Bearer t");
    CHECK(ls_http_header(&rq, "Accept") == NULL);
    ls_http_response rs = {0};
    ls_http_respond(&rs, 200, "text/plain", "ok", 2);
    ls_http_add_header(&rs, "X-A", "b");
    ls_http_response_release(&rs);   /* ASan: nothing leaks */
    CHECK(rs.body == NULL && rs.n_headers == 0);
}

int main(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
    test_request_without_connection();
    test_http();
    test_tls();
    curl_global_cleanup();
    ls_buf_free(&last_headers);
    TEST_MAIN_END();
}
