// The check shared by the runtime's GPU tests whose kernel records, per block, how many times it ran (`cnt`),
// the %smid it ran on (`where`) and writes `block ^ (thread << 20)` to `out` (test_controller_link,
// test_link_devices).
#pragma once
#include <ptb/ptb.cuh>

#include <set>
#include <vector>

#include "common.cuh"

// Every block once, every output exact, each block on an SM of `allowed` (dense indices into `raw`, the
// device's %smid table: ptb::sm_ids()). Reports under `phase`; returns the blocks that ran off those SMs.
inline unsigned check_blocks(const unsigned* d_cnt, const unsigned* d_where, const unsigned* d_out, unsigned blocks,
                             unsigned threads, const std::vector<unsigned>& raw, const ptb::SmSet& allowed,
                             const char* phase) {
  std::vector<unsigned> cnt(blocks), where(blocks), out(static_cast<size_t>(blocks) * threads);
  CK(cudaMemcpy(cnt.data(), d_cnt, cnt.size() * 4, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(where.data(), d_where, where.size() * 4, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(out.data(), d_out, out.size() * 4, cudaMemcpyDeviceToHost));
  unsigned bad = 0, off = 0;
  for (unsigned b = 0; b < blocks; ++b) bad += cnt[b] != 1;
  for (size_t i = 0; i < out.size(); ++i) bad += out[i] != ((i / threads) ^ ((i % threads) << 20));
  std::set<unsigned> ok;
  for (unsigned i = 0; i < raw.size(); ++i)
    if (allowed.contains(i)) ok.insert(raw[i]);
  for (unsigned w : where) off += !ok.count(w);
  EXPECT(bad == 0, "%s: %u blocks not run exactly once or outputs wrong", phase, bad);
  EXPECT(off == 0, "%s: %u of %u blocks off the SMs %s", phase, off, blocks, allowed.str().c_str());
  std::printf("  %s: %u blocks on SMs %s, each once\n", phase, blocks, allowed.str().c_str());
  return off;
}
