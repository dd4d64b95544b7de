#!/usr/bin/env python3
"""Measures what each build choice of cmake/BuildSpeed.cmake costs or saves,
on a fixed sample of the tree's translation units and links, without
rebuilding the tree once per choice (a cold build is ~half an hour of CPU
here). Reads BUILD/compile_commands.json and BUILD/build.ninja of a Release
build with HBMSIM_PCH=ON, compiles each sampled file under each variant, and
prints the CPU seconds (user + sys of the compiler) per variant, alternating
the variants in rounds so a change in the machine's load hits all alike.

  scripts/compile-cost.py [--build build] [--rounds 2]

Variants (compile): `release` is the tree's own command (-O2, precompiled
header); `no-pch` drops the header; `O3` is CMake's stock Release level;
`g` adds full debug info (RelWithDebInfo's -g); `g1` line tables only.
Links: the hbmsim binary and one test program with mold, lld and GNU ld.
"""
import argparse
import json
import os
import re
import shlex
import subprocess
import resource

SAMPLE = [  # lean policy code, heavy report/CLI code, readers, tests
    "allocator/torch/torch_state.cc", "allocator/bfc/bfc_allocator.cc", "trace/text/event_parser.cc",
    "trace/torch/snapshot_events.cc", "sim/report/json_report.cc", "sim/whatif/size_search.cc",
    "sim/cli/replay_command.cc", "sim/viz/html_report.cc", "tests/allocator/torch/torch_allocator_test.cc",
    "tests/sim/cli/replay_cli_test.cc", "tests/sim/whatif/size_search_test.cc", "tests/sim/report/report_test.cc",
]


def cpu_of(command, cwd):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(command, cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def variants(words):
    """The compile command under each variant (words: the tree's command)."""
    plain = []
    skip = False
    for i, w in enumerate(words):
        if skip:
            skip = False
            continue
        if w == "-include" and words[i + 1].endswith("cmake_pch.hxx"):
            skip = True
            continue
        plain.append(w)
    out = list(words)
    return {
        "release": out,
        "no-pch": plain,
        "O3": [("-O3" if w == "-O2" else w) for w in out],
        "g": out + ["-g"],
        "g1": out + ["-g1"],
    }


def link_commands(build):
    """The link commands of hbmsim and one test program, from build.ninja."""
    text = open(os.path.join(build, "build.ninja")).read()
    links = {}
    for target in ("sim/cli/hbmsim", "tests/allocator/torch/torch_tests"):
        m = re.search(r"^build " + re.escape(target) + r": CXX_EXECUTABLE_LINKER__\S+ (.*?)\n((?:  .*\n)*)", text,
                      re.M)
        if not m:
            continue
        vars_ = dict(re.findall(r"^  (\w+) = (.*)$", m.group(2), re.M))
        objects = m.group(1).split("|")[0].split()
        command = (["c++"] + shlex.split(vars_.get("FLAGS", "")) + shlex.split(vars_.get("LINK_FLAGS", ""))
                   + objects + ["-o", "/tmp/compile-cost-link.out"] + shlex.split(vars_.get("LINK_LIBRARIES", "")))
        links[target] = [w for w in command if not w.startswith("-fuse-ld=")]
    return links


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default="build")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    build = os.path.abspath(args.build)
    by_tail = {}
    for e in json.load(open(os.path.join(build, "compile_commands.json"))):
        for s in SAMPLE:
            if e["file"].endswith("/" + s):
                by_tail[s] = e
    totals = {}
    for _ in range(args.rounds):
        for s in SAMPLE:
            e = by_tail.get(s)
            if e is None:
                continue
            words = shlex.split(e["command"])
            o = words.index("-o")
            words[o + 1] = "/tmp/compile-cost.o"
            for name, command in variants(words).items():
                totals[name] = totals.get(name, 0.0) + cpu_of(command, e["directory"])
        for target, command in link_commands(build).items():
            for linker in ("mold", "lld", "bfd"):
                key = f"link {os.path.basename(target)} {linker}"
                totals[key] = totals.get(key, 0.0) + cpu_of(command + [f"-fuse-ld={linker}"], build)
    n = len(by_tail)
    print(f"{n} translation units x {args.rounds} rounds; CPU seconds per round (user + sys)")
    base = totals["release"]
    for name, seconds in totals.items():
        ratio = f"{seconds / base:5.2f}x release" if not name.startswith("link") else ""
        print(f"  {name:28s} {seconds / args.rounds:8.2f} s  {ratio}")


if __name__ == "__main__":
    main()
