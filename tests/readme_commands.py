#!/usr/bin/env python3
"""readme_commands.py: runs the README's commands as written, from a copy of the clone whose build/ is this build.

Every fenced block of README.md is run or accounted for; a block of a kind this script does
not know fails the test, so a new block is either runnable or named here with its reason.
The command lines samples/README offers are run too.

usage: readme_commands.py SOURCE_DIR BUILD_DIR LIBGSMOOTH
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

SOURCE, BUILD, LIBRARY = (os.path.abspath(p) for p in sys.argv[1:4])
# The fixed paths the Plugins and Python blocks write, as written there: removed before
# and after.
FIXED_PATHS = ["/tmp/gs", "/tmp/example", "/tmp/rows.npy", "/tmp/smooth.png", "/tmp/out",
               "/tmp/smoothed"]


def remove_fixed_paths():
    for p in FIXED_PATHS:
        if os.path.isdir(p) and not os.path.islink(p):
            shutil.rmtree(p)
        elif os.path.lexists(p):
            os.remove(p)


def blocks(text):
    """(heading, info string, body) of each fenced block, in order."""
    heading, found = "", []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("## "):
            heading = line[3:].strip()
        m = re.match(r"^```(\w*)\s*$", line)
        if m:
            j = i + 1
            while j < len(lines) and lines[j] != "```":
                j += 1
            found.append((heading, m.group(1), "\n".join(lines[i + 1:j]) + "\n"))
            i = j
        i += 1
    return found


def clone_copy(root):
    """A clone's layout under `root`: the source's entries as links, build/ as this build."""
    for name in os.listdir(SOURCE):
        if name == ".git" or name.startswith("build"):
            continue
        os.symlink(os.path.join(SOURCE, name), os.path.join(root, name))
    os.symlink(BUILD, os.path.join(root, "build"))


def run(what, argv, cwd, env, stdin=None):
    print(f"--- {what}", flush=True)
    p = subprocess.run(argv, cwd=cwd, env=env, input=stdin, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=600)
    out = p.stdout.decode(errors="replace")
    if p.returncode != 0:
        sys.stdout.write(out)
        sys.exit(f"FAIL: {what}: exit {p.returncode}")
    return out


def main():
    work = tempfile.mkdtemp(prefix="gsmooth-readme-")
    clone, scratch, tmp = (os.path.join(work, d) for d in ("clone", "scratch", "tmp"))
    for d in (clone, scratch, tmp):
        os.mkdir(d)
    clone_copy(clone)
    env = dict(os.environ, TMPDIR=tmp, PYTHONPATH=os.path.join(clone, "python"),
               GSMOOTH_LIBRARY=LIBRARY)
    for k in ("GSMOOTH_BACKEND", "GSMOOTH_PLUGIN_PATH", "GSMOOTH_DEVICES", "GSMOOTH_CPU_ISA"):
        env.pop(k, None)
    ran = 0
    with open(os.path.join(SOURCE, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    for heading, info, body in blocks(readme):
        first = body.lstrip().split("\n", 1)[0]
        if heading == "Two commands":
            # CI runs these two on a clean clone; here one of them is running this test.
            with open(os.path.join(SOURCE, ".ci", "run"), encoding="utf-8") as f:
                ci = f.read().split("\n")
            for line in body.strip().split("\n"):
                command = line.split("#", 1)[0].strip()
                if command not in ci:
                    sys.exit(f"FAIL: '{command}' (README, Two commands) is not a line of .ci/run")
            print(f"--- {heading}: both commands are lines of .ci/run, which runs them")
        elif info == "c":
            print(f"--- {heading}: a C fragment (tests/lib builds a program on the same calls)")
        elif info == "" and first.startswith("#!/bin/bash"):
            # A job script: one array task of a one-task array, on the samples, twice (the
            # second run is the resubmission, which finds everything done).
            job = os.path.join(scratch, "job")
            os.makedirs(job)
            with open(os.path.join(job, "list.txt"), "w") as f:
                f.write(f"{SOURCE}/samples/landscape.png\n{SOURCE}/samples/landscape16.png\n")
            task = dict(env, SLURM_ARRAY_TASK_ID="0", SLURM_ARRAY_TASK_COUNT="1",
                        PATH=os.path.join(BUILD, "bin") + os.pathsep + env["PATH"])
            for attempt in ("the job script", "the job script, resubmitted"):
                run(f"{heading}: {attempt}", ["bash", "-e", "-c", body], job, task)
            if sorted(os.listdir(os.path.join(job, "out"))) != ["landscape.png", "landscape16.png"]:
                sys.exit(f"FAIL: the job script wrote {os.listdir(os.path.join(job, 'out'))}")
            with open(os.path.join(job, "manifests", "m-0.jsonl")) as f:
                records = f.read().split("\n")
            if len([r for r in records if '"status":"ok"' in r]) != 2 or \
               len([r for r in records if '"status":"skipped"' in r]) != 2:
                sys.exit("FAIL: the manifest should hold 2 done, then 2 skipped:\n" + "\n".join(records))
            ran += 1
        elif info == "":
            remove_fixed_paths()
            run(f"{heading}: shell block", ["bash", "-e", "-o", "pipefail", "-c", body], clone, env)
            ran += 1
        elif info == "python":
            remove_fixed_paths()
            run(f"{heading}: Python block", ["/usr/bin/python3", "-c", body], clone, env)
            ran += 1
        else:
            sys.exit(f"FAIL: a ```{info} block under '{heading}' that this test does not know how to run")
    # samples/README: its indented command lines.
    with open(os.path.join(SOURCE, "samples", "README"), encoding="utf-8") as f:
        sample_lines = [l.strip() for l in f if l.startswith("    build/bin/gsmooth")]
    if not sample_lines:
        sys.exit("FAIL: samples/README offers no command lines")
    run("samples/README", ["bash", "-e", "-c", "\n".join(sample_lines)], clone, env)
    ran += 1
    shutil.rmtree(work)
    remove_fixed_paths()
    print(f"readme_commands: {ran} blocks ran as written")


if __name__ == "__main__":
    main()
