// SPDX-License-Identifier: LGPL-2.1-or-later
/* The gateway's bounded byte buffers: one per direction and connection, never grown. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gateway_internal.h"

int gw_buf_init(struct gw_buf *buf, size_t cap)
{
	buf->data = malloc(cap);
	buf->len = 0;
	buf->cap = buf->data ? cap : 0;
	return buf->data ? 0 : -ENOMEM;
}

/* Wiped first: a buffer towards the provider held the secret's value. */
void gw_buf_free(struct gw_buf *buf)
{
	if (buf->data)
		explicit_bzero(buf->data, buf->cap);
	free(buf->data);
	buf->data = NULL;
	buf->len = buf->cap = 0;
}

void gw_buf_consume(struct gw_buf *buf, size_t n)
{
	memmove(buf->data, buf->data + n, buf->len - n);
	buf->len -= n;
}

bool gw_buf_append(struct gw_buf *buf, const void *data, size_t n)
{
	if (n > buf->cap - buf->len)
		return false;
	memcpy(buf->data + buf->len, data, n);
	buf->len += n;
	return true;
}
