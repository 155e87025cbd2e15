/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A line-based scanner of TypeScript declarations and README sections, for search_docs. */
#ifndef LAUNCH_DOCSCAN_H
#define LAUNCH_DOCSCAN_H

#include <stdbool.h>
#include <stddef.h>

/* Longest line looked at: the rest of a longer one is ignored. */
#define DOCSCAN_LINE_MAX      4096
#define DOCSCAN_NAME_MAX      128
#define DOCSCAN_DOC_MAX	      2048
#define DOCSCAN_SECTION_MAX   500
#define DOCSCAN_SIGNATURE_MAX 512
/* Classes and interfaces nested deeper than this are not looked into. */
#define DOCSCAN_DEPTH_MAX 32

enum docscan_kind {
	DOCSCAN_METHOD,	 /* owner's method: name, signature, doc */
	DOCSCAN_ALIAS,	 /* a property "name: Owner;": the owner is reached as name */
	DOCSCAN_SECTION, /* a README section: name is its heading, doc its text */
};

struct docscan_entry {
	enum docscan_kind kind;
	const char *owner; /* the class or interface (methods, aliases), else "" */
	const char *name;
	const char *signature; /* the declaration line, trimmed; "" for others */
	const char *doc;       /* the comment above it without its markers, or the section */
	unsigned line;	       /* 1-based, of the declaration or the heading */
};

typedef void (*docscan_emit_t)(void *ctx, const struct docscan_entry *entry);

struct docscan_owner {
	char name[DOCSCAN_NAME_MAX];
	int depth; /* brace depth of its body */
};

/* The scanner's state across the lines of one .d.ts file. */
struct docscan_dts {
	docscan_emit_t emit;
	void *ctx;
	unsigned line;
	int depth;	 /* braces open outside strings and comments */
	bool in_comment; /* inside a block comment */
	bool doc_valid;	 /* doc holds the comment right above the next line */
	char doc[DOCSCAN_DOC_MAX];
	size_t doc_len;
	char pending[DOCSCAN_NAME_MAX]; /* a class or interface whose "{" is still to come */
	struct docscan_owner owners[DOCSCAN_DEPTH_MAX];
	size_t nowners;
};

void docscan_dts_init(struct docscan_dts *scan, docscan_emit_t emit, void *ctx);
/* One line, without its newline; len may exceed DOCSCAN_LINE_MAX (the rest is skipped). */
void docscan_dts_line(struct docscan_dts *scan, const char *line, size_t len);

/* The scanner's state across the lines of one README.md. */
struct docscan_readme {
	docscan_emit_t emit;
	void *ctx;
	unsigned line;
	bool in_fence;
	bool have_section;
	unsigned heading_line;
	char heading[DOCSCAN_NAME_MAX];
	char text[DOCSCAN_SECTION_MAX + 1];
	size_t text_len;
};

void docscan_readme_init(struct docscan_readme *scan, docscan_emit_t emit, void *ctx);
void docscan_readme_line(struct docscan_readme *scan, const char *line, size_t len);
/* Emits the last section. */
void docscan_readme_end(struct docscan_readme *scan);

/*
 * Appends up to n bytes of src to dst (of cap bytes, holding *len and a NUL): valid UTF-8
 * only, control characters and invalid bytes as spaces and '?', never a character cut in two.
 */
void docscan_text_append(char *dst, size_t cap, size_t *len, const char *src, size_t n);

/*
 * The name code reaches an owner by when no alias says otherwise: lower camel case, without a
 * trailing "Resource" ("CustomersResource" -> "customers"). Writes "" when nothing is left.
 */
void docscan_resource_name(const char *owner, char *buf, size_t len);

#endif /* LAUNCH_DOCSCAN_H */
