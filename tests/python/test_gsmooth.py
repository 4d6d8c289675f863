"""test_gsmooth.py: the Python module against the independent numpy reference: random and real images, strided views, 16-bit, every refusal, threads, batches into a directory, and CUDA tensors through DLPack (skipped without a CUDA device)."""
import os
import threading

import numpy as np
import pytest

import gsmooth
import reference

GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "golden")
rng = np.random.default_rng(20261130)


def ref_smooth(a, iters, axis="x"):
    return reference.smooth(np.asarray(a), a.dtype.itemsize * 8, iters, axis).astype(a.dtype)


def ref_integral(a, mode):
    return reference.integral(np.asarray(a), a.dtype.itemsize * 8, mode)


def random_image(h, w, dtype=np.uint8):
    return rng.integers(0, np.iinfo(dtype).max, size=(h, w), dtype=dtype, endpoint=True)


SHAPES = [(1, 1), (1, 9), (9, 1), (2, 3), (37, 1031), (300, 257)]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("iters", [0, 1, 3, 17])
@pytest.mark.parametrize("axis", ["x", "y", "xy"])
def test_smooth_random_8bit(shape, iters, axis):
    a = random_image(*shape)
    got = gsmooth.smooth(a, iters=iters, axis=axis)
    assert got.dtype == np.uint8 and got.shape == a.shape
    np.testing.assert_array_equal(got, ref_smooth(a, iters, axis))


@pytest.mark.parametrize("iters", [1, 5, 100])
@pytest.mark.parametrize("axis", ["x", "y", "xy"])
def test_smooth_random_16bit(iters, axis):
    a = random_image(131, 517, np.uint16)
    got = gsmooth.smooth(a, iters=iters, axis=axis)
    assert got.dtype == np.uint16
    np.testing.assert_array_equal(got, ref_smooth(a, iters, axis))


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
@pytest.mark.parametrize("mode", ["rows", "2d"])
def test_integral_random(dtype, mode):
    a = random_image(203, 611, dtype)
    got = gsmooth.integral(a, mode=mode)
    want = ref_integral(a, mode)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_integral_dtype_grows_to_64_bits():
    # 8-bit rows: uint32 while 255 x width fits; a 2d table of 1024x65793 8-bit samples may pass 2^32
    assert gsmooth.integral(np.zeros((2, 3), np.uint8)).dtype == np.uint32
    assert gsmooth.integral(np.zeros((2, 3), np.uint16)).dtype == np.uint64
    big = np.full((1024, 16500), 255, np.uint8)
    got = gsmooth.integral(big, mode="2d")
    assert got.dtype == np.uint64
    assert int(got[-1, -1]) == 255 * 1024 * 16500


def test_real_image():
    Image = pytest.importorskip("PIL.Image", reason="skipped: no PIL")
    a = np.asarray(Image.open(os.path.join(GOLDEN, "inputs", "photo.png")).convert("L"))
    for iters, axis in [(3, "x"), (10, "y"), (4, "xy")]:
        np.testing.assert_array_equal(gsmooth.smooth(a, iters, axis), ref_smooth(a, iters, axis))
    np.testing.assert_array_equal(gsmooth.integral(a, "2d"), ref_integral(a, "2d"))


def test_matches_the_command_line_golden():
    Image = pytest.importorskip("PIL.Image", reason="skipped: no PIL")
    a = np.asarray(Image.open(os.path.join(GOLDEN, "inputs", "gray16.png")))
    assert a.dtype == np.uint16 or a.dtype == np.int32
    a = a.astype(np.uint16)
    want = np.load(os.path.join(GOLDEN, "expected", "gray16_rows.npy"))
    np.testing.assert_array_equal(gsmooth.integral(a, "rows"), want)


def test_lone_one_among_zeros_many_passes():
    # values far below 1 (2^-125 and under) after ~80 passes: the exact division matters
    a = np.zeros((3, 301), np.uint8)
    a[1, 150] = 1
    for iters in (80, 90, 120):
        np.testing.assert_array_equal(gsmooth.smooth(a, iters), ref_smooth(a, iters))


def base():
    return random_image(64, 96)


VIEWS = {
    "every other row": lambda a: a[::2],
    "every third column": lambda a: a[:, ::3],
    "window": lambda a: a[5:50, 7:90],
    "transposed": lambda a: a.T,
    "rows reversed": lambda a: a[::-1],
    "columns reversed": lambda a: a[:, ::-1],
    "fortran order": lambda a: np.asfortranarray(a),
    "broadcast row": lambda a: np.broadcast_to(a[0], (10, a.shape[1])),
}


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_strided_views(name):
    a = VIEWS[name](base())
    dense = np.ascontiguousarray(a)
    np.testing.assert_array_equal(gsmooth.smooth(a, 3), ref_smooth(dense, 3))
    np.testing.assert_array_equal(gsmooth.smooth(a, 2, "xy"), ref_smooth(dense, 2, "xy"))
    np.testing.assert_array_equal(gsmooth.integral(a), ref_integral(dense, "rows"))


def test_strided_view_is_not_copied_or_changed():
    a = base()
    before = a.copy()
    view = a[3:40, 2:80]
    gsmooth.smooth(view, 5)
    np.testing.assert_array_equal(a, before)


def test_big_endian_16bit():
    a = random_image(20, 30, np.uint16)
    np.testing.assert_array_equal(gsmooth.smooth(a.astype(">u2"), 3), ref_smooth(a, 3))


def test_unaligned_16bit_view():
    raw = np.zeros(2 * 40 * 30 + 1, np.uint8)
    a = np.ndarray((40, 30), dtype=np.uint16, buffer=raw.data, offset=1)
    a[...] = random_image(40, 30, np.uint16)
    np.testing.assert_array_equal(gsmooth.smooth(a, 3), ref_smooth(np.array(a), 3))


@pytest.mark.parametrize("backend", ["cpu", "auto"])
def test_backend_choice(backend):
    a = random_image(50, 70)
    np.testing.assert_array_equal(gsmooth.smooth(a, 3, backend=backend), ref_smooth(a, 3))


def test_backends_lists_the_cpu():
    found = {b["name"]: b for b in gsmooth.backends()}
    assert found["cpu"]["available"] and not found["cpu"]["device_memory"]
    assert found["cpu"]["path"].endswith("gsmooth_cpu.so")
    if "cuda" in found:
        assert found["cuda"]["device_memory"]
        assert found["cuda"]["available"] or found["cuda"]["probe"]


# ---- refusals, in the module's own words ----

@pytest.mark.parametrize("bad, kind, words", [
    (np.zeros((4, 4), np.float64), TypeError, "expected uint8, uint16 or float32 samples, got float64: gsmooth computes in float32"),
    (np.zeros((4, 4), np.int16), TypeError, "got int16"),
    (np.zeros((4, 4), np.uint32), TypeError, "got uint32"),
    (np.zeros((4, 4), bool), TypeError, "got bool"),
    (np.zeros((4, 4, 3), np.uint8), ValueError, "expected a 2-D image (rows, columns), got 3 dimensions"),
    (np.zeros(7, np.uint8), ValueError, "got 1 dimension"),
    (np.zeros((0, 5), np.uint8), ValueError, "empty image (5x0)"),
    (np.zeros((5, 0), np.uint16), ValueError, "empty image (0x5)"),
    ([[1, 2], [3, 4]], TypeError, "got int64"),
])
def test_bad_arrays(bad, kind, words):
    with pytest.raises(kind, match=None) as e:
        gsmooth.smooth(bad)
    assert words in str(e.value)
    with pytest.raises(kind):
        gsmooth.integral(bad)


@pytest.mark.parametrize("iters, kind, words", [
    (-1, ValueError, "iters takes a whole number from 0 to 100000, not -1"),
    (100001, ValueError, "iters takes a whole number from 0 to 100000, not 100001"),
    (2 ** 40, ValueError, "not 1099511627776"),
    (1.5, TypeError, "iters takes a whole number from 0 to 100000, not float"),
    (True, TypeError, "not bool"),
    ("3", TypeError, "not str"),
])
def test_bad_iters(iters, kind, words):
    with pytest.raises(kind) as e:
        gsmooth.smooth(np.zeros((2, 2), np.uint8), iters=iters)
    assert words in str(e.value)


def test_numpy_integer_iters():
    a = random_image(5, 9)
    np.testing.assert_array_equal(gsmooth.smooth(a, np.int64(4)), ref_smooth(a, 4))


def test_bad_axis_mode_backend():
    a = np.zeros((2, 2), np.uint8)
    with pytest.raises(ValueError, match="axis takes 'x', 'y' or 'xy', not 'z'"):
        gsmooth.smooth(a, axis="z")
    with pytest.raises(ValueError, match="mode takes 'rows' or '2d', not 'cols'"):
        gsmooth.integral(a, mode="cols")
    with pytest.raises(ValueError, match="no backend named 'no-such' was found"):
        gsmooth.smooth(a, backend="no-such")
    with pytest.raises(TypeError):
        gsmooth.smooth(a, backend=3)


def test_threads_give_the_same_bytes_and_own_contexts():
    a = random_image(300, 700, np.uint16)
    want, sat = gsmooth.smooth(a, 5, "xy"), gsmooth.integral(a, "2d")
    for t in (1, 2, 3):
        assert np.array_equal(gsmooth.smooth(a, 5, "xy", threads=t), want), t
        assert np.array_equal(gsmooth.integral(a, "2d", threads=t), sat), t
    # Threads given: each calling thread has a context of its own (calls run at once), kept
    # for its next call; without, one shared context per backend.
    seen, together = {}, threading.Barrier(3)  # all alive at once: no ident reused

    results = []

    def calls():
        for _ in range(3):
            results.append(gsmooth.smooth(a, 5, "xy", threads=1))
            seen.setdefault(threading.get_ident(), set()).add(gsmooth._context("auto", 1))
        together.wait(timeout=60)
    workers = [threading.Thread(target=calls) for _ in range(3)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert len(results) == 9 and all(np.array_equal(r, want) for r in results)
    assert all(len(h) == 1 for h in seen.values())
    handles = set().union(*seen.values())
    assert len(handles) == len(seen) == 3
    assert gsmooth._context("auto") not in handles
    for bad in (0, -1, 5000):
        with pytest.raises(ValueError, match="threads takes 1 to 4096"):
            gsmooth.smooth(a, threads=bad)
    for bad in (True, 1.5, "2"):
        with pytest.raises(TypeError, match="threads takes a number"):
            gsmooth.integral(a, threads=bad)


# ---- file to file, with compression ----

def read_pgm(path):
    with open(path, "rb") as f:
        data = f.read()
    # The header's fields, then exactly one whitespace byte: the samples may start with
    # bytes that are whitespace themselves, so they are not split off.
    magic, w, h, maxval = data.split(maxsplit=4)[:4]
    assert magic == b"P5"
    start = data.index(maxval, data.index(h, data.index(w, 2) + len(w))) + len(maxval) + 1
    dtype = np.dtype(">u2") if int(maxval) > 255 else np.uint8
    return np.frombuffer(data, dtype, int(w) * int(h), offset=start).reshape(int(h), int(w))


def test_smooth_file_is_smooth_of_the_decoded_image(tmp_path):
    src = os.path.join(GOLDEN, "inputs", "photo.png")
    plain = tmp_path / "plain.pgm"
    info = gsmooth.smooth_file(src, plain, iters=0)
    assert info["backend"] and info["bits"] == 8
    image = read_pgm(plain)
    assert image.shape == (info["height"], info["width"])
    smoothed = tmp_path / "k7y.pgm"
    gsmooth.smooth_file(src, smoothed, iters=7, axis="y")
    np.testing.assert_array_equal(read_pgm(smoothed), gsmooth.smooth(image, 7, "y"))
    rows = tmp_path / "rows.npy"
    gsmooth.integral_file(src, rows, mode="2d")
    np.testing.assert_array_equal(np.load(rows), gsmooth.integral(image, "2d"))


def test_smooth_file_float_depth_is_smooth_to_float32(tmp_path):
    """depth='float': the unrounded passes of the decoded image, as smooth(dtype=float32)."""
    src = os.path.join(GOLDEN, "inputs", "photo.png")
    plain = tmp_path / "plain.pgm"
    gsmooth.smooth_file(src, plain, iters=0)
    want = gsmooth.smooth(read_pgm(plain), 5, "xy", dtype=np.float32)
    out = tmp_path / "k5xy.npy"
    info = gsmooth.smooth_file(src, out, iters=5, axis="xy", depth="float")
    got = np.load(out)
    assert got.dtype == np.float32 and info["bits"] == 8
    assert_same_bits(got, want)
    with pytest.raises(ValueError, match="float32 output needs"):  # PNG stores no float32
        gsmooth.smooth_file(src, tmp_path / "x.png", depth="float")
    assert not (tmp_path / "x.png").exists()


def test_batch_float_depth_writes_float_tiff(tmp_path):
    """batch(depth='float'): a PNG input becomes <stem>.tif holding the float32 passes."""
    src = os.path.join(GOLDEN, "inputs", "photo.png")
    plain = tmp_path / "plain.pgm"
    gsmooth.smooth_file(src, plain, iters=0)
    done = gsmooth.batch([src], tmp_path / "out", iters=4, axis="y", depth="float")
    assert [(o.status, os.path.basename(o.output)) for o in done] == [("ok", "photo.tif")]
    back = tmp_path / "back.npy"
    gsmooth.smooth_file(done[0].output, back, iters=0)  # the float32 TIFF, read back as is
    assert_same_bits(np.load(back), gsmooth.smooth(read_pgm(plain), 4, "y", dtype=np.float32))
    for bad in (8.0, True, 32, "FLOAT"):
        with pytest.raises(ValueError, match="depth takes"):
            gsmooth.batch([src], tmp_path / "out", depth=bad)


def write_pgm(path, a):
    with open(path, "wb") as f:
        f.write(b"P5\n%d %d\n255\n" % (a.shape[1], a.shape[0]))
        f.write(a.astype(np.uint8).tobytes())


@pytest.mark.parametrize("call", ["smooth", "integral"])
def test_file_progress_ends_at_the_height(tmp_path, call):
    # Taller than one strip of the CPU backend (1 MiB of input rows), so several calls.
    src = tmp_path / "tall.pgm"
    write_pgm(src, random_image(40000, 64))
    seen = []

    def progress(done, total):
        seen.append((done, total))
    if call == "smooth":
        gsmooth.smooth_file(src, tmp_path / "o.pgm", progress=progress)
    else:
        gsmooth.integral_file(src, tmp_path / "o.npy", mode="2d", progress=progress)
    assert len(seen) > 1
    assert seen[-1] == (40000, 40000)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)
    assert [d for d, _ in seen].count(40000) == 1


def test_file_progress_exception_raised_after_the_call(tmp_path):
    src = tmp_path / "tall.pgm"
    write_pgm(src, random_image(40000, 64))
    calls = []

    def progress(done, total):
        calls.append(done)
        raise RuntimeError("stop here")
    with pytest.raises(RuntimeError, match="stop here"):
        gsmooth.smooth_file(src, tmp_path / "o.pgm", progress=progress)
    assert calls == [calls[0]]  # later calls skipped
    assert (tmp_path / "o.pgm").exists()  # the work went on
    with pytest.raises(TypeError, match="progress"):
        gsmooth.smooth_file(src, tmp_path / "p.pgm", progress=3)


def test_compression_levels_same_pixels_other_sizes(tmp_path):
    src = os.path.join(GOLDEN, "inputs", "photo.png")
    sizes = {}
    for level in (0, "fast", 9):
        out = tmp_path / f"l{level}.png"
        gsmooth.smooth_file(src, out, iters=3, compression=level)
        sizes[level] = out.stat().st_size
        gsmooth.smooth_file(out, tmp_path / f"l{level}.pgm", iters=0)
    assert sizes[0] > 2 * sizes[9]
    for level in ("fast", 9):
        np.testing.assert_array_equal(read_pgm(tmp_path / f"l{level}.pgm"), read_pgm(tmp_path / "l0.pgm"))


def test_two_threads_two_levels(tmp_path):
    """Each call keeps its own level, while another thread writes at another."""
    src = os.path.join(GOLDEN, "inputs", "photo.png")
    errors = []

    def work(level):
        try:
            for i in range(6):
                gsmooth.smooth_file(src, tmp_path / f"t{level}_{i}.png", iters=3, compression=level)
        except Exception as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(level,)) for level in (0, 9)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for level in (0, 9):
        sizes = {(tmp_path / f"t{level}_{i}.png").stat().st_size for i in range(6)}
        assert len(sizes) == 1, f"level {level} wrote files of sizes {sizes}"
    assert (tmp_path / "t0_0.png").stat().st_size > 2 * (tmp_path / "t9_0.png").stat().st_size


def test_file_refusals(tmp_path):
    src = os.path.join(GOLDEN, "inputs", "photo.png")
    with pytest.raises(ValueError, match="compression '10'"):
        gsmooth.smooth_file(src, tmp_path / "x.png", compression=10)
    with pytest.raises(TypeError, match="compression takes"):
        gsmooth.smooth_file(src, tmp_path / "x.png", compression=1.5)
    with pytest.raises(ValueError, match="depth takes"):
        gsmooth.smooth_file(src, tmp_path / "x.png", depth=12)
    with pytest.raises(OSError, match="no-such.png"):
        gsmooth.smooth_file(tmp_path / "no-such.png", tmp_path / "x.png")
    with pytest.raises(RuntimeError, match="not an image"):
        bad = tmp_path / "bad.png"
        bad.write_bytes(b"hello")
        gsmooth.smooth_file(bad, tmp_path / "x.png")
    assert not (tmp_path / "x.png").exists()


# ---- sigma, and what backends() says ----

def test_sigma_is_its_passes():
    a = random_image(40, 300)
    np.testing.assert_array_equal(gsmooth.smooth(a, sigma=2), gsmooth.smooth(a, 6))
    np.testing.assert_array_equal(gsmooth.smooth(a, sigma=3, axis="xy"), ref_smooth(a, 14, "xy"))
    np.testing.assert_array_equal(gsmooth.smooth(a, sigma=0.3), a)  # K = round(0.135) = 0
    with pytest.raises(ValueError, match="iters or sigma"):
        gsmooth.smooth(a, 3, sigma=2)
    with pytest.raises(ValueError, match="sigma takes"):
        gsmooth.smooth(a, sigma=0)
    with pytest.raises(ValueError, match="sigma takes"):
        gsmooth.smooth(a, sigma=1000)
    with pytest.raises(TypeError, match="sigma takes"):
        gsmooth.smooth(a, sigma="2")


def test_backend_operations_are_names():
    cpu = {b["name"]: b for b in gsmooth.backends()}["cpu"]
    assert cpu["operations"] == ["smooth", "smooth-axes", "integral-rows", "integral-2d"]


# ---- threads ----

def test_gil_released_while_computing():
    a = random_image(1024, 4096)
    started, done = threading.Event(), threading.Event()

    def work():
        started.set()
        gsmooth.smooth(a, iters=400, backend="cpu")
        done.set()

    t = threading.Thread(target=work)
    t.start()
    started.wait()
    count = 0
    while not done.is_set():  # runs only while the worker has the GIL released
        count += 1
    t.join()
    assert count > 10000, f"only {count} loops ran beside the computation"


def test_threads_share_the_module():
    images = [random_image(97 + i, 203) for i in range(8)]
    results = [None] * len(images)

    def work(i):
        results[i] = gsmooth.smooth(images[i], 7, "xy")

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(images))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for img, got in zip(images, results):
        np.testing.assert_array_equal(got, ref_smooth(img, 7, "xy"))


# ---- float32 samples: IEEE passes, float64 integrals ----

FLOAT_SPECIALS = np.array([np.nan, np.inf, -np.inf, 1e-45, -1e-45, 1.2e-38, -3e-39, 3.4e38, -3.4e38,
                           -0.0, 0.0, 1e-30, 65504.0], np.float32)


def float_samples(h, w):
    """float32 samples with negatives, NaN, infinities, subnormals, huge and tiny values and
    -0.0 scattered among noise, so every IEEE case meets the passes."""
    a = (rng.standard_normal((h, w)) * 1000).astype(np.float32)
    mask = rng.random((h, w)) < 0.05
    a[mask] = rng.choice(FLOAT_SPECIALS, size=int(mask.sum()))
    return a


def float_passes(a, iters, axis):
    """The reference's passes on float32 values, unrounded (tests/golden/reference.py)."""
    with np.errstate(all="ignore"):
        a = np.asarray(a, np.float32)
        if "x" in axis:
            a = reference.passes(a, iters)
        if "y" in axis:
            a = reference.passes(a.T, iters).T
    return np.ascontiguousarray(a)


def assert_same_bits(got, want):
    """Equal bit for bit, every NaN as gsmooth stores it (the quiet NaN numpy makes too)."""
    want = want.copy()
    want[np.isnan(want)] = np.nan
    bits = np.uint32 if want.dtype == np.float32 else np.uint64
    np.testing.assert_array_equal(np.ascontiguousarray(got).view(bits), want.view(bits))


@pytest.mark.parametrize("shape", [(1, 1), (1, 9), (9, 1), (2, 3), (37, 1031), (300, 257)])
@pytest.mark.parametrize("iters", [0, 1, 3, 17])
@pytest.mark.parametrize("axis", ["x", "y", "xy"])
def test_smooth_float32(shape, iters, axis):
    a = float_samples(*shape)
    got = gsmooth.smooth(a, iters, axis)
    assert got.dtype == np.float32 and got.shape == a.shape
    assert_same_bits(got, float_passes(a, iters, axis))


def test_smooth_float32_strided_view():
    base = float_samples(120, 333)
    a = base[7:100:3, 5:300:2]
    assert_same_bits(gsmooth.smooth(a, 4, "xy"), float_passes(a, 4, "xy"))


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
@pytest.mark.parametrize("axis", ["x", "y", "xy"])
def test_smooth_integers_to_float32(dtype, axis):
    """dtype=float32: the unrounded passes of 8 or 16-bit samples."""
    a = random_image(61, 203, dtype)
    got = gsmooth.smooth(a, 5, axis, dtype=np.float32)
    assert got.dtype == np.float32
    assert_same_bits(got, float_passes(a.astype(np.float32), 5, axis))


@pytest.mark.parametrize("shape", [(1, 1), (3, 1), (1, 700), (45, 1031)])
def test_integral_float32(shape):
    """Rows summed left to right in float64, then down each column in order: np.cumsum."""
    a = float_samples(*shape)
    with np.errstate(all="ignore"):
        rows = np.cumsum(a.astype(np.float64), axis=1)
        table = np.cumsum(rows, axis=0)
    got = gsmooth.integral(a, "rows")
    assert got.dtype == np.float64
    assert_same_bits(got, rows)
    assert_same_bits(gsmooth.integral(a, "2d"), table)


# ---- CUDA tensors through DLPack (torch) ----

def cuda_torch():
    try:
        import torch
    except ImportError:
        pytest.skip("skipped: no CUDA device (torch is not installed)")
    if not torch.cuda.is_available():
        pytest.skip("skipped: no CUDA device")
    return torch


def cuda_devices(torch):
    return [f"cuda:{i}" for i in range(torch.cuda.device_count())]


@pytest.mark.parametrize("shape", [(1, 1), (7, 1), (1000, 4096), (513, 1001)])
@pytest.mark.parametrize("iters, axis", [(0, "x"), (3, "x"), (90, "x"), (3, "y"), (5, "xy")])
def test_cuda_tensor_smooth(shape, iters, axis):
    torch = cuda_torch()
    a = random_image(*shape)
    for dev in cuda_devices(torch):
        t = torch.from_numpy(a).to(dev)
        got = gsmooth.smooth(t, iters, axis)
        assert isinstance(got, torch.Tensor) and str(got.device) == dev and got.dtype == torch.uint8
        np.testing.assert_array_equal(got.cpu().numpy(), ref_smooth(a, iters, axis))


@pytest.mark.parametrize("iters, axis", [(0, "x"), (3, "x"), (3, "y"), (3, "xy"), (12, "xy")])
def test_cuda_tensor_float32(iters, axis):
    """float32 tensors in, float32 out (float64 integrals), the CPU's bits."""
    torch = cuda_torch()
    a = float_samples(513, 1001)
    for dev in cuda_devices(torch):
        t = torch.from_numpy(a).to(dev)
        got = gsmooth.smooth(t, iters, axis)
        assert isinstance(got, torch.Tensor) and str(got.device) == dev and got.dtype == torch.float32
        assert_same_bits(got.cpu().numpy(), float_passes(a, iters, axis))
        rows = gsmooth.integral(t, "rows")
        assert rows.dtype == torch.float64
        with np.errstate(all="ignore"):
            assert_same_bits(rows.cpu().numpy(), np.cumsum(a.astype(np.float64), axis=1))


@pytest.mark.parametrize("mode", ["rows", "2d"])
def test_cuda_tensor_integral(mode):
    torch = cuda_torch()
    for dtype in (np.uint8, np.uint16):
        a = random_image(777, 1500, dtype)
        t = torch.from_numpy(a.astype(np.int32)).to("cuda").to(getattr(torch, f"uint{a.itemsize * 8}"))
        got = gsmooth.integral(t, mode)
        want = ref_integral(a, mode)
        assert str(got.dtype) == f"torch.uint{want.itemsize * 8}"
        np.testing.assert_array_equal(got.cpu().numpy(), want)


def test_cuda_tensor_integral_2d_in_many_launches():
    """One strip of 4,194,241 rows: 256 launches of the tiled table (16,384 rows each, the
    last 16,321), each continuing from the carry the last one left (the banded table before
    it had 65,536 bands here, one more than a grid's y can count). The table is checked in
    64-bit integers on the device (numpy would need 2 GiB)."""
    torch = cuda_torch()
    rows, width = 65535 * 64 + 1, 16
    g = torch.Generator(device="cuda").manual_seed(7)
    t = torch.randint(0, 256, (rows, width), dtype=torch.uint8, device="cuda", generator=g)
    got = gsmooth.integral(t, "2d")
    assert got.dtype == torch.uint64
    want = t.to(torch.int64).cumsum(1).cumsum(0)
    assert torch.equal(got.view(torch.int64), want)


def test_cuda_tensor_16bit_and_views():
    torch = cuda_torch()
    a = random_image(600, 900, np.uint16)
    t = torch.from_numpy(a.astype(np.int32)).to("cuda").to(torch.uint16)
    np.testing.assert_array_equal(gsmooth.smooth(t, 4).cpu().numpy(), ref_smooth(a, 4))
    v = t[10:500, 3:801]  # unaligned rows: staged on the device
    np.testing.assert_array_equal(gsmooth.smooth(v, 3).cpu().numpy(), ref_smooth(a[10:500, 3:801], 3))
    c = t[:, ::2]  # not contiguous within a row: made so
    np.testing.assert_array_equal(gsmooth.smooth(c, 2).cpu().numpy(), ref_smooth(np.ascontiguousarray(a[:, ::2]), 2))


def test_cuda_tensor_through_dlpack_alone(monkeypatch):
    # the general path (__dlpack__, __dlpack_device__), as cupy takes it, on a torch tensor
    torch = cuda_torch()
    monkeypatch.setattr(gsmooth, "_is_torch_tensor", lambda a: False)
    a = random_image(300, 1001)
    t = torch.from_numpy(a).to("cuda")
    got = gsmooth.smooth(t, 5, "xy")
    assert isinstance(got, torch.Tensor) and got.is_cuda
    np.testing.assert_array_equal(got.cpu().numpy(), ref_smooth(a, 5, "xy"))
    np.testing.assert_array_equal(gsmooth.integral(t, "2d").cpu().numpy(), ref_integral(a, "2d"))


def test_cuda_parameter_off_the_current_device():
    torch = cuda_torch()
    dev = cuda_devices(torch)[-1]
    a = random_image(100, 256)
    p = torch.nn.Parameter(torch.from_numpy(a).to(dev), requires_grad=False)
    torch.cuda.set_device(0)
    got = gsmooth.smooth(p, 3)
    assert str(got.device) == dev
    assert torch.cuda.current_device() == 0  # the caller's device is left as it was
    np.testing.assert_array_equal(got.cpu().numpy(), ref_smooth(a, 3))


def test_cuda_tensor_requiring_grad():
    # read through data_ptr() with no detach: the result is a new dense tensor outside autograd
    torch = cuda_torch()
    a = float_samples(70, 333)
    t = torch.from_numpy(a).to("cuda").requires_grad_(True)
    got = gsmooth.smooth(t, 4, "xy")
    assert not got.requires_grad and got.is_contiguous() and got.dtype == torch.float32
    assert_same_bits(got.cpu().numpy(), float_passes(a, 4, "xy"))
    padded = t[:, 1:300]  # rows 333 apart: the result is still dense
    got = gsmooth.smooth(padded, 2)
    assert got.stride() == (299, 1)
    assert_same_bits(got.cpu().numpy(), float_passes(a[:, 1:300], 2, "x"))


def test_cuda_row_end_not_a_vector():
    # 52 bytes: a last row of 20 samples ends mid-vector; the in-place kernels would read past
    torch = cuda_torch()
    base = torch.randint(0, 256, (52,), dtype=torch.uint8, device="cuda")
    t = base.as_strided((2, 20), (32, 1))
    want = ref_smooth(t.cpu().numpy(), 3)
    np.testing.assert_array_equal(gsmooth.smooth(t, 3).cpu().numpy(), want)


def test_cuda_lone_one_among_zeros():
    torch = cuda_torch()
    a = np.zeros((4, 4096), np.uint8)
    a[2, 2000] = 1
    t = torch.from_numpy(a).to("cuda")
    for iters in (80, 100):
        np.testing.assert_array_equal(gsmooth.smooth(t, iters).cpu().numpy(), ref_smooth(a, iters))


def test_cuda_tensor_on_the_producers_stream():
    torch = cuda_torch()
    s = torch.cuda.Stream()
    a = random_image(2048, 4096)
    with torch.cuda.stream(s):
        t = torch.from_numpy(a).to("cuda", non_blocking=False)
        t = t.flip(1).flip(1)  # queued on s
        got = gsmooth.smooth(t, 3)
    torch.cuda.synchronize()
    np.testing.assert_array_equal(got.cpu().numpy(), ref_smooth(a, 3))


def test_cuda_call_is_queued_on_the_current_stream():
    # as a torch operation: queued on the current stream, the call back before its work runs
    torch = cuda_torch()
    a = random_image(1024, 2048)
    t = torch.from_numpy(a).to("cuda")
    for axis in ("y", "x"):
        gsmooth.smooth(t, 3, axis)  # the plugin's buffers grown before the stream is held
    torch.cuda.synchronize()
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        torch.cuda._sleep(2_000_000_000)  # about a second of the stream's time
        got = gsmooth.smooth(t, 3, "y")
        queued = not s.query()
        twice = gsmooth.smooth(got, 2, "x")  # reads `got` in the stream's order
    s.synchronize()
    assert queued, "gsmooth.smooth waited for the stream"
    want = ref_smooth(a, 3, "y")
    np.testing.assert_array_equal(got.cpu().numpy(), want)
    np.testing.assert_array_equal(twice.cpu().numpy(), ref_smooth(want, 2, "x"))


def test_cuda_bad_tensors():
    torch = cuda_torch()
    with pytest.raises(TypeError, match="expected uint8, uint16 or float32"):
        gsmooth.smooth(torch.zeros((4, 4), dtype=torch.float64, device="cuda"))
    with pytest.raises(ValueError, match="2-D"):
        gsmooth.smooth(torch.zeros((4, 4, 2), dtype=torch.uint8, device="cuda"))
    with pytest.raises(ValueError, match="empty"):
        gsmooth.smooth(torch.zeros((0, 4), dtype=torch.uint8, device="cuda"))
    with pytest.raises(RuntimeError, match="host memory only"):
        gsmooth.smooth(torch.zeros((4, 4), dtype=torch.uint8, device="cuda"), backend="cpu")


def test_torch_cpu_tensor_comes_back_as_torch():
    try:
        import torch
    except ImportError:
        pytest.skip("skipped: torch is not installed")
    a = random_image(30, 40)
    got = gsmooth.smooth(torch.from_numpy(a), 3)
    assert isinstance(got, torch.Tensor) and got.device.type == "cpu"
    np.testing.assert_array_equal(got.numpy(), ref_smooth(a, 3))
    p = torch.nn.Parameter(torch.from_numpy(a.astype(np.int32)).to(torch.uint8), requires_grad=False)
    np.testing.assert_array_equal(np.asarray(gsmooth.smooth(p, 3)), ref_smooth(a, 3))


# ---- host arrays spread over devices (a test backend that pretends to have 3) ----

def test_rows_spread_over_devices(tmp_path, monkeypatch):
    so = os.environ.get("GS_TEST_FAKE_DEVICES_SO")
    if not so:
        pytest.skip("skipped: GS_TEST_FAKE_DEVICES_SO not set (ctest sets it)")
    log = tmp_path / "devices.log"
    monkeypatch.setenv("GS_FAKE_DEVICE_LOG", str(log))
    monkeypatch.setenv("GSMOOTH_DEVICES", "all")
    a = random_image(100, 131)
    cases = [("x", 3), ("y", 7), ("xy", 5), ("y", 40)]
    for axis, iters in cases:
        log.write_text("")
        np.testing.assert_array_equal(gsmooth.smooth(a, iters, axis, backend=so), ref_smooth(a, iters, axis))
        rows = {}
        for line in log.read_text().split("\n"):
            if line:
                dev, _, n, _ = line.split()
                rows[dev] = rows.get(dev, 0) + int(n)
        assert sorted(rows) == ["0", "1", "2"], (axis, rows)
        assert sum(rows.values()) == 100
    np.testing.assert_array_equal(gsmooth.integral(a, "rows", backend=so), ref_integral(a, "rows"))
    log.write_text("")
    np.testing.assert_array_equal(gsmooth.integral(a, "2d", backend=so), ref_integral(a, "2d"))
    assert {line.split()[0] for line in log.read_text().split("\n") if line} == {"0"}


def cuda_backend_available():
    found = {b["name"]: b for b in gsmooth.backends()}
    return "cuda" in found and found["cuda"]["available"], found


@pytest.mark.parametrize("axis, iters", [("x", 3), ("y", 9), ("xy", 4)])
def test_numpy_arrays_on_the_cuda_backend(axis, iters):
    ok, _ = cuda_backend_available()
    if not ok:
        pytest.skip("skipped: no CUDA device")
    a = random_image(1500, 2100)
    np.testing.assert_array_equal(gsmooth.smooth(a, iters, axis, backend="cuda"), ref_smooth(a, iters, axis))
    np.testing.assert_array_equal(gsmooth.integral(a, "2d", backend="cuda"), ref_integral(a, "2d"))


def test_numpy_rows_spread_over_cuda_devices(monkeypatch):
    ok, found = cuda_backend_available()
    if not ok or found["cuda"]["devices"] < 2:
        pytest.skip("skipped: fewer than 2 CUDA devices")
    monkeypatch.setenv("GSMOOTH_DEVICES", "all")
    a = random_image(3001, 1777, np.uint16)
    for axis, iters in [("x", 5), ("y", 60), ("xy", 3)]:
        np.testing.assert_array_equal(gsmooth.smooth(a, iters, axis, backend="cuda"), ref_smooth(a, iters, axis))


# ---- batch: many files into a directory ----

def pgm_inputs(folder, shapes):
    """PGM files of random images, named p0.pgm, p1.pgm, ... in `folder`, made if missing."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i, shape in enumerate(shapes):
        paths.append(folder / f"p{i}.pgm")
        write_pgm(paths[-1], random_image(*shape))
    return paths


def test_batch_outputs_are_smooth_files_outputs(tmp_path):
    pgms = pgm_inputs(tmp_path / "in", [(50, 70), (3, 400), (91, 1)])
    png = os.path.join(GOLDEN, "inputs", "gray16.png")
    jpg = os.path.join(GOLDEN, "inputs", "photo420.jpg")  # not written exactly: becomes .png
    inputs = [str(pgms[0]), pgms[1], os.fsencode(pgms[2]), png, jpg]
    got = gsmooth.batch(inputs, tmp_path / "out", iters=5, axis="xy", jobs=2)
    assert [o.input for o in got] == inputs  # as given, in order
    assert [o.status for o in got] == ["ok"] * 5 and all(o.error is None for o in got)
    for o in got:
        ref = tmp_path / "ref" / os.path.basename(o.output)
        ref.parent.mkdir(exist_ok=True)
        info = gsmooth.smooth_file(o.input, ref, iters=5, axis="xy")
        assert (o.width, o.height, o.bits, o.backend) == \
            (info["width"], info["height"], info["bits"], info["backend"])
        assert o.ms > 0
        if ref.suffix == ".pgm":
            assert open(o.output, "rb").read() == ref.read_bytes()
        else:  # PNG bytes may differ with the deflate threads; the pixels may not
            gsmooth.smooth_file(o.output, tmp_path / "a.pgm", iters=0)
            gsmooth.smooth_file(ref, tmp_path / "b.pgm", iters=0)
            assert (tmp_path / "a.pgm").read_bytes() == (tmp_path / "b.pgm").read_bytes()
    assert [os.path.basename(o.output) for o in got] == ["p0.pgm", "p1.pgm", "p2.pgm", "gray16.png",
                                                         "photo420.png"]
    assert all(os.path.dirname(o.output) == str(tmp_path / "out") for o in got)


def test_batch_integrals_and_sigma(tmp_path):
    pgms = pgm_inputs(tmp_path, [(40, 60), (7, 9)])
    for o in gsmooth.batch(pgms, tmp_path / "sat", integral="2d"):
        assert o.output.endswith(".npy")
        np.testing.assert_array_equal(np.load(o.output), gsmooth.integral(read_pgm(o.input), "2d"))
    for o in gsmooth.batch(pgms, tmp_path / "s2", sigma=2):
        np.testing.assert_array_equal(read_pgm(o.output), gsmooth.smooth(read_pgm(o.input), sigma=2))


def test_batch_relative_to_keeps_same_names_apart(tmp_path):
    a = pgm_inputs(tmp_path / "a", [(20, 30)])[0]
    b = pgm_inputs(tmp_path / "b", [(25, 35)])[0]
    got = gsmooth.batch([a, b], tmp_path / "out", relative_to=tmp_path)
    assert [o.status for o in got] == ["ok", "ok"]
    assert [o.output for o in got] == [str(tmp_path / "out" / "a" / "p0.pgm"),
                                       str(tmp_path / "out" / "b" / "p0.pgm")]
    for o in got:
        np.testing.assert_array_equal(read_pgm(o.output), gsmooth.smooth(read_pgm(o.input)))
    outside = gsmooth.batch([a], tmp_path / "out2", relative_to=tmp_path / "b")
    assert outside[0].status == "failed" and "not inside" in outside[0].error


def test_batch_same_name_without_relative_to_fails_the_later(tmp_path):
    a = pgm_inputs(tmp_path / "a", [(20, 30)])[0]
    b = pgm_inputs(tmp_path / "b", [(25, 35)])[0]
    got = gsmooth.batch([a, b], tmp_path / "out")  # does not raise
    assert [o.status for o in got] == ["ok", "failed"]
    assert got[1].output == got[0].output and "already the output of" in got[1].error
    np.testing.assert_array_equal(read_pgm(got[0].output), gsmooth.smooth(read_pgm(a)))


def test_batch_goes_on_past_a_damaged_file_in_input_order(tmp_path):
    # The first input is slow and the damaged one fails at once: with two workers they
    # finish in the other order, and the list still comes back in input order.
    pgms = pgm_inputs(tmp_path, [(3000, 1000), (30, 40), (31, 41)])
    bad = tmp_path / "bad.png"
    bad.write_bytes(b"\x89PNG\r\n\x1a\n damaged")
    inputs = [pgms[0], bad, pgms[1], pgms[2], bad]
    got = gsmooth.batch(inputs, tmp_path / "out", jobs=2)
    assert [o.input for o in got] == inputs
    assert [o.status for o in got] == ["ok", "failed", "ok", "ok", "failed"]
    assert "bad.png" in got[1].error and "listed twice" not in got[1].error
    assert "listed twice" in got[4].error
    assert not os.path.exists(got[1].output)
    for o in (got[0], got[2], got[3]):
        np.testing.assert_array_equal(read_pgm(o.output), gsmooth.smooth(read_pgm(o.input)))


def test_batch_skip_existing_keeps_outputs(tmp_path):
    pgms = pgm_inputs(tmp_path, [(20, 30), (21, 31), (22, 32)])
    gsmooth.batch(pgms[:2], tmp_path / "out")
    kept = tmp_path / "out" / "p0.pgm"
    kept.write_bytes(b"kept")  # a skipped output is not written again
    got = gsmooth.batch(pgms, tmp_path / "out", skip_existing=True)
    assert [o.status for o in got] == ["skipped", "skipped", "ok"]
    assert kept.read_bytes() == b"kept"
    again = gsmooth.batch(pgms[:1], tmp_path / "out")
    assert again[0].status == "ok" and kept.read_bytes() != b"kept"


def test_batch_progress_counts_files(tmp_path):
    pgms = pgm_inputs(tmp_path, [(30, 40)] * 6)
    seen = []

    def progress(done, total):
        seen.append((done, total))
    got = gsmooth.batch(pgms + [tmp_path / "missing.pgm"], tmp_path / "out", jobs=3, progress=progress)
    assert len(got) == 7 and got[-1].status == "failed"
    assert seen == [(d, 7) for d in range(1, 8)]
    seen.clear()
    gsmooth.batch(pgms, tmp_path / "half", shard=(1, 2), progress=progress)
    assert seen == [(1, 3), (2, 3), (3, 3)]
    with pytest.raises(TypeError, match="progress takes a callable"):
        gsmooth.batch(pgms, tmp_path / "out", progress=3)


def test_batch_progress_exception_raised_after_the_batch(tmp_path):
    pgms = pgm_inputs(tmp_path, [(30, 40)] * 4)
    calls = []

    def progress(done, total):
        calls.append(done)
        raise KeyError("stop here")
    with pytest.raises(KeyError, match="stop here"):
        gsmooth.batch(pgms, tmp_path / "out", jobs=2, progress=progress)
    assert calls == [1]  # later calls skipped
    assert sorted(os.listdir(tmp_path / "out")) == [p.name for p in pgms]  # the batch went on


def test_batch_shards_split_the_list(tmp_path):
    pgms = pgm_inputs(tmp_path, [(10 + i, 20) for i in range(5)])
    first = gsmooth.batch(pgms, tmp_path / "out", shard=(0, 2))
    assert [o.input for o in first] == pgms[0::2]
    assert sorted(os.listdir(tmp_path / "out")) == ["p0.pgm", "p2.pgm", "p4.pgm"]
    second = gsmooth.batch(pgms, tmp_path / "out", shard=(1, 2))
    assert [o.input for o in second] == pgms[1::2]
    assert all(o.status == "ok" for o in first + second)
    assert sorted(os.listdir(tmp_path / "out")) == [p.name for p in pgms]


def test_batch_refusals_raise_before_any_file(tmp_path):
    pgms = pgm_inputs(tmp_path, [(10, 20)])
    afile = tmp_path / "afile"
    afile.write_bytes(b"")
    with pytest.raises(OSError, match="afile: exists and is not a directory"):
        gsmooth.batch(pgms, afile)
    with pytest.raises(OSError, match="not a directory"):
        gsmooth.batch(pgms, afile / "below")
    for shard in [(2, 2), (0, 0)]:
        with pytest.raises(ValueError, match="shard"):
            gsmooth.batch(pgms, tmp_path / "out", shard=shard)
    with pytest.raises(ValueError, match="shard index takes a whole number"):
        gsmooth.batch(pgms, tmp_path / "out", shard=(-1, 2))
    with pytest.raises(TypeError, match="shard takes"):
        gsmooth.batch(pgms, tmp_path / "out", shard=[0, 2])
    with pytest.raises(ValueError, match="jobs takes a whole number from 1 to 256, not 0"):
        gsmooth.batch(pgms, tmp_path / "out", jobs=0)
    with pytest.raises(ValueError, match="integral takes no iters"):
        gsmooth.batch(pgms, tmp_path / "out", integral="rows", iters=3)
    with pytest.raises(ValueError, match="mode takes 'rows' or '2d'"):
        gsmooth.batch(pgms, tmp_path / "out", integral="cols")
    with pytest.raises(ValueError, match="iters or sigma"):
        gsmooth.batch(pgms, tmp_path / "out", iters=3, sigma=1)
    with pytest.raises(ValueError, match="compression"):
        gsmooth.batch(pgms, tmp_path / "out", compression=10)
    with pytest.raises(ValueError, match="relative_to"):
        gsmooth.batch(pgms, tmp_path / "out", relative_to="")
    with pytest.raises(ValueError, match="embedded null byte"):
        gsmooth.batch(["a\0b.png"], tmp_path / "out")
    for where in ({"out_dir": tmp_path / "o\0x"}, {"relative_to": "in\0x"}):
        with pytest.raises(ValueError, match="embedded null byte"):
            gsmooth.batch(pgms, **{"out_dir": tmp_path / "out", **where})
    with pytest.raises(TypeError, match="not one path"):
        gsmooth.batch(str(pgms[0]), tmp_path / "out")
    assert not (tmp_path / "out").exists()
    assert gsmooth.batch([], tmp_path / "empty") == []


def test_batch_failed_before_any_file_keeps_positions(tmp_path):
    # A root too long for any path: every input fails with one cause, before any is read,
    # each outcome still at its own position.
    pgms = pgm_inputs(tmp_path, [(10, 20), (11, 21), (12, 22)])
    done = gsmooth.batch(pgms, tmp_path / "out", relative_to="/" + "a" * 5000)
    assert [o.input for o in done] == pgms
    assert [o.status for o in done] == ["failed"] * 3
    assert all(o.error and o.error == done[0].error for o in done)
