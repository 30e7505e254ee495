// What it would cost to load the runtime's SM-discovery kernel from PTX at run time instead of compiling it
// into every translation unit (issue 13; tried and not kept: docs/design/runtime.md, "First launch,
// split further"). The steps such a device set-up takes, each timed on the host, in a fresh process:
//   discovery_load        (run it several times: the first run on a machine JIT-compiles into the driver's
//                          cache, later runs hit it; CUDA_CACHE_DISABLE=1 compiles every time)
// Prints one line: library load, get kernel, cudaFuncGetAttributes on the handle, first launch + sync,
// second launch + sync, in microseconds. The kernel is the runtime's discovery kernel (detail/discovery.cuh)
// written as PTX: thread 0 of each block marks its %smid, block 0 writes %nsmid after 256 marks.
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>

static const char* kDiscoveryPtx =
    ".version 6.0\n.target sm_50\n.address_size 64\n"
    ".visible .entry ptb_discover_sms(.param .u64 ptb_discover_sms_seen)\n{\n"
    "  .reg .pred %p<3>;\n  .reg .b32 %r<6>;\n  .reg .b64 %rd<5>;\n"
    "  mov.u32 %r1, %tid.x;\n  setp.ne.u32 %p1, %r1, 0;\n  @%p1 bra $Ldone;\n"
    "  ld.param.u64 %rd1, [ptb_discover_sms_seen];\n  cvta.to.global.u64 %rd2, %rd1;\n"
    "  mov.u32 %r2, %smid;\n  and.b32 %r3, %r2, 255;\n  mul.wide.u32 %rd3, %r3, 4;\n  add.s64 %rd4, %rd2, %rd3;\n"
    "  mov.u32 %r4, 1;\n  st.global.u32 [%rd4], %r4;\n"
    "  mov.u32 %r5, %ctaid.x;\n  setp.ne.u32 %p2, %r5, 0;\n  @%p2 bra $Ldone;\n"
    "  mov.u32 %r5, %nsmid;\n  st.global.u32 [%rd2+1024], %r5;\n"
    "$Ldone:\n  ret;\n}\n";

static double now_us() {
  using namespace std::chrono;
  return duration<double, std::micro>(steady_clock::now().time_since_epoch()).count();
}

int main() {
  cudaFree(nullptr);  // the context, outside the timings
  unsigned* buf = nullptr;
  cudaMalloc(&buf, 257 * sizeof(unsigned));
  const double t0 = now_us();
  cudaLibrary_t lib = nullptr;
  const cudaError_t e1 = cudaLibraryLoadData(&lib, kDiscoveryPtx, nullptr, nullptr, 0, nullptr, nullptr, 0);
  const double t1 = now_us();
  cudaKernel_t k = nullptr;
  const cudaError_t e2 = cudaLibraryGetKernel(&k, lib, "ptb_discover_sms");
  const double t2 = now_us();
  cudaFuncAttributes fa;
  const cudaError_t e3 = cudaFuncGetAttributes(&fa, reinterpret_cast<const void*>(k));
  const double t3 = now_us();
  void* argv[] = {&buf};
  const cudaError_t e4 = cudaLaunchKernel(reinterpret_cast<const void*>(k), dim3(132 * 32), dim3(32), argv, 0, 0);
  cudaDeviceSynchronize();
  const double t4 = now_us();
  cudaLaunchKernel(reinterpret_cast<const void*>(k), dim3(132 * 32), dim3(32), argv, 0, 0);
  cudaDeviceSynchronize();
  const double t5 = now_us();
  std::printf("discovery_load: library load %.1f us (%s), get kernel %.1f us (%s), cudaFuncGetAttributes %.1f us (%s), "
              "first launch+sync %.1f us (%s), second %.1f us\n",
              t1 - t0, cudaGetErrorName(e1), t2 - t1, cudaGetErrorName(e2), t3 - t2, cudaGetErrorName(e3), t4 - t3,
              cudaGetErrorName(e4), t5 - t4);
  return e1 || e2 || e4;
}
