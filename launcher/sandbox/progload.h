/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Loads (verifies) the programs of the BPF object, shared out over the CPUs: the kernel
 * verifies concurrent loads in parallel, libbpf loads one object's programs one by one.
 */
#ifndef LAUNCH_PROGLOAD_H
#define LAUNCH_PROGLOAD_H

#include <stddef.h>

struct launch_bpf;

/* Objects loading at once at most, whatever the number of CPUs. */
#define PROGLOAD_MAX_OBJECTS 4

struct progload_prog {
	const char *name;     /* as in the skeleton */
	unsigned int cost_us; /* its verification's time, about: how the programs are shared out */
};

/*
 * Called on every object opened, before its load: sets what must be set on each (expected
 * attach types, instructions, .rodata), and turns autoload off for a program that is not to
 * be loaded at all. The same settings on every object: any one of them may be the one whose
 * maps (.rodata included) the others use.
 */
typedef int (*progload_prepare_t)(struct launch_bpf *skel, void *userdata);

/*
 * Loads progs[0..n) (those prepare leaves to autoload) with every map made once and shared by
 * all of them, exactly as one launch_bpf__load would, on up to nobjects objects at once
 * (1: one object, as launch_bpf__load). ret_fds[i] is the program's fd, or -1 when prepare
 * left it out; on error none is left open and -errno is returned.
 */
int progload_load(const struct progload_prog *progs, size_t n, unsigned int nobjects,
		  progload_prepare_t prepare, void *userdata, int *ret_fds);

/* The number of objects for this machine: its online CPUs, at most PROGLOAD_MAX_OBJECTS. */
unsigned int progload_objects(void);

#endif /* LAUNCH_PROGLOAD_H */
