// SPDX-License-Identifier: LGPL-2.1-or-later
/* The policies' "secrets" and their values from --secret: what the gateway injects. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gwsecret.h"
#include "lib/util.h"

/* The NAME of "NAME" or "NAME=@FILE", and its FILE (NULL for a variable). */
static const char *gwsecret_spec_file(const char *spec, size_t *ret_name_len)
{
	const char *eq = strchr(spec, '=');

	*ret_name_len = eq ? (size_t)(eq - spec) : strlen(spec);
	return eq ? eq + 2 : NULL; /* "=@": options.c checked the form */
}

static const char *gwsecret_find_spec(const char *const *specs, size_t nspecs, const char *name)
{
	for (size_t i = 0; i < nspecs; i++) {
		size_t len;

		gwsecret_spec_file(specs[i], &len);
		if (len == strlen(name) && strncmp(specs[i], name, len) == 0)
			return specs[i];
	}
	return NULL;
}

static const char *gwsecret_getenv(char *const *env, const char *name)
{
	size_t len = strlen(name);

	for (size_t i = 0; env && env[i]; i++)
		if (strncmp(env[i], name, len) == 0 && env[i][len] == '=')
			return env[i] + len + 1;
	return NULL;
}

/* FILE's content, one trailing line break taken off (as `echo key > FILE` leaves it). */
static int gwsecret_read_file(const char *path, char **ret_value, size_t *ret_len)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	char *buf;
	size_t len = 0;
	ssize_t n;

	if (fd < 0)
		return -errno;
	buf = malloc(GWSECRET_VALUE_MAX + 2);
	if (!buf)
		return -ENOMEM;
	while ((n = read(fd, buf + len, GWSECRET_VALUE_MAX + 1 - len)) > 0)
		len += (size_t)n;
	if (n < 0 || len > GWSECRET_VALUE_MAX) {
		int r = n < 0 ? -errno : -EFBIG;

		explicit_bzero(buf, GWSECRET_VALUE_MAX + 2);
		free(buf);
		return r;
	}
	if (len && buf[len - 1] == '\n')
		len--;
	if (len && buf[len - 1] == '\r')
		len--;
	buf[len] = '\0';
	*ret_value = buf;
	*ret_len = len;
	return 0;
}

/* A value a header can carry: no control byte (CR and LF would start another header). */
static bool gwsecret_value_ok(const char *value, size_t len)
{
	if (!len)
		return false;
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)value[i] < 0x20 || value[i] == 0x7f)
			return false;
	return true;
}

/* The value of one secret from its spec; one line in errbuf on failure. */
static int gwsecret_value(struct gateway_secret *secret, const char *spec, char *const *env,
			  char *errbuf, size_t errlen)
{
	const char *name = secret->policy->name;
	size_t name_len;
	const char *file = gwsecret_spec_file(spec, &name_len);
	int r;

	if (file) {
		r = gwsecret_read_file(file, &secret->value, &secret->value_len);
		if (r < 0) {
			snprintf(errbuf, errlen, "--secret %s=@%s: cannot read it: %s", name, file,
				 r == -EFBIG ? "longer than 8192 bytes" : strerror(-r));
			return r;
		}
	} else {
		const char *value = gwsecret_getenv(env, name);

		if (!value) {
			snprintf(errbuf, errlen,
				 "--secret %s: launch's environment has no variable %s", name,
				 name);
			return -ENOENT;
		}
		secret->value_len = strlen(value);
		if (secret->value_len > GWSECRET_VALUE_MAX) {
			snprintf(errbuf, errlen, "--secret %s: longer than 8192 bytes", name);
			return -EFBIG;
		}
		secret->value = strdup(value);
		if (!secret->value)
			return -ENOMEM;
	}
	if (!gwsecret_value_ok(secret->value, secret->value_len)) {
		snprintf(errbuf, errlen,
			 "--secret %s: the value is empty or has a control byte (a line break "
			 "would end the header it goes into)",
			 spec);
		return -EINVAL;
	}
	return 0;
}

/* Every secret of the policies, each name once; the --secret for each is found after. */
static int gwsecret_collect(struct policy *const *policies, size_t npolicies,
			    struct gateway_secret *secrets, size_t *ret_n, char *errbuf,
			    size_t errlen)
{
	size_t n = 0;

	for (size_t p = 0; p < npolicies; p++) {
		for (size_t i = 0; i < policies[p]->nsecrets; i++) {
			const struct policy_secret *ps = &policies[p]->secrets[i];

			for (size_t k = 0; k < n; k++) {
				if (strcmp(secrets[k].policy->name, ps->name) != 0)
					continue;
				/* One variable in the job, one placeholder: one definition. */
				snprintf(errbuf, errlen,
					 "%s: secrets: %s is also a secret of another policy; "
					 "give it in one",
					 policies[p]->path, ps->name);
				return -EINVAL;
			}
			secrets[n++].policy = ps;
		}
	}
	*ret_n = n;
	return 0;
}

int gwsecret_plan(struct policy *const *policies, size_t npolicies, const char *const *specs,
		  size_t nspecs, char *const *env, struct gateway_secret **ret_secrets,
		  size_t *ret_n, char *errbuf, size_t errlen)
{
	struct gateway_secret *secrets;
	size_t total = 0, n = 0;
	int r;

	for (size_t p = 0; p < npolicies; p++)
		total += policies[p]->nsecrets;
	if (errlen)
		errbuf[0] = '\0';
	secrets = calloc(total ? total : 1, sizeof(*secrets));
	if (!secrets)
		return -ENOMEM;
	r = gwsecret_collect(policies, npolicies, secrets, &n, errbuf, errlen);
	for (size_t i = 0; r == 0 && i < nspecs; i++) {
		size_t len;
		bool known = false;

		gwsecret_spec_file(specs[i], &len);
		for (size_t k = 0; k < n && !known; k++)
			known = strlen(secrets[k].policy->name) == len &&
				strncmp(secrets[k].policy->name, specs[i], len) == 0;
		if (!known) {
			snprintf(errbuf, errlen, "--secret %.*s: no policy's \"secrets\" names it",
				 (int)len, specs[i]);
			r = -ENOENT;
		}
	}
	for (size_t k = 0; r == 0 && k < n; k++) {
		const char *name = secrets[k].policy->name,
			   *spec = gwsecret_find_spec(specs, nspecs, name);

		if (!spec) {
			snprintf(errbuf, errlen,
				 "secret %s: a policy names it and no --secret gives its value "
				 "(--secret %s, or --secret %s=@FILE)",
				 name, name, name);
			r = -ENOENT;
			break;
		}
		r = gwsecret_value(&secrets[k], spec, env, errbuf, errlen);
		if (r == 0)
			r = gateway_secret_placeholder(&secrets[k]);
		if (r < 0 && !errbuf[0])
			snprintf(errbuf, errlen, "secret %s: %s", name, strerror(-r));
	}
	if (r < 0) {
		gwsecret_free(secrets, n);
		return r;
	}
	*ret_secrets = secrets;
	*ret_n = n;
	return 0;
}

void gwsecret_free(struct gateway_secret *secrets, size_t n)
{
	if (!secrets)
		return;
	for (size_t i = 0; i < n; i++) {
		if (secrets[i].value) {
			explicit_bzero(secrets[i].value, secrets[i].value_len);
			free(secrets[i].value);
		}
	}
	explicit_bzero(secrets, n * sizeof(*secrets));
	free(secrets);
}

bool gwsecret_gateway_wanted(struct policy *const *policies, size_t npolicies)
{
	for (size_t p = 0; p < npolicies; p++)
		for (size_t i = 0; i < policies[p]->nentries; i++)
			if (policies[p]->entries[i].http)
				return true;
	return false;
}
