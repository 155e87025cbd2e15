/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* System call names by ABI, for the audit lines of calls the seccomp filter refuses. */
#ifndef LAUNCH_SYSCALLS_H
#define LAUNCH_SYSCALLS_H

#include <stdint.h>

/*
 * The name of call nr as the ABI of arch (AUDIT_ARCH_*) numbers it; x32 calls share
 * AUDIT_ARCH_X86_64 with bit 30 of nr set. NULL when the table has no such call.
 */
const char *syscalls_name(uint32_t arch, uint32_t nr);

/* "x86_64", "x32", "i386", "aarch64", ... or "unknown". */
const char *syscalls_abi(uint32_t arch, uint32_t nr);

#endif /* LAUNCH_SYSCALLS_H */
