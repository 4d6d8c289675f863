// store_patterns.cu: what the layout of a warp's 16-byte stores costs on a GPU.
// A GiB of floats written as whole lines a store instruction, as lanes 32 bytes apart (each
// lane's two stores fill a sector), and as lanes 128 bytes apart (each lane writing its own
// 32 floats, what a thread's run of pixels gives). Not part of the build; on a GPU machine:
//   nvcc -std=c++17 -O3 -arch=sm_90 -o /tmp/store_patterns bench/store_patterns.cu && /tmp/store_patterns
// Each figure is the median of 10 timed runs (CUDA events) after 3 warm-ups; a warp writes
// 4 KiB (1024 floats) a turn in every layout, the same bytes overall.
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdint.h>
#include <algorithm>
#include <vector>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("CUDA %s at %d\n", cudaGetErrorString(e_), __LINE__); return 1;} } while (0)
constexpr size_t kBytes = (size_t)1 << 30, kChunks = kBytes / 4096; // 4 KiB a warp turn

// Piece (lane, i) of a warp's 256 16-byte pieces, in each layout.
enum Layout { kLines, kPairs, kRuns };
template <Layout L> __device__ size_t piece(unsigned lane, int i) {
  if (L == kLines) return 32 * (size_t)i + lane;               // instruction i: 512 contiguous bytes
  if (L == kPairs) return 64 * (size_t)(i / 2) + 2 * lane + i % 2; // lanes 32 B apart, two stores fill a sector
  return 8 * (size_t)lane + i;                                  // lanes 128 B apart: a lane's own run
}
template <Layout L> __global__ void k_store(uint4 *p) {
  const size_t warps = (size_t)gridDim.x * blockDim.x / 32, w0 = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) / 32;
  const unsigned lane = threadIdx.x % 32;
  for (size_t c = w0; c < kChunks; c += warps) {
#pragma unroll
    for (int i = 0; i < 8; ++i) __stcs(p + c * 256 + piece<L>(lane, i), make_uint4(i, (unsigned)c, lane, 1));
  }
}
template <class F> static float median_ms(F f) {
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b); std::vector<float> t;
  for (int i = 0; i < 13; ++i) {
    cudaEventRecord(a); f(); cudaEventRecord(b); cudaEventSynchronize(b);
    float ms = 0; cudaEventElapsedTime(&ms, a, b); if (i >= 3) t.push_back(ms);
  }
  std::sort(t.begin(), t.end()); return t[t.size() / 2];
}
int main() {
  uint4 *p = NULL;
  CK(cudaMalloc(&p, kBytes));
  int sms = 0; CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  printf("1 GiB of floats, %d SMs x 8 blocks of 256:\n", sms);
  printf("  cudaMemset                         %.3f ms\n", median_ms([&] { cudaMemsetAsync(p, 0, kBytes); }));
  printf("  whole lines a store                %.3f ms\n", median_ms([&] { k_store<kLines><<<sms * 8, 256>>>(p); }));
  printf("  lanes 32 B apart, sectors by pairs %.3f ms\n", median_ms([&] { k_store<kPairs><<<sms * 8, 256>>>(p); }));
  printf("  lanes 128 B apart (a lane's run)   %.3f ms\n", median_ms([&] { k_store<kRuns><<<sms * 8, 256>>>(p); }));
  CK(cudaGetLastError());
  return 0;
}
