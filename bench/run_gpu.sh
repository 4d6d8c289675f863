#!/bin/bash
# run_gpu.sh: the one script for a GPU machine call: tests, sanitizer and benchmarks.
#
# Environment, GPU tests, compute-sanitizer, and the benchmark table, all logged under $OUT.
#
# Run from the repository root on the GPU machine, with the build made on a development
# machine carried along (BUILD, default build-cuda, else build) and .device/ prepared by
# bench/prepare_device_carry.sh. If the carried binaries cannot run there, it rebuilds the
# CUDA targets in /tmp. Logs: $OUT/env.log, tests.log, sanitizers.log, bench.log,
# anchors.tsv. Budget: about 8 minutes in all; every step has its own timeout.
# STEPS=env,tests,cpu,bench,sanitize,scale,e2e,python,dask,profile,giga (default all but
# scale, dask, profile, giga) picks steps.
# profile: Nsight Compute's counters for the ops in PROFILE_OPS (';'-separated --only names
# of gsmooth_gpu_bench), a few launches each (PROFILE_KERNELS: a regex of kernel names to
# take, PROFILE_SKIP the launches of those to pass first), condensed into profile.log.
# giga: the gigapixel PNG end to end on every core of this host (bench/giga_bench.sh), with
# the default deflate threads and with GIGA_THREADS (default 8), GIGA_RUNS runs each (5).
# python: the Python module's tests on torch CUDA tensors and its bench (after bench, whose
# log gives the kernel times it is compared with).
set -u
OUT=${OUT:-/tmp/gsmooth-out}
mkdir -p "$OUT"
ROOT=$PWD
STEPS=${STEPS:-env,tests,cpu,bench,sanitize,e2e,python}
want() { case ",$STEPS," in *",$1,"*) return 0 ;; *) return 1 ;; esac; }
export LD_LIBRARY_PATH="$ROOT/.device/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PYTHONPATH="$ROOT/.device/python${PYTHONPATH:+:$PYTHONPATH}"
export PKG_CONFIG_PATH="$ROOT/.device/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
export PYTHONUNBUFFERED=1 CK_FORK=no
status=0

# ---- 1. environment ----
if want env; then
    {
        echo "== nvidia-smi"; nvidia-smi
        echo "== nvcc"; nvcc --version
        echo "== compute-sanitizer"; compute-sanitizer --version | head -3
        echo "== uname"; uname -a
    } 2>&1 | tee "$OUT/env.log"
fi

# ---- 2. the build: carried, or rebuilt here ----
BUILD=${BUILD:-}
if [ -z "$BUILD" ]; then
    for b in build-cuda build; do
        if [ -x "$b/bin/test_cuda" ]; then BUILD=$b; break; fi
    done
fi
CPU_SO=${BUILD:+$BUILD/lib/gsmooth/plugins/gsmooth_cpu.so}
CUDA_SO=${BUILD:+$BUILD/lib/gsmooth/plugins/gsmooth_cuda.so}
if [ -z "$BUILD" ] || ! "$BUILD/bin/test_cuda_probe" "$CUDA_SO" > /dev/null 2>&1; then
    echo "== carried build missing or not runnable here (BUILD='$BUILD'): rebuilding in /tmp/gsbuild"
    BUILD=/tmp/gsbuild
    timeout 300 cmake -S "$ROOT" -B "$BUILD" -G Ninja -DGSMOOTH_CUDA=ON > "$OUT/rebuild.log" 2>&1 &&
        timeout 300 cmake --build "$BUILD" --target gsmooth gsmooth_cpu gsmooth_cuda test_cuda \
            test_cuda_probe test_cuda_arith test_cuda_integral test_cuda_float test_cuda_stream \
            test_golden test_kernels \
            gsmooth_gpu_bench \
            >> "$OUT/rebuild.log" 2>&1 ||
        { echo "rebuild failed:"; tail -30 "$OUT/rebuild.log"; status=1; }
    CPU_SO=$BUILD/lib/gsmooth/plugins/gsmooth_cpu.so
    CUDA_SO=$BUILD/lib/gsmooth/plugins/gsmooth_cuda.so
fi
echo "== using build: $BUILD"

# ---- 3. GPU tests ----
if want tests; then
    {
        echo "== test_cuda_probe"
        timeout 60 "$BUILD/bin/test_cuda_probe" "$CUDA_SO" || status=1
        echo "== test_cuda (full case list)"
        start=$(date +%s)
        timeout 300 "$BUILD/bin/test_cuda" "$CPU_SO" "$CUDA_SO"; rc=$?
        echo "test_cuda: exit $rc in $(( $(date +%s) - start )) s"
        [ $rc -eq 0 ] || status=1
        echo "== test_cuda_arith (the fast arithmetic, every reachable float)"
        timeout 60 "$BUILD/bin/test_cuda_arith" || status=1
        echo "== test_cuda_integral (the summed-area table on device memory, tall strips)"
        timeout 120 "$BUILD/bin/test_cuda_integral" || status=1
        echo "== test_cuda_float (float32 work against the C reference, host and device strips)"
        start=$(date +%s)
        timeout 300 "$BUILD/bin/test_cuda_float" "$CUDA_SO"; rc=$?
        echo "test_cuda_float: exit $rc in $(( $(date +%s) - start )) s"
        [ $rc -eq 0 ] || status=1
        echo "== test_cuda_stream (device work queued on a caller's stream)"
        timeout 120 "$BUILD/bin/test_cuda_stream" "$CUDA_SO" || status=1
        if [ -x "$BUILD/bin/test_golden" ] && [ -x "$BUILD/bin/gsmooth" ]; then
            echo "== test_golden cuda"
            timeout 120 "$BUILD/bin/test_golden" "$BUILD/bin/gsmooth" tests/golden cuda || status=1
            echo "== large_check cuda (images several strips tall against the numpy reference)"
            timeout 300 python3 tests/golden/large_check.py "$BUILD/bin/gsmooth" cuda || status=1
            echo "== tiff_check (libtiff and tifffile carried in .device/)"
            timeout 120 python3 tests/tiff/tiff_check.py "$BUILD/bin/gsmooth"; rc=$?
            [ $rc -eq 0 ] || [ $rc -eq 77 ] || status=1
        fi
    } 2>&1 | tee "$OUT/tests.log"
    grep -q "exit 0 in" "$OUT/tests.log" || status=1
fi

# ---- 3b. the CPU kernels on this host's CPU (AVX-512 where it has it) ----
if want cpu; then
    {
        echo "== test_kernels (every instruction set this CPU runs)"
        timeout 120 "$BUILD/bin/test_kernels" || status=1
        for isa in scalar avx2 avx512; do
            echo "== test_golden cpu $isa"
            timeout 120 "$BUILD/bin/test_golden" "$BUILD/bin/gsmooth" tests/golden cpu $isa || status=1
        done

    } 2>&1 | tee "$OUT/cpu.log"
fi

# ---- 4. the benchmark table ----
if want bench; then
    {
        echo "== torch anchors"
        timeout 120 python3 bench/torch_anchors.py "$OUT/anchors.tsv" ||
            { echo "torch anchors failed"; : > "$OUT/anchors.tsv"; }
        echo "== gsmooth_gpu_bench"
        timeout 150 "$BUILD/bin/gsmooth_gpu_bench" --anchors "$OUT/anchors.tsv" || status=1
    } 2>&1 | tee "$OUT/bench.log"
fi

# ---- 5. compute-sanitizer on the small case list ----
# SAN_TOOLS picks the tools run on test_cuda and on the float cases (test_cuda_float);
# default all three.
if want sanitize; then
    {
        for tool in ${SAN_TOOLS:-memcheck racecheck synccheck}; do
            echo "== compute-sanitizer --tool $tool test_cuda_float (GSMOOTH_TEST_SMALL=1)"
            GSMOOTH_TEST_SMALL=1 timeout 150 compute-sanitizer --tool "$tool" \
                $( [ "$tool" = synccheck ] && echo --num-cuda-barriers "${SYNC_BARRIERS:-4096}" ) \
                --error-exitcode 99 "$BUILD/bin/test_cuda_float" "$CUDA_SO" > "$OUT/san_float.tmp" 2>&1
            head -n 40 "$OUT/san_float.tmp"
            tail -n 6 "$OUT/san_float.tmp"
            if grep -Eq "ERROR SUMMARY: 0 errors|RACECHECK SUMMARY: 0 hazards displayed \(0 errors" \
                "$OUT/san_float.tmp"; then
                echo "SANITIZER $tool (float): 0 errors"
            else
                echo "SANITIZER $tool (float): ERRORS (or no summary)"
                status=1
            fi
            rm -f "$OUT/san_float.tmp"
        done
        for tool in ${SAN_TOOLS:-memcheck racecheck synccheck}; do
            echo "== compute-sanitizer --tool $tool (GSMOOTH_TEST_SMALL=1)"
            # The mbarriers are inline PTX, which the tool does not count from the binary:
            # with its default table, or 2 or 16 entries, synccheck overflowed it and aborted
            # the kernels (error 719); with 4096 it runs clean.
            GSMOOTH_TEST_SMALL=1 timeout 100 compute-sanitizer --tool "$tool" \
                $( [ "$tool" = synccheck ] && echo --num-cuda-barriers "${SYNC_BARRIERS:-4096}" ) \
                --error-exitcode 99 "$BUILD/bin/test_cuda" "$CPU_SO" "$CUDA_SO" \
                > "$OUT/san_$tool.tmp" 2>&1
            # the whole report (hazard details come first); a failing run's test lines after
            head -n 80 "$OUT/san_$tool.tmp"
            tail -n 6 "$OUT/san_$tool.tmp"
            if grep -Eq "ERROR SUMMARY: 0 errors|RACECHECK SUMMARY: 0 hazards displayed \(0 errors" \
                "$OUT/san_$tool.tmp"; then
                echo "SANITIZER $tool: 0 errors"
            else
                echo "SANITIZER $tool: ERRORS (or no summary)"
                status=1
            fi
            rm -f "$OUT/san_$tool.tmp"
        done
        echo "== compute-sanitizer --tool memcheck test_cuda_stream"
        timeout 120 compute-sanitizer --tool memcheck --error-exitcode 99 \
            "$BUILD/bin/test_cuda_stream" "$CUDA_SO" > "$OUT/san_stream.tmp" 2>&1
        tail -n 6 "$OUT/san_stream.tmp"
        if grep -q "ERROR SUMMARY: 0 errors" "$OUT/san_stream.tmp"; then
            echo "SANITIZER memcheck (stream): 0 errors"
        else
            echo "SANITIZER memcheck (stream): ERRORS (or no summary)"
            status=1
        fi
        rm -f "$OUT/san_stream.tmp"
    } 2>&1 | tee "$OUT/sanitizers.log"
    grep -q "ERRORS" "$OUT/sanitizers.log" && status=1
fi

# ---- 5b. every device of the host: bytes against one device and the CPU, and the
# scale bench (2 GPUs against 1, files per second on this host's cores) ----
if want scale; then
    {
        nvidia-smi -L
        echo "== cuda_devices_check (--devices all against --devices 0 and the CPU)"
        timeout 240 python3 tests/scale/cuda_devices_check.py "$BUILD/bin/gsmooth" || status=1
        echo "== scale_bench (gpus, throughput)"
        PY=python3 GSMOOTH="$BUILD/bin/gsmooth" STEPS=${SCALE_STEPS:-gpus,throughput} WORK=/tmp/gs-scale \
            timeout 300 bash bench/scale_bench.sh || status=1
    } 2>&1 | tee "$OUT/scale.log"
fi

# ---- 6. end to end through the CLI, batch, and auto's threshold ----
if want e2e; then
    timeout 240 bash bench/e2e_gpu.sh "$BUILD" "$OUT" 2>&1 | tee "$OUT/e2e.log"
fi

# ---- 7. the Python module on torch CUDA tensors (DLPack), and its bench ----
if want python; then
    {
        python3 -c "import torch; print('torch', torch.__version__, 'devices:', torch.cuda.device_count())"
        echo "== pytest tests/python (pytest carried in .device/python)"
        PYTHONPATH="$ROOT/python:$PYTHONPATH" GSMOOTH_LIBRARY="$BUILD/lib/libgsmooth.so" \
            timeout 300 python3 -m pytest -q -rs -p no:cacheprovider tests/python || status=1
        echo "== python_bench"
        PYTHONPATH="$ROOT/python:$PYTHONPATH" GSMOOTH_LIBRARY="$BUILD/lib/libgsmooth.so" \
            timeout 200 python3 bench/python_bench.py --kernel-log "$OUT/bench.log" || status=1
        echo "== python_overhead (where a CUDA tensor call's time goes)"
        PYTHONPATH="$ROOT/python:$PYTHONPATH" GSMOOTH_LIBRARY="$BUILD/lib/libgsmooth.so" \
            timeout 100 python3 bench/python_overhead.py || status=1
    } 2>&1 | tee "$OUT/python.log"
fi

# ---- 7b. hardware counters of chosen ops (ncu, clocks left as they are) ----
if want profile; then
    {
        # the kernel filter as an array: under IFS=';' an unquoted expansion would pass
        # "--kernel-name regex:..." to ncu as one word
        kernel_filter=()
        [ -n "${PROFILE_KERNELS:-}" ] && kernel_filter=(--kernel-name "regex:$PROFILE_KERNELS")
        IFS=';'
        for op in ${PROFILE_OPS:-smooth xy K=3;smooth y K=3}; do
            echo "== ncu: $op"
            # skip the bench's warm-up launches; every kernel of a few timed launches
            timeout 200 ncu --clock-control none "${kernel_filter[@]}" \
                --launch-skip "${PROFILE_SKIP:-20}" \
                --launch-count "${PROFILE_COUNT:-8}" \
                --section SpeedOfLight --section Occupancy --section LaunchStats \
                --section WarpStateStats --section MemoryWorkloadAnalysis \
                "$BUILD/bin/gsmooth_gpu_bench" --only "$op" > "$OUT/ncu.tmp" 2>&1 ||
                echo "ncu exit $?"
            cat "$OUT/ncu.tmp" >> "$OUT/profile_full.log"
            grep -E "^  [a-z_]+.*\(|Duration|DRAM Throughput|Memory Throughput|Achieved Occupancy|Theoretical Occupancy|Registers Per|Block Limit|Grid Size|Stall|L1/TEX Hit|L2 Hit|Mem Busy|Max Bandwidth|Warp Cycles Per Issued" \
                "$OUT/ncu.tmp" | head -n 160
        done
        unset IFS
        rm -f "$OUT/ncu.tmp"
    } 2>&1 | tee "$OUT/profile.log"
fi

# ---- 7c. the gigapixel PNG on every core of this host ----
if want giga; then
    {
        timeout 200 python3 bench/make_bench_images.py /tmp/gs-giga --giga || status=1
        echo "== giga_bench, default deflate threads"
        BUILD=$BUILD timeout 150 sh bench/giga_bench.sh /tmp/gs-giga/mosaic32768.png "${GIGA_RUNS:-5}" || status=1
        echo "== giga_bench, GSMOOTH_PNG_THREADS=${GIGA_THREADS:-8}"
        GSMOOTH_PNG_THREADS=${GIGA_THREADS:-8} BUILD=$BUILD timeout 150 \
            sh bench/giga_bench.sh /tmp/gs-giga/mosaic32768.png "${GIGA_RUNS:-5}" || status=1
    } 2>&1 | tee "$OUT/giga.log"
fi

# ---- 8. gsmooth.dask beside dask-image on every core of this host (bench/dask_bench.py) ----
if want dask; then
    PYTHONPATH="$ROOT/python:$PYTHONPATH" timeout 400 python3 bench/dask_bench.py "$BUILD" 16384 1024 \
        2>&1 | tee "$OUT/dask.log" || status=1
fi

echo "run_gpu.sh: status $status"
exit $status
