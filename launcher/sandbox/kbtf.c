// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Finds the BTF id of bpf_cast_to_kern_ctx and two offsets in struct bpf_sock_addr_kern in the
 * kernel's BTF, mapped (kernel 6.16+) or else streamed through one 64 KiB buffer. libbpf would
 * read the whole 5.5 MB into fresh memory, copy it once more and index it: on a VM where every
 * fresh page costs a fault of tens of microseconds, most of the first launch of a build
 * (docs/design.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <linux/btf.h>

#include "kbtf.h"
#include "lib/util.h"

#define KBTF_BUF_SIZE (64 * 1024)

enum { NAME_CAST, NAME_SOCK_ADDR_KERN, NAME_UADDR, NAME_UADDRLEN, NAME_COUNT };

static const char *const NAMES[NAME_COUNT] = {
	[NAME_CAST] = "bpf_cast_to_kern_ctx",
	[NAME_SOCK_ADDR_KERN] = "bpf_sock_addr_kern",
	[NAME_UADDR] = "uaddr",
	[NAME_UADDRLEN] = "uaddrlen",
};

/* The file, either mapped whole (map) or read a window at a time into buf. */
struct reader {
	const unsigned char *map;
	uint64_t map_len;
	int fd;
	uint64_t start; /* file offset of buf[0] */
	size_t len;	/* bytes of buf read */
	unsigned char *buf;
};

/*
 * The bytes from off on, at least min(want, end - off) of them, and how many (up to end) the
 * buffer holds in *ret_n. NULL with errno EINVAL when the file ends first, E2BIG when want
 * exceeds the buffer.
 */
static const unsigned char *window(struct reader *r, uint64_t off, uint64_t end, size_t want,
				   size_t *ret_n)
{
	size_t need;

	/* Past the section's end: end - off would wrap and read what follows it. */
	if (off > end) {
		errno = EINVAL;
		return NULL;
	}
	need = end - off < want ? (size_t)(end - off) : want;
	if (r->map) {
		if (off > r->map_len || need > r->map_len - off) {
			errno = EINVAL;
			return NULL;
		}
		*ret_n = (end < r->map_len ? end : r->map_len) - off;
		return r->map + off;
	}
	if (need > KBTF_BUF_SIZE) {
		errno = E2BIG;
		return NULL;
	}
	if (off < r->start || off + need > r->start + r->len) {
		r->start = off;
		r->len = 0;
		/* sysfs hands the BTF out a page per read */
		while (r->len < KBTF_BUF_SIZE) {
			ssize_t n = pread(r->fd, r->buf + r->len, KBTF_BUF_SIZE - r->len,
					  (off_t)(off + r->len));

			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0)
				return NULL;
			if (n == 0)
				break;
			r->len += (size_t)n;
		}
		if (r->len < need) {
			errno = EINVAL;
			return NULL;
		}
	}
	*ret_n = r->start + r->len - off;
	if (*ret_n > end - off)
		*ret_n = end - off;
	return r->buf + (off - r->start);
}

/*
 * strings_find on the mapped file: each name's first occurrence as a whole string, found by
 * memmem, several times faster than going from string to string (2 million here).
 */
static int strings_find_mapped(struct reader *r, uint64_t base, uint32_t len,
			       uint32_t ret_off[NAME_COUNT])
{
	const unsigned char *strs;

	if (base > r->map_len || len > r->map_len - base)
		return -EINVAL;
	strs = r->map + base;
	for (int i = 0; i < NAME_COUNT; i++) {
		char pattern[32];
		size_t l = strlen(NAMES[i]);
		const unsigned char *at;

		/* Between two NULs: a whole string (the first, at offset 0, is the empty one). */
		pattern[0] = '\0';
		memcpy(pattern + 1, NAMES[i], l + 1);
		at = memmem(strs, len, pattern, l + 2);
		ret_off[i] = at ? (uint32_t)(at + 1 - strs) : 0;
	}
	return 0;
}

/* The offset in the string section of each of NAMES; 0 (the empty string) when absent. */
static int strings_find(struct reader *r, uint64_t base, uint32_t len, uint32_t ret_off[NAME_COUNT])
{
	uint64_t pos = base, end = base + len;

	if (r->map)
		return strings_find_mapped(r, base, len, ret_off);

	while (pos < end) {
		const unsigned char *s, *nul;
		size_t n;

		s = window(r, pos, end, 32, &n);
		if (!s)
			return -errno;
		for (int i = 0; i < NAME_COUNT; i++) {
			size_t l = strlen(NAMES[i]) + 1;

			if (!ret_off[i] && l <= n && memcmp(s, NAMES[i], l) == 0)
				ret_off[i] = (uint32_t)(pos - base);
		}
		/* On to the next string, however long this one is. */
		while (!(nul = memchr(s, 0, n))) {
			pos += n;
			if (pos >= end)
				return 0;
			s = window(r, pos, end, 1, &n);
			if (!s)
				return -errno;
		}
		pos += (uint64_t)(nul - s) + 1;
	}
	return 0;
}

/* What follows a type's struct btf_type, by kind; -1 for a kind this does not know. */
static long type_extra(const struct btf_type *t)
{
	uint32_t vlen = BTF_INFO_VLEN(t->info);

	switch (BTF_INFO_KIND(t->info)) {
	case BTF_KIND_INT:
	case BTF_KIND_VAR:
	case BTF_KIND_DECL_TAG:
		return 4;
	case BTF_KIND_PTR:
	case BTF_KIND_FWD:
	case BTF_KIND_TYPEDEF:
	case BTF_KIND_VOLATILE:
	case BTF_KIND_CONST:
	case BTF_KIND_RESTRICT:
	case BTF_KIND_FUNC:
	case BTF_KIND_FLOAT:
	case BTF_KIND_TYPE_TAG:
		return 0;
	case BTF_KIND_ARRAY:
		return sizeof(struct btf_array);
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
		return (long)vlen * sizeof(struct btf_member);
	case BTF_KIND_ENUM:
		return (long)vlen * sizeof(struct btf_enum);
	case BTF_KIND_FUNC_PROTO:
		return (long)vlen * sizeof(struct btf_param);
	case BTF_KIND_DATASEC:
		return (long)vlen * sizeof(struct btf_var_secinfo);
	case BTF_KIND_ENUM64:
		return (long)vlen * sizeof(struct btf_enum64);
	default:
		return -1;
	}
}

/*
 * The byte offsets of the members named uaddr and uaddrlen, and their types' ids. A bitfield
 * is not what the programs read: -EPROTO.
 */
static int members_find(struct reader *r, uint64_t pos, uint64_t end, const struct btf_type *t,
			const uint32_t off[NAME_COUNT], struct kbtf_unix *ret, uint32_t ret_type[2],
			const char **ret_why)
{
	uint32_t vlen = BTF_INFO_VLEN(t->info);
	bool kflag = BTF_INFO_KFLAG(t->info);
	const struct btf_member *m;
	bool uaddr = false, uaddrlen = false;
	size_t n;

	/* Members running past the type section would be read from what follows it. */
	if (pos > end || end - pos < (uint64_t)vlen * sizeof(*m))
		return -EINVAL;
	m = (const void *)window(r, pos, end, (size_t)vlen * sizeof(*m), &n);
	if (!m)
		return -errno;
	if (n < (size_t)vlen * sizeof(*m))
		return -EINVAL;
	for (uint32_t i = 0; i < vlen; i++) {
		uint32_t bits = kflag ? BTF_MEMBER_BIT_OFFSET(m[i].offset) : m[i].offset;
		bool bitfield = (kflag && BTF_MEMBER_BITFIELD_SIZE(m[i].offset)) || bits % 8;

		if (m[i].name_off == off[NAME_UADDR]) {
			if (bitfield) {
				*ret_why = "bpf_sock_addr_kern.uaddr is a bitfield, not a pointer";
				return -EPROTO;
			}
			ret->uaddr_off = bits / 8;
			ret_type[0] = m[i].type;
			uaddr = true;
		} else if (m[i].name_off == off[NAME_UADDRLEN]) {
			if (bitfield) {
				*ret_why =
					"bpf_sock_addr_kern.uaddrlen is a bitfield, not a 32-bit "
					"integer";
				return -EPROTO;
			}
			ret->uaddrlen_off = bits / 8;
			ret_type[1] = m[i].type;
			uaddrlen = true;
		}
	}
	return uaddr && uaddrlen ? 0 : -ENOENT;
}

/* Where the walk of the type section is: type `id` starts at `pos`. */
struct cursor {
	uint64_t start, end; /* the type section */
	uint64_t pos;
	uint32_t id;
};

/*
 * What type `id` is once typedefs and qualifiers are looked through: its kind, and its size
 * (an INT's, with its encoding in *ret_enc). Ids count from 1 in file order, so a type is
 * found by walking from the section's start, or from where the last walk stopped when it is
 * further on: the member types sit near the struct or early (u32), a walk or two.
 */
static int type_resolve(struct reader *r, struct cursor *c, uint32_t id, uint32_t *ret_kind,
			uint32_t *ret_size, uint32_t *ret_enc)
{
	/* A chain longer than this is a loop, or no kernel's. */
	for (int hops = 0; hops < 32; hops++) {
		struct btf_type t;
		const void *p;
		uint32_t kind;
		size_t n;

		if (id == 0) {
			*ret_kind = BTF_KIND_UNKN; /* void */
			return 0;
		}
		if (id < c->id) {
			c->pos = c->start;
			c->id = 1;
		}
		for (;;) {
			long extra;

			/* A record running past the section: its end is not where the next starts.
			 */
			if (c->pos > c->end || c->end - c->pos < sizeof(t))
				return -EINVAL;
			p = window(r, c->pos, c->end, sizeof(t), &n);
			if (!p)
				return -errno;
			if (n < sizeof(t))
				return -EINVAL;
			memcpy(&t, p, sizeof(t));
			if (c->id == id)
				break;
			extra = type_extra(&t);
			if (extra < 0 || c->end - c->pos - sizeof(t) < (uint64_t)extra)
				return -EINVAL;
			c->pos += sizeof(t) + (uint64_t)extra;
			c->id++;
		}
		kind = BTF_INFO_KIND(t.info);
		switch (kind) {
		case BTF_KIND_TYPEDEF:
		case BTF_KIND_VOLATILE:
		case BTF_KIND_CONST:
		case BTF_KIND_RESTRICT:
		case BTF_KIND_TYPE_TAG:
			id = t.type;
			continue;
		case BTF_KIND_INT:
			if (c->end - c->pos - sizeof(t) < sizeof(*ret_enc))
				return -EINVAL;
			p = window(r, c->pos + sizeof(t), c->end, sizeof(*ret_enc), &n);
			if (!p)
				return -errno;
			if (n < sizeof(*ret_enc))
				return -EINVAL;
			memcpy(ret_enc, p, sizeof(*ret_enc));
			break;
		default:
			break;
		}
		*ret_kind = kind;
		*ret_size = t.size;
		return 0;
	}
	return -ELOOP;
}

/*
 * The programs read uaddr as a pointer (struct sockaddr *) and uaddrlen as a u32: a kernel
 * whose members have other types would have them read garbage. -EPROTO with *ret_why then.
 */
static int members_check(struct reader *r, const struct btf_header *hdr, const uint32_t type[2],
			 const char **ret_why)
{
	struct cursor c = { .start = (uint64_t)hdr->hdr_len + hdr->type_off, .id = 1 };
	uint32_t kind, size = 0, enc = 0;
	int err;

	c.end = c.start + hdr->type_len;
	c.pos = c.start;
	err = type_resolve(r, &c, type[0], &kind, &size, &enc);
	if (err < 0)
		return err;
	if (kind != BTF_KIND_PTR) {
		*ret_why = "bpf_sock_addr_kern.uaddr is not a pointer";
		return -EPROTO;
	}
	err = type_resolve(r, &c, type[1], &kind, &size, &enc);
	if (err < 0)
		return err;
	if (kind != BTF_KIND_INT || size != 4 || BTF_INT_BITS(enc) != 32 || BTF_INT_OFFSET(enc)) {
		*ret_why = "bpf_sock_addr_kern.uaddrlen is not a 32-bit integer";
		return -EPROTO;
	}
	return 0;
}

/* The search itself, through r's window. */
static int unix_find(struct reader *r, struct kbtf_unix *ret, const char **ret_why)
{
	uint32_t off[NAME_COUNT] = { 0 }, id = 1, member_type[2] = { 0 };
	struct kbtf_unix found = { 0 };
	bool have_struct = false;
	struct btf_header hdr;
	const void *h;
	uint64_t pos, end;
	size_t n;
	int err;

	h = window(r, 0, sizeof(hdr), sizeof(hdr), &n);
	if (!h || n < sizeof(hdr))
		return -EINVAL;
	memcpy(&hdr, h, sizeof(hdr));
	if (hdr.magic != BTF_MAGIC || hdr.hdr_len < sizeof(hdr))
		return -EINVAL;
	err = strings_find(r, (uint64_t)hdr.hdr_len + hdr.str_off, hdr.str_len, off);
	if (err < 0)
		return err;
	for (int i = 0; i < NAME_COUNT; i++)
		if (!off[i])
			return -ENOENT;

	pos = (uint64_t)hdr.hdr_len + hdr.type_off;
	end = pos + hdr.type_len;
	for (; pos < end && (!found.cast_kern_ctx_id || !have_struct); id++) {
		const struct btf_type *t = (const void *)window(r, pos, end, sizeof(*t), &n);
		struct btf_type copy;
		long extra;

		if (!t)
			return -errno;
		if (n < sizeof(*t))
			return -EINVAL;
		copy = *t; /* the window moves under members_find */
		extra = type_extra(&copy);
		if (extra < 0)
			return -EINVAL;
		if (BTF_INFO_KIND(copy.info) == BTF_KIND_FUNC && copy.name_off == off[NAME_CAST])
			found.cast_kern_ctx_id = id;
		if (BTF_INFO_KIND(copy.info) == BTF_KIND_STRUCT &&
		    copy.name_off == off[NAME_SOCK_ADDR_KERN] && !have_struct) {
			err = members_find(r, pos + sizeof(copy), end, &copy, off, &found,
					   member_type, ret_why);
			if (err < 0)
				return err;
			have_struct = true;
		}
		pos += sizeof(copy) + (uint64_t)extra;
	}
	if (!found.cast_kern_ctx_id || !have_struct)
		return -ENOENT;
	err = members_check(r, &hdr, member_type, ret_why);
	if (err < 0)
		return err;
	*ret = found;
	return 0;
}

/* The search through KBTF_BUF_SIZE bytes at a time, read from fd. */
static int unix_find_streamed(int fd, struct kbtf_unix *ret, const char **ret_why)
{
	_cleanup_free_ unsigned char *buf = malloc(KBTF_BUF_SIZE);
	struct reader r = { .fd = fd, .buf = buf };

	if (!buf)
		return -ENOMEM;
	return unix_find(&r, ret, ret_why);
}

int kbtf_unix_find_streamed(const char *path, struct kbtf_unix *ret, const char **ret_why)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);

	*ret_why = NULL;
	if (fd < 0)
		return -errno;
	return unix_find_streamed(fd, ret, ret_why);
}

int kbtf_unix_find(const char *path, struct kbtf_unix *ret, const char **ret_why)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct reader r = { .fd = -1 };
	struct stat st;
	void *map;
	int err;

	*ret_why = NULL;
	if (fd < 0)
		return -errno;
	/*
	 * Since 6.16 the kernel maps its own BTF pages into ours (private and read-only: it
	 * refuses a shared mapping), with no copy and no page faults. Before that, or for a
	 * file mmap does not serve, the window is read.
	 */
	if (fstat(fd, &st) < 0 || st.st_size <= 0 || (uint64_t)st.st_size > SIZE_MAX)
		return unix_find_streamed(fd, ret, ret_why);
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED)
		return unix_find_streamed(fd, ret, ret_why);
	r.map = map;
	r.map_len = (uint64_t)st.st_size;
	err = unix_find(&r, ret, ret_why);
	munmap(map, (size_t)st.st_size);
	return err;
}
