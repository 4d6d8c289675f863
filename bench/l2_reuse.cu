// l2_reuse.cu: whether integral 2d's stream gets cheaper with its input read into L2 just before.
// Strip by strip (plain loads, L2 eviction hints, a persisting window), beside writes alone,
// reads alone and the whole stream (16384^2 u8 -> u64). Not part of the build; on a GPU machine:
//   nvcc -std=c++17 -O3 -arch=sm_90 -o /tmp/l2_reuse bench/l2_reuse.cu && /tmp/l2_reuse
// Each figure is the median of 10 timed runs (CUDA events) after 3 warm-ups; the values
// written are not checked.
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdint.h>
#include <algorithm>
#include <vector>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("CUDA %s at %d\n", cudaGetErrorString(e_), __LINE__); exit(1);} } while (0)
constexpr size_t W = 16384, H = 16384, N = W * H;
constexpr size_t CHUNK = 512;
__device__ __forceinline__ uint64_t policy_last() { uint64_t p; asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(p)); return p; }
__device__ __forceinline__ uint64_t policy_first() { uint64_t p; asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(p)); return p; }
__device__ __forceinline__ uint4 ld_hint(const void *a, uint64_t pol) {
  uint4 v; asm volatile("ld.global.L2::cache_hint.v4.u32 {%0,%1,%2,%3}, [%4], %5;" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(a), "l"(pol)); return v; }
__device__ __forceinline__ void st_hint(void *a, unsigned long long x, unsigned long long y, uint64_t pol) {
  asm volatile("st.global.L2::cache_hint.v2.u64 [%0], {%1,%2}, %3;" :: "l"(a), "l"(x), "l"(y), "l"(pol) : "memory"); }
// kHint: 0 plain (__ldcs / __stcs), 1 loads evict_last (read) / evict_first (expand loads and stores)
template <int kHint> __global__ void k_read(const uint8_t *in, size_t bytes, unsigned *sink) {
  const uint64_t pol = policy_last();
  unsigned acc = 0;
  for (size_t i = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) * 16; i < bytes; i += (size_t)gridDim.x * blockDim.x * 16) {
    uint4 v = kHint ? ld_hint(in + i, pol) : __ldcs((const uint4 *)(in + i));
    acc += v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x12345678u) sink[0] = acc;
}
template <int kHint> __global__ void k_expand(const uint8_t *in, unsigned long long *out, size_t chunks) {
  const uint64_t pf = policy_first();
  const size_t warps = (size_t)gridDim.x * blockDim.x / 32, w0 = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) / 32;
  const unsigned lane = threadIdx.x % 32;
  for (size_t c = w0; c < chunks; c += warps) {
    const uint4 *q = (const uint4 *)(in + c * CHUNK) + lane;
    uint4 v = kHint ? ld_hint(q, pf) : __ldcs(q);
    unsigned long long *o = out + c * CHUNK;
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const unsigned p = j * 64 + 2 * lane, src = p / 16, word = (p % 16) / 4;
      const unsigned wx = __shfl_sync(~0u, v.x, src), wy = __shfl_sync(~0u, v.y, src), wz = __shfl_sync(~0u, v.z, src), ww = __shfl_sync(~0u, v.w, src);
      const unsigned ws = word == 0 ? wx : word == 1 ? wy : word == 2 ? wz : ww, sh = (p % 4) * 8;
      if (kHint) st_hint(o + p, (ws >> sh) & 0xff, (ws >> (sh + 8)) & 0xff, pf);
      else __stcs((ulonglong2 *)(o + p), make_ulonglong2((ws >> sh) & 0xff, (ws >> (sh + 8)) & 0xff));
    }
  }
}
__global__ void k_write(unsigned long long *out, size_t chunks) {
  const size_t warps = (size_t)gridDim.x * blockDim.x / 32, w0 = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) / 32;
  const unsigned lane = threadIdx.x % 32;
  for (size_t c = w0; c < chunks; c += warps)
#pragma unroll
    for (int j = 0; j < 8; ++j) { const size_t p = j * 64 + 2 * lane; __stcs((ulonglong2 *)(out + c * CHUNK + p), make_ulonglong2(c + p, c + p + 1)); }
}
int main() {
  int sms; CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  int l2, maxp; CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0)); CK(cudaDeviceGetAttribute(&maxp, cudaDevAttrMaxPersistingL2CacheSize, 0));
  printf("SMs %d, L2 %d B, max persisting %d B\n", sms, l2, maxp);
  uint8_t *in; unsigned long long *out; unsigned *sink;
  CK(cudaMalloc(&in, N)); CK(cudaMalloc(&out, N * 8)); CK(cudaMalloc(&sink, 64));
  CK(cudaMemset(in, 7, N));
  cudaStream_t s; CK(cudaStreamCreate(&s));
  cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
  const unsigned grid = sms * 8, block = 256;
  auto time = [&](const char *name, auto fn) {
    std::vector<float> t;
    for (int r = 0; r < 13; ++r) { CK(cudaEventRecord(a, s)); fn(); CK(cudaEventRecord(b, s)); CK(cudaEventSynchronize(b)); float ms; CK(cudaEventElapsedTime(&ms, a, b)); if (r >= 3) t.push_back(ms); }
    std::sort(t.begin(), t.end()); printf("%-58s %.3f ms (min %.3f)\n", name, t[t.size() / 2], t[0]);
  };
  time("writes only (2 GiB)", [&] { k_write<<<grid, block, 0, s>>>(out, N / CHUNK); });
  time("reads only (256 MiB)", [&] { k_read<0><<<grid, block, 0, s>>>(in, N, sink); });
  time("expand whole, plain", [&] { k_expand<0><<<grid, block, 0, s>>>(in, out, N / CHUNK); });
  time("expand whole, evict_first hints", [&] { k_expand<1><<<grid, block, 0, s>>>(in, out, N / CHUNK); });
  for (size_t R : {256, 512, 1024, 2048, 4096}) {
    char name[128];
    const size_t sb = R * W;
    snprintf(name, sizeof name, "strips of %zu rows: read then expand, plain", R);
    time(name, [&] { for (size_t r = 0; r < H; r += R) { k_read<0><<<grid, block, 0, s>>>(in + r * W, sb, sink); k_expand<0><<<grid, block, 0, s>>>(in + r * W, out + r * W, sb / CHUNK); } });
    snprintf(name, sizeof name, "strips of %zu rows: read then expand, hints", R);
    time(name, [&] { for (size_t r = 0; r < H; r += R) { k_read<1><<<grid, block, 0, s>>>(in + r * W, sb, sink); k_expand<1><<<grid, block, 0, s>>>(in + r * W, out + r * W, sb / CHUNK); } });
    snprintf(name, sizeof name, "strips of %zu rows: expand only (no read pass), hints", R);
    time(name, [&] { for (size_t r = 0; r < H; r += R) k_expand<1><<<grid, block, 0, s>>>(in + r * W, out + r * W, sb / CHUNK); });
  }
  // persisting window
  CK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, maxp));
  for (size_t R : {1024, 2048}) {
    const size_t sb = R * W;
    char name[128]; snprintf(name, sizeof name, "strips of %zu rows: read then expand, persisting window", R);
    time(name, [&] {
      for (size_t r = 0; r < H; r += R) {
        cudaStreamAttrValue v = {}; v.accessPolicyWindow.base_ptr = in + r * W; v.accessPolicyWindow.num_bytes = sb;
        v.accessPolicyWindow.hitRatio = std::min(1.0f, (float)maxp / sb); v.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting; v.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
        CK(cudaStreamSetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &v));
        k_read<0><<<grid, block, 0, s>>>(in + r * W, sb, sink); k_expand<0><<<grid, block, 0, s>>>(in + r * W, out + r * W, sb / CHUNK);
      }
      cudaStreamAttrValue v = {}; v.accessPolicyWindow.num_bytes = 0; CK(cudaStreamSetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &v));
      CK(cudaCtxResetPersistingL2Cache());
    });
  }
  CK(cudaDeviceSynchronize());
  printf("done\n");
}
