#!/usr/bin/env python3
"""sass_pass_count.py: the SASS instructions of one pass of the registers smoothing kernel.

Counts what one pass issues for a thread that holds no row end, read from the SASS (no GPU
needed).

Usage: sass_pass_count.py SASS_FILE KERNEL_NAME_PART
  SASS_FILE: `cuobjdump --dump-sass` of a cubin of kernels/cuda/registers_smooth.cu
  (build one with: nvcc -std=c++17 -O3 -arch=sm_90 -cubin -Ikernels -Ikernels/cuda
  -Iinclude -o reg.cubin kernels/cuda/registers_smooth.cu; cuobjdump ships with the CUDA
  toolkit's full install and inside Triton's wheel, triton/backends/nvidia/bin).
  KERNEL_NAME_PART: picks the instantiation, e.g. kernelIhhNS_13ReciprocalFmaELb0 (u8 in
  and out, fast arithmetic, direct loads).

For each loop of the kernel whose body holds a warp shuffle (a pass loop), it walks from the
loop head to its back edge, taking the branch around the row-end switches (the predicate
"end element >= 0" set at the loop head is false for such a thread) and falling through
every other conditional branch, and prints the count by opcode. Divide by the pixels a
thread holds (32) for instructions per pixel-pass.
"""
import collections
import re
import sys


def instructions(path, name_part):
    """(address, text) of every instruction of the first function whose name holds name_part."""
    funcs = re.split(r"\n\s*Function : ", open(path).read())
    body = next((f for f in funcs if name_part in f.split("\n")[0]), None)
    if body is None:
        sys.exit(f"no function matching {name_part} in {path}")
    out = []
    for line in body.split("\n"):
        m = re.match(r"\s*/\*([0-9a-f]{4,})\*/\s+(.*?);", line)
        if m:
            out.append((int(m.group(1), 16), m.group(2).strip()))
    return out


def opcode(text):
    return re.sub(r"^@!?U?P\d\s+", "", text).split()[0].split(".")[0]


def back_target(addr, text):
    m = re.search(r"BRA (0x[0-9a-f]+)", text)
    return int(m.group(1), 16) if m and int(m.group(1), 16) < addr else None


def pass_loops(ins):
    """(head, back-edge address) of each innermost loop whose body has a SHFL."""
    at = {a: i for i, (a, _) in enumerate(ins)}
    for i, (a, t) in enumerate(ins):
        head = back_target(a, t)
        if head is None:
            continue
        body = ins[at[head]:i]
        if any(back_target(x, y) is not None for x, y in body):
            continue  # an outer loop
        if any(opcode(y) == "SHFL" for _, y in body):
            yield head, a


def walk(ins, head, back):
    at = {a: i for i, (a, _) in enumerate(ins)}
    i, counts, end_pred = at[head], collections.Counter(), None
    for _ in range(4096):
        a, t = ins[i]
        counts[opcode(t)] += 1
        m = re.match(r"ISETP\.GE\.AND (P\d), PT, R\d+, RZ, PT", t)
        if m and end_pred is None:
            end_pred = m.group(1)
        b = re.match(r"(@(!?)(P\d) )?BRA (0x[0-9a-f]+)", t)
        if b:
            target = int(b.group(4), 16)
            if a == back:
                return counts
            if b.group(1) is None or (b.group(3) == end_pred and b.group(2) == "!"):
                i = at[target]
                continue
        i += 1
    sys.exit("walk did not reach the back edge")


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    ins = instructions(sys.argv[1], sys.argv[2])
    for head, back in pass_loops(ins):
        c = walk(ins, head, back)
        print(f"loop {head:#x}..{back:#x}: {sum(c.values())} instructions a pass: " +
              ", ".join(f"{k} {v}" for k, v in c.most_common()))


if __name__ == "__main__":
    main()
