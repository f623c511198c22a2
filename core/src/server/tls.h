/*
 * tls.h: serving certificates. luasched serves HTTPS without asking the user
 * for a PKI: it makes a self-signed certificate for the addresses it serves,
 * marked CA:TRUE so a client can trust it directly as its certificate
 * authority (kubeconfig certificate-authority-data, curl --cacert).
 */
#ifndef LS_SERVER_TLS_H
#define LS_SERVER_TLS_H

#include "luasched/base.h"

#include <stddef.h>

/* A self-signed EC P-256 certificate valid for one year, CN = the first host,
 * with a subjectAltName entry per host (IP addresses as IP entries, anything
 * else as DNS names). *cert_pem and *key_pem are malloc'd PEM text (PKCS#8
 * key). false with err set on failure. */
bool ls_tls_self_signed(const char *const *hosts, size_t n_hosts, char **cert_pem, char **key_pem, ls_error *err);

/* Reads a whole PEM (or any text) file into a malloc'd string; NULL with err
 * naming the file on failure. */
char *ls_tls_read_pem(const char *path, ls_error *err);
/* Writes text to path with the given mode (0600 for keys); false with err. */
bool ls_tls_write_pem(const char *path, const char *pem, unsigned mode, ls_error *err);

#endif
