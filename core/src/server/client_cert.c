/*
 * client_cert.c: the client certificate of a request served over TLS
 * (ls_http_client_cert, http.h). libmicrohttpd runs TLS with GnuTLS: the
 * session verifies the peer's chain against the trust the server was started
 * with (client_ca_pem); the subject is then read from the certificate with
 * OpenSSL, as the rest of luasched reads certificates.
 */
#include "server/http.h"

#include <gnutls/gnutls.h>
#include <microhttpd.h>
#include <openssl/x509.h>
#include <stdlib.h>
#include <string.h>

static char *entry_text(X509_NAME_ENTRY *e)
{
    unsigned char *utf8 = NULL;
    int n = ASN1_STRING_to_UTF8(&utf8, X509_NAME_ENTRY_get_data(e));
    if (n < 0)
        return NULL;
    char *s = ls_xstrndup((const char *)utf8, (size_t)n);
    OPENSSL_free(utf8);
    return s;
}

/* CN and O entries of a DER certificate. */
static bool read_subject(const gnutls_datum_t *der, char **cn, char **orgs, int max_orgs, int *n_orgs)
{
    const unsigned char *p = der->data;
    X509 *x = d2i_X509(NULL, &p, der->size);
    if (!x)
        return false;
    X509_NAME *name = X509_get_subject_name(x);
    for (int i = 0; i < X509_NAME_entry_count(name); i++) {
        X509_NAME_ENTRY *e = X509_NAME_get_entry(name, i);
        int nid = OBJ_obj2nid(X509_NAME_ENTRY_get_object(e));
        if (nid == NID_commonName && !*cn)
            *cn = entry_text(e);
        else if (nid == NID_organizationName && *n_orgs < max_orgs && (orgs[*n_orgs] = entry_text(e)))
            (*n_orgs)++;
    }
    X509_free(x);
    return *cn != NULL;
}

int ls_http_client_cert(const ls_http_request *r, char **cn, char **orgs, int max_orgs, int *n_orgs)
{
    *cn = NULL;
    *n_orgs = 0;
    if (!r->conn_)
        return 0;
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(r->conn_, MHD_CONNECTION_INFO_GNUTLS_SESSION);
    gnutls_session_t session = ci ? (gnutls_session_t)ci->tls_session : NULL;
    if (!session)
        return 0;
    unsigned int n = 0;
    const gnutls_datum_t *chain = gnutls_certificate_get_peers(session, &n);
    if (!chain || n == 0)
        return 0;
    unsigned int status = 0;
    if (gnutls_certificate_verify_peers2(session, &status) != GNUTLS_E_SUCCESS || status != 0)
        return -1;
    if (!read_subject(&chain[0], cn, orgs, max_orgs, n_orgs)) {
        free(*cn);
        *cn = NULL;
        for (int i = 0; i < *n_orgs; i++)
            free(orgs[i]);
        *n_orgs = 0;
        return -1;
    }
    return 1;
}
