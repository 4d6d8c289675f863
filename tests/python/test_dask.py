"""test_dask.py: gsmooth.dask against the in-memory results, bit for bit: odd chunkings, every axis, K from 0 to 100, 8 and 16-bit, both integrals; on a real LocalCluster of worker processes, with a worker killed mid-run; Zarr in and out."""
import os
import signal
import time

import numpy as np
import pytest

import gsmooth

dask = pytest.importorskip("dask", reason="skipped: python3-dask is not installed")
da = pytest.importorskip("dask.array")
gd = pytest.importorskip("gsmooth.dask")

RNG = np.random.default_rng(36)
# Chunk shapes: many small, smaller than K, one row, one column, the whole array.
CHUNKINGS = [(40, 64), (7, 3), (1, 211), (97, 1), (97, 211), ((30, 1, 66), (100, 11, 100))]


def image(bits, shape=(97, 211)):
    return RNG.integers(0, 1 << bits, shape, dtype=np.uint8 if bits == 8 else np.uint16)


@pytest.mark.parametrize("bits", [8, 16])
@pytest.mark.parametrize("chunks", CHUNKINGS)
def test_smooth_equals_in_memory(bits, chunks):
    a = image(bits)
    x = da.from_array(a, chunks=chunks)
    for axis in ("x", "y", "xy"):
        for k in (0, 1, 2, 5, 100):
            got = gd.smooth(x, k, axis).compute(scheduler="sync")
            assert got.dtype == a.dtype
            assert np.array_equal(got, gsmooth.smooth(a, k, axis)), (chunks, axis, k)


def test_sigma_and_overlap_depth():
    a = image(8)
    x = da.from_array(a, chunks=(32, 50))
    assert np.array_equal(gd.smooth(x, sigma=2).compute(scheduler="sync"), gsmooth.smooth(a, 6))
    # Overlap only along the smoothed axis, exactly K: each chunk lends K columns (or rows)
    # on each side and nothing along the other axis; one lending task and one task a chunk.
    y = gd.smooth(x, 4, "x")
    assert y.chunks == x.chunks
    # 97 rows in chunks of 32 end in a chunk of 1, merged into the one above where rows lend.
    for axis, cols, rows, chunks in (("x", True, False, 4 * 5), ("y", False, True, 3 * 5),
                                     ("xy", True, True, 3 * 5)):
        g = dict(gd.smooth(x, 4, axis).__dask_graph__())
        lent = [k for k in g if k[0].startswith("gsmooth-lent")]
        assert len(lent) == len([k for k in g if k[0].startswith("gsmooth-smooth")]) == chunks
        left, right, top, bottom = dask.get(g, (lent[0][0], 1, 1))
        assert (left is not None, top is not None) == (cols, rows), axis
        if cols:
            assert left.shape == right.shape == (32, 4)
        if rows:
            assert top.shape == bottom.shape == (4, 50)
    # Chunks narrower than K are merged to borrow, and the result keeps the caller's chunks.
    z = da.from_array(a, chunks=(97, (200, 11)))
    assert gd.smooth(z, 20, "x").chunks == z.chunks


@pytest.mark.parametrize("bits", [8, 16])
@pytest.mark.parametrize("chunks", CHUNKINGS)
def test_integrals_equal_in_memory(bits, chunks):
    a = image(bits)
    x = da.from_array(a, chunks=chunks)
    for mode in ("rows", "2d"):
        got = gd.integral(x, mode).compute(scheduler="sync")
        want = gsmooth.integral(a, mode)
        assert got.dtype == want.dtype, mode
        assert np.array_equal(got, want), (chunks, mode)


def test_integral_dtype_is_the_whole_arrays():
    # 65535 x 1100 x 60: above 2^32 for the whole table, not for any 64-row chunk.
    a = np.full((1100, 60), 65535, np.uint16)
    x = da.from_array(a, chunks=(64, 60))
    got = gd.integral(x, "2d").compute(scheduler="sync")
    assert got.dtype == np.uint64
    assert int(got[-1, -1]) == 65535 * 1100 * 60
    assert np.array_equal(got, gsmooth.integral(a, "2d"))


def test_refusals():
    with pytest.raises(TypeError):
        gd.smooth(da.zeros((4, 4), dtype=np.float32))
    with pytest.raises(ValueError):
        gd.smooth(da.zeros((2, 4, 4), dtype=np.uint8))
    with pytest.raises(ValueError):
        gd.smooth(da.zeros((4, 4), dtype=np.uint8), 3, "z")
    with pytest.raises(ValueError):
        gd.integral(da.zeros((4, 4), dtype=np.uint8), "cols")


@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("distributed", reason="skipped: python3-distributed is not installed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       host="127.0.0.1", dashboard_address=None, silence_logs=40)
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


def test_on_a_local_cluster(client):
    a = image(16, (300, 400))
    x = da.from_array(a, chunks=(64, 96))
    for axis in ("x", "y", "xy"):
        assert np.array_equal(client.compute(gd.smooth(x, 7, axis)).result(), gsmooth.smooth(a, 7, axis))
    for mode in ("rows", "2d"):
        assert np.array_equal(client.compute(gd.integral(x, mode)).result(), gsmooth.integral(a, mode))


def test_a_worker_killed_mid_run(client):
    a = image(16, (512, 1024))
    k = 40000
    want = gsmooth.smooth(a, k, "x")
    future = client.compute(gd.smooth(da.from_array(a, chunks=(32, 1024)), k, "x"))
    busy, deadline = {}, time.time() + 60
    while not busy and time.time() < deadline:  # a worker in the middle of a task
        busy = {w: t for w, t in client.processing().items() if t}
        time.sleep(0.01)
    assert busy and not future.done(), "no task seen running: the work is too small to interrupt"
    killed = next(iter(client.run(os.getpid, workers=[next(iter(busy))]).values()))
    os.kill(killed, signal.SIGKILL)  # its nanny starts another; dask retries the lost tasks
    assert np.array_equal(future.result(timeout=300), want)
    assert killed not in client.run(os.getpid).values()


def test_zarr_in_and_out(tmp_path):
    zarr = pytest.importorskip("zarr", reason="skipped: python3-zarr is not installed")
    a = image(8, (300, 257))
    src = zarr.open(str(tmp_path / "in.zarr"), mode="w", shape=a.shape, chunks=(64, 64), dtype=a.dtype)
    src[:] = a
    out = str(tmp_path / "out.zarr")
    gd.smooth(da.from_zarr(str(tmp_path / "in.zarr")), 9, "xy").to_zarr(out)
    assert np.array_equal(zarr.open(out, mode="r")[:], gsmooth.smooth(a, 9, "xy"))


def test_cupy_chunks_on_the_gpu():
    cp = pytest.importorskip("cupy", reason="skipped: no CUDA device (CuPy is not installed)")
    try:
        if cp.cuda.runtime.getDeviceCount() < 1:
            pytest.skip("skipped: no CUDA device")
    except cp.cuda.runtime.CUDARuntimeError:
        pytest.skip("skipped: no CUDA device")
    a = image(16, (300, 400))
    x = da.from_array(cp.asarray(a), chunks=(64, 96), asarray=False)
    for axis in ("x", "y", "xy"):
        got = gd.smooth(x, 7, axis).compute(scheduler="threads")
        assert isinstance(got, cp.ndarray), type(got)
        assert np.array_equal(cp.asnumpy(got), gsmooth.smooth(a, 7, axis)), axis
    for mode in ("rows", "2d"):
        got = gd.integral(x, mode).compute(scheduler="threads")
        assert isinstance(got, cp.ndarray), type(got)
        assert np.array_equal(cp.asnumpy(got), gsmooth.integral(a, mode)), mode
