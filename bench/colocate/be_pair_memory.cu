// bench/colocate/be_pair_memory.cu: the `pair-memory` BE's fused kernels (be_wmma + be_triad in one block)
// behind three plain functions (be_programs.h), as be_pair.cu does for be_wmma + be_compute. The kernels are
// fuse-kernels' output, written by transform.sh from be_kernels.cuh into the transformed directory as
// be_pair_memory.fused.cu (one candidate per ratio of its be_pair.json entry); this file includes it, so it
// compiles with `-I <transformed directory>` only. A translation unit of its own: the two fused outputs each
// carry their copy of the kernels.
#include "be_pair_memory.fused.cu"
#include "be_programs.h"

namespace colo {

int fused_memory_pair_candidates() {
  return int(sizeof(be_pair_memory_candidates) / sizeof(be_pair_memory_candidates[0]));
}

const char* fused_memory_pair_label(int i) { return be_pair_memory_candidates[i].ratio; }

bool launch_fused_memory_pair(int i, cudaStream_t s, const FusedMemoryPairArgs& a, unsigned seq_w, unsigned n_w,
                              unsigned seq_t, unsigned n_t) {
  const FusedWmmaArgs& w = a.w;
  return be_pair_memory_candidates[i].launch(
      ::ptb::LaunchConfig(dim3(n_w), dim3(128), 0, s), static_cast<const half*>(w.a), static_cast<const half*>(w.b),
      w.c, w.m, w.n, w.k, w.stamp, seq_w, w.done, w.seen, ::ptb::LaunchConfig(dim3(n_t), dim3(256), 0, s),
      static_cast<float4*>(a.ta), static_cast<const float4*>(a.tb), static_cast<const float4*>(a.tc), a.chunk4,
      a.stamp_t, seq_t, a.done_t, a.seen_t);
}

}  // namespace colo
