# shellcheck shell=bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# What tests/run and tests/run-unit share: run one test program and count its results. A
# program counts as failed when it prints a FAIL line, exits non-zero (a crash or a sanitizer
# abort included), or prints no PASS or FAIL line at all.

RUNNER_LOG=$(mktemp) || exit 1
trap 'rm -f "$RUNNER_LOG"' EXIT

# runner_run NAME COMMAND...: its output goes to the terminal as it comes, and to the log.
runner_run() {
	local name=$1 out status why=

	shift
	out=$(mktemp) || return 1
	"$@" 2>&1 | tee "$out"
	status=${PIPESTATUS[0]}
	if [ "$status" -gt 128 ]; then
		why="killed by signal $((status - 128)) ($(kill -l "$((status - 128))" 2>/dev/null))"
	elif [ "$status" -ne 0 ]; then
		why="exited $status"
	elif ! grep -qE '^(PASS|FAIL) ' "$out"; then
		why="printed no PASS or FAIL line"
	fi
	[ -z "$why" ] || echo "FAIL $name: $why" | tee -a "$out"
	cat "$out" >>"$RUNNER_LOG"
	rm -f "$out"
}

# Prints "N passed, N failed"; fails when anything failed or nothing passed.
runner_summary() {
	local passed failed

	passed=$(grep -c '^PASS ' "$RUNNER_LOG")
	failed=$(grep -c '^FAIL ' "$RUNNER_LOG")
	echo "$passed passed, $failed failed"
	[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
}
