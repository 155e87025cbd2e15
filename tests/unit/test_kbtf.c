// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Unit tests for kbtf.c: raw BTF files written here, with records across its read buffer, each
 * searched mapped and streamed (the fallback where the kernel will not map its BTF).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/btf.h>

#include "test.h"
#include "sandbox/kbtf.h"

/* The search under test: kbtf_unix_find (a file here is mapped) or its streamed fallback. */
static int (*find)(const char *path, struct kbtf_unix *ret, const char **ret_why);

struct blob {
	unsigned char *p;
	size_t len;
};

static void put(struct blob *b, const void *data, size_t len)
{
	b->p = realloc(b->p, b->len + len);
	if (!b->p)
		abort();
	memcpy(b->p + b->len, data, len);
	b->len += len;
}

static uint32_t str(struct blob *strs, const char *s)
{
	uint32_t off = (uint32_t)strs->len;

	put(strs, s, strlen(s) + 1);
	return off;
}

static void type(struct blob *types, uint32_t name_off, uint32_t kind, uint32_t vlen, bool kflag,
		 uint32_t size_or_type)
{
	struct btf_type t = { .name_off = name_off,
			      .info = (kflag ? 1u << 31 : 0) | kind << 24 | vlen,
			      .size = size_or_type };

	put(types, &t, sizeof(t));
}

static void member(struct blob *types, uint32_t name_off, uint32_t type_id, uint32_t bits)
{
	struct btf_member m = { .name_off = name_off, .type = type_id, .offset = bits };

	put(types, &m, sizeof(m));
}

/* Writes header, types and strings to a temporary file; returns its path (static). */
static const char *write_btf(uint16_t magic, const struct blob *types, const struct blob *strs,
			     uint32_t type_cut)
{
	static char path[] = "/tmp/test_kbtf.XXXXXX";
	struct btf_header h = { .magic = magic,
				.version = 1,
				.hdr_len = sizeof(h),
				.type_off = 0,
				.type_len = (uint32_t)types->len - type_cut,
				.str_off = (uint32_t)types->len,
				.str_len = (uint32_t)strs->len };
	int fd;

	strcpy(path, "/tmp/test_kbtf.XXXXXX");
	fd = mkstemp(path);
	if (fd < 0 || write(fd, &h, sizeof(h)) != sizeof(h) ||
	    write(fd, types->p, types->len) != (ssize_t)types->len ||
	    write(fd, strs->p, strs->len) != (ssize_t)strs->len)
		abort();
	close(fd);
	return path;
}

/* What build() makes differently from a kernel's file. */
struct shape {
	uint16_t magic;
	bool with_cast;
	uint32_t bad_kind;     /* a type of this kind before the kfunc */
	bool uaddr_int;	       /* uaddr an integer, not a pointer */
	bool uaddr_bitfield;   /* uaddr given a bitfield size */
	bool uaddrlen_long;    /* uaddrlen 8 bytes */
	bool uaddrlen_pointer; /* uaddrlen a pointer */
	uint32_t type_cut;     /* bytes the header's type_len says less than written */
};

static const struct shape KERNEL = { .magic = BTF_MAGIC, .with_cast = true };

/*
 * A kernel-like file: a string longer than the 64 KiB buffer before the names, an enum of
 * 10,000 values (80 KB) before the kfunc, the struct last and with bitfield offsets (kflag),
 * its members' types after it: uaddr a pointer, uaddrlen a typedef of a const of a 4-byte int
 * (u32), so that finding them walks back to the first type.
 */
static const char *build(const struct shape *shape, uint32_t *ret_id)
{
	struct blob types = { 0 }, strs = { 0 };
	uint32_t n_int, n_long, n_u32, n_cast, n_sak, n_sk, n_uaddr, n_uaddrlen, n_e, id = 0;
	uint32_t ptr_id, u32_id, long_id, uaddrlen_type;
	char *filler = malloc(100000);
	const char *path;

	memset(filler, 'x', 99999);
	filler[99999] = '\0';
	str(&strs, "");
	str(&strs, filler);
	n_int = str(&strs, "int");
	n_long = str(&strs, "long");
	n_u32 = str(&strs, "u32");
	n_e = str(&strs, "e");
	/* A name that starts or ends like one looked for is another name. */
	str(&strs, "uaddrlen_not");
	str(&strs, "not_uaddrlen");
	n_cast = str(&strs, "bpf_cast_to_kern_ctx");
	n_sak = str(&strs, "bpf_sock_addr_kern");
	n_sk = str(&strs, "sk");
	n_uaddr = str(&strs, "uaddr");
	n_uaddrlen = str(&strs, "uaddrlen");
	free(filler);

	type(&types, n_int, BTF_KIND_INT, 0, false, 4);
	id++;
	put(&types, &(uint32_t){ 32 }, 4);
	type(&types, 0, BTF_KIND_ENUM, 10000, false, 4);
	id++;
	for (int i = 0; i < 10000; i++)
		put(&types, &(struct btf_enum){ .name_off = n_e, .val = i },
		    sizeof(struct btf_enum));
	if (shape->bad_kind) {
		type(&types, 0, shape->bad_kind, 0, false, 0);
		id++;
	}
	type(&types, 0, BTF_KIND_FUNC_PROTO, 1, false, 1);
	id++;
	put(&types, &(struct btf_param){ .name_off = 0, .type = 1 }, sizeof(struct btf_param));
	/* A struct of another name with the member names: not the one. */
	type(&types, n_int, BTF_KIND_STRUCT, 2, false, 8);
	id++;
	member(&types, n_uaddr, 1, 0);
	member(&types, n_uaddrlen, 1, 32);
	if (shape->with_cast) {
		type(&types, n_cast, BTF_KIND_FUNC, 0, false, id);
		id++;
		*ret_id = id;
	}
	/* The struct, then (ids one past it on) a pointer, u32, a const and a long. */
	ptr_id = id + 2;
	u32_id = id + 3;
	long_id = id + 5;
	uaddrlen_type = shape->uaddrlen_long ? long_id : shape->uaddrlen_pointer ? ptr_id : u32_id;
	type(&types, n_sak, BTF_KIND_STRUCT, 3, true, 40);
	id++;
	/* A bitfield size: the offset is the low bits (sk's, not uaddr's, in a kernel). */
	member(&types, n_sk, ptr_id, 1u << 24 | 0);
	member(&types, n_uaddr, shape->uaddr_int ? 1 : ptr_id,
	       (shape->uaddr_bitfield ? 3u << 24 : 0) | 64);
	member(&types, n_uaddrlen, uaddrlen_type, 256);
	type(&types, 0, BTF_KIND_PTR, 0, false, 0);
	type(&types, n_u32, BTF_KIND_TYPEDEF, 0, false, u32_id + 1);
	type(&types, 0, BTF_KIND_CONST, 0, false, 1);
	type(&types, n_long, BTF_KIND_INT, 0, false, 8);
	put(&types, &(uint32_t){ 64 }, 4);
	path = write_btf(shape->magic, &types, &strs, shape->type_cut);
	free(types.p);
	free(strs.p);
	return path;
}

/* A file of this shape is refused with -expected. */
static void check_refused(const struct shape *shape, int expected)
{
	struct kbtf_unix k = { 0 };
	const char *why = NULL;
	uint32_t id = 0;
	const char *path = build(shape, &id);

	CHECK_EQ_INT(find(path, &k, &why), -expected);
	unlink(path);
}

static void test_finds_id_and_offsets(void)
{
	struct kbtf_unix k = { 0 };
	const char *why = NULL;
	uint32_t id = 0;
	const char *path = build(&KERNEL, &id);

	CHECK_EQ_INT(find(path, &k, &why), 0);
	CHECK(why == NULL);
	CHECK_EQ_INT(k.cast_kern_ctx_id, id);
	CHECK_EQ_INT(k.uaddr_off, 8);
	CHECK_EQ_INT(k.uaddrlen_off, 32);
	unlink(path);
}

static void test_missing_kfunc(void)
{
	struct shape shape = KERNEL;

	shape.with_cast = false;
	check_refused(&shape, ENOENT);
}

static void test_not_btf(void)
{
	struct kbtf_unix k = { 0 };
	const char *why = NULL;
	struct shape shape = KERNEL;

	shape.magic = 0x1234;
	check_refused(&shape, EINVAL);
	CHECK_EQ_INT(find("/nonexistent/vmlinux", &k, &why), -ENOENT);
}

/* A kind this does not know the size of: the ids after it cannot be counted. */
static void test_unknown_kind(void)
{
	struct shape shape = KERNEL;

	shape.bad_kind = 31;
	check_refused(&shape, EINVAL);
}

static void test_truncated(void)
{
	struct kbtf_unix k = { 0 };
	const char *why = NULL;
	uint32_t id = 0;
	const char *path = build(&KERNEL, &id);

	CHECK(truncate(path, 24 + 50000) == 0);
	CHECK_EQ_INT(find(path, &k, &why), -EINVAL);
	unlink(path);
}

/*
 * The type section ends 8 bytes into the struct's last member, the file going on with the
 * rest (as a kernel's goes on with its strings): a record past the section's end is not read
 * as one of its types.
 */
static void test_truncated_type_section(void)
{
	struct shape shape = KERNEL;

	/* long (12 + 4), const, typedef, pointer (12 each), and 4 of the last member's 12 */
	shape.type_cut = 16 + 3 * 12 + 4;
	check_refused(&shape, EINVAL);
}

/*
 * The names are right but a member's type is not what the programs read: refused, saying
 * which, whatever the offsets.
 */
static void test_member_types(void)
{
	static const struct {
		struct shape shape;
		const char *why;
	} cases[] = {
		{ { BTF_MAGIC, true, 0, .uaddr_int = true }, "uaddr is not a pointer" },
		{ { BTF_MAGIC, true, 0, .uaddr_bitfield = true }, "uaddr is a bitfield" },
		{ { BTF_MAGIC, true, 0, .uaddrlen_long = true }, "uaddrlen is not a 32-bit" },
		{ { BTF_MAGIC, true, 0, .uaddrlen_pointer = true }, "uaddrlen is not a 32-bit" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct kbtf_unix k = { 0 };
		const char *why = NULL;
		uint32_t id = 0;
		const char *path = build(&cases[i].shape, &id);

		CHECK_EQ_INT(find(path, &k, &why), -EPROTO);
		CHECK(why != NULL);
		if (why)
			CHECK_CONTAINS(why, cases[i].why);
		unlink(path);
	}
}

/* The kernel's own file, where there is one: both ways find the same. */
static void test_kernel_both_ways(void)
{
	struct kbtf_unix mapped = { 0 }, streamed = { 0 };
	const char *why = NULL;
	int r = kbtf_unix_find(KBTF_VMLINUX, &mapped, &why);

	if (r == -ENOENT && access(KBTF_VMLINUX, F_OK) < 0) {
		printf("  skipped: no %s\n", KBTF_VMLINUX);
		return;
	}
	CHECK_EQ_INT(r, 0);
	CHECK(why == NULL);
	CHECK_EQ_INT(kbtf_unix_find_streamed(KBTF_VMLINUX, &streamed, &why), 0);
	CHECK(mapped.cast_kern_ctx_id != 0);
	CHECK_EQ_INT(mapped.cast_kern_ctx_id, streamed.cast_kern_ctx_id);
	CHECK_EQ_INT(mapped.uaddr_off, streamed.uaddr_off);
	CHECK_EQ_INT(mapped.uaddrlen_off, streamed.uaddrlen_off);
}

#define RUN_BOTH(fn)                             \
	do {                                     \
		find = kbtf_unix_find;           \
		test_run(#fn " (mapped)", fn);   \
		find = kbtf_unix_find_streamed;  \
		test_run(#fn " (streamed)", fn); \
	} while (0)

int main(void)
{
	RUN_BOTH(test_finds_id_and_offsets);
	RUN_BOTH(test_missing_kfunc);
	RUN_BOTH(test_not_btf);
	RUN_BOTH(test_unknown_kind);
	RUN_BOTH(test_truncated);
	RUN_BOTH(test_truncated_type_section);
	RUN_BOTH(test_member_types);
	RUN(test_kernel_both_ways);
	return test_failures != 0;
}
