// bench/colocate/be_pair.cu: the pair's fused kernels (be_wmma + be_compute in one block, the Tacker
// manager's fused launch) behind three plain functions (be_programs.h). The kernels themselves are
// fuse-kernels' output, written by transform.sh from be_kernels.cuh into the transformed directory as
// be_pair.fused.cu (one candidate per ratio of bench/colocate/be_pair.json); this file includes it, so
// it compiles with `-I <transformed directory>` only.
#include "be_pair.fused.cu"
#include "be_programs.h"

namespace colo {

int fused_pair_candidates() { return int(sizeof(be_pair_candidates) / sizeof(be_pair_candidates[0])); }

const char* fused_pair_label(int i) { return be_pair_candidates[i].ratio; }

bool launch_fused_pair(int i, cudaStream_t s, const FusedPairArgs& a, unsigned seq_w, unsigned n_w, unsigned seq_c,
                       unsigned n_c) {
  const FusedWmmaArgs& w = a.w;
  return be_pair_candidates[i].launch(::ptb::LaunchConfig(dim3(n_w), dim3(128), 0, s), static_cast<const half*>(w.a),
                                      static_cast<const half*>(w.b), w.c, w.m, w.n, w.k, w.stamp, seq_w, w.done,
                                      w.seen, ::ptb::LaunchConfig(dim3(n_c), dim3(256), 0, s), a.out, a.stamp_c, seq_c,
                                      a.iters, a.done_c, a.seen_c);
}

}  // namespace colo
