// read_write_mix.cu: what a read-1-write-8 stream (integral 2d's table) costs on a GPU.
// Beside pure writes, reads alone, and the same stream with its reads from L2, by other load
// paths, or with no loads (16384^2 u8 -> u64). Not part of the build; on a GPU machine:
//   nvcc -std=c++17 -O3 -arch=sm_90 -o /tmp/read_write_mix bench/read_write_mix.cu && /tmp/read_write_mix
// Each figure is the median of 10 timed runs (CUDA events) after 3 warm-ups; the values
// written are not checked (bench/gpu_bench.cu checks the real kernels).
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdint.h>
#include <algorithm>
#include <vector>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("CUDA %s at %d\n", cudaGetErrorString(e_), __LINE__); return 1;} } while (0)
constexpr size_t N = (size_t)16384 * 16384;
constexpr size_t CHUNK = 512;              // pixels a warp iteration
__global__ void k_write(unsigned long long *out) {
  const size_t warps = (size_t)gridDim.x * blockDim.x / 32, w0 = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) / 32;
  const unsigned lane = threadIdx.x % 32;
  for (size_t c = w0; c < N / CHUNK; c += warps) {
    unsigned long long *o = out + c * CHUNK;
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const size_t p = j * 64 + 2 * lane;
      __stcs((ulonglong2 *)(o + p), make_ulonglong2(c + p, c + p + 1));
    }
  }
}
// A warp's 512 pixels: lane l holds bytes [16 l, 16 l + 16) in v; each store writes two
// pixels widened to u64, the warp's stores 512 contiguous bytes at a time.
__device__ __forceinline__ void store_chunk(uint4 v, unsigned long long *o, unsigned lane) {
#pragma unroll
  for (int j = 0; j < 8; ++j) {
    const unsigned p = j * 64 + 2 * lane;     // pixels p, p+1 come from lane p/16, bytes (p%16)..
    const unsigned src = p / 16, word = (p % 16) / 4;
    const unsigned wx = __shfl_sync(~0u, v.x, src), wy = __shfl_sync(~0u, v.y, src), wz = __shfl_sync(~0u, v.z, src), ww = __shfl_sync(~0u, v.w, src);
    const unsigned wsel = word == 0 ? wx : word == 1 ? wy : word == 2 ? wz : ww;
    const unsigned sh = (p % 4) * 8;
    __stcs((ulonglong2 *)(o + p), make_ulonglong2((wsel >> sh) & 0xff, (wsel >> (sh + 8)) & 0xff));
  }
}
// lane loads 16 B (coalesced 512 B a warp), the bytes go to the writing lanes by shuffles
template <int kMode>
__global__ void k_expand(const uint8_t *in, unsigned long long *out) {
  constexpr bool kL2 = kMode == 1;
  unsigned keep = 0;
  const size_t warps = (size_t)gridDim.x * blockDim.x / 32, w0 = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) / 32;
  const unsigned lane = threadIdx.x % 32;
  for (size_t c = w0; c < N / CHUNK; c += warps) {
    const size_t ic = kL2 ? (c % 32768) : c;   // 32768 chunks = 16 MiB of input stays in L2
    uint4 v;
    if (kMode == 2) v = make_uint4((unsigned)c, (unsigned)c + 1, (unsigned)c + 2, (unsigned)c + 3);
    else if (kMode == 4) {
      const uint4 *q = (const uint4 *)(in + ic * CHUNK) + lane;
      asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(q));
    }
    else v = __ldcs((const uint4 *)(in + ic * CHUNK) + lane);
    if (kMode == 3) { keep ^= v.x ^ v.y ^ v.z ^ v.w; v = make_uint4((unsigned)c, (unsigned)c + 1, (unsigned)c + 2, (unsigned)c + 3); }
    unsigned long long *o = out + c * CHUNK;
    store_chunk(v, o, lane);
  }
  if (keep == 0x12345678u) out[0] = keep;
}
// B chunks' loads first, then their writes
template <int B>
__global__ void k_expand_batch(const uint8_t *in, unsigned long long *out) {
  const size_t warps = (size_t)gridDim.x * blockDim.x / 32, w0 = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) / 32;
  const unsigned lane = threadIdx.x % 32;
  for (size_t c0 = w0 * B; c0 < N / CHUNK; c0 += warps * B) {
    uint4 vs[B];
#pragma unroll
    for (int b = 0; b < B; ++b) vs[b] = __ldcs((const uint4 *)(in + (c0 + b) * CHUNK) + lane);
#pragma unroll
    for (int b = 0; b < B; ++b) {
      const uint4 v = vs[b];
      unsigned long long *o = out + (c0 + b) * CHUNK;
      store_chunk(v, o, lane);
    }
  }
}
__global__ void k_read(const uint8_t *in, unsigned long long *out) {
  const size_t warps = (size_t)gridDim.x * blockDim.x / 32, w0 = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) / 32;
  const unsigned lane = threadIdx.x % 32;
  unsigned acc = 0;
  for (size_t c = w0; c < N / CHUNK; c += warps) {
    const uint4 v = __ldcs((const uint4 *)(in + c * CHUNK) + lane);
    acc += v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x12345678u) out[0] = acc;
}

// the block's 8 chunks (4 KiB of input) by one bulk copy into shared memory, a tile ahead
__global__ void __launch_bounds__(256) k_expand_tma(const uint8_t *in, unsigned long long *out) {
  __shared__ __align__(128) uint4 tile[2][256];
  __shared__ __align__(8) unsigned long long bar[2];
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const size_t tiles = N / (CHUNK * 8);
  auto sa = [](const void *p) { return (unsigned)__cvta_generic_to_shared(p); };
  if (threadIdx.x < 2) asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(sa(&bar[threadIdx.x])));
  __syncthreads();
  auto issue = [&](size_t t, int b) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(sa(&bar[b])), "r"(4096) : "memory");
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], 4096, [%2];" :: "r"(sa(&tile[b][0])), "l"(in + t * 4096), "r"(sa(&bar[b])) : "memory");
  };
  unsigned ph[2] = {0, 0};
  size_t t = blockIdx.x;
  if (threadIdx.x == 0 && t < tiles) issue(t, 0);
  int b = 0;
  for (; t < tiles; t += gridDim.x, b ^= 1) {
    if (threadIdx.x == 0 && t + gridDim.x < tiles) issue(t + gridDim.x, b ^ 1);
    unsigned done = 0;
    while (!done) asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }" : "=r"(done) : "r"(sa(&bar[b])), "r"(ph[b]) : "memory");
    ph[b] ^= 1;
    const uint4 v = tile[b][warp * 32 + lane];
    const size_t c = t * 8 + warp;
    unsigned long long *o = out + c * CHUNK;
    store_chunk(v, o, lane);
    __syncthreads(); // everyone has read tile[b] before it is refilled
  }
}
template <class F> float time_ms(F f) {
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  std::vector<float> t;
  for (int r = 0; r < 13; ++r) { cudaEventRecord(a); f(); cudaEventRecord(b); cudaEventSynchronize(b); float m; cudaEventElapsedTime(&m, a, b); if (r >= 3) t.push_back(m); }
  std::sort(t.begin(), t.end()); return t[t.size() / 2];
}
int main() {
  uint8_t *in; unsigned long long *out;
  CK(cudaMalloc(&in, N)); CK(cudaMalloc(&out, N * 8)); CK(cudaMemset(in, 7, N));
  int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  for (int bps : {4, 8, 16}) {
    const int grid = sms * bps, block = 256;
    float w = time_ms([&] { k_write<<<grid, block>>>(out); });
    float e = time_ms([&] { k_expand<0><<<grid, block>>>(in, out); });
    float l = time_ms([&] { k_expand<1><<<grid, block>>>(in, out); });
    float r = time_ms([&] { k_read<<<grid, block>>>(in, out); });
    float b4 = time_ms([&] { k_expand_batch<4><<<grid, block>>>(in, out); });
    float b8 = time_ms([&] { k_expand_batch<8><<<grid, block>>>(in, out); });
    float nl = time_ms([&] { k_expand<2><<<grid, block>>>(in, out); });
    float nd = time_ms([&] { k_expand<3><<<grid, block>>>(in, out); });
    float nc = time_ms([&] { k_expand<4><<<grid, block>>>(in, out); });
    float tm = time_ms([&] { k_expand_tma<<<grid, block>>>(in, out); });
    printf("blocks/SM %2d: expand's instructions, no load %.3f ms | loads not feeding the stores %.3f ms | ld.nc no_allocate %.3f ms | bulk-copy tiles %.3f ms\n", bps, nl, nd, nc, tm);
    printf("blocks/SM %2d: write-only %.3f ms (%.2f TB/s) | expand DRAM reads %.3f ms (%.2f TB/s of 9 B/px) | expand L2 reads %.3f ms | read-only %.3f ms (%.2f TB/s) | batch4 %.3f | batch8 %.3f ms\n",
           bps, w, N * 8 / w / 1e9, e, N * 9 / e / 1e9, l, r, N / r / 1e9, b4, b8);
  }
  CK(cudaGetLastError());
  return 0;
}
