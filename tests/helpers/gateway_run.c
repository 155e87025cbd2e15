// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Runs the HTTPS gateway alone, for its tests and bench: one client serving the policies given,
 * secrets from the environment. Prints "ports PORT4 PORT6", a "placeholder NAME VALUE" line per
 * secret and "ready", then each request's log as a JSON line; writes the CA's PEM to --ca-out.
 * Runs until SIGTERM or SIGINT.
 *
 * usage: gateway_run [--upstream-ca FILE]... [--resolver ADDR[:PORT]] [--ca-out FILE]
 *                    [--log-query] POLICY...
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gateway/gateway.h"

#define RUN_MAX_ARGS 32

static void run_json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		unsigned char ch = *s;

		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch < 0x20 || ch >= 0x7f)
			fprintf(f, "\\u%04x", ch);
		else
			fputc(ch, f);
	}
	fputc('"', f);
}

static void run_on_request(void *ctx, const struct gateway_request_log *log)
{
	FILE *f = ctx;

	flockfile(f);
	fputs("{\"method\":", f);
	run_json_string(f, log->method);
	fputs(",\"host\":", f);
	run_json_string(f, log->host);
	fputs(",\"path\":", f);
	run_json_string(f, log->path);
	fprintf(f, ",\"status\":%u,\"bytes_out\":%llu,\"bytes_in\":%llu,\"duration_ms\":%.3f",
		log->status, (unsigned long long)log->bytes_out, (unsigned long long)log->bytes_in,
		log->duration_ms);
	fprintf(f, ",\"decision\":\"%s\",\"reason\":", log->allowed ? "allow" : "deny");
	run_json_string(f, log->reason);
	fputs(",\"secret\":", f);
	if (log->secret)
		run_json_string(f, log->secret);
	else
		fputs("null", f);
	fprintf(f, ",\"peer_port\":%u}\n", log->peer_port);
	fflush(f);
	funlockfile(f);
}

static int run_usage(const char *why)
{
	fprintf(stderr,
		"gateway_run: %s\nusage: gateway_run [--upstream-ca FILE]... "
		"[--resolver ADDR[:PORT]] [--ca-out FILE] [--log-query] POLICY...\n",
		why);
	return 2;
}

static int run_secrets(const struct policy *const *policies, size_t npolicies,
		       struct gateway_secret *secrets, size_t *nsecrets)
{
	size_t i, j;

	for (i = 0; i < npolicies; i++)
		for (j = 0; j < policies[i]->nsecrets && *nsecrets < RUN_MAX_ARGS; j++) {
			struct gateway_secret *s = &secrets[(*nsecrets)++];
			const char *value;

			s->policy = &policies[i]->secrets[j];
			value = getenv(s->policy->name);
			if (!value) {
				fprintf(stderr,
					"gateway_run: secret %s: no such environment variable\n",
					s->policy->name);
				return -ENOENT;
			}
			s->value = strdup(value);
			s->value_len = strlen(value);
			if (!s->value || gateway_secret_placeholder(s) < 0)
				return -ENOMEM;
			printf("placeholder %s %s\n", s->policy->name, s->placeholder);
		}
	return 0;
}

static int run_write_ca(const struct gateway *gw, const char *path)
{
	char *pem;
	size_t len;
	FILE *f;

	if (gateway_ca_pem(gw, &pem, &len) < 0)
		return -ENOMEM;
	f = fopen(path, "w");
	if (!f || fwrite(pem, 1, len, f) != len || fclose(f)) {
		fprintf(stderr, "gateway_run: --ca-out %s: %s\n", path, strerror(errno));
		free(pem);
		return -EIO;
	}
	free(pem);
	return 0;
}

int main(int argc, char **argv)
{
	const char *cas[RUN_MAX_ARGS], *ca_out = NULL;
	const struct policy *policies[RUN_MAX_ARGS];
	struct gateway_secret secrets[RUN_MAX_ARGS] = { 0 };
	struct gateway_config config = { .upstream_ca_files = cas };
	struct gateway_client_config cc = { .policies = policies,
					    .secrets = secrets,
					    .on_request = run_on_request };
	struct gateway_client *client = NULL;
	struct resolver resolver;
	struct gateway *gw = NULL;
	int rc = 125;
	char err[POLICY_ERR_LEN];
	uint16_t p4, p6;
	sigset_t set;
	int i, sig;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--upstream-ca") && i + 1 < argc &&
		    config.nupstream_ca_files < RUN_MAX_ARGS) {
			cas[config.nupstream_ca_files++] = argv[++i];
		} else if (!strcmp(argv[i], "--resolver") && i + 1 < argc) {
			if (resolve_parse_server(argv[++i], &resolver) < 0)
				return run_usage("--resolver: not an address");
			config.resolver = &resolver;
		} else if (!strcmp(argv[i], "--ca-out") && i + 1 < argc) {
			ca_out = argv[++i];
		} else if (!strcmp(argv[i], "--log-query")) {
			config.log_query = true;
		} else if (argv[i][0] == '-' || cc.npolicies >= RUN_MAX_ARGS) {
			return run_usage(argv[i]);
		} else {
			struct policy *p;

			if (policy_load(argv[i], &p, err, sizeof(err)) < 0) {
				fprintf(stderr, "gateway_run: %s\n", err);
				return 125;
			}
			policies[cc.npolicies++] = p;
		}
	}
	if (!cc.npolicies)
		return run_usage("no policy");
	if (run_secrets(policies, cc.npolicies, secrets, &cc.nsecrets) < 0)
		goto out;
	cc.ctx = stdout;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	if (gateway_new(&config, &gw, err, sizeof(err)) < 0 ||
	    gateway_client_add(gw, &cc, &client, err, sizeof(err)) < 0) {
		fprintf(stderr, "gateway_run: %s\n", err);
		goto out;
	}
	if ((ca_out && run_write_ca(gw, ca_out) < 0) || gateway_start(gw) < 0)
		goto out;
	gateway_client_ports(client, &p4, &p6);
	printf("ports %u %u\nready\n", p4, p6);
	fflush(stdout);
	sigwait(&set, &sig);
	rc = 0;
out:
	gateway_client_remove(client);
	gateway_free(gw);
	for (i = 0; i < (int)cc.nsecrets; i++)
		free(secrets[i].value);
	for (i = 0; i < (int)cc.npolicies; i++)
		policy_free((struct policy *)policies[i]);
	return rc;
}
