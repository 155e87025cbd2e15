// SPDX-License-Identifier: LGPL-2.1-or-later
/* launch: run a command with its network egress confined to a policy's allowlist. */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "commands.h"
#include "lib/util.h"

/* The subcommands by their first argument; anything else is a job to run. */
static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
} commands[] = {
	{ "check", cmd_check },	  { "gc", cmd_gc },	  { "mcp", cmd_mcp },
	{ "update", cmd_update }, { "learn", cmd_learn }, { "report", cmd_report },
	{ "oci-hook", cmd_oci },
};

/* libbpf's messages: only with --verbose. */
static int print_libbpf(enum libbpf_print_level level __attribute__((unused)), const char *fmt,
			va_list ap)
{
	/* Without -v the caller's one-line error, with its hint, says it all. */
	if (!arg.verbose)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

/*
 * Descriptors 0-2 closed by the caller: the first ones launch opens (a socket to init, say)
 * would take their numbers, and the job would get them as its standard streams.
 */
static void hold_stdio(void)
{
	for (int fd = 0; fd < 3; fd++)
		if (fcntl(fd, F_GETFD) < 0 && errno == EBADF) {
			int null = open("/dev/null", O_RDWR);

			if (null >= 0 && null != fd)
				close(null);
		}
}

int main(int argc, char **argv)
{
	hold_stdio();
	/*
	 * A fixed threshold: glibc otherwise raises it to the size of each large block freed,
	 * and the DNS proxy's buffers (half a MiB, mostly never touched) then come from the
	 * heap, zeroed by calloc page by page at every start; mapped, they are zero for free.
	 */
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
	libbpf_set_print(print_libbpf);
	options_init();
	/* A closed stderr must fail a write, not kill the launcher and leave the job unwatched. */
	signal(SIGPIPE, SIG_IGN);

	for (size_t i = 0; argc > 1 && i < ARRAY_SIZE(commands); i++)
		if (strcmp(argv[1], commands[i].name) == 0)
			return commands[i].run(argc - 1, argv + 1);
	return cmd_run(argc, argv);
}
