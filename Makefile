# SPDX-License-Identifier: LGPL-2.1-or-later
# launch: build, test, demo and benchmarks. See README.md.

ARCH ?= $(shell uname -m)
BUILD ?= build
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
DATADIR ?= $(PREFIX)/share
MANDIR ?= $(DATADIR)/man
CC ?= cc
CLANG ?= clang
BPFTOOL ?= bpftool
PKG_CONFIG ?= pkg-config
SCDOC ?= scdoc

# The release; `launch --version` prints it with the BPF object's hash.
VERSION := $(shell cat VERSION)

LIBS_PKG := libbpf libelf zlib libcjson libcap sqlite3 openssl
WARN := -Wall -Wextra -Werror
# CFLAGS is the user's (optimisation, debug info, extra warnings): `make CFLAGS=-O0` replaces
# it, and LAUNCH_CFLAGS, which the build cannot do without, still applies after it.
CFLAGS ?= -O2 -g
# -Ilauncher: the launcher's includes name their folder ("lib/util.h"); -I.: "bpf/launch.h".
LAUNCH_CFLAGS := $(WARN) -std=gnu11 -D_GNU_SOURCE -I$(BUILD) -Ilauncher -I. -MMD -MP
# Evaluated once, when first used: after `deps` has installed pkg-config and the libraries.
PKG_CFLAGS = $(eval PKG_CFLAGS := $$(shell $(PKG_CONFIG) --cflags $(LIBS_PKG) 2>/dev/null))$(PKG_CFLAGS)
CJSON_LIBS = $(eval CJSON_LIBS := $$(shell $(PKG_CONFIG) --libs libcjson 2>/dev/null))$(CJSON_LIBS)
# libbpf, libelf, zlib and libcap are linked in statically (Debian's -dev packages ship the
# archives): the dynamic loader's work for them was a tenth of a millisecond per launch.
# STATIC_LIBS= links them dynamically: the Debian package does, so that a security update of
# zlib, libelf or libbpf reaches launch (Debian policy 4.13).
STATIC_LIBS ?= -lbpf -lelf -lz -lcap
LDLIBS += -Wl,-Bstatic $(STATIC_LIBS) -Wl,-Bdynamic \
	$(filter-out $(STATIC_LIBS),$(shell $(PKG_CONFIG) --libs $(LIBS_PKG) 2>/dev/null))

BPF_ARCH := $(subst x86_64,x86,$(subst aarch64,arm64,$(ARCH)))
# -fdebug-prefix-map: the object, and so the programs' version (bpf_version.h), does not depend
# on where the checkout is.
BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(BPF_ARCH) -I vmlinux/$(ARCH) -Ibpf $(WARN) \
	-fdebug-prefix-map=$(CURDIR)=. \
	-Wno-unused-parameter -MMD -MP

# maps.bpf.c defines what the others share; it must come first in the link.
BPF_SRCS := bpf/maps.bpf.c $(filter-out bpf/maps.bpf.c,$(wildcard bpf/*.bpf.c))
BPF_OBJS := $(patsubst bpf/%.bpf.c,$(BUILD)/bpf/%.bpf.o,$(BPF_SRCS))
SKELS := $(BUILD)/launch.skel.h $(BUILD)/bpf_version.h $(BUILD)/release.h

# Modules without libbpf: unit-tested on their own, with ASan/UBSan.
PURE_SRCS := $(addprefix launcher/, \
	lib/util.c lib/hashtable.c lib/sha256.c lib/dnswire.c lib/syscalls.c \
	policy/policy.c policy/policy_sections.c policy/allowlist.c policy/resolve.c \
	policy/limit.c policy/rules.c policy/inbound.c policy/image.c policy/tlshello.c \
	policy/policy_http.c policy/http_rules.c gateway/http.c \
	audit/audit.c audit/audit_writer.c audit/audit_syslog.c audit/audit_schema.c \
	audit/audit_ocsf.c audit/audit_ecs.c audit/audit_time.c \
	audit/refusal.c audit/learn.c audit/report.c \
	dns/dnsproxy.c dns/dnsproxy_names.c dns/dnsproxy_audit.c \
	sandbox/landlock.c sandbox/cgplan.c sandbox/jobenv.c sandbox/seccomp.c sandbox/kbtf.c \
	sandbox/mounthide.c sandbox/childmsg.c sandbox/reach.c \
	agent/mcp.c agent/mcp_requests.c agent/mcp_http_check.c agent/mcp_session_tool.c \
	agent/mcp_http_sessions.c agent/docscan.c)
# The gateway's decision on a request and its buffers (the rest of it is I/O, with OpenSSL).
PURE_SRCS += launcher/gateway/judge.c launcher/gateway/buf.c
SRCS := $(filter-out launcher/sandbox/init.c launcher/sandbox/init_mount.c,$(wildcard launcher/*.c launcher/*/*.c))
OBJS := $(patsubst launcher/%.c,$(BUILD)/obj/%.o,$(SRCS))
# The sandbox's init, exec'd by the launcher: what it runs and nothing of the launcher's. Built
# with musl where Debian's musl-tools is installed (make deps does): glibc's static start
# discovers the CPU's caches with some fifty cpuid instructions, each a VM exit on a guest (4.6 us
# on a Firecracker one), 0.25 ms of init's start; musl does no such discovery (docs/design.md,
# "Starting the job"). Without musl-gcc, glibc. Each in its own folder: a build never mixes them.
# Looked up once, when first used: after `deps` has installed it.
MUSL_GCC = $(eval MUSL_GCC := $$(shell command -v musl-gcc 2>/dev/null))$(MUSL_GCC)
INIT_LIBC = $(if $(MUSL_GCC),musl,glibc)
INIT_CC = $(if $(MUSL_GCC),$(MUSL_GCC),$(CC))
INIT_SRCS := sandbox/init sandbox/init_mount sandbox/reach sandbox/childmsg sandbox/mounthide lib/mountinfo sandbox/landlock \
	sandbox/seccomp policy/inbound lib/syscalls lib/util
INIT_OBJS = $(patsubst %,$(BUILD)/init-$(INIT_LIBC)/%.o,$(INIT_SRCS))

UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(BUILD)/unit/%,$(UNIT_SRCS))
SAN := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
# Each unit test links every pure module, built once per flavour: with the sanitizers for
# `make unit`, without them for `make valgrind`.
UNIT_PURE_OBJS := $(patsubst launcher/%.c,$(BUILD)/unit/obj/%.o,$(PURE_SRCS))
VG_PURE_OBJS := $(patsubst launcher/%.c,$(BUILD)/valgrind/obj/%.o,$(PURE_SRCS))
# Allocations that test_rules makes fail on purpose: the calls in the modules go through it.
UNIT_WRAP_test_rules := $(foreach f,malloc calloc realloc reallocarray strdup,-Wl,--wrap=$(f))

# The gateway's CA makes certificates with OpenSSL: its test alone links ca.c and libcrypto.
UNIT_LIBS_test_gateway_ca := -lssl -lcrypto

# A unit "test" that crashes on purpose: only tests/selftest/run uses it, to prove that the
# runners count a crash as a failure.
SELFTEST_BIN := $(BUILD)/selftest/crash

# Fuzzing (make fuzz): every tests/fuzz/fuzz_NAME.c is a libFuzzer target, linked with an
# archive of the pure modules built by clang with the fuzzer's coverage and ASan/UBSan, so
# that each pulls in only the objects it calls (a new target needs its module in PURE_SRCS
# and a corpus in tests/fuzz/corpus/fuzz_NAME/, nothing here). make unit replays each corpus
# without the fuzzer (tests/fuzz/replay.c) under gcc's sanitizers.
FUZZ_SRCS := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_NAMES := $(patsubst tests/fuzz/%.c,%,$(FUZZ_SRCS))
FUZZ_BINS := $(addprefix $(BUILD)/fuzz/,$(FUZZ_NAMES))
FUZZ_REPLAY_BINS := $(addprefix $(BUILD)/fuzz-replay/,$(FUZZ_NAMES))
FUZZ_SAN := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
FUZZ_PURE_OBJS := $(patsubst launcher/%.c,$(BUILD)/fuzz/obj/%.o,$(PURE_SRCS))
# Seconds each target runs, and the longest input it tries (a head is at most 32 KiB; most
# of what is interesting is far shorter).
FUZZ_SECONDS ?= 60
FUZZ_MAX_LEN ?= 4096

HELPER_SRCS := $(wildcard tests/helpers/*.c)
HELPER_BINS := $(patsubst tests/helpers/%.c,$(BUILD)/helpers/%,$(HELPER_SRCS))

DEB_PKGS := clang llvm make gcc pkg-config libbpf-dev bpftool libelf-dev zlib1g-dev \
	libcjson-dev libcap-dev iproute2 util-linux procps valgrind clang-format dnsmasq-base \
	python3 liburing-dev bind9-dnsutils shellcheck scdoc strace logrotate rsyslog
# search_docs' index (launcher/agent/docindex.c): SQLite's FTS5, in memory.
DEB_PKGS += libsqlite3-dev
# launch mcp --http (launcher/agent/mcp_http.c): a well-kept HTTP/1.1 server library, a thread
# per connection, rather than an HTTP server of our own. Its header only at build time: the
# library is opened at run time by --http alone (mcp_http_load says why).
DEB_PKGS += libmicrohttpd-dev
# The agent example, its demo and the MCP server's end-to-end test: Node.js (18 on Debian 12)
# and a throwaway CA. Debian's npm only when no npm is there: NodeSource's nodejs carries its
# own and conflicts with Debian's.
DEB_PKGS += nodejs openssl $(if $(shell command -v npm),,npm)
# The HTTPS gateway (launcher/gateway/): TLS both ways and its CA, with OpenSSL (-lssl -lcrypto,
# linked dynamically so that Debian's security updates of OpenSSL reach launch).
DEB_PKGS += libssl-dev
# The start-up peer that make bench and docs/design.md measure launch against.
DEB_PKGS += bubblewrap
# The HTTPS gateway's peers in make bench (tests/bench/gateway.py): mitmproxy, and squid built
# with OpenSSL for ssl-bump. Bench peers only: launch never runs them, and the bench starts them
# in its own namespace with their files in a temporary folder (no daemon of the packages runs
# on a machine without systemd; the bench stops only the processes it started).
DEB_PKGS += mitmproxy squid-openssl
# The libc the sandbox's init is linked with (INIT_OBJS).
DEB_PKGS += musl-tools
# make deb and its install test.
DEB_PKGS += debhelper lintian dpkg-dev
# launch oci-hook's tests: podman with runc (crun refuses a hybrid cgroup host), and a static
# busybox for the containers' root file system.
DEB_PKGS += podman runc busybox-static
# tests/helpers/tls_evade (the SNI check's tests): OpenSSL writes its ClientHello into a memory
# BIO and the helper sends those bytes by the path under test.
DEB_PKGS += libssl-dev
# make lint's check of the Kubernetes manifests (.ci/k8s_check.py): PyYAML.
DEB_PKGS += python3-yaml

# libFuzzer's runtime (clang -fsanitize=fuzzer), for make fuzz.
DEB_PKGS += libclang-rt-14-dev

# Compiler-made dependency files: editing any header rebuilds what includes it.
DEPFILES := $(wildcard $(foreach d,obj bpf unit/obj valgrind/obj helpers selftest init-glibc \
	init-musl fuzz fuzz/obj fuzz-replay,$(BUILD)/$(d)/*.d $(BUILD)/$(d)/*/*.d))

.PHONY: all deps vmlinux install deb test-deb test-kernels test unit integration valgrind demo demo-mini bench bench-gateway bench-summary soak clean format lint \
	helpers man fuzz
# A recipe that fails leaves no half-written target that a later make would take as done.
.DELETE_ON_ERROR:

all: $(BUILD)/launch $(BUILD)/launch-init helpers man

# Every directory of the build waits for `deps`, and so does everything built in it: on a
# fresh machine the first make installs the compilers and libraries before using them.
$(BUILD) $(BUILD)/obj $(BUILD)/unit $(BUILD)/unit/obj $(BUILD)/valgrind/obj $(BUILD)/helpers \
$(BUILD)/bpf $(BUILD)/selftest $(BUILD)/fuzz/obj $(BUILD)/fuzz-replay: | deps
	mkdir -p $@

# No CO-RE: a relocation would have libbpf read and parse the kernel's whole BTF at the first
# launch of a build. The programs touch UAPI contexts; unix.bpf.c's two kernel-internal fields
# come from the loader (kbtf.c).
$(BUILD)/bpf/%.bpf.o: bpf/%.bpf.c vmlinux/$(ARCH)/vmlinux.h | $(BUILD)/bpf
	$(CLANG) $(BPF_CFLAGS) -DBPF_NO_PRESERVE_ACCESS_INDEX -c $< -o $@

# Every hook group is linked into one object, so the programs share their maps. The list of
# sources is a prerequisite too: a removed .bpf.c relinks the object without it.
$(BUILD)/bpf/sources: FORCE | $(BUILD)/bpf
	@echo '$(BPF_SRCS)' | cmp -s - $@ || echo '$(BPF_SRCS)' > $@

$(BUILD)/launch.bpf.o: $(BPF_OBJS) $(BUILD)/bpf/sources
	$(BPFTOOL) gen object $@ $(BPF_OBJS)

.PHONY: FORCE
FORCE:

$(BUILD)/launch.skel.h: $(BUILD)/launch.bpf.o
	$(BPFTOOL) gen skeleton $< name launch_bpf > $@.tmp && mv $@.tmp $@

# The programs are loaded once per host and reused by later launches of the same build only:
# the holder cgroup is named after the object's hash (docs/design.md).
$(BUILD)/bpf_version.h: $(BUILD)/launch.bpf.o
	printf '#define LAUNCH_BPF_VERSION "%s"\n' "$$(sha256sum $< | cut -c1-16)" > $@.tmp && \
		mv $@.tmp $@

$(BUILD)/release.h: VERSION | $(BUILD)
	printf '#define LAUNCH_RELEASE "%s"\n' "$(VERSION)" > $@.tmp && mv $@.tmp $@

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

# launch mcp's prepared runner, a JavaScript file, as a C string (MCP_RUN_WARM_RUNNER).
$(BUILD)/mcp_runner.h: launcher/agent/mcp_runner.mjs | $(BUILD)
	{ echo 'static const char MCP_RUN_WARM_RUNNER[] ='; \
		sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/\t"/' -e 's/$$/\\n"/' $<; \
		echo '\t;'; } > $@.tmp && mv $@.tmp $@

# The generated headers come first (order only: the .d files name who includes them).
$(BUILD)/obj/%.o: launcher/%.c | $(BUILD)/obj $(SKELS) $(BUILD)/syscall_names.h \
		$(BUILD)/mcp_runner.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LAUNCH_CFLAGS) $(PKG_CFLAGS) -c $< -o $@

# Every symbol bound at start and the GOT read-only after (full RELRO); relative relocations
# packed (DT_RELR, glibc 2.36): 1,895 of them took 45 KiB the loader read at every start, 392
# bytes now. Both together: 0.4-0.5 ms less per launch here (docs/design.md, "Start-up cost").
LAUNCH_LDFLAGS := -Wl,-z,relro,-z,now -Wl,-z,pack-relative-relocs

$(BUILD)/launch: $(OBJS)
	$(CC) $(CFLAGS) $(LAUNCH_CFLAGS) $(LDFLAGS) $(LAUNCH_LDFLAGS) $^ -o $@ $(LDLIBS)

# Static (no loader, no libraries to map): exec'd at every launch, its start is what a
# sandbox's init costs; unused sections dropped. With glibc, position-independent and its
# 2,498 relative relocations packed (DT_RELR): 2.05 -> 1.88 ms to exec and exit here. With
# musl, at a fixed address: musl 1.2.3 cannot pack them, and relocating cost init 0.1 ms of
# the 0.13 ms musl saves. Init reads nothing from the job; it takes signals and reaps.
INIT_LDFLAGS_glibc := -static-pie -Wl,--gc-sections -Wl,-z,pack-relative-relocs
INIT_LDFLAGS_musl := -static -Wl,--gc-sections
# musl's headers have no kernel ones: the kernel's own (linux-libc-dev), linked in.
MULTIARCH = $(shell $(CC) -print-multiarch)
INIT_CFLAGS_musl = -idirafter $(BUILD)/init-musl/include
INIT_CFLAGS_glibc =

$(BUILD)/init-glibc $(BUILD)/init-musl: | deps
	mkdir -p $@

$(BUILD)/init-musl/include: | $(BUILD)/init-musl
	mkdir -p $@.tmp && ln -sfn /usr/include/linux $@.tmp/linux && \
		ln -sfn /usr/include/asm-generic $@.tmp/asm-generic && \
		ln -sfn /usr/include/$(MULTIARCH)/asm $@.tmp/asm && mv -T $@.tmp $@

# What each libc's objects wait for: their folder, with musl the kernel's headers in it.
INIT_DIR_musl = $(BUILD)/init-musl/include
INIT_DIR_glibc = $(BUILD)/init-glibc

$(BUILD)/init-$(INIT_LIBC)/%.o: launcher/%.c | $(INIT_DIR_$(INIT_LIBC)) $(SKELS) \
		$(BUILD)/syscall_names.h
	@mkdir -p $(@D)
	$(INIT_CC) $(CFLAGS) $(LAUNCH_CFLAGS) $(INIT_CFLAGS_$(INIT_LIBC)) -c $< -o $@

$(BUILD)/launch-init: $(INIT_OBJS)
	$(INIT_CC) $(CFLAGS) $(LAUNCH_CFLAGS) $(LDFLAGS) $(INIT_LDFLAGS_$(INIT_LIBC)) $^ -o $@

$(BUILD)/unit/obj/%.o: launcher/%.c | $(BUILD)/unit/obj $(BUILD)/syscall_names.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LAUNCH_CFLAGS) -O1 $(SAN) $(PKG_CFLAGS) -c $< -o $@

$(BUILD)/unit/obj/%.o: tests/unit/%.c | $(BUILD)/unit/obj $(BUILD)/syscall_names.h
	$(CC) $(CFLAGS) $(LAUNCH_CFLAGS) -O1 $(SAN) $(PKG_CFLAGS) -c $< -o $@

$(UNIT_BINS): $(BUILD)/unit/%: $(BUILD)/unit/obj/%.o $(UNIT_PURE_OBJS) | $(BUILD)/unit
	$(CC) $(CFLAGS) $(LAUNCH_CFLAGS) -O1 $(SAN) $(LDFLAGS) $(UNIT_WRAP_$*) $^ -o $@ \
		$(CJSON_LIBS) $(UNIT_LIBS_$*)

# (after `all`: a rule above it would be the default goal)
$(BUILD)/unit/test_gateway_ca: $(BUILD)/unit/obj/gateway/ca.o
$(BUILD)/unit/test_gateway_ca.valgrind: $(BUILD)/valgrind/obj/gateway/ca.o

$(BUILD)/valgrind/obj/%.o: launcher/%.c | $(BUILD)/valgrind/obj $(BUILD)/syscall_names.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LAUNCH_CFLAGS) $(PKG_CFLAGS) -c $< -o $@

$(BUILD)/valgrind/obj/%.o: tests/unit/%.c | $(BUILD)/valgrind/obj
	$(CC) $(CFLAGS) $(LAUNCH_CFLAGS) $(PKG_CFLAGS) -c $< -o $@

$(UNIT_BINS:=.valgrind): $(BUILD)/unit/%.valgrind: $(BUILD)/valgrind/obj/%.o $(VG_PURE_OBJS) \
		| $(BUILD)/unit
	$(CC) $(CFLAGS) $(LAUNCH_CFLAGS) $(LDFLAGS) $(UNIT_WRAP_$*) $^ -o $@ $(CJSON_LIBS) \
		$(UNIT_LIBS_$*)

$(BUILD)/fuzz/obj/%.o: launcher/%.c | $(BUILD)/fuzz/obj $(BUILD)/syscall_names.h
	@mkdir -p $(@D)
	$(CLANG) -g -O1 $(LAUNCH_CFLAGS) -fsanitize=fuzzer-no-link $(FUZZ_SAN) $(PKG_CFLAGS) \
		-c $< -o $@

$(BUILD)/fuzz/libpure.a: $(FUZZ_PURE_OBJS)
	rm -f $@ && ar rcs $@ $^

$(FUZZ_BINS): $(BUILD)/fuzz/%: tests/fuzz/%.c $(BUILD)/fuzz/libpure.a
	$(CLANG) -g -O1 $(LAUNCH_CFLAGS) -fsanitize=fuzzer $(FUZZ_SAN) $(PKG_CFLAGS) $< \
		$(BUILD)/fuzz/libpure.a -o $@ $(CJSON_LIBS)

$(FUZZ_REPLAY_BINS): $(BUILD)/fuzz-replay/%: tests/fuzz/%.c tests/fuzz/replay.c \
		$(UNIT_PURE_OBJS) | $(BUILD)/fuzz-replay
	$(CC) $(CFLAGS) $(LAUNCH_CFLAGS) -O1 $(SAN) $(LDFLAGS) -DFUZZ_NAME='"$*"' \
		-DFUZZ_CORPUS='"tests/fuzz/corpus/$*"' tests/fuzz/$*.c tests/fuzz/replay.c \
		$(UNIT_PURE_OBJS) -o $@ $(CJSON_LIBS)

# Each target for FUZZ_SECONDS over its committed corpus; what it finds new goes to
# $(BUILD)/fuzz/corpus/NAME (the first, writable, directory), a crash to
# $(BUILD)/fuzz/crash/NAME-*, and make fuzz fails.
fuzz: $(FUZZ_BINS)
	@for t in $(FUZZ_NAMES); do \
		mkdir -p $(BUILD)/fuzz/corpus/$$t $(BUILD)/fuzz/crash || exit 1; \
		dict=; [ -f tests/fuzz/$$t.dict ] && dict=-dict=tests/fuzz/$$t.dict; \
		echo "fuzz: $$t for $(FUZZ_SECONDS) s"; \
		nice $(BUILD)/fuzz/$$t -max_total_time=$(FUZZ_SECONDS) -max_len=$(FUZZ_MAX_LEN) \
			-print_final_stats=1 -artifact_prefix=$(BUILD)/fuzz/crash/$$t- $$dict \
			$(BUILD)/fuzz/corpus/$$t tests/fuzz/corpus/$$t \
			>$(BUILD)/fuzz/$$t.log 2>&1 || { tail -40 $(BUILD)/fuzz/$$t.log; exit 1; }; \
		grep -E '^(stat::number_of_executed_units|stat::peak_rss_mb|#[0-9]+ +DONE)' \
			$(BUILD)/fuzz/$$t.log; \
	done

$(SELFTEST_BIN): tests/selftest/crash.c | $(BUILD)/selftest
	$(CC) $(CFLAGS) $(LAUNCH_CFLAGS) -O1 $(SAN) $(LDFLAGS) $< -o $@

$(BUILD)/helpers/%: tests/helpers/%.c | $(BUILD)/helpers
	$(CC) $(CFLAGS) $(LAUNCH_CFLAGS) $(LDFLAGS) $< -o $@ \
		$(if $(filter iouring_connect tls_evade,$*),-luring) \
		$(if $(filter tls_evade,$*),-lssl -lcrypto) -lpthread

# The gateway alone (its tests and bench): the gateway's objects and the policy's below them.
# Sources and objects only: the .d file adds the headers to the prerequisites.
GATEWAY_RUN_OBJS = $(patsubst launcher/%.c,$(BUILD)/obj/%.o,$(wildcard launcher/gateway/*.c \
	launcher/policy/*.c launcher/lib/*.c))
$(BUILD)/helpers/gateway_run: tests/helpers/gateway_run.c $(GATEWAY_RUN_OBJS) | $(BUILD)/helpers
	$(CC) $(CFLAGS) $(LAUNCH_CFLAGS) $(PKG_CFLAGS) $(LDFLAGS) $(filter %.c %.o,$^) -o $@ \
		$(LDLIBS) -lpthread

# LD_PRELOAD libraries that make one call fail, for tests of launch's own error paths.
PRELOAD_SRCS := $(wildcard tests/helpers/preload/*.c)
PRELOAD_LIBS := $(patsubst tests/helpers/preload/%.c,$(BUILD)/helpers/%.so,$(PRELOAD_SRCS))

$(BUILD)/helpers/%.so: tests/helpers/preload/%.c tests/helpers/preload/preload.h | $(BUILD)/helpers
	$(CC) $(CFLAGS) $(LAUNCH_CFLAGS) -fPIC -shared $(LDFLAGS) $< -o $@

helpers: $(HELPER_BINS) $(PRELOAD_LIBS)

# launch(1) and launch-init(1), from docs/*.scd.
$(BUILD)/%.1: docs/%.1.scd | $(BUILD)
	$(SCDOC) < $< > $@

man: $(BUILD)/launch.1 $(BUILD)/launch-init.1

# Installs the Debian packages of DEB_PKGS that are missing, and says nothing when none is:
# one dpkg-query for the lot. Every build and test target runs it first.
# NO_DEPS=1 (the Debian package's build, whose Build-Depends did it) skips it.
deps:
	@[ -z "$(NO_DEPS)" ] || exit 0; \
	if ! command -v dpkg-query >/dev/null; then \
		echo "make deps: no dpkg here; install by hand: $(DEB_PKGS)" >&2; exit 0; fi; \
	installed=" $$(dpkg-query -W -f='$${db:Status-Abbrev}$${Package}\n' $(DEB_PKGS) \
		2>/dev/null | sed -n 's/^ii *//p' | tr '\n' ' ')"; \
	missing=; for p in $(DEB_PKGS); do case "$$installed" in *" $$p "*) ;; \
		*) missing="$$missing $$p" ;; esac; done; \
	[ -z "$$missing" ] && exit 0; \
	if [ "$$(id -u)" != 0 ]; then \
		echo "make deps: missing Debian packages:$$missing (run as root: sudo make deps)" >&2; \
		exit 1; fi; \
	echo "make deps: installing$$missing"; \
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing \
		>/dev/null

vmlinux: | deps
	mkdir -p vmlinux/$(ARCH)
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > vmlinux/$(ARCH)/vmlinux.h

# The policies, for --policy NAME (after /etc/launch/policies), with the binary and the manual page.
install: $(BUILD)/launch $(BUILD)/launch-init $(BUILD)/launch.1 $(BUILD)/launch-init.1
	install -D -m 0755 $(BUILD)/launch $(DESTDIR)$(BINDIR)/launch
	install -D -m 0755 $(BUILD)/launch-init $(DESTDIR)$(BINDIR)/launch-init
	install -D -m 0644 $(BUILD)/launch.1 $(DESTDIR)$(MANDIR)/man1/launch.1
	install -D -m 0644 $(BUILD)/launch-init.1 $(DESTDIR)$(MANDIR)/man1/launch-init.1
	install -d $(DESTDIR)$(DATADIR)/launch/policies
	install -m 0644 policies/*.json $(DESTDIR)$(DATADIR)/launch/policies/
	install -d $(DESTDIR)$(DATADIR)/containers/oci/hooks.d
	sed 's|"/usr/bin/launch"|"$(BINDIR)/launch"|' contrib/oci/launch-hook.json \
		>$(DESTDIR)$(DATADIR)/containers/oci/hooks.d/launch.json
	chmod 0644 $(DESTDIR)$(DATADIR)/containers/oci/hooks.d/launch.json

unit: $(UNIT_BINS) $(FUZZ_REPLAY_BINS) $(SELFTEST_BIN)
	@BUILD=$(BUILD) tests/run-unit $(UNIT_BINS) $(FUZZ_REPLAY_BINS) tests/selftest/run

valgrind: $(UNIT_BINS:=.valgrind)
	@for t in $^; do valgrind -q --error-exitcode=1 --leak-check=full $$t >/dev/null || exit 1; done
	@echo "valgrind: clean"

# launch mcp's end-to-end test: the MCP SDK's client, and tsx and stripe for the tool's code,
# as the lock file pins them (the tests run in a network namespace without the registry).
MCP_TEST_MODULES := tests/mcp/node_modules/.package-lock.json
$(MCP_TEST_MODULES): tests/mcp/package.json tests/mcp/package-lock.json | deps
	cd tests/mcp && npm ci --no-audit --no-fund --loglevel=error

# test_sni's runs of the OpenAI and Anthropic examples under the SNI check, and
# test_gateway_sdk's of all three under the gateway: their own modules, as their lock files pin
# them.
EXAMPLE_TEST_MODULES := examples/openai-agent/node_modules/.package-lock.json \
	examples/anthropic-agent/node_modules/.package-lock.json \
	examples/stripe-agent/node_modules/.package-lock.json
$(EXAMPLE_TEST_MODULES): examples/%/node_modules/.package-lock.json: examples/%/package.json \
		examples/%/package-lock.json | deps
	cd examples/$* && npm ci --no-audit --no-fund --loglevel=error

integration: all $(MCP_TEST_MODULES) $(EXAMPLE_TEST_MODULES)
	@BUILD=$(BUILD) tests/integration/run

# One line at the end: "N passed, N failed".
test: all $(UNIT_BINS) $(FUZZ_REPLAY_BINS) $(SELFTEST_BIN) $(MCP_TEST_MODULES) \
	$(EXAMPLE_TEST_MODULES)
	@BUILD=$(BUILD) tests/run $(UNIT_BINS) $(FUZZ_REPLAY_BINS)

# DEMO=openai or DEMO=anthropic: the same scenario with that provider's SDK.
DEMO ?= stripe
demo: all
	@tests/demo $(DEMO)

# The smaller demo: a Python socket job under policies/demo.json.
demo-mini: all
	@tests/demo-mini

# The fault tests at length: 200 launchers SIGKILLed at random moments, 500 launches beside
# launch gc loops, 10,000 launch mcp calls 4 at a time with the server's RSS and descriptors
# reported every 1,000 (make test runs short forms of all three).
soak: all $(MCP_TEST_MODULES)
	@IT_GC_KILLS=200 IT_GC_LAUNCHES=500 IT_TEST_TIMEOUT_S=900 tests/integration/run '^gc_'
	@IT_MCP_SOAK_CALLS=10000 IT_TEST_TIMEOUT_S=7200 tests/integration/run '^mcp_soak$$'

# The Debian package, built from the tree's files (not the ignored ones) in a copy under
# $(BUILD)/deb, and checked by lintian: no error, no warning (debian/ justifies any override).
DEB_FILE := $(BUILD)/deb/launch_$(VERSION)_$(shell dpkg --print-architecture 2>/dev/null).deb
deb: | deps
	rm -rf $(BUILD)/deb && mkdir -p $(BUILD)/deb/src
	git ls-files -z --cached --others --exclude-standard | xargs -0 cp -P --parents -t $(BUILD)/deb/src
	cd $(BUILD)/deb/src && dpkg-buildpackage -us -uc -b >../build.log 2>&1 || \
		{ tail -30 ../build.log; exit 1; }
	lintian --fail-on error,warning --suppress-tags-from-file /dev/null $(DEB_FILE)
	@echo "make deb: $(DEB_FILE)"

# Installs the package on this machine, runs a confined job from the installed paths, purges
# it and checks that nothing is left. Root; refuses to replace a launch installed otherwise.
test-deb: deb
	@DEB=$(DEB_FILE) BUILD=$(BUILD) tests/deb/run

# Debian's own kernels (bookworm's 6.1, bookworm-backports' 6.12) booted under qemu with this
# build, the kernel suite in each (tests/kernels/run; packages cached in /var/cache/launch-kernels).
test-kernels: all
	@BUILD=$(BUILD) tests/kernels/run

bench: all
	@tests/bench/run

# The HTTPS gateway against the same stand-in reached directly and through mitmproxy and squid
# with ssl-bump (tests/bench/gateway.py; GW_BENCH_PEERS=0: without the peers), in a network
# namespace of its own.
bench-gateway: all
	@BUILD=$(BUILD) unshare --net -- python3 tests/bench/gateway.py

# The start-up and per-call figures alone (a few minutes): tests/bench/work/summary.md.
bench-summary: all
	@BENCH_SUMMARY=1 tests/bench/run

C_FILES = $(wildcard bpf/*.c bpf/*.h launcher/*.c launcher/*.h launcher/*/*.c launcher/*/*.h \
	tests/unit/*.c tests/unit/*.h tests/fuzz/*.c \
	tests/helpers/*.c tests/helpers/*.h tests/helpers/preload/*.c tests/helpers/preload/*.h tests/selftest/*.c \
	tests/bench/*.c)

format: | deps
	clang-format -i $(C_FILES)

# What CI checks besides the tests: shellcheck on every shell script, clang-format on C, the
# layering, and the Kubernetes manifests.
lint: | deps
	@.ci/lint

clean:
	rm -rf $(BUILD)

-include $(DEPFILES)
