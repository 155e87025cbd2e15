#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Checks that the cgroup_skb programs of a BPF object call no task helper.

usage: skb_helpers.py OBJECT

Older kernels refuse those helpers to cgroup_skb programs (6.1's cg_skb_func_proto has none,
6.12's only bpf_get_current_pid_tgid): the programs would load on a new kernel and not on
Debian's. Follows the bpf-to-bpf calls and bpf_loop callbacks from each program's
entry, through llvm-objdump's disassembly and relocations. Prints one line per program;
exits 1 when one reaches a task helper.
"""
import re
import subprocess
import sys

# bpf_get_current_{pid_tgid,uid_gid,comm,cgroup_id,ancestor_cgroup_id,task,task_btf}
TASK_HELPERS = {14: "get_current_pid_tgid", 15: "get_current_uid_gid", 16: "get_current_comm",
                35: "get_current_task", 80: "get_current_cgroup_id",
                123: "get_current_ancestor_cgroup_id", 158: "get_current_task_btf"}
SECTIONS = ("cgroup_skb/ingress", "cgroup_skb/egress")


def objdump(*args):
    return subprocess.run(["llvm-objdump", *args], capture_output=True, text=True,
                          check=True).stdout


def main(obj):
    funcs = {}  # (section, byte offset) -> (name, size)
    for line in objdump("-t", obj).splitlines():
        m = re.match(r"([0-9a-f]+) \S+\s+F (\S+)\s+([0-9a-f]+) (\S+)", line)
        if m:
            funcs[(m[2], int(m[1], 16))] = (m[4], int(m[3], 16))
    insns = {}  # section -> {byte offset: [instruction bytes, relocation's symbol]}
    section = last = None
    for line in objdump("-d", "-r", obj).splitlines():
        m = re.match(r"Disassembly of section (\S+):", line)
        if m:
            section = m[1]
            insns[section] = {}
            continue
        m = re.match(r"\s*(\d+):\s+((?:[0-9a-f]{2}\s){8})", line)
        if m and section:
            last = int(m[1]) * 8
            insns[section][last] = [bytes.fromhex(re.sub(r"\s", "", m[2])), None]
            continue
        m = re.match(r"\s+[0-9a-f]+:\s+R_BPF_\S+\s+(\S+)", line)
        if m and section and last is not None:
            insns[section][last][1] = m[1]

    def walk(section, start, seen, helpers):
        if (section, start) in seen:
            return
        seen.add((section, start))
        name, size = funcs[(section, start)]
        for off in range(start, start + size, 8):
            if off not in insns[section]:
                continue
            code, reloc = insns[section][off]
            src = code[1] >> 4
            imm = int.from_bytes(code[4:8], "little", signed=True)
            if code[0] == 0x85 and src == 0:  # a helper
                helpers.setdefault(imm, set()).add(name)
            elif code[0] == 0x85 and src == 1:  # a bpf-to-bpf call
                if reloc:
                    walk(reloc, (imm + 1) * 8, seen, helpers)
                else:
                    walk(section, off + (imm + 1) * 8, seen, helpers)
            elif code[0] == 0x18 and src == 4 and reloc:  # a callback's address
                walk(reloc, imm, seen, helpers)

    status = 0
    for (section, start), (name, _) in sorted(funcs.items()):
        if section not in SECTIONS:
            continue
        helpers = {}
        walk(section, start, set(), helpers)
        bad = sorted(set(helpers) & set(TASK_HELPERS))
        print(f"{name}: helpers {' '.join(str(h) for h in sorted(helpers))}")
        for h in bad:
            print(f"{name}: calls bpf_{TASK_HELPERS[h]} (#{h}) in "
                  f"{', '.join(sorted(helpers[h]))}")
            status = 1
    return status


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1]))
