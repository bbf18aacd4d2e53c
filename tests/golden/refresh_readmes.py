#!/usr/bin/env python3
"""Reruns every `$ clustersim ...` example in the READMEs and writes what the binary prints now
into the example, keeping its `...` elisions: each kept line is replaced by the output line that
starts with the same first two fields (the first three for `#` lines), searched forward from the
previous one; a line without such a partner is left as it was, and the test
(tests/cli/test_readme_examples.cpp) then names it. Read the diff (git diff '*.md') before
committing.

Usage: tests/golden/refresh_readmes.py [path/to/clustersim]   (default: build/sim/clustersim)
"""
import os
import shlex
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
READMES = ["README.md", "sim/README.md", "topologies/README.md", "models/README.md",
           "calibrate/README.md", "sim/plan/README.md", "tests/fuzz/README.md",
           "calibrate/fsdp/README.md"]
PROMPT = "$ clustersim "


def key(line):
    fields = line.split()
    return tuple(fields[:3] if line.startswith("#") else fields[:2])


def refresh_block(expected, actual):
    """The example lines `expected` with each kept line replaced by its partner in `actual`."""
    out = []
    at = 0
    anchored = True  # no `...` seen yet: the example starts at the output's first line
    for line in expected:
        if line == "...":
            anchored = False
            out.append(line)
            continue
        if anchored and at < len(actual):
            out.append(actual[at])
            at += 1
            continue
        partner = next((i for i in range(at, len(actual)) if key(actual[i]) == key(line)), None)
        if partner is None:
            out.append(line)
        else:
            out.append(actual[partner])
            at = partner + 1
    return out


def refresh(path, binary):
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    result = []
    in_block = False
    i = 0
    while i < len(lines):
        line = lines[i]
        result.append(line)
        i += 1
        if line.startswith("```"):
            in_block = not in_block
            continue
        if not (in_block and line.startswith(PROMPT)):
            continue
        expected = []
        while i < len(lines) and not lines[i].startswith("```") and not lines[i].startswith("$ "):
            expected.append(lines[i])
            i += 1
        if not expected:
            continue
        args = shlex.split(line[len(PROMPT):])
        run = subprocess.run([binary] + args, cwd=ROOT, capture_output=True, text=True, check=True)
        result.extend(refresh_block(expected, run.stdout.rstrip("\n").split("\n")))
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(result))


def main():
    binary = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else \
        os.path.join(ROOT, "build/sim/clustersim")
    for readme in READMES:
        refresh(os.path.join(ROOT, readme), binary)
        print("refreshed", readme)


if __name__ == "__main__":
    main()
