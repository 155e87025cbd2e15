// SPDX-License-Identifier: LGPL-2.1-or-later
/* Unit tests for the gateway's ca.c: the leaves it mints verify for their name, and only it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/pem.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

#include "test.h"
#include "gateway/gateway_internal.h"

#define RUN(fn) test_run(#fn, fn)

static struct gw_ca ca;

/* X509_V_OK when cert chains to the CA (from its PEM, as a job reads it) and names name. */
static int ca_verify(X509 *cert, const char *name, bool ip)
{
	X509_STORE *store = X509_STORE_new();
	X509_STORE_CTX *ctx = X509_STORE_CTX_new();
	X509_VERIFY_PARAM *param;
	char *pem;
	size_t len;
	BIO *bio;
	X509 *root;
	int r;

	CHECK_EQ_INT(gw_ca_pem(&ca, &pem, &len), 0);
	bio = BIO_new_mem_buf(pem, (int)len);
	root = PEM_read_bio_X509(bio, NULL, NULL, NULL);
	CHECK(root != NULL);
	X509_STORE_add_cert(store, root);
	X509_STORE_CTX_init(ctx, store, cert, NULL);
	param = X509_STORE_CTX_get0_param(ctx);
	X509_VERIFY_PARAM_set_purpose(param, X509_PURPOSE_SSL_SERVER);
	if (ip)
		X509_VERIFY_PARAM_set1_ip_asc(param, name);
	else
		X509_VERIFY_PARAM_set1_host(param, name, 0);
	r = X509_verify_cert(ctx) == 1 ? X509_V_OK : X509_STORE_CTX_get_error(ctx);
	X509_STORE_CTX_free(ctx);
	X509_STORE_free(store);
	X509_free(root);
	BIO_free(bio);
	free(pem);
	return r;
}

static void test_ca_root(void)
{
	CHECK_EQ_INT(X509_check_ca(ca.ca_cert), 1);
	/* EC P-256, as the header promises (a quick key, a small handshake). */
	CHECK_EQ_INT(EVP_PKEY_get_base_id(ca.ca_key), EVP_PKEY_EC);
	CHECK_EQ_INT(EVP_PKEY_get_bits(ca.ca_key), 256);
}

static void test_ca_leaf(void)
{
	X509 *leaf = gw_ca_leaf(&ca, "api.openai.com");

	CHECK(leaf != NULL);
	CHECK_EQ_INT(ca_verify(leaf, "api.openai.com", false), X509_V_OK);
	/* For its name only, and cached: the same certificate the second time. */
	CHECK_EQ_INT(ca_verify(leaf, "api.stripe.com", false), X509_V_ERR_HOSTNAME_MISMATCH);
	CHECK(gw_ca_leaf(&ca, "api.openai.com") == leaf);
	CHECK(gw_ca_leaf(&ca, "api.stripe.com") != leaf);
	CHECK_EQ_INT(X509_check_ca(leaf), 0);
}

static void test_ca_ip_leaf(void)
{
	X509 *leaf = gw_ca_leaf(&ca, "127.0.0.3");

	CHECK(leaf != NULL);
	CHECK_EQ_INT(ca_verify(leaf, "127.0.0.3", true), X509_V_OK);
	CHECK_EQ_INT(ca_verify(leaf, "127.0.0.4", true), X509_V_ERR_IP_ADDRESS_MISMATCH);
}

static void test_ca_fallback(void)
{
	/* Given to a server name no policy serves: it verifies for no name at all. */
	CHECK_EQ_INT(ca_verify(ca.fallback, "launch gateway", false), X509_V_ERR_HOSTNAME_MISMATCH);
	CHECK_EQ_INT(ca_verify(ca.fallback, "api.openai.com", false), X509_V_ERR_HOSTNAME_MISMATCH);
}

int main(void)
{
	char err[256];

	if (gw_ca_init(&ca, err, sizeof(err)) < 0) {
		printf("gw_ca_init: %s\n", err);
		return 1;
	}
	RUN(test_ca_root);
	RUN(test_ca_leaf);
	RUN(test_ca_ip_leaf);
	RUN(test_ca_fallback);
	gw_ca_free(&ca);
	return test_failures != 0;
}
