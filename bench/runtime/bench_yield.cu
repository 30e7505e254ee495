// Yield latency as the runtime issue defines it: from the host's request to shrink a running PTB kernel's
// SM set until the removed SMs are free, measured by an LS kernel starting there. No trace (its per-task
// atomics load the memory system and slow what is measured).
//
// BE: a PTB kernel of 128-thread tasks that each spin for d us, on every SM. At the request the host
// calls Policy::set(first half) and launches, in a high-priority stream, an LS kernel of one block per
// removed SM; each LS block asks for more shared memory than an SM has left while any BE worker is there,
// so it starts only on an SM the BE kernel has left, one per SM (the blocks wait for each other, so none
// finishes and lets a second one onto its SM). LS blocks record %globaltimer at start. Latency: last LS
// start - request (every removed SM free), first LS start - request; the request time is %globaltimer as
// a one-thread kernel publishes it to host memory (read just before Policy::set). Goal: <= d + 20 us.
#include <ptb/ptb.cuh>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#define CK(x)                                                                                  \
  do {                                                                                         \
    cudaError_t e_ = (x);                                                                      \
    if (e_ != cudaSuccess) {                                                                   \
      std::printf("CUDA %s at %d: %s\n", #x, __LINE__, cudaGetErrorString(e_));                \
      std::exit(1);                                                                            \
    }                                                                                          \
  } while (0)

__global__ void timed(unsigned ns) {
  if (threadIdx.x == 0) {
    const unsigned long long t0 = ptb::detail::globaltimer();
    while (ptb::detail::globaltimer() - t0 < ns) {
    }
  }
  __syncthreads();
}
static __device__ __forceinline__ void timed__ptb_task(const uint3, const dim3, unsigned ns) {
  if (threadIdx.x == 0) {
    const unsigned long long t0 = ptb::detail::globaltimer();
    while (ptb::detail::globaltimer() - t0 < ns) {
    }
  }
  __syncthreads();
}
// Besides the tasks: when each original worker block left (g_exit_time[worker]) and on which SM.
__device__ unsigned long long* g_exit_time;
__device__ unsigned* g_exit_sm;
__global__ void timed__ptb(unsigned ns, const ::ptb::Launch ptb_launch) {
  ::ptb::run_tasks(ptb_launch, [&](const uint3 b, const dim3 g) { timed__ptb_task(b, g, ns); });
  if (threadIdx.x == 0 && g_exit_time && !(ptb_launch.flags & ptb::detail::kResume)) {
    g_exit_time[blockIdx.x] = ptb::detail::globaltimer();
    g_exit_sm[blockIdx.x] = ptb::detail::smid();
  }
}

__global__ void clock_pub(volatile unsigned long long* t, volatile unsigned* stop, volatile unsigned* where) {
  *where = ptb::detail::smid();
  while (!*stop) {
    *t = ptb::detail::globaltimer();
    __nanosleep(200);
  }
}

// One block per freed SM: start time and SM, then wait until all blocks have started (at most 50 ms).
__global__ void ls_probe(unsigned long long* start, unsigned* sm, unsigned* arrived) {
  extern __shared__ unsigned char ls_pad[];
  if (threadIdx.x == 0) {
    start[blockIdx.x] = ptb::detail::globaltimer();
    sm[blockIdx.x] = ptb::detail::smid();
    ls_pad[0] = 1;
    atomicAdd(arrived, 1u);
    const unsigned long long t0 = ptb::detail::globaltimer();
    while (*(volatile unsigned*)arrived < gridDim.x && ptb::detail::globaltimer() - t0 < 50000000ull) __nanosleep(1000);
  }
  __syncthreads();
}

int main(int argc, char** argv) {
  int reps = 8;
  bool same_carveout = false;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--reps" && i + 1 < argc) reps = std::atoi(argv[++i]);
    if (std::string(argv[i]) == "--same-carveout") same_carveout = true;
  }
  setvbuf(stdout, nullptr, _IONBF, 0);
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  const unsigned N = ptb::sm_count();
  const unsigned removed = N - N / 2;
  std::printf("device %s, %u SMs; yield SMs %u..%u (%u) of a running PTB kernel; %d repetitions%s\n", p.name, N,
              N / 2, N - 1, removed, reps, same_carveout ? "; both kernels with the max shared carveout" : "");
  // The LS block takes all the shared memory a block may have: it starts only on an SM with no other
  // block on it (each block also reserves 1 KiB).
  const size_t ls_smem = p.sharedMemPerBlockOptin;
  CK(cudaFuncSetAttribute(ls_probe, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(ls_smem)));
  // Both kernels ask for the largest shared-memory carveout, so that an SM the BE kernel leaves need not
  // be reconfigured (L1/shared split) before the LS block can start there (--same-carveout; default off).
  if (same_carveout) {
    CK(cudaFuncSetAttribute(timed__ptb, cudaFuncAttributePreferredSharedMemoryCarveout, cudaSharedmemCarveoutMaxShared));
    CK(cudaFuncSetAttribute(ls_probe, cudaFuncAttributePreferredSharedMemoryCarveout, cudaSharedmemCarveoutMaxShared));
  }
  unsigned long long* d_start;
  unsigned *d_sm, *d_arrived;
  CK(cudaMalloc(&d_start, removed * sizeof(unsigned long long)));
  CK(cudaMalloc(&d_sm, removed * sizeof(unsigned)));
  CK(cudaMalloc(&d_arrived, sizeof(unsigned)));
  const size_t max_workers = 64 * 1024;
  unsigned long long* d_exit;
  unsigned* d_exit_sm;
  CK(cudaMalloc(&d_exit, max_workers * 8));
  CK(cudaMalloc(&d_exit_sm, max_workers * 4));
  CK(cudaMemcpyToSymbol(g_exit_time, &d_exit, sizeof(d_exit)));
  CK(cudaMemcpyToSymbol(g_exit_sm, &d_exit_sm, sizeof(d_exit_sm)));
  unsigned long long* ht;
  unsigned *hs, *hw;
  CK(cudaHostAlloc(&ht, 8, cudaHostAllocMapped));
  CK(cudaHostAlloc(&hs, 4, cudaHostAllocMapped));
  CK(cudaHostAlloc(&hw, 4, cudaHostAllocMapped));
  *ht = 0;
  *hs = 0;
  *hw = ~0u;
  unsigned long long* dt;
  unsigned *ds, *dw;
  CK(cudaHostGetDevicePointer((void**)&dt, ht, 0));
  CK(cudaHostGetDevicePointer((void**)&ds, hs, 0));
  CK(cudaHostGetDevicePointer((void**)&dw, hw, 0));
  int lo = 0, hi = 0;
  CK(cudaDeviceGetStreamPriorityRange(&lo, &hi));
  cudaStream_t sc, sb, sl;
  CK(cudaStreamCreateWithFlags(&sc, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithFlags(&sb, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithPriority(&sl, cudaStreamNonBlocking, hi));
  // Load every kernel before anything long runs (lazy loading waits for running kernels).
  CK(ptb::preload(timed, timed__ptb));
  CK(cudaMemset(d_arrived, 0, 4));
  ls_probe<<<1, 256, ls_smem, sl>>>(d_start, d_sm, d_arrived);
  CK(cudaDeviceSynchronize());
  const std::vector<unsigned> ids = ptb::sm_ids();
  ptb::Policy P = ptb::Policy::create();
  {  // warm-up of the twin (under P: with no policy the automatic launch mode would run the original)
    ptb::LaunchConfig c(dim3(N * 16), dim3(128), 0, sb);
    c.policy = P;
    ::ptb::launch(c, timed, timed__ptb, 1000u);
  }
  CK(cudaStreamSynchronize(sb));
  clock_pub<<<1, 32, 0, sc>>>(dt, ds, dw);
  while (*(volatile unsigned long long*)ht == 0) {
  }
  // The clock kernel holds one SM for the whole run: if it is one of the removed SMs, that SM is never
  // free, and the LS kernel gets one block less.
  const unsigned clock_sm = *(volatile unsigned*)hw;
  const auto clock_at = std::find(ids.begin(), ids.end(), clock_sm);
  const bool clock_on_removed = clock_at != ids.end() && static_cast<unsigned>(clock_at - ids.begin()) >= N / 2;
  const unsigned ls_blocks = removed - (clock_on_removed ? 1 : 0);
  std::printf("clock kernel on SM %u (%s); LS blocks: %u\n", clock_sm, clock_on_removed ? "a removed one" : "a kept one",
              ls_blocks);
  std::printf("%8s %10s %10s %10s %10s %10s %8s\n", "task us", "all free", "max", "first", "set() us", "goal", "met");
  for (unsigned d_us : {10u, 30u, 100u, 300u, 1000u}) {
    std::vector<double> last, first, calls;
    for (int rep = 0; rep < reps; ++rep) {
      P.set(ptb::SmSet::all());
      const unsigned n = static_cast<unsigned>(std::min<unsigned long long>(4000000ull, 16ull * N * 30000 / d_us));  // ~30 ms
      ptb::LaunchConfig c(dim3(n), dim3(128), 0, sb);
      c.policy = P;
      CK(cudaMemsetAsync(d_exit, 0, max_workers * 8, sb));
      ::ptb::launch(c, timed, timed__ptb, d_us * 1000);
      CK(cudaGetLastError());
      CK(cudaMemsetAsync(d_arrived, 0, 4, sl));
      CK(cudaStreamSynchronize(sl));
      std::this_thread::sleep_for(std::chrono::milliseconds(8));
      const unsigned long long treq = *(volatile unsigned long long*)ht;
      const auto h0 = std::chrono::steady_clock::now();
      P.set(ptb::SmSet::first(N / 2));
      calls.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - h0).count());
      ls_probe<<<ls_blocks, 256, ls_smem, sl>>>(d_start, d_sm, d_arrived);
      CK(cudaGetLastError());
      CK(cudaStreamSynchronize(sl));
      std::vector<unsigned long long> st(ls_blocks);
      std::vector<unsigned> sm(ls_blocks);
      CK(cudaMemcpy(st.data(), d_start, ls_blocks * 8, cudaMemcpyDeviceToHost));
      CK(cudaMemcpy(sm.data(), d_sm, ls_blocks * 4, cudaMemcpyDeviceToHost));
      P.set(ptb::SmSet::all());
      CK(cudaStreamSynchronize(sb));
      unsigned on_kept = 0;
      for (unsigned s : sm) {
        const auto it = std::find(ids.begin(), ids.end(), s);
        if (it == ids.end() || static_cast<unsigned>(it - ids.begin()) < N / 2) ++on_kept;
      }
      if (on_kept) std::printf("  (%u LS blocks ran on SMs the BE kernel kept)\n", on_kept);
      std::sort(st.begin(), st.end());
      if (rep == 0) {
        // When the last original BE worker left each removed SM, against when an LS block started there.
        std::vector<unsigned long long> ex(max_workers);
        std::vector<unsigned> exs(max_workers);
        CK(cudaMemcpy(ex.data(), d_exit, max_workers * 8, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(exs.data(), d_exit_sm, max_workers * 4, cudaMemcpyDeviceToHost));
        std::vector<unsigned long long> last_exit(256, 0);
        for (size_t w = 0; w < max_workers; ++w)
          if (ex[w]) last_exit[exs[w] & 0xff] = std::max(last_exit[exs[w] & 0xff], ex[w]);
        std::vector<double> be_left;
        for (unsigned k = N / 2; k < N; ++k)
          if (ids[k] != clock_sm) be_left.push_back(last_exit[ids[k]] > treq ? (last_exit[ids[k]] - treq) / 1000.0 : 0.0);
        std::sort(be_left.begin(), be_left.end());
        std::printf("  d=%u us, rep 0: last BE worker left each removed SM after the request (us), by decile:", d_us);
        for (int q = 0; q <= 10; ++q) std::printf(" %.0f", be_left[std::min<size_t>(be_left.size() - 1, q * be_left.size() / 10)]);
        std::printf("\n");
        std::printf("  d=%u us, rep 0: LS block starts after the request (us), by decile:", d_us);
        for (int q = 0; q <= 10; ++q) {
          const unsigned long long v = st[std::min<size_t>(st.size() - 1, q * st.size() / 10)];
          std::printf(" %.0f", v > treq ? (v - treq) / 1000.0 : 0.0);
        }
        std::printf("\n");
      }
      const unsigned long long mx = st.back(), mn = st.front();
      last.push_back(mx > treq ? (mx - treq) / 1000.0 : 0.0);
      first.push_back(mn > treq ? (mn - treq) / 1000.0 : 0.0);
    }
    std::sort(last.begin(), last.end());
    std::sort(first.begin(), first.end());
    std::sort(calls.begin(), calls.end());
    const double med = last[last.size() / 2];
    std::printf("%8u %10.1f %10.1f %10.1f %10.1f %10.1f %8s\n", d_us, med, last.back(), first[first.size() / 2],
                calls[calls.size() / 2], d_us + 20.0, med <= d_us + 20.0 ? "yes" : "no");
  }
  *(volatile unsigned*)hs = 1;
  CK(cudaDeviceSynchronize());
  return 0;
}
