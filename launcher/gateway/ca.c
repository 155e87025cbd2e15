// SPDX-License-Identifier: LGPL-2.1-or-later
/* The gateway's CA: made per gateway (EC P-256, its key only in memory), leaves minted per name. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>

#include "gateway_internal.h"

/* Long enough for any job; a gateway's CA is never reused after its process ends. */
#define GW_CA_DAYS   30
#define GW_LEAF_DAYS 30
/* Clocks of the job and of the gateway agree (one host); an hour of slack for the VM case. */
#define GW_BACKDATE_S 3600

struct gw_leaf {
	char name[GW_HOST_MAX];
	X509 *cert;
	struct gw_leaf *next;
};

static EVP_PKEY *ca_keygen(void)
{
	return EVP_EC_gen("P-256");
}

static int ca_add_ext(X509 *cert, X509 *issuer, int nid, const char *value)
{
	X509V3_CTX ctx;
	X509_EXTENSION *ext;
	int ok;

	X509V3_set_ctx_nodb(&ctx);
	X509V3_set_ctx(&ctx, issuer, cert, NULL, NULL, 0);
	ext = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
	if (!ext)
		return -EINVAL;
	ok = X509_add_ext(cert, ext, -1);
	X509_EXTENSION_free(ext);
	return ok ? 0 : -ENOMEM;
}

/* A certificate with a random serial, valid from an hour ago, subject CN=cn. */
static X509 *ca_cert_new(const char *cn, EVP_PKEY *key, int days)
{
	unsigned char serial[16];
	X509 *cert = X509_new();
	X509_NAME *name;
	BIGNUM *bn;

	if (!cert)
		return NULL;
	if (RAND_bytes(serial, sizeof(serial)) != 1)
		goto fail;
	serial[0] &= 0x7f; /* positive */
	bn = BN_bin2bn(serial, sizeof(serial), NULL);
	if (!bn || !BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert))) {
		BN_free(bn);
		goto fail;
	}
	BN_free(bn);
	name = X509_get_subject_name(cert);
	if (!X509_set_version(cert, 2) ||
	    !X509_gmtime_adj(X509_getm_notBefore(cert), -GW_BACKDATE_S) ||
	    !X509_gmtime_adj(X509_getm_notAfter(cert), (long)days * 86400) ||
	    !X509_set_pubkey(cert, key) ||
	    !X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, (const unsigned char *)cn, -1,
					-1, 0))
		goto fail;
	return cert;
fail:
	X509_free(cert);
	return NULL;
}

int gw_ca_init(struct gw_ca *ca, char *errbuf, size_t errlen)
{
	X509 *cert;

	ca->ca_key = ca_keygen();
	ca->leaf_key = ca_keygen();
	if (!ca->ca_key || !ca->leaf_key)
		goto fail;
	cert = ca_cert_new("launch gateway CA", ca->ca_key, GW_CA_DAYS);
	if (!cert)
		goto fail;
	ca->ca_cert = cert;
	if (!X509_set_issuer_name(cert, X509_get_subject_name(cert)) ||
	    ca_add_ext(cert, cert, NID_basic_constraints, "critical,CA:TRUE,pathlen:0") ||
	    ca_add_ext(cert, cert, NID_key_usage, "critical,keyCertSign,cRLSign") ||
	    ca_add_ext(cert, cert, NID_subject_key_identifier, "hash") ||
	    ca_add_ext(cert, cert, NID_authority_key_identifier, "keyid:always") ||
	    !X509_sign(cert, ca->ca_key, EVP_sha256()))
		goto fail;
	ca->fallback = ca_cert_new("launch gateway", ca->leaf_key, GW_LEAF_DAYS);
	/* A SAN in the reserved .invalid (RFC 6761): no client then matches the CN either. */
	if (!ca->fallback || !X509_set_issuer_name(ca->fallback, X509_get_subject_name(cert)) ||
	    ca_add_ext(ca->fallback, cert, NID_subject_alt_name, "DNS:launch-gateway.invalid") ||
	    !X509_sign(ca->fallback, ca->ca_key, EVP_sha256()))
		goto fail;
	return 0;
fail:
	snprintf(errbuf, errlen, "gateway: cannot make its CA: %s",
		 ERR_reason_error_string(ERR_get_error()) ?: "OpenSSL failed");
	gw_ca_free(ca);
	return -ENOMEM;
}

void gw_ca_free(struct gw_ca *ca)
{
	struct gw_leaf *leaf, *next;

	for (leaf = ca->leaves; leaf; leaf = next) {
		next = leaf->next;
		X509_free(leaf->cert);
		free(leaf);
	}
	X509_free(ca->fallback);
	X509_free(ca->ca_cert);
	EVP_PKEY_free(ca->leaf_key);
	EVP_PKEY_free(ca->ca_key);
	memset(ca, 0, sizeof(*ca));
}

static X509 *ca_mint(struct gw_ca *ca, const char *host)
{
	char san[GW_HOST_MAX + 8];
	struct in6_addr ip;
	X509 *cert;

	/* A name that is an address gets an IP SAN: clients match those, never a DNS one. */
	snprintf(san, sizeof(san), "%s:%s",
		 inet_pton(AF_INET, host, &ip) == 1 || inet_pton(AF_INET6, host, &ip) == 1 ? "IP"
											   : "DNS",
		 host);
	cert = ca_cert_new(host, ca->leaf_key, GW_LEAF_DAYS);
	if (!cert)
		return NULL;
	if (!X509_set_issuer_name(cert, X509_get_subject_name(ca->ca_cert)) ||
	    ca_add_ext(cert, ca->ca_cert, NID_subject_alt_name, san) ||
	    ca_add_ext(cert, ca->ca_cert, NID_basic_constraints, "critical,CA:FALSE") ||
	    ca_add_ext(cert, ca->ca_cert, NID_key_usage, "critical,digitalSignature") ||
	    ca_add_ext(cert, ca->ca_cert, NID_ext_key_usage, "serverAuth") ||
	    ca_add_ext(cert, ca->ca_cert, NID_subject_key_identifier, "hash") ||
	    ca_add_ext(cert, ca->ca_cert, NID_authority_key_identifier, "keyid:always") ||
	    !X509_sign(cert, ca->ca_key, EVP_sha256())) {
		X509_free(cert);
		return NULL;
	}
	return cert;
}

X509 *gw_ca_leaf(struct gw_ca *ca, const char *host)
{
	struct gw_leaf *leaf;

	for (leaf = ca->leaves; leaf; leaf = leaf->next)
		if (!strcmp(leaf->name, host))
			return leaf->cert;
	leaf = calloc(1, sizeof(*leaf));
	if (!leaf)
		return NULL;
	snprintf(leaf->name, sizeof(leaf->name), "%s", host);
	leaf->cert = ca_mint(ca, host);
	if (!leaf->cert) {
		free(leaf);
		return NULL;
	}
	leaf->next = ca->leaves;
	ca->leaves = leaf;
	return leaf->cert;
}

/*
 * Only names that a client's policy serves get a leaf of their own: a job naming anything else
 * gets the fallback (which names nothing), so it cannot make the gateway mint without bound.
 */
int gw_ca_servername(SSL *ssl, int *alert, void *arg)
{
	struct gw_conn *conn = SSL_get_app_data(ssl);
	struct gw_ca *ca = arg;
	const char *name = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
	X509 *cert = ca->fallback;
	size_t i, n;

	(void)alert;
	conn->sni[0] = '\0';
	n = name ? strlen(name) : 0;
	if (n > 0 && n < sizeof(conn->sni)) {
		for (i = 0; i < n; i++)
			conn->sni[i] = (name[i] >= 'A' && name[i] <= 'Z') ? name[i] + 32 : name[i];
		conn->sni[n] = '\0';
		if (gw_judge_host(&conn->client->config, conn->sni))
			cert = gw_ca_leaf(ca, conn->sni) ?: ca->fallback;
	}
	if (SSL_use_certificate(ssl, cert) != 1 || SSL_use_PrivateKey(ssl, ca->leaf_key) != 1)
		return SSL_TLSEXT_ERR_ALERT_FATAL;
	return SSL_TLSEXT_ERR_OK;
}

int gw_ca_pem(const struct gw_ca *ca, char **ret_pem, size_t *ret_len)
{
	BIO *bio = BIO_new(BIO_s_mem());
	char *data, *pem;
	long n;

	if (!bio)
		return -ENOMEM;
	if (!PEM_write_bio_X509(bio, ca->ca_cert)) {
		BIO_free(bio);
		return -ENOMEM;
	}
	n = BIO_get_mem_data(bio, &data);
	pem = malloc(n + 1);
	if (!pem) {
		BIO_free(bio);
		return -ENOMEM;
	}
	memcpy(pem, data, n);
	pem[n] = '\0';
	BIO_free(bio);
	*ret_pem = pem;
	*ret_len = n;
	return 0;
}
