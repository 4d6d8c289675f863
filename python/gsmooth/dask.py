"""gsmooth.dask: exact smoothing and integrals of dask arrays, chunk by chunk, equal byte for byte to gsmooth.smooth and gsmooth.integral of the whole array.

Imports dask only when this module is imported (`import gsmooth.dask`).

Smoothing: K passes of the 3-point mean reach K samples along the smoothed axis. Each chunk
is one task: it smooths its own samples, which is exact everywhere at least K samples from
an edge it shares with a neighbour, and then remakes the K-wide bands along those shared
edges from small windows that borrow K samples from the neighbours (the strips each chunk
lends are cut by a task of their own, so only they cross between workers, never whole
chunks). A chunk at the array's true edge borrows nothing there and takes the row-end
rule as the whole array would. Memory per task is the chunk's result plus one band.

Integrals: each chunk's rows are scanned by gsmooth, then the carries (totals of the chunks
to the left, and for '2d' of those above) are added in the result's dtype, which is the
whole array's rule (uint32, or uint64 when the sums need it), so nothing overflows.
"""
import dask.array as da
import numpy as np
from dask.array.reductions import cumreduction
from dask.base import tokenize
from dask.highlevelgraph import HighLevelGraph

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
    than that becomes one chunk): a chunk borrows from its next neighbour only."""
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


def _lent_strips(b, k, rows, cols):
    """What chunk `b` lends its neighbours: its first and last k columns (for the rows'
    passes) and its first and last k rows (for the columns'), as copies, so that a
    neighbour on another worker receives those strips and not the chunk."""
    return (b[:, :k].copy() if cols else None, b[:, -k:].copy() if cols else None,
            b[:k].copy() if rows else None, b[-k:].copy() if rows else None)


class _Surround:
    """A chunk and the strips its neighbours lend it, addressed in the chunk's own
    coordinates: rows -k..h+k-1 and columns -k..w+k-1, as far as neighbours exist."""

    def __init__(self, b, lent, k):
        self.b, self.k = b, k
        self.h, self.w = b.shape
        # lent[di][dj]: the strips of the neighbour di rows and dj columns of chunks away.
        self.lent = lent

    def has(self, di, dj):
        return self.lent[di + 1][dj + 1] is not None

    def _piece(self, di, dj):
        """The block of the 3x3 grid around the chunk: (0, 0) the chunk, (-1, 0) the K rows
        above it, (0, 1) the K columns right of it, (-1, -1) the K x K corner above left."""
        k = self.k
        if (di, dj) == (0, 0):
            return self.b
        left, right, top, bottom = self.lent[di + 1][dj + 1]
        if di == 0:
            return right if dj < 0 else left
        strip = bottom if di < 0 else top  # rows: those next to this chunk
        return strip if dj == 0 else (strip[:, -k:] if dj < 0 else strip[:, :k])

    def window(self, r0, r1, c0, c1):
        """Rows r0..r1-1 and columns c0..c1-1 around the chunk, cut where no neighbour
        lends (the array's edge); with the chunk's (0, 0) at (top, left) of the result."""
        k, h, w = self.k, self.h, self.w
        r0 = r0 if self.has(-1, 0) else max(r0, 0)
        r1 = r1 if self.has(1, 0) else min(r1, h)
        c0 = c0 if self.has(0, -1) else max(c0, 0)
        c1 = c1 if self.has(0, 1) else min(c1, w)
        bands = ((-1, -k, 0), (0, 0, h), (1, h, h + k))
        cuts = ((-1, -k, 0), (0, 0, w), (1, w, w + k))
        rows = []
        for di, lo, hi in bands:
            a, z = max(r0, lo), min(r1, hi)
            if a >= z:
                continue
            row = [self._piece(di, dj)[a - lo:z - lo, max(c0, clo) - clo:min(c1, chi) - clo]
                   for dj, clo, chi in cuts if max(c0, clo) < min(c1, chi)]
            rows.append(row[0] if len(row) == 1 else np.concatenate(row, axis=1))
        win = rows[0] if len(rows) == 1 else np.concatenate(rows, axis=0)
        return win, -r0, -c0


def _smooth_chunk(b, lent, k, axis, backend, threads):
    """One chunk of gsmooth.smooth(whole array, k, axis): the chunk smoothed alone, with
    the k-wide bands along each edge it shares with a neighbour remade from a window that
    reaches k samples past the edge and 2k inside it (the window's own cut edge disturbs
    only its inner k)."""
    s = _Surround(b, lent, k)
    h, w = s.h, s.w
    along_rows, along_cols = "x" in axis, "y" in axis
    # Reach along each smoothed axis (the other takes no halo).
    rx, ry = (k if along_rows else 0), (k if along_cols else 0)
    if (along_rows and w < 4 * k) or (along_cols and h < 4 * k):
        # Too narrow for bands to save anything: one window of the chunk and its border.
        win, top, left = s.window(-ry, h + ry, -rx, w + rx)
        return gsmooth.smooth(win, k, axis, backend, threads=threads)[top:top + h, left:left + w]
    out = gsmooth.smooth(b, k, axis, backend, threads=threads)
    bands = []  # (rows, columns) of the window, then where its chunk part lands in `out`
    if along_cols and s.has(-1, 0):
        bands.append(((-k, 2 * k, -rx, w + rx), slice(0, k), slice(0, w)))
    if along_cols and s.has(1, 0):
        bands.append(((h - 2 * k, h + k, -rx, w + rx), slice(h - k, h), slice(0, w)))
    if along_rows and s.has(0, -1):
        bands.append(((-ry, h + ry, -k, 2 * k), slice(0, h), slice(0, k)))
    if along_rows and s.has(0, 1):
        bands.append(((-ry, h + ry, w - 2 * k, w + k), slice(0, h), slice(w - k, w)))
    for (r0, r1, c0, c1), rows, cols in bands:
        win, top, left = s.window(r0, r1, c0, c1)
        part = gsmooth.smooth(win, k, axis, backend, threads=threads)
        out[rows, cols] = part[top + rows.start:top + rows.stop, left + cols.start:left + cols.stop]
    return out


def smooth(x, iters=None, axis="x", backend="auto", sigma=None, threads=1):
    """A lazy dask array equal to gsmooth.smooth(x.compute(), iters, axis, backend, sigma)
    for any chunking, with x's chunks. Chunks narrower than the K samples they must borrow
    are merged with their neighbours first (a chunk borrows from its next neighbour only).
    `threads`: CPU threads each task's call uses (dask already runs a task per worker
    thread at once; None: every CPU)."""
    x = _dask_image(x)
    gsmooth._check_threads(threads)
    passes = gsmooth._passes(iters, sigma)
    gsmooth._axes(axis)
    if passes == 0:
        return x.map_blocks(np.copy, dtype=x.dtype)
    along_rows, along_cols = "x" in axis, "y" in axis
    given = x.chunks
    chunks = (_chunks_at_least(given[0], passes) if along_cols else given[0],
              _chunks_at_least(given[1], passes) if along_rows else given[1])
    if chunks != given:
        x = x.rechunk(chunks)
    token = tokenize(x, passes, axis, backend, threads)
    name, lent = f"gsmooth-smooth-{token}", f"gsmooth-lent-{token}"
    ni, nj = len(x.chunks[0]), len(x.chunks[1])
    reach = [(di, dj) for di in (-1, 0, 1) for dj in (-1, 0, 1)
             if (di, dj) != (0, 0) and (along_cols or di == 0) and (along_rows or dj == 0)]
    layer = {}
    for i in range(ni):
        for j in range(nj):
            near = [[None] * 3 for _ in range(3)]
            for di, dj in reach:
                if 0 <= i + di < ni and 0 <= j + dj < nj:
                    near[di + 1][dj + 1] = (lent, i + di, j + dj)
                    layer.setdefault((lent, i + di, j + dj),
                                     (_lent_strips, (x.name, i + di, j + dj), passes, along_cols, along_rows))
            layer[(name, i, j)] = (_smooth_chunk, (x.name, i, j), near, passes, axis, backend, threads)
    graph = HighLevelGraph.from_collections(name, layer, dependencies=[x])
    out = da.Array(graph, name, x.chunks, dtype=x.dtype, meta=x._meta)
    return out if out.chunks == given else out.rechunk(given)  # the caller's chunks (to_zarr wants them)


def _result_dtype(mode, x):
    bits = _n.lib.gsmooth_integral_bits(gsmooth._mode(mode), 8 * x.dtype.itemsize, x.shape[1], x.shape[0])
    if bits not in (32, 64):
        raise ValueError(f"no integral of a {x.shape[1]}x{x.shape[0]} {x.dtype} array")
    return np.uint32 if bits == 32 else np.uint64


def integral(x, mode="rows", backend="auto", threads=1):
    """A lazy dask array equal to gsmooth.integral(x.compute(), mode) for any chunking:
    'rows' (prefix sums along each row) or '2d' (the summed-area table). `threads` as for
    smooth."""
    x = _dask_image(x)
    gsmooth._check_threads(threads)
    dtype = _result_dtype(mode, x)

    def rows_of_chunk(b, axis=1, **_):
        # A chunk's own sums fit its own rule's dtype, never wider than the whole array's.
        return gsmooth.integral(b, "rows", backend, threads=threads).astype(dtype, copy=False)

    rows = cumreduction(rows_of_chunk, np.add, 0, x, axis=1, dtype=dtype)
    if mode == "rows":
        return rows

    def down_columns(b, axis=0, **_):
        return np.cumsum(b, axis=0, dtype=dtype)
    return cumreduction(down_columns, np.add, 0, rows, axis=0, dtype=dtype)
