# SPDX-License-Identifier: LGPL-2.1-or-later
# launch: build, test, demo and benchmarks. See README.md.

ARCH ?= $(shell uname -m)
BUILD ?= build
PREFIX ?= /usr/local
CC ?= cc
CLANG ?= clang
BPFTOOL ?= bpftool
PKG_CONFIG ?= pkg-config

LIBS_PKG := libbpf libelf zlib libcjson libcap
WARN := -Wall -Wextra -Werror
CFLAGS ?= -O2 -g
CFLAGS += $(WARN) -std=gnu11 -D_GNU_SOURCE -I$(BUILD) -Ilauncher
# libbpf, libelf, zlib and libcap are linked in statically (Debian's -dev packages ship the
# archives): the dynamic loader's work for them was a tenth of a millisecond per launch.
STATIC_LIBS := -lbpf -lelf -lz -lcap
LDLIBS += -Wl,-Bstatic $(STATIC_LIBS) -Wl,-Bdynamic \
	$(filter-out $(STATIC_LIBS),$(shell $(PKG_CONFIG) --libs $(LIBS_PKG) 2>/dev/null))

BPF_ARCH := $(subst x86_64,x86,$(subst aarch64,arm64,$(ARCH)))
# -fdebug-prefix-map: the object, and so the programs' version (bpf_version.h), does not depend
# on where the checkout is.
BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(BPF_ARCH) -I vmlinux/$(ARCH) -Ibpf $(WARN) \
	-fdebug-prefix-map=$(CURDIR)=. \
	-Wno-unused-parameter

# maps.bpf.c defines what the others share; it must come first in the link.
BPF_SRCS := bpf/maps.bpf.c $(filter-out bpf/maps.bpf.c,$(wildcard bpf/*.bpf.c))
BPF_OBJS := $(patsubst bpf/%.bpf.c,$(BUILD)/bpf/%.bpf.o,$(BPF_SRCS))
SKELS := $(BUILD)/launch.skel.h $(BUILD)/bpf_version.h

# Modules without libbpf: unit-tested on their own, with ASan/UBSan.
PURE_SRCS := launcher/policy.c launcher/allowlist.c launcher/resolve.c launcher/dns.c \
	launcher/audit.c launcher/dnsproxy.c launcher/landlock.c launcher/limit.c \
	launcher/syscalls.c launcher/inbound.c
SRCS := $(wildcard launcher/*.c)
OBJS := $(patsubst launcher/%.c,$(BUILD)/obj/%.o,$(SRCS))

UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(BUILD)/unit/%,$(UNIT_SRCS))
SAN := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all

HELPER_SRCS := $(wildcard tests/helpers/*.c)
HELPER_BINS := $(patsubst tests/helpers/%.c,$(BUILD)/helpers/%,$(HELPER_SRCS))

DEB_PKGS := clang llvm make gcc pkg-config libbpf-dev bpftool libelf-dev zlib1g-dev \
	libcjson-dev libcap-dev iproute2 util-linux procps valgrind clang-format dnsmasq-base \
	python3 liburing-dev bind9-dnsutils

.PHONY: all deps vmlinux install test unit integration valgrind demo bench soak clean format helpers

all: $(BUILD)/launch helpers

$(BUILD) $(BUILD)/obj $(BUILD)/unit $(BUILD)/helpers $(BUILD)/bpf:
	mkdir -p $@

# Only unix.bpf.c reads kernel-internal structs (CO-RE); the others touch UAPI contexts, whose
# relocations libbpf would otherwise resolve against the kernel's BTF on every launch.
BPF_CORE_OBJS := unix
$(BUILD)/bpf/%.bpf.o: bpf/%.bpf.c $(wildcard bpf/*.h) vmlinux/$(ARCH)/vmlinux.h | $(BUILD)/bpf
	$(CLANG) $(BPF_CFLAGS) $(if $(filter $(BPF_CORE_OBJS),$*),,-DBPF_NO_PRESERVE_ACCESS_INDEX) \
		-c $< -o $@

# Every hook group is linked into one object, so the programs share their maps.
$(BUILD)/launch.bpf.o: $(BPF_OBJS)
	$(BPFTOOL) gen object $@ $^

$(BUILD)/launch.skel.h: $(BUILD)/launch.bpf.o
	$(BPFTOOL) gen skeleton $< name launch_bpf > $@.tmp && mv $@.tmp $@

# The programs are loaded once per host and reused by later launches of the same build only:
# the holder cgroup is named after the object's hash (docs/design.md).
$(BUILD)/bpf_version.h: $(BUILD)/launch.bpf.o
	printf '#define LAUNCH_BPF_VERSION "%s"\n' "$$(sha256sum $< | cut -c1-16)" > $@.tmp && \
		mv $@.tmp $@

# System call names for the audit log, from the uapi headers: each ABI's table is indexed by
# its own numbers (x32's without their bit 30).
SYSCALL_TABLES := SYSCALLS_NATIVE:asm/unistd.h
ifeq ($(ARCH),x86_64)
SYSCALL_TABLES += SYSCALLS_I386:asm/unistd_32.h SYSCALLS_X32:asm/unistd_x32.h
endif
$(BUILD)/syscall_names.h: Makefile | $(BUILD)
	for t in $(SYSCALL_TABLES); do \
		printf '#include <%s>\n' "$${t#*:}" | $(CC) -E -dM -x c - | \
		awk -v name="$${t%%:*}" 'BEGIN { print "static const char *const " name "[] = {" } \
			$$1 == "#define" && $$2 ~ /^__NR_/ { v = $$0; sub(/^.*\+ */, "", v); \
				sub(/^#define [^ ]* /, "", v); sub(/\)$$/, "", v); \
				if (v ~ /^[0-9]+$$/) print "\t[" v "] = \"" substr($$2, 6) "\"," } \
			END { print "};" }' || exit 1; \
	done > $@.tmp && mv $@.tmp $@

$(BUILD)/obj/%.o: launcher/%.c $(wildcard launcher/*.h) bpf/launch.h $(SKELS) \
		$(BUILD)/syscall_names.h | $(BUILD)/obj
	$(CC) $(CFLAGS) $(shell $(PKG_CONFIG) --cflags $(LIBS_PKG) 2>/dev/null) -c $< -o $@

$(BUILD)/launch: $(OBJS)
	$(CC) $(CFLAGS) $^ -o $@ $(LDLIBS)

$(BUILD)/unit/%: tests/unit/%.c tests/unit/test.h $(PURE_SRCS) $(wildcard launcher/*.h) \
		$(BUILD)/syscall_names.h | $(BUILD)/unit
	$(CC) $(CFLAGS) -O1 $(SAN) $< $(PURE_SRCS) -o $@ $(shell $(PKG_CONFIG) --libs libcjson)

$(BUILD)/unit/%.valgrind: tests/unit/%.c tests/unit/test.h $(PURE_SRCS) \
		$(BUILD)/syscall_names.h | $(BUILD)/unit
	$(CC) $(CFLAGS) $< $(PURE_SRCS) -o $@ $(shell $(PKG_CONFIG) --libs libcjson)

$(BUILD)/helpers/%: tests/helpers/%.c tests/helpers/helpers.h | $(BUILD)/helpers
	$(CC) $(CFLAGS) $< -o $@ $(if $(filter iouring_connect,$*),-luring) -lpthread

helpers: $(HELPER_BINS)

# Installs every build and test dependency; does nothing when they are present.
deps:
	@missing=$$(for p in $(DEB_PKGS); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | \
		grep -q '^install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "installing:" $$missing; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	fi

vmlinux:
	mkdir -p vmlinux/$(ARCH)
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > vmlinux/$(ARCH)/vmlinux.h

install: $(BUILD)/launch
	install -D -m 0755 $(BUILD)/launch $(DESTDIR)$(PREFIX)/bin/launch

unit: $(UNIT_BINS)
	@tests/run-unit $(UNIT_BINS)

valgrind: $(UNIT_BINS:=.valgrind)
	@for t in $^; do valgrind -q --error-exitcode=1 --leak-check=full $$t >/dev/null || exit 1; done
	@echo "valgrind: clean"

integration: all
	@tests/integration/run

# One line at the end: "N passed, N failed".
test: all $(UNIT_BINS)
	@tests/run $(UNIT_BINS)

demo: all
	@tests/demo

# The fault tests at length: 200 launchers SIGKILLed at random moments, 500 launches beside
# launch gc loops (make test runs short forms of both).
soak: all
	@IT_GC_KILLS=200 IT_GC_LAUNCHES=500 IT_TEST_TIMEOUT_S=900 tests/integration/run '^gc_'

bench: all
	@tests/bench/run

format:
	clang-format -i bpf/*.c bpf/*.h launcher/*.c launcher/*.h tests/unit/*.c tests/unit/*.h \
		tests/helpers/*.c tests/helpers/*.h

clean:
	rm -rf $(BUILD)
