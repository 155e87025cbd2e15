/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Addresses and allow rules written as text, for the unit tests of the policy's layouts. */
#ifndef LAUNCH_TEST_ADDR_H
#define LAUNCH_TEST_ADDR_H

#include <stdio.h>

#include "test.h"
#include "policy/allowlist.h"
#include "policy/policy.h"

/* The address in text (a CIDR's prefix length is ignored); a bad one fails the test. */
static inline struct in6_addr addr_of(const char *text)
{
	struct in6_addr addr = { 0 };
	unsigned int prefixlen;

	if (policy_parse_cidr(text, &addr, &prefixlen) < 0) {
		printf("  bad test address %s\n", text);
		test_current_failed = 1;
	}
	return addr;
}

/* A rule for the prefix cidr with those ports; a bad prefix fails the test. */
static inline struct allow_rule rule_of(const char *cidr, const struct port_range *ports,
					unsigned int nports, unsigned int protos)
{
	struct allow_rule rule = { .ports = ports, .nports = nports, .protos = protos };

	if (policy_parse_cidr(cidr, &rule.addr, &rule.prefixlen) < 0) {
		printf("  bad test prefix %s\n", cidr);
		test_current_failed = 1;
	}
	return rule;
}

#endif /* LAUNCH_TEST_ADDR_H */
