// SPDX-License-Identifier: LGPL-2.1-or-later
/* From policy files to the sandbox's allowlist: load, resolve host names, merge. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "rules.h"

/*
 * Leaves one line in errbuf and returns r: the line a callee wrote (policy_load and
 * allowlist_build name the file and key), else this one. main prints errbuf on any error.
 */
__attribute__((format(printf, 4, 5))) static int rules_fail(char *errbuf, size_t errlen, int r,
							    const char *fmt, ...)
{
	va_list ap;

	if (!errbuf || errlen == 0 || errbuf[0])
		return r;
	va_start(ap, fmt);
	vsnprintf(errbuf, errlen, fmt, ap);
	va_end(ap);
	return r;
}

void rules_free(struct rules *rules)
{
	if (!rules)
		return;
	for (size_t i = 0; i < rules->nhosts; i++)
		free(rules->hosts[i].addrs);
	free(rules->hosts);
	free(rules->rules);
	free(rules->unix_allows);
	free(rules->fs_write);
	allowlist_free(rules->list);
	for (size_t i = 0; i < rules->npolicies; i++)
		policy_free(rules->policies[i]);
	free(rules->policies);
	free(rules);
}

static int rules_add(struct rules *rules, size_t *cap, const struct policy_entry *entry,
		     const struct in6_addr *addr, unsigned int prefixlen)
{
	if (rules->nrules == *cap) {
		size_t ncap = *cap ? *cap * 2 : 64;
		struct allow_rule *grown = reallocarray(rules->rules, ncap, sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		rules->rules = grown;
		*cap = ncap;
	}
	rules->rules[rules->nrules++] = (struct allow_rule){
		.addr = *addr,
		.prefixlen = prefixlen,
		.ports = entry->ports,
		.nports = entry->nports,
		.protos = entry->protos,
	};
	return 0;
}

static int rules_load_policies(struct rules *rules, char *const *paths, size_t npaths, char *errbuf,
			       size_t errlen)
{
	size_t used = 0;

	rules->policies = calloc(npaths ? npaths : 1, sizeof(*rules->policies));
	if (!rules->policies)
		return rules_fail(errbuf, errlen, -ENOMEM, "policies: %s", strerror(ENOMEM));
	for (size_t i = 0; i < npaths; i++) {
		int r = policy_load(paths[i], &rules->policies[i], errbuf, errlen);

		if (r < 0)
			return rules_fail(errbuf, errlen, r, "%s: %s", paths[i], strerror(-r));
		rules->npolicies++;
		used += (size_t)snprintf(rules->names + used, sizeof(rules->names) - used, "%s%s",
					 i ? "," : "", rules->policies[i]->name);
		if (used >= sizeof(rules->names))
			used = sizeof(rules->names) - 1;
	}
	return 0;
}

/*
 * The kernel compares the address the job passes, byte for byte: "@name" is an abstract
 * name (a leading NUL on the wire), anything else a path, which the parser checked is
 * absolute.
 */
/* Adds text with flags, or adds the flags to the entry of the same address. */
static void rules_add_unix(struct rules *rules, const char *text, __u8 flags)
{
	struct unix_allow *allow = &rules->unix_allows[rules->nunix];

	memset(allow, 0, sizeof(*allow));
	allow->text = text;
	if (text[0] == '@')
		strncpy(allow->key.path + 1, text + 1, sizeof(allow->key.path) - 2);
	else
		strncpy(allow->key.path, text, sizeof(allow->key.path) - 1);
	for (size_t i = 0; i < rules->nunix; i++)
		if (memcmp(&rules->unix_allows[i].key, &allow->key, sizeof(allow->key)) == 0) {
			rules->unix_allows[i].flags |= flags;
			return;
		}
	allow->flags = flags;
	rules->nunix++;
}

static int rules_compile_unix(struct rules *rules, char *errbuf, size_t errlen)
{
	size_t total = 0;

	for (size_t p = 0; p < rules->npolicies; p++)
		total += rules->policies[p]->nunix + rules->policies[p]->nlisten_unix;
	if (total > MAX_UNIX_PATHS)
		return rules_fail(
			errbuf, errlen, -E2BIG,
			"unix and listen: %zu names in the policies together (%s), at most "
			"%d (MAX_UNIX_PATHS)",
			total, rules->names, MAX_UNIX_PATHS);
	rules->unix_allows = calloc(total ? total : 1, sizeof(*rules->unix_allows));
	if (!rules->unix_allows)
		return rules_fail(errbuf, errlen, -ENOMEM, "unix: %s", strerror(ENOMEM));
	for (size_t p = 0; p < rules->npolicies; p++) {
		const struct policy *policy = rules->policies[p];

		for (size_t i = 0; i < policy->nunix; i++)
			rules_add_unix(rules, policy->unix_paths[i], UNIX_ALLOW_CONNECT);
		for (size_t i = 0; i < policy->nlisten_unix; i++)
			rules_add_unix(rules, policy->listen_unix[i], UNIX_ALLOW_BIND);
	}
	return 0;
}

/* Every policy's "listen" ports, in one port set; the union may hold MAX_LISTEN_PORTS. */
static int rules_compile_listen(struct rules *rules, char *errbuf, size_t errlen)
{
	for (size_t p = 0; p < rules->npolicies; p++) {
		const struct policy *policy = rules->policies[p];

		for (size_t i = 0; i < policy->nlisten_ports; i++) {
			if (rules->listen.nranges >= MAX_LISTEN_PORTS)
				return rules_fail(errbuf, errlen, -E2BIG,
						  "listen: more than %d ports in the policies "
						  "together (%s) (MAX_LISTEN_PORTS)",
						  MAX_LISTEN_PORTS, rules->names);
			rules->listen.ranges[rules->listen.nranges++] = policy->listen_ports[i];
		}
	}
	return 0;
}

/*
 * The union of the policies' file-system settings. A path to write must exist now: Landlock
 * grants rights on what a path names when the job starts, and a typo must not pass quietly.
 */
static int rules_compile_fs(struct rules *rules, char *errbuf, size_t errlen)
{
	size_t total = 0;

	rules->fs_read_only = true;
	for (size_t p = 0; p < rules->npolicies; p++) {
		const struct policy *policy = rules->policies[p];

		total += policy->nfs_write;
		rules->fs_read_only &= policy->fs_read_only;
		rules->fs_required |= policy->fs_set && policy->fs_read_only;
	}
	rules->fs_write = calloc(total + 1, sizeof(*rules->fs_write));
	if (!rules->fs_write)
		return rules_fail(errbuf, errlen, -ENOMEM, "fs: %s", strerror(ENOMEM));
	for (size_t p = 0; p < rules->npolicies; p++) {
		const struct policy *policy = rules->policies[p];

		for (size_t i = 0; i < policy->nfs_write; i++) {
			if (access(policy->fs_write[i], F_OK) < 0) {
				int r = -errno;

				snprintf(errbuf, errlen, "%s: fs.write[%zu]: \"%s\": %s",
					 policy->path, i, policy->fs_write[i], strerror(-r));
				return r;
			}
			rules->fs_write[rules->nfs_write++] = policy->fs_write[i];
		}
	}
	return 0;
}

/* Adds one line to rules->warnings; a line that does not fit is cut, never the ones before. */
static void rules_warn(struct rules *rules, const char *fmt, ...)
{
	size_t used = strlen(rules->warnings);
	va_list ap;

	if (used + 1 >= sizeof(rules->warnings))
		return;
	va_start(ap, fmt);
	vsnprintf(rules->warnings + used, sizeof(rules->warnings) - used - 1, fmt, ap);
	va_end(ap);
	strcat(rules->warnings, "\n");
}

int rules_compile(char *const *paths, size_t npaths, const struct resolver *resolver,
		  bool dns_proxy, struct rules **ret_rules, char *errbuf, size_t errlen)
{
	_cleanup_(rules_freep) struct rules *rules = calloc(1, sizeof(*rules));
	size_t nhosts = 0, cap = 0;
	int r;

	if (errbuf && errlen)
		errbuf[0] = '\0';
	if (!rules)
		return rules_fail(errbuf, errlen, -ENOMEM, "policies: %s", strerror(ENOMEM));
	r = rules_load_policies(rules, paths, npaths, errbuf, errlen);
	if (r < 0)
		return r;

	for (size_t p = 0; p < rules->npolicies; p++)
		for (size_t e = 0; e < rules->policies[p]->nentries; e++)
			nhosts += rules->policies[p]->entries[e].host != NULL;
	rules->hosts = calloc(nhosts ? nhosts : 1, sizeof(*rules->hosts));
	if (!rules->hosts)
		return rules_fail(errbuf, errlen, -ENOMEM, "policies: %s", strerror(ENOMEM));

	for (size_t p = 0; p < rules->npolicies; p++) {
		const struct policy *policy = rules->policies[p];

		for (size_t e = 0; e < policy->nentries; e++) {
			const struct policy_entry *entry = &policy->entries[e];
			struct resolved_host *host;

			if (!entry->host) {
				r = rules_add(rules, &cap, entry, &entry->addr, entry->prefixlen);
				if (r < 0)
					return rules_fail(errbuf, errlen, r, "%s: allow[%zu]: %s",
							  policy->path, e, strerror(-r));
				continue;
			}
			if (entry->host[0] == '*' && !dns_proxy) {
				snprintf(
					errbuf, errlen,
					"%s: allow[%zu].host: \"%s\" is a wildcard; wildcards need "
					"the DNS proxy, which --no-dns-proxy turned off",
					policy->path, e, entry->host);
				return -EINVAL;
			}
			host = &rules->hosts[rules->nhosts];
			host->policy = policy;
			host->entry = entry;
			/* A wildcard names no address until the job looks a name below it up. */
			if (entry->host[0] == '*') {
				rules->nhosts++;
				continue;
			}
			r = resolve_host(entry->host, resolver, &host->addrs, &host->naddrs);
			/* Running out of memory is no reason to wait for the job's look-up. */
			if (r < 0 && r != -ENOMEM && dns_proxy) {
				/* The proxy opens its addresses when the job looks it up. */
				rules_warn(rules,
					   "%s: allow[%zu].host: cannot resolve \"%s\" at launch "
					   "(%s); its addresses open when the job looks it up",
					   policy->path, e, entry->host,
					   r == -ENOENT ? "no such host" : strerror(-r));
				host->addrs = NULL;
				host->naddrs = 0;
				rules->nhosts++;
				continue;
			}
			if (r < 0)
				return rules_fail(errbuf, errlen, r,
						  "%s: allow[%zu].host: cannot resolve \"%s\": %s",
						  policy->path, e, entry->host,
						  r == -ENOENT ? "no such host" : strerror(-r));
			rules->nhosts++;
			for (size_t a = 0; a < host->naddrs; a++) {
				r = rules_add(rules, &cap, entry, &host->addrs[a], 128);
				if (r < 0)
					return rules_fail(errbuf, errlen, r,
							  "%s: allow[%zu].host: %s", policy->path,
							  e, strerror(-r));
			}
		}
	}

	r = allowlist_build(rules->rules, rules->nrules, &rules->list, errbuf, errlen);
	if (r < 0)
		return rules_fail(errbuf, errlen, r, "allowlist (%s): %s", rules->names,
				  strerror(-r));
	r = rules_compile_unix(rules, errbuf, errlen);
	if (r < 0)
		return r;
	r = rules_compile_listen(rules, errbuf, errlen);
	if (r < 0)
		return r;
	r = rules_compile_fs(rules, errbuf, errlen);
	if (r < 0)
		return r;
	*ret_rules = TAKE_PTR(rules);
	return 0;
}

static void rules_print_ports(const struct policy_entry *entry, FILE *out)
{
	static const char *const proto_names[] = { "", "tcp", "udp", "tcp+udp" };

	fprintf(out, "%s ", proto_names[entry->protos & PROTO_ANY]);
	for (unsigned int i = 0; i < entry->nports; i++) {
		const struct port_range *range = &entry->ports[i];

		if (range->lo == 0 && range->hi == 65535)
			fprintf(out, "%sall ports", i ? "," : "");
		else if (range->lo == range->hi)
			fprintf(out, "%s%u", i ? "," : "", range->lo);
		else
			fprintf(out, "%s%u-%u", i ? "," : "", range->lo, range->hi);
	}
}

void rules_print(const struct rules *rules, FILE *out)
{
	char addr[INET6_ADDRSTRLEN];
	size_t h = 0;

	for (size_t p = 0; p < rules->npolicies; p++) {
		const struct policy *policy = rules->policies[p];

		fprintf(out, "policy %s (%s)%s%s\n", policy->name, policy->path,
			policy->description ? ": " : "",
			policy->description ? policy->description : "");
		if (!policy->nentries)
			fprintf(out, "  (no entries: everything is refused)\n");
		for (size_t e = 0; e < policy->nentries; e++) {
			const struct policy_entry *entry = &policy->entries[e];

			if (entry->host) {
				const struct resolved_host *host = &rules->hosts[h++];

				fprintf(out, "  %s ", entry->host);
				rules_print_ports(entry, out);
				fprintf(out, " ->");
				for (size_t a = 0; a < host->naddrs; a++)
					fprintf(out, " %s",
						policy_format_addr(&host->addrs[a], addr,
								   sizeof(addr)));
				if (!host->naddrs)
					fprintf(out, " (opened by the DNS proxy's answers)");
				fputc('\n', out);
			} else {
				bool v4 = policy_addr_is_v4(&entry->addr);

				fprintf(out, "  %s/%u ",
					policy_format_addr(&entry->addr, addr, sizeof(addr)),
					v4 ? entry->prefixlen - 96 : entry->prefixlen);
				rules_print_ports(entry, out);
				fputc('\n', out);
			}
		}
	}
	for (size_t i = 0; i < rules->nunix; i++) {
		if (rules->unix_allows[i].flags & UNIX_ALLOW_CONNECT)
			fprintf(out, "  unix %s\n", rules->unix_allows[i].text);
		if (rules->unix_allows[i].flags & UNIX_ALLOW_BIND)
			fprintf(out, "  listen unix %s\n", rules->unix_allows[i].text);
	}
	for (size_t i = 0; i < rules->listen.nranges; i++) {
		const struct port_range *range = &rules->listen.ranges[i];

		fprintf(out, "  listen %u-%u %s\n", range->lo, range->hi,
			range->protos == PROTO_ANY   ? "any"
			: range->protos == PROTO_UDP ? "udp"
						     : "tcp");
	}
	if (!rules->fs_read_only)
		fprintf(out, "files: the job may write every file its user may (\"read_only\": "
			     "false)\n");
	else
		for (size_t i = 0; i < rules->nfs_write; i++)
			fprintf(out, "  write %s\n", rules->fs_write[i]);
	fprintf(out, "allowlist: %zu exact addresses, %zu prefixes, %zu port sets\n",
		rules->list->nexact, rules->list->nprefixes, rules->list->nsets);
}
