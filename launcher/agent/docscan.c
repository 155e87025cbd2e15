// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A line-based scanner of TypeScript declarations and README sections, for search_docs. Its
 * input is any file under --modules: every length is bounded, nothing recurses, and a line it
 * does not understand is passed over.
 */
#include <ctype.h>
#include <string.h>

#include "docscan.h"

/* The length of the valid UTF-8 sequence at s (n bytes left), or 0 when it is not one. */
static size_t utf8_sequence(const unsigned char *s, size_t n)
{
	size_t want;
	unsigned cp;

	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0)
		want = 2, cp = s[0] & 0x1f;
	else if ((s[0] & 0xf0) == 0xe0)
		want = 3, cp = s[0] & 0x0f;
	else if ((s[0] & 0xf8) == 0xf0)
		want = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (n < want)
		return 0;
	for (size_t i = 1; i < want; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* Overlong forms, surrogates and what lies past Unicode are not characters. */
	if ((want == 2 && cp < 0x80) || (want == 3 && cp < 0x800) || (want == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return want;
}

void docscan_text_append(char *dst, size_t cap, size_t *len, const char *src, size_t n)
{
	const unsigned char *s = (const unsigned char *)src;

	if (cap == 0)
		return;
	for (size_t i = 0; i < n;) {
		size_t seq = utf8_sequence(s + i, n - i);

		if (seq == 0) {
			if (*len + 1 >= cap)
				break;
			dst[(*len)++] = '?';
			i++;
			continue;
		}
		if (*len + seq >= cap)
			break;
		if (seq == 1 && (s[i] < 0x20 || s[i] == 0x7f))
			dst[(*len)++] = ' ';
		else
			memcpy(dst + *len, s + i, seq), *len += seq;
		i += seq;
	}
	dst[*len] = '\0';
}

static bool ident_start(char c)
{
	return isalpha((unsigned char)c) || c == '_' || c == '$';
}

static bool ident_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '$';
}

/* The identifier at s (up to end) into buf; returns its end, or NULL when there is none. */
static const char *scan_ident(const char *s, const char *end, char *buf, size_t len)
{
	size_t n = 0;

	if (s >= end || !ident_start(*s))
		return NULL;
	while (s < end && ident_char(*s)) {
		if (n + 1 < len)
			buf[n++] = *s;
		s++;
	}
	buf[n] = '\0';
	return s;
}

static const char *skip_space(const char *s, const char *end)
{
	while (s < end && isspace((unsigned char)*s))
		s++;
	return s;
}

/* Whether s starts with the keyword word followed by a space; moves *s past both. */
static bool take_word(const char **s, const char *end, const char *word)
{
	size_t n = strlen(word);

	if ((size_t)(end - *s) <= n || memcmp(*s, word, n) != 0 || !isspace((unsigned char)(*s)[n]))
		return false;
	*s = skip_space(*s + n, end);
	return true;
}

void docscan_dts_init(struct docscan_dts *scan, docscan_emit_t emit, void *ctx)
{
	memset(scan, 0, sizeof(*scan));
	scan->emit = emit;
	scan->ctx = ctx;
}

/* Adds a comment line's text (its "*" margin gone) to the doc, a space between lines. */
static void dts_doc_add(struct docscan_dts *scan, const char *s, const char *end)
{
	s = skip_space(s, end);
	while (s < end && *s == '*')
		s++;
	s = skip_space(s, end);
	while (end > s && isspace((unsigned char)end[-1]))
		end--;
	if (s == end)
		return;
	if (scan->doc_len)
		docscan_text_append(scan->doc, sizeof(scan->doc), &scan->doc_len, " ", 1);
	docscan_text_append(scan->doc, sizeof(scan->doc), &scan->doc_len, s, (size_t)(end - s));
}

/* "export declare abstract class Name" or "interface Name": Name waits for its "{". */
static void dts_owner_header(struct docscan_dts *scan, const char *s, const char *end)
{
	char name[DOCSCAN_NAME_MAX];

	take_word(&s, end, "export");
	take_word(&s, end, "default");
	take_word(&s, end, "declare");
	take_word(&s, end, "abstract");
	if (!take_word(&s, end, "class") && !take_word(&s, end, "interface"))
		return;
	if (scan_ident(s, end, name, sizeof(name)))
		memcpy(scan->pending, name, sizeof(name));
}

/* A member line of the innermost owner: a method ("name?<T>(") or an alias ("name: Type;"). */
static void dts_member(struct docscan_dts *scan, const char *s, const char *end)
{
	const struct docscan_owner *owner = &scan->owners[scan->nowners - 1];
	char name[DOCSCAN_NAME_MAX], type[DOCSCAN_NAME_MAX], signature[DOCSCAN_SIGNATURE_MAX];
	const char *line = s, *p;
	size_t siglen = 0;

	if (take_word(&s, end, "private") || take_word(&s, end, "protected"))
		return;
	take_word(&s, end, "public");
	take_word(&s, end, "static");
	take_word(&s, end, "readonly");
	take_word(&s, end, "async");
	p = scan_ident(s, end, name, sizeof(name));
	if (!p)
		return;
	if (p < end && *p == '?')
		p++;
	if (p < end && *p == ':') {
		p = scan_ident(skip_space(p + 1, end), end, type, sizeof(type));
		if (p && p < end && *p == ';' && isupper((unsigned char)type[0]))
			scan->emit(scan->ctx, &(struct docscan_entry){ .kind = DOCSCAN_ALIAS,
								       .owner = type,
								       .name = name,
								       .signature = "",
								       .doc = "",
								       .line = scan->line });
		return;
	}
	if (p < end && *p == '<') {
		/* Type parameters: bounded by the line, nested angles counted. */
		int angles = 0;

		for (; p < end; p++) {
			angles += *p == '<' ? 1 : *p == '>' ? -1 : 0;
			if (angles == 0)
				break;
		}
		if (p < end)
			p++;
	}
	if (p >= end || *p != '(' || strcmp(name, "constructor") == 0)
		return;
	while (end > line && isspace((unsigned char)end[-1]))
		end--;
	docscan_text_append(signature, sizeof(signature), &siglen, line, (size_t)(end - line));
	scan->emit(scan->ctx, &(struct docscan_entry){ .kind = DOCSCAN_METHOD,
						       .owner = owner->name,
						       .name = name,
						       .signature = signature,
						       .doc = scan->doc_valid ? scan->doc : "",
						       .line = scan->line });
}

/* Counts the line's braces outside strings and comments; owners open and close with them. */
static void dts_braces(struct docscan_dts *scan, const char *s, const char *end)
{
	char quote = 0;

	for (; s < end; s++) {
		if (scan->in_comment) {
			if (*s == '*' && s + 1 < end && s[1] == '/')
				scan->in_comment = false, s++;
			continue;
		}
		if (quote) {
			if (*s == '\\')
				s++;
			else if (*s == quote)
				quote = 0;
			continue;
		}
		if (*s == '"' || *s == '\'' || *s == '`') {
			quote = *s;
		} else if (*s == '/' && s + 1 < end && s[1] == '/') {
			return;
		} else if (*s == '/' && s + 1 < end && s[1] == '*') {
			scan->in_comment = true;
			scan->doc_len = 0;
			scan->doc[0] = '\0';
			s++;
		} else if (*s == '{') {
			scan->depth++;
			if (scan->pending[0] && scan->nowners < DOCSCAN_DEPTH_MAX) {
				struct docscan_owner *owner = &scan->owners[scan->nowners++];

				memcpy(owner->name, scan->pending, sizeof(owner->name));
				owner->depth = scan->depth;
			}
			scan->pending[0] = '\0';
		} else if (*s == '}') {
			if (scan->depth > 0)
				scan->depth--;
			while (scan->nowners && scan->owners[scan->nowners - 1].depth > scan->depth)
				scan->nowners--;
		}
	}
}

void docscan_dts_line(struct docscan_dts *scan, const char *line, size_t len)
{
	const char *end = line + (len < DOCSCAN_LINE_MAX ? len : DOCSCAN_LINE_MAX);
	const char *s = skip_space(line, end), *close;

	scan->line++;
	if (scan->in_comment) {
		close = memmem(s, (size_t)(end - s), "*/", 2);
		dts_doc_add(scan, s, close ? close : end);
		if (!close)
			return;
		scan->in_comment = false;
		scan->doc_valid = true;
		dts_braces(scan, close + 2, end);
		return;
	}
	if (end - s >= 2 && s[0] == '/' && s[1] == '*') {
		scan->doc_len = 0;
		scan->doc[0] = '\0';
		s += s + 2 < end && s[2] == '*' ? 3 : 2;
		close = memmem(s, (size_t)(end - s), "*/", 2);
		dts_doc_add(scan, s, close ? close : end);
		scan->in_comment = !close;
		scan->doc_valid = close != NULL;
		if (close)
			dts_braces(scan, close + 2, end);
		return;
	}
	/* Blank lines and line comments between a doc comment and its declaration keep it. */
	if (s == end || (end - s >= 2 && s[0] == '/' && s[1] == '/'))
		return;
	dts_owner_header(scan, s, end);
	if (scan->nowners && scan->owners[scan->nowners - 1].depth == scan->depth)
		dts_member(scan, s, end);
	dts_braces(scan, s, end);
	scan->doc_valid = false;
}

void docscan_readme_init(struct docscan_readme *scan, docscan_emit_t emit, void *ctx)
{
	memset(scan, 0, sizeof(*scan));
	scan->emit = emit;
	scan->ctx = ctx;
}

static void readme_emit(struct docscan_readme *scan)
{
	if (scan->have_section && scan->heading[0])
		scan->emit(scan->ctx, &(struct docscan_entry){ .kind = DOCSCAN_SECTION,
							       .owner = "",
							       .name = scan->heading,
							       .signature = "",
							       .doc = scan->text,
							       .line = scan->heading_line });
	scan->have_section = false;
}

void docscan_readme_line(struct docscan_readme *scan, const char *line, size_t len)
{
	const char *end = line + (len < DOCSCAN_LINE_MAX ? len : DOCSCAN_LINE_MAX);
	const char *s = skip_space(line, end), *h = s;
	size_t level = 0, heading_len = 0;

	scan->line++;
	while (end > s && isspace((unsigned char)end[-1]))
		end--;
	if (end - s >= 3 && (memcmp(s, "```", 3) == 0 || memcmp(s, "~~~", 3) == 0))
		scan->in_fence = !scan->in_fence;
	while (h < end && *h == '#' && level < 7)
		h++, level++;
	if (!scan->in_fence && s == line && level >= 1 && level <= 6 &&
	    (h == end || *h == ' ' || *h == '\t')) {
		readme_emit(scan);
		h = skip_space(h, end);
		while (end > h && (end[-1] == '#' || isspace((unsigned char)end[-1])))
			end--;
		docscan_text_append(scan->heading, sizeof(scan->heading), &heading_len, h,
				    (size_t)(end - h));
		scan->heading_line = scan->line;
		scan->text_len = 0;
		scan->text[0] = '\0';
		scan->have_section = true;
		return;
	}
	if (!scan->have_section || s == end)
		return;
	if (scan->text_len)
		docscan_text_append(scan->text, sizeof(scan->text), &scan->text_len, " ", 1);
	docscan_text_append(scan->text, sizeof(scan->text), &scan->text_len, s, (size_t)(end - s));
}

void docscan_readme_end(struct docscan_readme *scan)
{
	readme_emit(scan);
}

void docscan_resource_name(const char *owner, char *buf, size_t len)
{
	size_t n = strlen(owner), suffix = strlen("Resource");

	if (len == 0)
		return;
	if (n > suffix && strcmp(owner + n - suffix, "Resource") == 0)
		n -= suffix;
	if (n >= len)
		n = len - 1;
	memcpy(buf, owner, n);
	buf[n] = '\0';
	/* "HTTPClient" -> "httpClient": the leading capitals, but the one that starts a word. */
	for (size_t i = 0; i < n && isupper((unsigned char)buf[i]); i++) {
		if (i > 0 && i + 1 < n && islower((unsigned char)buf[i + 1]))
			break;
		buf[i] = (char)tolower((unsigned char)buf[i]);
	}
}
