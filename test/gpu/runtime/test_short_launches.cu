// A BE process that follows a controller (PTB_QOSD) with PTB_ORIGINAL_BELOW_US runs its short launches as
// their original kernels while the controller allows every SM, and as twins otherwise
// (runtime/include/ptb/detail/short_launches.h, dispatch.cuh). This test plays the controller (as
// test_controller_link does) and checks, in one stream of dependent launches (each reads its predecessor's
// output):
//   1. every SM allowed: the first launches of the kernel run as twins (timed), then originals; every block of
//      every launch once, the chain's result exact;
//   2. the controller confines BE to half of the SMs: every launch a twin, its tasks on those SMs only;
//   3. every SM again: originals again; a longer kernel (over the budget) stays a twin;
//   4. a graph captured while every SM is allowed holds twins (a replay may come while BE is confined).
#include <ptb/ptb.cuh>
#include <ptb/qos/segment.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <set>
#include <string>
#include <thread>

#include "common.cuh"
#include "fake_controller.cuh"

namespace shm = ptb::qos::shm;

__device__ unsigned long long g_original_blocks, g_twin_tasks;

__device__ __forceinline__ void spin_ns(unsigned ns) {
  const long long t0 = clock64(), cycles = 2ll * ns;
  while (clock64() - t0 < cycles) {
  }
}
// out[i] = in[i] + i + 1; block 0's thread 0 counts the form that ran it.
__device__ __forceinline__ void step_body(const uint3 blk, const unsigned* in, unsigned* out, unsigned* where,
                                          unsigned spin, bool twin) {
  const unsigned i = blk.x * blockDim.x + threadIdx.x;
  out[i] = in[i] + i + 1;
  if (threadIdx.x == 0) {
    where[blk.x] = ptb::detail::smid();
    atomicAdd(twin ? &g_twin_tasks : &g_original_blocks, 1ull);
    spin_ns(spin);
  }
}
__global__ void step(const unsigned* in, unsigned* out, unsigned* where, unsigned spin) {
  step_body(blockIdx, in, out, where, spin, false);
}
__global__ void step__ptb(const unsigned* in, unsigned* out, unsigned* where, unsigned spin,
                          const ::ptb::Launch ptb_launch) {
  ::ptb::run_tasks(ptb_launch, [&](const uint3 ptb_block, const dim3) { step_body(ptb_block, in, out, where, spin, true); });
}

namespace {

constexpr unsigned kBlocks = 1024, kThreads = 128, kN = kBlocks * kThreads;
unsigned *d_a, *d_b, *d_scratch_in, *d_scratch_out, *d_where;
cudaStream_t stream;
unsigned long long launched = 0; // launches of `step` so far: the chain's expected value

void run_chain(unsigned n, unsigned spin) {
  ptb::LaunchConfig c{dim3(kBlocks), dim3(kThreads), 0, stream};
  for (unsigned __i = 0; __i < n; ++__i, ++launched) {
    if (launched % 2 == 0)
      ptb::launch(c, step, step__ptb, d_a, d_b, d_where, spin);
    else
      ptb::launch(c, step, step__ptb, d_b, d_a, d_where, spin);
    CK(cudaGetLastError());
  }
}
// The chain's value after `launched` launches: element i gained i + 1 each time.
void check_chain(const char* phase) {
  CK(cudaStreamSynchronize(stream));
  std::vector<unsigned> v(kN);
  CK(cudaMemcpy(v.data(), launched % 2 == 0 ? d_a : d_b, kN * 4, cudaMemcpyDeviceToHost));
  unsigned bad = 0;
  for (unsigned __i = 0; __i < kN; ++__i) bad += v[__i] != static_cast<unsigned>(launched * (__i + 1ull));
  EXPECT(bad == 0, "%s: %u of %u elements wrong after %llu launches", phase, bad, kN, launched);
}
void forms(unsigned long long& original_blocks, unsigned long long& twin_tasks) {
  CK(cudaMemcpyFromSymbol(&original_blocks, g_original_blocks, 8));
  CK(cudaMemcpyFromSymbol(&twin_tasks, g_twin_tasks, 8));
}

} // namespace

int main() {
  setenv("PTB_ORIGINAL_BELOW_US", "300", 1);
  unsetenv("PTB_MODE");
  CK(cudaSetDevice(0));
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const std::vector<unsigned> raw = ptb::sm_ids();
  const unsigned total = static_cast<unsigned>(sms);

  FakeController ctl;
  if (!ctl.open("ptb-short-test", total)) return 1;
  auto publish = [&](const ptb::SmSet& s) { // and wait until the link applied it (its BE entry says so)
    const std::uint64_t seq = ctl.publish(s);
    for (int __i = 0; __i < 2000; ++__i) {
      if (ctl.entry() && ctl.entry()->applied_seq.load() == seq) return;
      std::this_thread::sleep_for(std::chrono::microseconds(500));
    }
  };

  CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  CK(cudaMalloc(&d_a, kN * 4));
  CK(cudaMalloc(&d_b, kN * 4));
  CK(cudaMalloc(&d_where, kBlocks * 4));
  CK(cudaMalloc(&d_scratch_in, kN * 4));
  CK(cudaMalloc(&d_scratch_out, kN * 4));
  CK(cudaMemset(d_scratch_in, 0, kN * 4));
  CK(cudaMemset(d_a, 0, kN * 4));
  CK(cudaMemset(d_b, 0xff, kN * 4)); // poisoned: the first launch writes all of it

  // 1. Every SM: learn, then originals.
  publish(ptb::SmSet::all());
  run_chain(1, 2000); // starts the link (its first launch)
  publish(ptb::SmSet::all());
  run_chain(199, 2000);
  check_chain("every SM");
  unsigned long long ob = 0, tt = 0;
  forms(ob, tt);
  std::printf("  every SM: %llu blocks as originals, %llu tasks as twins (of %llu launches x %u)\n", ob, tt,
              launched, kBlocks);
  EXPECT(ob + tt == launched * kBlocks, "blocks and tasks %llu, expected %llu", ob + tt, launched * kBlocks);
  EXPECT(tt >= 3ull * kBlocks, "the first launches did not run as timed twins (%llu tasks as twins)", tt);
  EXPECT(ob >= 150ull * kBlocks, "short launches did not run as originals (%llu blocks)", ob);

  // 2. Confined: twins on the allowed SMs only.
  const ptb::SmSet half = ptb::SmSet::first(total / 2);
  publish(half);
  const unsigned long long ob_before = ob;
  run_chain(20, 2000);
  check_chain("half of the SMs");
  forms(ob, tt);
  EXPECT(ob == ob_before, "%llu blocks ran as originals while BE was confined", ob - ob_before);
  std::vector<unsigned> where(kBlocks);
  CK(cudaMemcpy(where.data(), d_where, kBlocks * 4, cudaMemcpyDeviceToHost));
  std::set<unsigned> ok;
  for (unsigned __i = 0; __i < raw.size(); ++__i)
    if (half.contains(__i)) ok.insert(raw[__i]);
  unsigned off = 0;
  for (unsigned w : where) off += !ok.count(w);
  EXPECT(off == 0, "confined: %u tasks off SMs %s", off, half.str().c_str());

  // 3. Every SM again: originals again; a long kernel (each block 2 ms: over the 300 us budget) stays a twin.
  publish(ptb::SmSet::all());
  run_chain(20, 2000);
  check_chain("every SM again");
  unsigned long long ob2 = 0, tt2 = 0;
  forms(ob2, tt2);
  EXPECT(ob2 > ob, "no originals once every SM was allowed again");
  const ptb::LaunchConfig one_wave{dim3(total), dim3(kThreads), 0, stream};
  for (int __i = 0; __i < 8; ++__i) // (buffers apart from the chain's)
    ptb::launch(one_wave, step, step__ptb, d_scratch_in, d_scratch_out, d_where, 2000000u);
  CK(cudaStreamSynchronize(stream));
  unsigned long long ob3 = 0, tt3 = 0;
  forms(ob3, tt3);
  EXPECT(ob3 == ob2, "a 2 ms launch ran as an original (%llu blocks)", ob3 - ob2);
  std::printf("  long launches: %llu tasks as twins, %llu blocks as originals\n", tt3 - tt2, ob3 - ob2);

  // 4. A graph captured while every SM is allowed: twins only.
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  run_chain(4, 2000);
  CK(cudaStreamEndCapture(stream, &graph));
  CK(cudaGraphInstantiate(&exec, graph, 0));
  CK(cudaGraphLaunch(exec, stream));
  check_chain("captured");
  unsigned long long ob4 = 0, tt4 = 0;
  forms(ob4, tt4);
  EXPECT(ob4 == ob3, "a captured launch ran as an original (%llu blocks)", ob4 - ob3);

  return finish("test_short_launches");
}
