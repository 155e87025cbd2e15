// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Loads the BPF object's programs on several CPUs at once: one object of the ELF makes the
 * maps, further objects of the same ELF take them over and each loads a share of the
 * programs, in threads of their own (docs/design.md, "The first launch of a build").
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "bpf/launch.h" /* before the skeleton, which uses its structs */
#include "launch.skel.h"
#include "progload.h"
#include "lib/util.h"

/* More programs than the object has: the shares are bitmaps of this many. */
#define PROGLOAD_MAX_PROGS 64

/* One object and the share of the programs it loads. */
struct progload_worker {
	pthread_t thread;
	bool started;
	const struct progload_prog *progs;
	size_t n;
	bool mine[PROGLOAD_MAX_PROGS];
	const struct bpf_object *maps_obj; /* whose maps this one takes */
	struct launch_bpf *skel;
	int error;
};

static int object_open(progload_prepare_t prepare, void *userdata, struct launch_bpf **ret_skel)
{
	struct launch_bpf *skel = launch_bpf__open();
	int r;

	if (!skel)
		return -errno;
	r = prepare(skel, userdata);
	if (r < 0) {
		launch_bpf__destroy(skel);
		return r;
	}
	*ret_skel = skel;
	return 0;
}

/* launch_bpf__load, as -errno. */
static int object_load(struct launch_bpf *skel)
{
	int r = launch_bpf__load(skel);

	return r < 0 ? r : (r ? -EINVAL : 0);
}

/*
 * Every map of obj becomes the map made by maps_obj at the same place (the same ELF: the same
 * maps in the same order). One that maps_obj did not make, obj does not make either.
 */
static int maps_take(struct bpf_object *obj, const struct bpf_object *maps_obj)
{
	struct bpf_map *map = NULL, *from = NULL;

	while ((map = bpf_object__next_map(obj, map))) {
		int fd, r;

		from = bpf_object__next_map(maps_obj, from);
		if (!from || strcmp(bpf_map__name(map), bpf_map__name(from)) != 0)
			return -EINVAL;
		fd = bpf_map__fd(from);
		r = fd < 0 ? bpf_map__set_autocreate(map, false) : bpf_map__reuse_fd(map, fd);
		if (r < 0)
			return r;
	}
	return bpf_object__next_map(maps_obj, from) ? -EINVAL : 0;
}

/* Leaves the worker's object its share of the programs only. */
static int worker_open(struct progload_worker *w, progload_prepare_t prepare, void *userdata)
{
	int r = object_open(prepare, userdata, &w->skel);

	if (r < 0)
		return r;
	for (size_t i = 0; i < w->n; i++) {
		struct bpf_program *prog =
			bpf_object__find_program_by_name(w->skel->obj, w->progs[i].name);

		if (!prog)
			return -ENOENT;
		if (!w->mine[i] && bpf_program__set_autoload(prog, false) < 0)
			return -EINVAL;
	}
	return 0;
}

/* Takes the maps, made by then, and loads the share. */
static int worker_load(struct progload_worker *w)
{
	int r = maps_take(w->skel->obj, w->maps_obj);

	if (r < 0)
		return r;
	return object_load(w->skel);
}

static void *worker_run(void *data)
{
	struct progload_worker *w = data;

	w->error = worker_load(w);
	return NULL;
}

unsigned int progload_objects(void)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	if (cpus < 1)
		return 1;
	return cpus < PROGLOAD_MAX_OBJECTS ? (unsigned int)cpus : PROGLOAD_MAX_OBJECTS;
}

/*
 * Shares the programs out: the costliest first, each to the share with the least so far
 * (longest processing time first), so that the big ones spread.
 */
static void shares_make(const struct progload_prog *progs, size_t n,
			struct progload_worker *workers, unsigned int nworkers)
{
	unsigned long sum[PROGLOAD_MAX_OBJECTS] = { 0 };
	bool placed[PROGLOAD_MAX_PROGS] = { false };

	for (;;) {
		size_t best = n;
		unsigned int w = 0;

		for (size_t i = 0; i < n; i++)
			if (!placed[i] && (best == n || progs[i].cost_us > progs[best].cost_us))
				best = i;
		if (best == n)
			return;
		for (unsigned int k = 1; k < nworkers; k++)
			if (sum[k] < sum[w])
				w = k;
		workers[w].mine[best] = true;
		sum[w] += progs[best].cost_us;
		placed[best] = true;
	}
}

/*
 * The fds of the programs loaded (those prepare left to autoload), each a descriptor of ours:
 * the objects can go.
 */
static int fds_take(const struct progload_prog *progs, size_t n,
		    const struct progload_worker *workers, unsigned int nworkers, int *ret_fds)
{
	for (size_t i = 0; i < n; i++)
		for (unsigned int k = 0; k < nworkers; k++) {
			struct bpf_program *prog;

			if (!workers[k].mine[i])
				continue;
			prog = bpf_object__find_program_by_name(workers[k].skel->obj,
								progs[i].name);
			if (!prog)
				return -ENOENT;
			if (!bpf_program__autoload(prog))
				continue;
			if (bpf_program__fd(prog) < 0)
				return -ENOENT;
			ret_fds[i] = fcntl(bpf_program__fd(prog), F_DUPFD_CLOEXEC, 3);
			if (ret_fds[i] < 0)
				return -errno;
		}
	return 0;
}

/* The maps object: every program left out. */
static int maps_open(struct launch_bpf **ret_skel, const struct progload_prog *progs, size_t n,
		     progload_prepare_t prepare, void *userdata)
{
	int r = object_open(prepare, userdata, ret_skel);

	if (r < 0)
		return r;
	for (size_t i = 0; i < n; i++) {
		struct bpf_program *prog =
			bpf_object__find_program_by_name((*ret_skel)->obj, progs[i].name);

		if (!prog || bpf_program__set_autoload(prog, false) < 0)
			return -ENOENT;
	}
	return 0;
}

int progload_load(const struct progload_prog *progs, size_t n, unsigned int nobjects,
		  progload_prepare_t prepare, void *userdata, int *ret_fds)
{
	struct progload_worker workers[PROGLOAD_MAX_OBJECTS];
	struct launch_bpf *maps_skel = NULL;
	unsigned int nworkers = nobjects;
	int r = 0;

	for (size_t i = 0; i < n; i++)
		ret_fds[i] = -1;
	if (n > PROGLOAD_MAX_PROGS)
		return -E2BIG;
	if (nworkers > n)
		nworkers = (unsigned int)n;
	if (nworkers > PROGLOAD_MAX_OBJECTS)
		nworkers = PROGLOAD_MAX_OBJECTS;
	if (nworkers < 1)
		nworkers = 1;
	for (unsigned int k = 0; k < nworkers; k++)
		workers[k] = (struct progload_worker){ .progs = progs, .n = n };

	if (nworkers == 1) {
		/* One object makes the maps and loads every program: launch_bpf__load. */
		memset(workers[0].mine, true, n);
		r = object_open(prepare, userdata, &workers[0].skel);
		if (r == 0)
			r = object_load(workers[0].skel);
		if (r == 0)
			r = fds_take(progs, n, workers, 1, ret_fds);
		goto out;
	}

	/*
	 * Every object opened here, one after the other: on threads of their own at once they
	 * took several times longer (each thread's fresh memory, page by page, on this VM).
	 */
	shares_make(progs, n, workers, nworkers);
	r = maps_open(&maps_skel, progs, n, prepare, userdata);
	for (unsigned int k = 0; k < nworkers && r == 0; k++) {
		workers[k].maps_obj = maps_skel->obj;
		r = worker_open(&workers[k], prepare, userdata);
	}
	/* The maps, .rodata as prepare wrote it, then the shares on their threads. */
	if (r == 0)
		r = object_load(maps_skel);
	if (r < 0)
		goto out;
	for (unsigned int k = 1; k < nworkers; k++)
		workers[k].started =
			pthread_create(&workers[k].thread, NULL, worker_run, &workers[k]) == 0;
	for (unsigned int k = 0; k < nworkers; k++)
		if (!workers[k].started)
			worker_run(&workers[k]);
	for (unsigned int k = 0; k < nworkers; k++)
		if (workers[k].started)
			pthread_join(workers[k].thread, NULL);
	/* Any share that failed fails the whole load, with the first object's error. */
	for (unsigned int k = 0; k < nworkers && r == 0; k++)
		r = workers[k].error;
	if (r == 0)
		r = fds_take(progs, n, workers, nworkers, ret_fds);
out:
	for (unsigned int k = 0; k < nworkers; k++)
		if (workers[k].skel)
			launch_bpf__destroy(workers[k].skel);
	if (maps_skel)
		launch_bpf__destroy(maps_skel);
	if (r < 0)
		for (size_t i = 0; i < n; i++)
			if (ret_fds[i] >= 0) {
				close(ret_fds[i]);
				ret_fds[i] = -1;
			}
	return r;
}
