"""gsmooth.dask: exact smoothing and integrals of dask arrays, chunk by chunk, equal byte for byte to gsmooth.smooth and gsmooth.integral of the whole array.

Imports dask only when this module is imported (`import gsmooth.dask`).

Smoothing: K passes of the 3-point mean reach K samples along the smoothed axis, so each
chunk borrows exactly K rows or columns from its neighbours along that axis only, and
nothing along the other. The borrowed samples, and the K next to them that the row-end
rule at the borrowed edge disturbs, are cut away again; a chunk at the array's true edge
borrows nothing there and takes the row-end rule as the whole array would. Memory per task
is the chunk plus 2K rows or columns.

Integrals: each chunk's rows are scanned by gsmooth, then the carries (totals of the chunks
to the left, and for '2d' of those above) are added in the result's dtype, which is the
whole array's rule (uint32, or uint64 when the sums need it), so nothing overflows.
"""
import dask.array as da
import numpy as np
from dask.array.reductions import cumreduction

import gsmooth
from gsmooth import _native as _n

__all__ = ["smooth", "integral"]


def _dask_image(x):
    """`x` as a 2-D uint8/uint16 dask array (numpy or CuPy chunks)."""
    x = x if isinstance(x, da.Array) else da.asarray(x)
    if x.ndim != 2:
        raise ValueError(f"gsmooth.dask takes a 2-D array, not {x.ndim}-D")
    if x.dtype not in (np.uint8, np.uint16):
        raise TypeError(f"gsmooth.dask takes uint8 or uint16 arrays, not {x.dtype}")
    return x


def _chunks_at_least(chunks, size):
    """Chunk sizes along one axis merged so that each is at least `size` (an axis shorter
    than that becomes one chunk): a chunk borrows from its neighbour only."""
    merged, run = [], 0
    for c in chunks:
        run += c
        if run >= size:
            merged.append(run)
            run = 0
    if run:
        if merged:
            merged[-1] += run
        else:
            merged.append(run)
    return tuple(merged)


def smooth(x, iters=None, axis="x", backend="auto", sigma=None):
    """A lazy dask array equal to gsmooth.smooth(x.compute(), iters, axis, backend, sigma)
    for any chunking. Chunks narrower than the K samples they must borrow are merged with
    their neighbours first (dask borrows from the next chunk only)."""
    x = _dask_image(x)
    passes = gsmooth._passes(iters, sigma)
    gsmooth._axes(axis)
    if passes == 0:
        return x.map_blocks(np.copy, dtype=x.dtype)
    depth = {0: passes if "y" in axis else 0, 1: passes if "x" in axis else 0}
    given = x.chunks
    chunks = tuple(_chunks_at_least(c, depth[a]) if depth[a] else c for a, c in enumerate(given))
    if chunks != given:
        x = x.rechunk(chunks)
    for a in depth:  # an axis in one chunk has no neighbour to borrow from
        if len(x.chunks[a]) == 1:
            depth[a] = 0

    def block(b):
        return gsmooth.smooth(b, passes, axis, backend)
    out = da.map_overlap(block, x, depth=depth, boundary="none", trim=True, dtype=x.dtype)
    return out if out.chunks == given else out.rechunk(given)  # the caller's chunks (to_zarr wants them)


def _result_dtype(mode, x):
    bits = _n.lib.gsmooth_integral_bits(gsmooth._mode(mode), 8 * x.dtype.itemsize, x.shape[1], x.shape[0])
    if bits not in (32, 64):
        raise ValueError(f"no integral of a {x.shape[1]}x{x.shape[0]} {x.dtype} array")
    return np.uint32 if bits == 32 else np.uint64


def integral(x, mode="rows", backend="auto"):
    """A lazy dask array equal to gsmooth.integral(x.compute(), mode) for any chunking:
    'rows' (prefix sums along each row) or '2d' (the summed-area table)."""
    x = _dask_image(x)
    dtype = _result_dtype(mode, x)

    def rows_of_chunk(b, axis=1, **_):
        # A chunk's own sums fit its own rule's dtype, never wider than the whole array's.
        return gsmooth.integral(b, "rows", backend).astype(dtype, copy=False)

    rows = cumreduction(rows_of_chunk, np.add, 0, x, axis=1, dtype=dtype)
    if mode == "rows":
        return rows

    def down_columns(b, axis=0, **_):
        return np.cumsum(b, axis=0, dtype=dtype)
    return cumreduction(down_columns, np.add, 0, rows, axis=0, dtype=dtype)
