"""dask_bench.py: gsmooth.dask beside dask-image and map_overlap of SciPy, on one LocalCluster, in the same run.

usage: /opt/gsmooth-bench-venv/bin/python bench/dask_bench.py BUILD_DIR [SIZE [CHUNK [WORKERS]]]
  (bench/install_anchors.sh makes that environment: Debian's dask, distributed and scipy,
  dask-image from PyPI; defaults 16384, 1024, the CPUs this process may use)

One uint8 array, SIZE^2 in CHUNK^2 chunks, made and kept on the workers. Three ways to
smooth its rows with K=3 passes of a 3-wide mean:
  - gsmooth.dask.smooth(x, 3): the exact iterated mean, each chunk borrowing 3 columns;
  - dask_image.ndfilters.uniform_filter(size=(1, 3)) applied 3 times (its boundary: reflect);
  - map_overlap of scipy.ndimage.uniform_filter1d(size=3) x3, depth 3 along the rows.
The two anchors round to integers on every pass, so their pixels are not gsmooth's; the
work is the same shape. A fourth row, map_blocks(np.copy), is dask's own floor for a new
array made chunk by chunk on that cluster. Each is timed (median of RUNS, default 5) on a
fresh cluster each run, with the input's chunks where dask put them and again in bands of
whole chunk rows, one band per worker (PLACEMENTS), after one small warm-up in every
worker's task thread, so that the workers' peak RSS above what the kept input
holds belongs to that tool's work alone; each result is summed on the workers, chunk by
chunk, rather than kept. Each is also timed in this process on dask's threaded scheduler
(no transfers between processes). Ratios compare figures of this run.
"""
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))


def _status_kib(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status")


def start_peak():
    """Reset this process's peak RSS (Linux: 5 into clear_refs) and give its RSS now."""
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    return _status_kib("VmRSS") * 1024


def peak_since():
    return _status_kib("VmHWM") * 1024


# Where the input's chunks live: "scattered" as dask placed them when it made them (a
# chunk's neighbours on any worker), "bands" a band of whole rows of chunks per worker (as
# a worker that reads its own rows of a Zarr store has them): what the halo crosses.
PLACEMENTS = ("scattered", "bands")


def kept_input(client, size, chunk, placement):
    import dask.array as da
    import distributed
    import numpy as np
    x = da.random.RandomState(1).randint(0, 256, (size, size), chunks=chunk, dtype=np.uint8)
    if placement == "bands":
        names = sorted(client.scheduler_info()["workers"])
        rows = len(x.chunks[0])
        cuts = [rows * w // len(names) for w in range(len(names) + 1)]
        bands = [client.persist(x.blocks[cuts[w]:cuts[w + 1]], workers=[names[w]], allow_other_workers=False)
                 for w in range(len(names)) if cuts[w] < cuts[w + 1]]
        distributed.wait(bands)
        x = da.concatenate(bands, axis=0)  # keys naming the bands' chunks, where they are
    x = client.persist(x)
    distributed.wait(x)
    return x


def run_on_cluster(make, placement, size, chunk, workers):
    """One timed run on a fresh cluster (the workers' peak RSS then belongs to this tool):
    wall time, the largest worker's peak RSS above what it held before, the result's sum."""
    import dask.array as da
    import distributed
    import numpy as np
    with distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                  host="127.0.0.1", dashboard_address=None, silence_logs=40,
                                  memory_limit=0) as cluster, distributed.Client(cluster) as client:
        x = kept_input(client, size, chunk, placement)
        # Each worker's task thread runs the tool once on a small array first: libraries
        # loaded, contexts and pools made, so what follows is the work's own memory.
        small = da.zeros((64, 2 * 64), dtype=np.uint8, chunks=64)
        warm = [client.submit(lambda _: int(make(small).sum().compute(scheduler="sync")), w, pure=False,
                              workers=[w], allow_other_workers=False) for w in client.run(os.getpid)]
        client.gather(warm)
        before = client.run(start_peak)
        t0 = time.perf_counter()
        # Reduced on the workers: each output chunk is summed and dropped, so the peak is
        # the tasks' working memory, not a store of the result.
        checksum = int(make(x).sum(dtype=np.uint64).compute())
        elapsed = time.perf_counter() - t0
        after = client.run(peak_since)
        return elapsed, max(after[w] - before[w] for w in after), checksum


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    build = os.path.abspath(sys.argv[1])
    size = int(sys.argv[2]) if len(sys.argv) > 2 else 16384
    chunk = int(sys.argv[3]) if len(sys.argv) > 3 else 1024
    workers = int(sys.argv[4]) if len(sys.argv) > 4 else len(os.sched_getaffinity(0))
    runs = int(os.environ.get("RUNS", "5"))
    os.environ["GSMOOTH_LIBRARY"] = os.path.join(build, "lib", "libgsmooth.so")
    os.environ["PYTHONPATH"] = os.path.join(ROOT, "python") + os.pathsep + os.environ.get("PYTHONPATH", "")

    import dask
    import dask.array as da
    import distributed
    import numpy as np
    import scipy.ndimage as ndi
    from dask_image import ndfilters

    import gsmooth.dask as gd

    def scipy_x3(b):
        for _ in range(3):
            b = ndi.uniform_filter1d(b, 3, axis=1)
        return b

    def dask_image_x3(x):
        for _ in range(3):
            x = ndfilters.uniform_filter(x, size=(1, 3))
        return x

    tools = [
        ("gsmooth.dask.smooth K=3", lambda x: gd.smooth(x, 3, "x")),
        ("dask-image uniform_filter(1x3) x3", dask_image_x3),
        ("map_overlap(scipy uniform_filter1d) x3",
         lambda x: x.map_overlap(scipy_x3, depth={0: 0, 1: 3}, boundary="reflect", dtype=x.dtype)),
        # The least a tool that makes a new array chunk by chunk can take on this cluster:
        # one copy a chunk, no halo, then the same sums.
        ("floor: map_blocks(np.copy)", lambda x: x.map_blocks(np.copy)),
    ]
    print(f"dask_bench: {size}^2 uint8 in {chunk}^2 chunks, {workers} worker processes x 1 thread, "
          f"dask {dask.__version__}, distributed {distributed.__version__}, medians of {runs}")
    halo_task = chunk * (chunk + 2 * 3)  # bytes of one chunk and its borrowed columns
    # glibc keeps freed 1 MiB blocks once its mmap threshold has grown past them, and the
    # peak RSS would then count the allocator's hoard: a fixed threshold (read by each worker
    # at its start) returns them, for every tool alike.
    os.environ["MALLOC_MMAP_THRESHOLD_"] = "65536"
    local = da.random.RandomState(1).randint(0, 256, (size, size), chunks=chunk,
                                             dtype=np.uint8).persist(scheduler="threads")
    results = []
    for name, make in tools:
        # In this process on `workers` threads: dask's threaded scheduler, no transfers.
        threaded = []
        for _ in range(runs):
            t0 = time.perf_counter()
            make(local).sum(dtype=np.uint64).compute(scheduler="threads", num_workers=workers)
            threaded.append(time.perf_counter() - t0)
        on_cluster = {}
        for placement in PLACEMENTS:
            times, peaks = [], []
            for _ in range(runs):
                t, peak, checksum = run_on_cluster(make, placement, size, chunk, workers)
                times.append(t)
                peaks.append(peak)
            on_cluster[placement] = (statistics.median(times), statistics.median(peaks))
        results.append((name, on_cluster, checksum, statistics.median(threaded)))
    g = results[0]
    head = "| tool |" + "".join(f" {p}: wall time | / gsmooth's | peak worker RSS above the kept input |"
                                for p in PLACEMENTS)
    print(head + " threaded scheduler | / gsmooth's | sum of the result |")
    print("|" + " --- |" * (1 + 3 * len(PLACEMENTS) + 3))
    for name, on_cluster, total, tt in results:
        row = f"| {name} |"
        for p in PLACEMENTS:
            t, peak = on_cluster[p]
            row += f" {t:.3f} s | {t / g[1][p][0]:.2f} | {peak / 2**20:.1f} MiB |"
        print(row + f" {tt:.3f} s | {tt / g[3]:.2f} | {total} |")
    for p in PLACEMENTS:
        print(f"{p}: gsmooth's peak above the kept input is {g[1][p][1] / halo_task:.2f}x "
              f"the chunk plus halo ({halo_task / 2**20:.2f} MiB)")


if __name__ == "__main__":
    main()
