// SPDX-License-Identifier: LGPL-2.1-or-later
/* System call names by ABI, for the audit lines of calls the seccomp filter refuses. */
#include <linux/audit.h>
#include <stddef.h>

#include "syscalls.h"
#include "util.h"

/*
 * SYSCALLS_NATIVE, and on x86_64 SYSCALLS_I386 and SYSCALLS_X32: made by the Makefile from
 * the kernel's uapi headers, so the names follow the headers the launcher is built with.
 */
#include "syscall_names.h"

#define SYSCALLS_X32_BIT 0x40000000u

#define SYSCALLS_LOOKUP(table, nr) ((nr) < ARRAY_SIZE(table) ? (table)[(nr)] : NULL)

const char *syscalls_name(uint32_t arch, uint32_t nr)
{
	switch (arch) {
#if defined(__x86_64__)
	case AUDIT_ARCH_X86_64:
		if (nr & SYSCALLS_X32_BIT)
			return SYSCALLS_LOOKUP(SYSCALLS_X32, nr & ~SYSCALLS_X32_BIT);
		return SYSCALLS_LOOKUP(SYSCALLS_NATIVE, nr);
	case AUDIT_ARCH_I386:
		return SYSCALLS_LOOKUP(SYSCALLS_I386, nr);
#elif defined(__aarch64__)
	case AUDIT_ARCH_AARCH64:
		return SYSCALLS_LOOKUP(SYSCALLS_NATIVE, nr);
#endif
	default:
		return NULL;
	}
}

const char *syscalls_abi(uint32_t arch, uint32_t nr)
{
	switch (arch) {
	case AUDIT_ARCH_X86_64:
		return nr & SYSCALLS_X32_BIT ? "x32" : "x86_64";
	case AUDIT_ARCH_I386:
		return "i386";
	case AUDIT_ARCH_AARCH64:
		return "aarch64";
	case AUDIT_ARCH_ARM:
		return "arm";
	default:
		return "unknown";
	}
}
