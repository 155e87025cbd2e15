// SPDX-License-Identifier: LGPL-2.1-or-later
/* Unit tests for docscan.c: methods and aliases of .d.ts files, README sections, hostile input. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "agent/docscan.h"

#define SEEN_MAX 64

struct seen {
	enum docscan_kind kind;
	char owner[DOCSCAN_NAME_MAX];
	char name[DOCSCAN_NAME_MAX];
	char signature[DOCSCAN_SIGNATURE_MAX];
	char doc[DOCSCAN_DOC_MAX];
	unsigned line;
};

static struct seen seen[SEEN_MAX];
static size_t nseen;

static void record(void *ctx, const struct docscan_entry *entry)
{
	struct seen *s;

	(void)ctx;
	if (nseen == SEEN_MAX)
		return;
	s = &seen[nseen++];
	s->kind = entry->kind;
	snprintf(s->owner, sizeof(s->owner), "%s", entry->owner);
	snprintf(s->name, sizeof(s->name), "%s", entry->name);
	snprintf(s->signature, sizeof(s->signature), "%s", entry->signature);
	snprintf(s->doc, sizeof(s->doc), "%s", entry->doc);
	s->line = entry->line;
}

static void scan_dts(const char *text)
{
	struct docscan_dts scan;

	nseen = 0;
	docscan_dts_init(&scan, record, NULL);
	for (const char *s = text; *s;) {
		const char *nl = strchr(s, '\n');
		size_t len = nl ? (size_t)(nl - s) : strlen(s);

		docscan_dts_line(&scan, s, len);
		s += len + (nl != NULL);
	}
}

static void scan_readme(const char *text)
{
	struct docscan_readme scan;

	nseen = 0;
	docscan_readme_init(&scan, record, NULL);
	for (const char *s = text; *s;) {
		const char *nl = strchr(s, '\n');
		size_t len = nl ? (size_t)(nl - s) : strlen(s);

		docscan_readme_line(&scan, s, len);
		s += len + (nl != NULL);
	}
	docscan_readme_end(&scan);
}

static void test_dts_methods(void)
{
	scan_dts("import { X } from './x.js';\n"
		 "export declare class CustomersResource extends StripeResource {\n"
		 "    /**\n"
		 "     * Creates a new customer object.\n"
		 "     *\n"
		 "     * Second line.\n"
		 "     */\n"
		 "    create(params: CustomerCreateParams, options?: RequestOptions): "
		 "Promise<Stripe.Response<Stripe.Customer>>;\n"
		 "    /** Lists them. */\n"
		 "    list<T extends { a: string }>(params?: P): ApiListPromise<T>;\n"
		 "    private secret(): void;\n"
		 "    constructor(x: string);\n"
		 "    retrieve(id: string, opts?: { expand?: string[] }): Promise<void>;\n"
		 "}\n"
		 "export interface Customer {\n"
		 "    id: string;\n"
		 "    address: { line1(): string };\n"
		 "}\n"
		 "declare function outside(): void;\n");
	CHECK_EQ_INT(nseen, 3);
	CHECK_EQ_INT(seen[0].kind, DOCSCAN_METHOD);
	CHECK_EQ_STR(seen[0].owner, "CustomersResource");
	CHECK_EQ_STR(seen[0].name, "create");
	CHECK_EQ_STR(seen[0].signature,
		     "create(params: CustomerCreateParams, options?: "
		     "RequestOptions): Promise<Stripe.Response<Stripe.Customer>>;");
	CHECK_EQ_STR(seen[0].doc, "Creates a new customer object. Second line.");
	CHECK_EQ_INT(seen[0].line, 8);
	CHECK_EQ_STR(seen[1].name, "list");
	CHECK_EQ_STR(seen[1].doc, "Lists them.");
	CHECK_EQ_STR(seen[2].name, "retrieve");
	/* No doc comment right above: none, not the one of an earlier member. */
	CHECK_EQ_STR(seen[2].doc, "");
}

static void test_dts_aliases_and_nesting(void)
{
	scan_dts("export declare class Stripe {\n"
		 "    customers: CustomerResource;\n"
		 "    id: string;\n"
		 "    static errors: typeof Errors;\n"
		 "    nested: {\n"
		 "        inner(): void;\n"
		 "    };\n"
		 "    after(): void;\n"
		 "}\n"
		 "interface\n"
		 "  Lost { never(): void; }\n"
		 "export interface Multi<T>\n"
		 "{\n"
		 "  /* \"}\" in a comment and '}' in a string */ go(s: '}'): void;\n"
		 "  next(): void; // }\n"
		 "  last(): void;\n"
		 "}\n");
	CHECK_EQ_INT(nseen, 4);
	CHECK_EQ_INT(seen[0].kind, DOCSCAN_ALIAS);
	CHECK_EQ_STR(seen[0].owner, "CustomerResource");
	CHECK_EQ_STR(seen[0].name, "customers");
	CHECK_EQ_STR(seen[1].name, "after");
	CHECK_EQ_STR(seen[1].owner, "Stripe");
	/*
	 * "interface" alone on its line names nothing; a header's "{" may come on a later line.
	 * What follows a comment on its line is not a member.
	 */
	CHECK_EQ_STR(seen[2].name, "next");
	CHECK_EQ_STR(seen[2].owner, "Multi");
	CHECK_EQ_STR(seen[3].name, "last");
}

static void test_readme_sections(void)
{
	char long_text[2000];

	scan_readme("Intro before any heading.\n"
		    "# Stripe Node.js Library\n"
		    "\n"
		    "The Stripe Node library provides access.\n"
		    "## Usage ##\n"
		    "```js\n"
		    "# not a heading\n"
		    "const c = await stripe.customers.create();\n"
		    "```\n"
		    " # indented is text\n"
		    "#hashtag is text\n");
	CHECK_EQ_INT(nseen, 2);
	CHECK_EQ_STR(seen[0].name, "Stripe Node.js Library");
	CHECK_EQ_STR(seen[0].doc, "The Stripe Node library provides access.");
	CHECK_EQ_INT(seen[0].line, 2);
	CHECK_EQ_STR(seen[1].name, "Usage");
	CHECK_CONTAINS(seen[1].doc, "# not a heading");
	CHECK_CONTAINS(seen[1].doc, "#hashtag is text");
	CHECK_EQ_INT(seen[1].line, 5);

	memset(long_text, 'x', sizeof(long_text) - 1);
	long_text[sizeof(long_text) - 1] = '\0';
	memcpy(long_text, "# h\n", 4);
	scan_readme(long_text);
	CHECK_EQ_INT(nseen, 1);
	CHECK_EQ_INT(strlen(seen[0].doc), DOCSCAN_SECTION_MAX);
}

static void test_hostile(void)
{
	size_t len = 1 << 20;
	char *big = malloc(len + 1);
	struct docscan_dts scan;
	char buf[8];
	size_t n = 0;

	/* Deep nesting, a huge line, unbalanced closes: bounded, no crash. */
	CHECK(big != NULL);
	docscan_dts_init(&scan, record, NULL);
	nseen = 0;
	for (int i = 0; i < 1000; i++)
		docscan_dts_line(&scan, "interface A {", 13);
	memset(big, '{', len);
	docscan_dts_line(&scan, big, len);
	memset(big, '}', len);
	docscan_dts_line(&scan, big, len);
	docscan_dts_line(&scan, big, len);
	CHECK_EQ_INT(scan.depth, 0);
	CHECK_EQ_INT(scan.nowners, 0);
	memset(big, '<', len);
	memcpy(big, "class B {", 9);
	docscan_dts_line(&scan, big, 9);
	memset(big, '<', len);
	memcpy(big, "  m", 3);
	docscan_dts_line(&scan, big, len);
	memset(big, '*', len);
	memcpy(big, "/**", 3);
	docscan_dts_line(&scan, big, len);
	docscan_dts_line(&scan, "*/ m(): void;", 13);
	docscan_dts_line(&scan, "  n(): void;", 12);
	CHECK_EQ_INT(nseen, 1);
	CHECK_EQ_STR(seen[0].name, "n");
	CHECK(strlen(seen[0].doc) < DOCSCAN_DOC_MAX);
	free(big);

	/* Invalid UTF-8 becomes '?', a character that does not fit is left out whole. */
	docscan_text_append(buf, sizeof(buf), &n, "a\xff\x01\xc3\xa9", 5);
	CHECK_EQ_STR(buf, "a? \xc3\xa9");
	docscan_text_append(buf, sizeof(buf), &n, "bb\xe2\x82\xac", 5);
	CHECK_EQ_STR(buf, "a? \xc3\xa9"
			  "bb");
	n = 0;
	docscan_text_append(buf, sizeof(buf), &n, "\xed\xa0\x80\xc0\xaf", 5);
	CHECK_EQ_STR(buf, "?????");
}

static void test_resource_name(void)
{
	char buf[32];

	docscan_resource_name("CustomersResource", buf, sizeof(buf));
	CHECK_EQ_STR(buf, "customers");
	docscan_resource_name("PaymentIntentResource", buf, sizeof(buf));
	CHECK_EQ_STR(buf, "paymentIntent");
	docscan_resource_name("HTTPClient", buf, sizeof(buf));
	CHECK_EQ_STR(buf, "httpClient");
	docscan_resource_name("Resource", buf, sizeof(buf));
	CHECK_EQ_STR(buf, "resource");
	docscan_resource_name("AVeryLongOwnerNameThatDoesNotFitResource", buf, 8);
	CHECK_EQ_STR(buf, "aVeryLo");
}

int main(void)
{
	RUN(test_dts_methods);
	RUN(test_dts_aliases_and_nesting);
	RUN(test_readme_sections);
	RUN(test_hostile);
	RUN(test_resource_name);
	return test_failures != 0;
}
