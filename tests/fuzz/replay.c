// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Replays one fuzz target's committed corpus without libFuzzer, for make unit under
 * ASan/UBSan: a "PASS" line per input (a crash or a sanitizer's abort fails the program).
 * FUZZ_NAME and FUZZ_CORPUS come from the Makefile.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int read_input(const char *path, uint8_t **ret, size_t *ret_len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	uint8_t *buf;
	size_t off = 0;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -1;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		close(fd);
		return -1;
	}
	while (off < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + off, (size_t)st.st_size - off);

		if (n <= 0)
			break;
		off += (size_t)n;
	}
	close(fd);
	*ret = buf;
	*ret_len = off;
	return 0;
}

int main(void)
{
	struct dirent **names;
	int n, i, replayed = 0;

	n = scandir(FUZZ_CORPUS, &names, NULL, alphasort);
	if (n < 0) {
		printf("FAIL %s: cannot read %s\n", FUZZ_NAME, FUZZ_CORPUS);
		return 1;
	}
	for (i = 0; i < n; i++) {
		char path[4096];
		uint8_t *data;
		size_t len;

		if (names[i]->d_name[0] != '.') {
			snprintf(path, sizeof(path), "%s/%s", FUZZ_CORPUS, names[i]->d_name);
			if (read_input(path, &data, &len) == 0) {
				LLVMFuzzerTestOneInput(data, len);
				free(data);
				printf("PASS %s/%s\n", FUZZ_NAME, names[i]->d_name);
				replayed++;
			}
		}
		free(names[i]);
	}
	free(names);
	if (replayed == 0) {
		printf("FAIL %s: %s holds no input\n", FUZZ_NAME, FUZZ_CORPUS);
		return 1;
	}
	fflush(stdout);
	return 0;
}
