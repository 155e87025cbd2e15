// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * search_docs' index: the packages' declared methods and README sections, in SQLite FTS5. The
 * files under --modules are read, never run: each through docscan's bounded scanner, each folder
 * walk without following links, with caps on depth, files and sizes.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <cjson/cJSON.h>
#include <sqlite3.h>

#include "docindex.h"
#include "docscan.h"
#include "lib/util.h"

/* A package's files past these are not read: a stripe of 2026 has 486 .d.ts files, 12 MB. */
#define DOCINDEX_FILE_MAX_BYTES (8 * 1024 * 1024)
#define DOCINDEX_FILES_MAX	20000
#define DOCINDEX_DIRS_MAX	20000
#define DOCINDEX_DEPTH_MAX	16
#define DOCINDEX_ENTRIES_MAX	1000000
/* Words of a query looked up, and the longest word kept. */
#define DOCINDEX_QUERY_WORDS_MAX 16
#define DOCINDEX_WORD_MAX	 64

/* Rows read per result asked for: one hit per name among a method's overloads. */
#define DOCINDEX_OVERLOADS_READ 4

struct docindex {
	sqlite3 *db;
	sqlite3_stmt *search;
};

/* What the scanner's entries go to while one file is read. */
struct docindex_builder {
	sqlite3 *db;
	sqlite3_stmt *add_method, *add_alias, *add_doc;
	int package;	  /* its number: aliases hold within one package */
	const char *path; /* the file's, relative to --modules */
	size_t entries;
	int error; /* the first SQLite failure, as -errno */
};

static const char DOCINDEX_SCHEMA[] =
	"CREATE TABLE method(package INTEGER, owner TEXT, resource TEXT, method TEXT,"
	" signature TEXT, doc TEXT, source TEXT);"
	"CREATE TABLE alias(package INTEGER, owner TEXT, property TEXT);"
	"CREATE INDEX alias_owner ON alias(package, owner);"
	"CREATE VIRTUAL TABLE docs USING fts5(name, description, signature, source UNINDEXED,"
	" tokenize = 'porter unicode61');";

/*
 * A method's name is the property code reaches its class by (stripe.customers: a
 * CustomerResource), else the class's own; esm/ and cjs/ declare the same methods twice.
 */
static const char DOCINDEX_RESOLVE[] =
	"INSERT INTO docs(name, description, signature, source)"
	" SELECT coalesce((SELECT min(property) FROM alias a"
	"                  WHERE a.package = m.package AND a.owner = m.owner), m.resource)"
	"        || '.' || m.method AS full_name, max(m.doc), m.signature, min(m.source)"
	" FROM method m GROUP BY full_name, m.signature;"
	"DROP TABLE method; DROP TABLE alias;";

/* bm25 with the name counting ten times the description, the signature twice. */
static const char DOCINDEX_SEARCH[] =
	"SELECT name, signature, description, source FROM docs WHERE docs MATCH ?1"
	" ORDER BY bm25(docs, 10.0, 1.0, 2.0) LIMIT ?2;";

static int docindex_sql_error(sqlite3 *db)
{
	int code = sqlite3_errcode(db);

	return code == SQLITE_NOMEM ? -ENOMEM : -EIO;
}

static void docindex_bind(sqlite3_stmt *stmt, int column, const char *text)
{
	sqlite3_bind_text(stmt, column, text, -1, SQLITE_TRANSIENT);
}

static void docindex_step(struct docindex_builder *builder, sqlite3_stmt *stmt)
{
	if (sqlite3_step(stmt) != SQLITE_DONE && !builder->error)
		builder->error = docindex_sql_error(builder->db);
	sqlite3_reset(stmt);
	sqlite3_clear_bindings(stmt);
}

static void docindex_add(void *ctx, const struct docscan_entry *entry)
{
	struct docindex_builder *builder = ctx;
	char source[PATH_MAX + 16], line[16], resource[DOCSCAN_NAME_MAX];
	size_t source_len = 0;
	sqlite3_stmt *stmt;

	if (builder->entries >= DOCINDEX_ENTRIES_MAX)
		return;
	/* A file's name is any bytes: the JSON answer gets valid UTF-8. */
	docscan_text_append(source, sizeof(source) - sizeof(line), &source_len, builder->path,
			    strlen(builder->path));
	snprintf(line, sizeof(line), ":%u", entry->line);
	docscan_text_append(source, sizeof(source), &source_len, line, strlen(line));
	switch (entry->kind) {
	case DOCSCAN_METHOD:
		stmt = builder->add_method;
		docscan_resource_name(entry->owner, resource, sizeof(resource));
		sqlite3_bind_int(stmt, 1, builder->package);
		docindex_bind(stmt, 2, entry->owner);
		docindex_bind(stmt, 3, resource);
		docindex_bind(stmt, 4, entry->name);
		docindex_bind(stmt, 5, entry->signature);
		docindex_bind(stmt, 6, entry->doc);
		docindex_bind(stmt, 7, source);
		break;
	case DOCSCAN_ALIAS:
		stmt = builder->add_alias;
		sqlite3_bind_int(stmt, 1, builder->package);
		docindex_bind(stmt, 2, entry->owner);
		docindex_bind(stmt, 3, entry->name);
		docindex_step(builder, stmt);
		return;
	case DOCSCAN_SECTION:
		stmt = builder->add_doc;
		docindex_bind(stmt, 1, entry->name);
		docindex_bind(stmt, 2, entry->doc);
		docindex_bind(stmt, 3, "");
		docindex_bind(stmt, 4, source);
		break;
	default:
		return;
	}
	builder->entries++;
	docindex_step(builder, stmt);
}

/* A regular file under dir_fd, not through a link, of at most the cap; malloc'ed, NUL-ended. */
static int docindex_read(int dir_fd, const char *name, char **ret_text, size_t *ret_len)
{
	_cleanup_close_ int fd =
		openat(dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	struct stat st;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode) || st.st_size > DOCINDEX_FILE_MAX_BYTES)
		return -EFBIG;
	text = malloc((size_t)st.st_size + 1);
	if (!text)
		return -ENOMEM;
	while (len < (size_t)st.st_size) {
		ssize_t n = read(fd, text + len, (size_t)st.st_size - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		len += (size_t)n;
	}
	text[len] = '\0';
	*ret_text = TAKE_PTR(text);
	*ret_len = len;
	return 0;
}

/* Feeds a file's lines to one of the scanners. */
static void docindex_scan_file(struct docindex_builder *builder, int dir_fd, const char *name,
			       bool readme)
{
	_cleanup_free_ char *text = NULL;
	struct docscan_readme readme_scan;
	struct docscan_dts dts_scan;
	size_t len = 0;

	if (docindex_read(dir_fd, name, &text, &len) < 0)
		return;
	if (readme)
		docscan_readme_init(&readme_scan, docindex_add, builder);
	else
		docscan_dts_init(&dts_scan, docindex_add, builder);
	for (const char *s = text, *end = text + len; s < end;) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		size_t n = nl ? (size_t)(nl - s) : (size_t)(end - s);

		if (n && s[n - 1] == '\r')
			n--;
		if (readme)
			docscan_readme_line(&readme_scan, s, n);
		else
			docscan_dts_line(&dts_scan, s, n);
		s = nl ? nl + 1 : end;
	}
	if (readme)
		docscan_readme_end(&readme_scan);
}

static bool docindex_is_dts(const char *name)
{
	size_t n = strlen(name);

	return n > 5 && strcmp(name + n - 5, ".d.ts") == 0;
}

/* A folder to look into: its path under --modules and how deep in the package it is. */
struct docindex_dir {
	char *path;
	int depth;
};

/*
 * Scans a package's .d.ts files, folder by folder from an explicit list (no recursion), without
 * following links or going into its own node_modules. Returns whether it has any.
 */
static bool docindex_scan_package(struct docindex_builder *builder, int modules_fd,
				  const char *package)
{
	struct docindex_dir *dirs = NULL;
	size_t ndirs = 0, nfiles = 0, queued = 0;
	bool found = false;

	dirs = calloc(1, sizeof(*dirs));
	if (!dirs || !(dirs[0].path = strdup(package))) {
		free(dirs);
		return false;
	}
	ndirs = queued = 1;
	while (ndirs) {
		struct docindex_dir dir = dirs[--ndirs];
		int fd = openat(modules_fd, dir.path,
				O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
		struct dirent *de;

		if (!d && fd >= 0)
			close(fd);
		while (d && (de = readdir(d))) {
			char path[PATH_MAX];

			if (de->d_name[0] == '.' ||
			    (size_t)snprintf(path, sizeof(path), "%s/%s", dir.path, de->d_name) >=
				    sizeof(path))
				continue;
			if (de->d_type == DT_DIR && dir.depth < DOCINDEX_DEPTH_MAX &&
			    strcmp(de->d_name, "node_modules") != 0 && queued < DOCINDEX_DIRS_MAX) {
				struct docindex_dir *grown =
					realloc(dirs, (ndirs + 1) * sizeof(*dirs));

				if (!grown)
					continue;
				dirs = grown;
				dirs[ndirs].path = strdup(path);
				dirs[ndirs].depth = dir.depth + 1;
				if (dirs[ndirs].path)
					ndirs++, queued++;
			} else if (de->d_type == DT_REG && docindex_is_dts(de->d_name) &&
				   nfiles < DOCINDEX_FILES_MAX) {
				builder->path = path;
				docindex_scan_file(builder, dirfd(d), de->d_name, false);
				nfiles++;
				found = true;
			}
		}
		if (d)
			closedir(d);
		free(dir.path);
	}
	free(dirs);
	return found;
}

/* The package's declarations, then, when it has any, its README's sections. */
static void docindex_add_package(struct docindex_builder *builder, int modules_fd,
				 const char *package, size_t *npackages)
{
	static const char *const READMES[] = { "README.md", "readme.md", "Readme.md" };
	_cleanup_close_ int fd = -1;
	char path[PATH_MAX];

	builder->package++;
	if (!docindex_scan_package(builder, modules_fd, package))
		return;
	(*npackages)++;
	fd = openat(modules_fd, package, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	for (size_t i = 0; i < ARRAY_SIZE(READMES); i++) {
		if (faccessat(fd, READMES[i], R_OK, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", package, READMES[i]);
		builder->path = path;
		docindex_scan_file(builder, fd, READMES[i], true);
		return;
	}
}

/* Each package of node_modules: "name" and "@scope/name". */
static void docindex_add_packages(struct docindex_builder *builder, int modules_fd,
				  size_t *npackages)
{
	int fd = dup(modules_fd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((de = readdir(d))) {
		char package[2 * NAME_MAX + 2];
		int scope_fd;
		DIR *scope;
		struct dirent *se;

		if (de->d_name[0] == '.' || de->d_type != DT_DIR)
			continue;
		/*
		 * The compiler the type-check loads: its lib's declarations (thousands of DOM
		 * methods, 5,000 entries) are no SDK's, and would crowd the SDK's out.
		 */
		if (strcmp(de->d_name, "typescript") == 0)
			continue;
		if (de->d_name[0] != '@') {
			docindex_add_package(builder, modules_fd, de->d_name, npackages);
			continue;
		}
		scope_fd = openat(modules_fd, de->d_name,
				  O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		scope = scope_fd >= 0 ? fdopendir(scope_fd) : NULL;
		if (!scope) {
			if (scope_fd >= 0)
				close(scope_fd);
			continue;
		}
		while ((se = readdir(scope))) {
			if (se->d_name[0] == '.' || se->d_type != DT_DIR)
				continue;
			snprintf(package, sizeof(package), "%s/%s", de->d_name, se->d_name);
			docindex_add_package(builder, modules_fd, package, npackages);
		}
		closedir(scope);
	}
	closedir(d);
}

void docindex_free(struct docindex *index)
{
	if (!index)
		return;
	sqlite3_finalize(index->search);
	sqlite3_close(index->db);
	free(index);
}

DEFINE_TRIVIAL_CLEANUP_FUNC(struct docindex *, docindex_free);

static int docindex_prepare(sqlite3 *db, const char *sql, sqlite3_stmt **ret_stmt)
{
	return sqlite3_prepare_v2(db, sql, -1, ret_stmt, NULL) == SQLITE_OK
		       ? 0
		       : docindex_sql_error(db);
}

static size_t docindex_count(sqlite3 *db)
{
	sqlite3_stmt *count;
	size_t n = 0;

	if (docindex_prepare(db, "SELECT count(*) FROM docs;", &count) < 0)
		return 0;
	if (sqlite3_step(count) == SQLITE_ROW)
		n = (size_t)sqlite3_column_int64(count, 0);
	sqlite3_finalize(count);
	return n;
}

int docindex_build(const char *modules, struct docindex **ret_index, size_t *ret_entries,
		   size_t *ret_packages)
{
	_cleanup_(docindex_freep) struct docindex *index = calloc(1, sizeof(*index));
	_cleanup_close_ int modules_fd = -1;
	struct docindex_builder builder = { 0 };
	size_t npackages = 0;
	int r;

	if (!index)
		return -ENOMEM;
	if (sqlite3_open_v2(":memory:", &index->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_MEMORY,
			    NULL) != SQLITE_OK)
		return index->db ? docindex_sql_error(index->db) : -ENOMEM;
	if (sqlite3_exec(index->db, DOCINDEX_SCHEMA, NULL, NULL, NULL) != SQLITE_OK)
		return docindex_sql_error(index->db);
	builder.db = index->db;
	r = docindex_prepare(index->db, "INSERT INTO method VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7);",
			     &builder.add_method);
	if (r == 0)
		r = docindex_prepare(index->db, "INSERT INTO alias VALUES (?1, ?2, ?3);",
				     &builder.add_alias);
	if (r == 0)
		r = docindex_prepare(index->db,
				     "INSERT INTO docs(name, description, signature, source)"
				     " VALUES (?1, ?2, ?3, ?4);",
				     &builder.add_doc);
	modules_fd = open(modules, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (r == 0 && modules_fd < 0)
		r = -errno;
	if (r == 0) {
		sqlite3_exec(index->db, "BEGIN;", NULL, NULL, NULL);
		docindex_add_packages(&builder, modules_fd, &npackages);
		r = builder.error;
	}
	sqlite3_finalize(builder.add_method);
	sqlite3_finalize(builder.add_alias);
	sqlite3_finalize(builder.add_doc);
	if (r < 0)
		return r;
	if (sqlite3_exec(index->db, DOCINDEX_RESOLVE, NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_exec(index->db, "COMMIT;", NULL, NULL, NULL) != SQLITE_OK)
		return docindex_sql_error(index->db);
	r = docindex_prepare(index->db, DOCINDEX_SEARCH, &index->search);
	if (r < 0)
		return r;
	*ret_entries = docindex_count(index->db);
	*ret_packages = npackages;
	*ret_index = TAKE_PTR(index);
	return 0;
}

/*
 * The query as FTS5 syntax: its words, each quoted, joined by OR (bm25 ranks the entries that
 * have more of them, and rarer ones, first). Letters, digits and '_' make words; everything
 * else separates them, so no operator of the user's reaches FTS5. "" when there is no word.
 */
static void docindex_match(const char *query, char *buf, size_t len)
{
	size_t used = 0, words = 0;

	buf[0] = '\0';
	for (const unsigned char *s = (const unsigned char *)query;
	     *s && words < DOCINDEX_QUERY_WORDS_MAX;) {
		size_t n = 0;

		while (*s && !(isalnum(*s) || *s == '_' || *s >= 0x80))
			s++;
		while (s[n] && (isalnum(s[n]) || s[n] == '_' || s[n] >= 0x80))
			n++;
		if (n == 0)
			break;
		if (n <= DOCINDEX_WORD_MAX && used + n + 8 < len) {
			used += (size_t)snprintf(buf + used, len - used, "%s\"%.*s\"",
						 words ? " OR " : "", (int)n, (const char *)s);
			words++;
		}
		s += n;
	}
}

int docindex_search(struct docindex *index, const char *query, int limit,
		    struct cJSON **ret_results)
{
	char match[DOCINDEX_QUERY_WORDS_MAX * (DOCINDEX_WORD_MAX + 8) + 1];
	cJSON *results = cJSON_CreateArray();
	int rc;

	if (!results)
		return -ENOMEM;
	docindex_match(query, match, sizeof(match));
	if (!match[0]) {
		*ret_results = results;
		return 0;
	}
	sqlite3_bind_text(index->search, 1, match, -1, SQLITE_TRANSIENT);
	/* Overloads share a name: the best-ranked stands for them, so a few more rows are read. */
	sqlite3_bind_int(index->search, 2, limit * DOCINDEX_OVERLOADS_READ);
	while ((rc = sqlite3_step(index->search)) == SQLITE_ROW) {
		static const char *const KEYS[] = { "name", "signature", "description", "source" };
		const unsigned char *name = sqlite3_column_text(index->search, 0);
		cJSON *item, *seen = NULL;

		cJSON_ArrayForEach (seen, results) {
			if (name && strcmp(cJSON_GetObjectItem(seen, "name")->valuestring,
					   (const char *)name) == 0)
				break;
		}
		if (seen)
			continue;
		if (cJSON_GetArraySize(results) >= limit) {
			rc = SQLITE_DONE; /* as many as asked for: the rest is not read */
			break;
		}
		item = cJSON_CreateObject();
		if (!item)
			break;
		for (int i = 0; i < 4; i++) {
			const unsigned char *text = sqlite3_column_text(index->search, i);

			cJSON_AddStringToObject(item, KEYS[i], text ? (const char *)text : "");
		}
		cJSON_AddItemToArray(results, item);
	}
	sqlite3_reset(index->search);
	sqlite3_clear_bindings(index->search);
	if (rc != SQLITE_DONE) {
		cJSON_Delete(results);
		return docindex_sql_error(index->db);
	}
	*ret_results = results;
	return 0;
}
