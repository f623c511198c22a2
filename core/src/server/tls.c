/*
 * tls.c: self-signed serving certificates with OpenSSL 3 libcrypto (see
 * tls.h).
 */
#include "server/tls.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/bio.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static bool ssl_error(ls_error *err, const char *what)
{
    char buf[256];
    ERR_error_string_n(ERR_get_error(), buf, sizeof buf);
    return ls_errorf(err, "TLS: %s: %s", what, buf);
}

static bool is_ip(const char *h)
{
    unsigned char b[16];
    return inet_pton(AF_INET, h, b) == 1 || inet_pton(AF_INET6, h, b) == 1;
}

/* "IP:127.0.0.1,DNS:localhost" for X509V3_EXT_conf_nid. */
static char *san_list(const char *const *hosts, size_t n)
{
    size_t len = 1;
    for (size_t i = 0; i < n; i++)
        len += strlen(hosts[i]) + 5;
    char *s = ls_xcalloc(1, len);
    for (size_t i = 0; i < n; i++) {
        if (i)
            strcat(s, ",");
        strcat(s, is_ip(hosts[i]) ? "IP:" : "DNS:");
        strcat(s, hosts[i]);
    }
    return s;
}

static bool add_ext(X509 *x, int nid, const char *value)
{
    X509V3_CTX ctx;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, x, x, NULL, NULL, 0);
    X509_EXTENSION *ext = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
    if (!ext)
        return false;
    bool ok = X509_add_ext(x, ext, -1) == 1;
    X509_EXTENSION_free(ext);
    return ok;
}

static char *bio_string(BIO *b)
{
    char *data;
    long n = BIO_get_mem_data(b, &data);
    return ls_xstrndup(data, (size_t)n);
}

static bool fill_cert(X509 *x, EVP_PKEY *key, const char *const *hosts, size_t n)
{
    unsigned char serial[16];
    if (RAND_bytes(serial, sizeof serial) != 1)
        return false;
    serial[0] &= 0x7f;   /* a positive serial number */
    BIGNUM *bn = BN_bin2bn(serial, sizeof serial, NULL);
    bool ok = bn && BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x));
    BN_free(bn);
    X509_NAME *name = X509_get_subject_name(x);
    const char *cn = n ? hosts[0] : "luasched";
    char *san = san_list(hosts, n);
    ok = ok && X509_set_version(x, 2) && X509_gmtime_adj(X509_getm_notBefore(x), -3600) &&
         X509_gmtime_adj(X509_getm_notAfter(x), 365L * 24 * 3600) && X509_set_pubkey(x, key) &&
         X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC, (const unsigned char *)"luasched", -1, -1, 0) &&
         X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1, 0) &&
         X509_set_issuer_name(x, name) && add_ext(x, NID_basic_constraints, "critical,CA:TRUE") &&
         add_ext(x, NID_key_usage, "critical,digitalSignature,keyEncipherment,keyCertSign") &&
         add_ext(x, NID_ext_key_usage, "serverAuth") && add_ext(x, NID_subject_key_identifier, "hash") &&
         (!n || add_ext(x, NID_subject_alt_name, san)) && X509_sign(x, key, EVP_sha256()) > 0;
    free(san);
    return ok;
}

bool ls_tls_self_signed(const char *const *hosts, size_t n_hosts, char **cert_pem, char **key_pem, ls_error *err)
{
    *cert_pem = *key_pem = NULL;
    EVP_PKEY *key = EVP_EC_gen("P-256");
    if (!key)
        return ssl_error(err, "generating an EC P-256 key");
    X509 *x = X509_new();
    BIO *cb = BIO_new(BIO_s_mem()), *kb = BIO_new(BIO_s_mem());
    bool ok = x && cb && kb && fill_cert(x, key, hosts, n_hosts) && PEM_write_bio_X509(cb, x) &&
              PEM_write_bio_PrivateKey(kb, key, NULL, NULL, 0, NULL, NULL);
    if (ok) {
        *cert_pem = bio_string(cb);
        *key_pem = bio_string(kb);
    } else {
        ssl_error(err, "making a self-signed certificate");
    }
    BIO_free(cb);
    BIO_free(kb);
    X509_free(x);
    EVP_PKEY_free(key);
    return ok;
}

char *ls_tls_read_pem(const char *path, ls_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        ls_errorf(err, "%s: %s", path, strerror(errno));
        return NULL;
    }
    size_t len;
    char *s = ls_read_stream(f, &len);
    fclose(f);
    if (!s || !strstr(s, "-----BEGIN ")) {
        ls_errorf(err, "%s: %s", path, !s ? "read error" : "expected PEM text (-----BEGIN ...)");
        free(s);
        return NULL;
    }
    return s;
}

bool ls_tls_write_pem(const char *path, const char *pem, unsigned mode, ls_error *err)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, (mode_t)mode);
    if (fd < 0)
        return ls_errorf(err, "%s: %s", path, strerror(errno));
    size_t len = strlen(pem), off = 0;
    while (off < len) {
        ssize_t w = write(fd, pem + off, len - off);
        if (w <= 0) {
            close(fd);
            return ls_errorf(err, "%s: %s", path, strerror(errno));
        }
        off += (size_t)w;
    }
    close(fd);
    return true;
}
