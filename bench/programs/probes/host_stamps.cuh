// Host stamps of the first twin launch (first_twin.sh): included with nvcc -include together with
// -DPTB_DEBUG_HOST_STAMPS, it defines the runtime's host hook (ptb/detail/host_stamps.cuh), which records
// std::chrono::steady_clock at each named step of a launch's dispatch, the device's set-up and the twin's
// preparation and launch. At exit the program prints one line for its first launch that reached a twin:
//   HOSTSTAMPS <step> <us since the step before> ... total <us from dispatch to committed>
// (or "HOSTSTAMPS none" when no launch ran as a twin). With PTB_EARLY_SETUP=1 the device's set-up steps come
// from the runtime's own thread before the launch's dispatch, so the line holds only the launch's steps. Inline, so that both parts of a twins-apart build share
// one record.
#pragma once
#include <chrono>
#include <cstdio>
#include <cstring>
#include <mutex>

namespace host_stamps {
constexpr int kMax = 64;
struct Record {
  const char* what[kMax] = {};
  std::chrono::steady_clock::time_point at[kMax];
  int n = 0;
  bool done = false;  // the first twin launch was committed: later launches are not recorded
  std::mutex m;       // the runtime's early set-up (PTB_EARLY_SETUP) stamps from its own thread
  ~Record() {
    int begin = -1, end = -1;
    for (int i = 0; i < n; ++i) {
      if (std::strcmp(what[i], "committed") == 0) {
        end = i;
        break;
      }
    }
    if (end < 0) {
      std::printf("HOSTSTAMPS none\n");
      return;
    }
    for (int i = end; i >= 0; --i)  // the dispatch of that launch
      if (std::strcmp(what[i], "dispatch") == 0) {
        begin = i;
        break;
      }
    if (begin < 0) begin = 0;
    std::printf("HOSTSTAMPS");
    for (int i = begin; i <= end; ++i)
      std::printf(" %s %.1f", what[i],
                  i == begin ? 0.0 : std::chrono::duration<double, std::micro>(at[i] - at[i - 1]).count());
    std::printf(" total %.1f\n", std::chrono::duration<double, std::micro>(at[end] - at[begin]).count());
  }
};
inline Record record;
}  // namespace host_stamps

inline void ptb_debug_host_stamp(const char* what) {
  host_stamps::Record& r = host_stamps::record;
  std::lock_guard<std::mutex> g(r.m);
  if (r.done) return;
  if (r.n == host_stamps::kMax) r.n = 0;  // launches that ran as originals before the first twin: keep the newest
  r.what[r.n] = what;
  r.at[r.n] = std::chrono::steady_clock::now();
  ++r.n;
  if (std::strcmp(what, "committed") == 0) r.done = true;
}
