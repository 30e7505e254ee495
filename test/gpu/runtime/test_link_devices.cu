// A BE process that follows ptb-qosd (PTB_QOSD) and launches on two GPUs (controller_link.cuh). Needs two GPUs
// (prints SKIP on one).
//
// 1. PTB_QOSD=1: each device's launches follow the controller of that device's GPU. This test plays both
//    controllers: a segment for each GPU's real key in one PTB_QOSD_DIR, each beating and publishing its own SMs
//    (device 0: the lowest 16, device 1: 16 from the middle). Checks: launches on device 0, then 1, then 0 again
//    run every block once with exact outputs, each only on its own device's published SMs; each segment has this
//    process's BE entry, with its own device's launches counted and its policy applied; the process policy
//    shows device 0's controller (the first device linked).
// 2. PTB_QOSD=GPU-... (one key, no controller for it), in a child process made before this one touches CUDA:
//    the launches on device 0 (current at the first launch) follow that key's link (its safe state here); the
//    launches on device 1 run under the same policy (the process policy), said once on stderr; outputs exact on
//    both.
#include <ptb/ptb.cuh>
#include <ptb/qos/segment.h>
#include "common.cuh"
#include "block_check.cuh"
#include "fake_controller.cuh"
#include "scale_add.cuh"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

__global__ void where(unsigned* cnt, unsigned* sm, unsigned* out) {
  const unsigned id = blockIdx.x;
  if (threadIdx.x == 0) {
    atomicAdd(&cnt[id], 1u);
    sm[id] = ptb::detail::smid();
  }
  out[id * blockDim.x + threadIdx.x] = id ^ (threadIdx.x << 20);
}
__device__ __forceinline__ void where__ptb_task(const uint3 blockIdx, const dim3, unsigned* cnt, unsigned* sm,
                                                unsigned* out) {
  const unsigned id = blockIdx.x;
  if (threadIdx.x == 0) {
    atomicAdd(&cnt[id], 1u);
    sm[id] = ptb::detail::smid();
  }
  out[id * blockDim.x + threadIdx.x] = id ^ (threadIdx.x << 20);
}
__global__ void where__ptb(unsigned* cnt, unsigned* sm, unsigned* out, const ::ptb::Launch ptb_launch) {
  ::ptb::run_tasks(ptb_launch, [&](const uint3 ptb_block, const dim3 ptb_grid) {
    where__ptb_task(ptb_block, ptb_grid, cnt, sm, out);
  });
}

constexpr unsigned kBlocks = 4096, kThreads = 128;

// One device's buffers and its dense SM index -> %smid table.
struct OnDevice {
  int dev = 0;
  std::vector<unsigned> raw;
  unsigned *cnt = nullptr, *sm = nullptr, *out = nullptr;
  void open(int d) {
    dev = d;
    CK(cudaSetDevice(d));
    raw = ptb::sm_ids();
    CK(cudaMalloc(&cnt, kBlocks * 4));
    CK(cudaMalloc(&sm, kBlocks * 4));
    CK(cudaMalloc(&out, kBlocks * kThreads * 4));
  }
  void launch() {
    CK(cudaSetDevice(dev));
    CK(cudaMemset(cnt, 0, kBlocks * 4));
    CK(cudaMemset(out, 0xff, kBlocks * kThreads * 4));
    ptb::launch(ptb::LaunchConfig{dim3(kBlocks), dim3(kThreads)}, where, where__ptb, cnt, sm, out);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
  }
  // Every block once, outputs exact, each on an SM of `allowed` (dense indices of this device).
  void check(const ptb::SmSet& allowed, const char* phase) {
    CK(cudaSetDevice(dev));
    check_blocks(cnt, sm, out, kBlocks, kThreads, raw, allowed, phase);
  }
};

template <typename Cond>
bool wait_for(Cond cond, double limit_ms) {
  const auto t0 = std::chrono::steady_clock::now();
  while (!cond()) {
    if (std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() > limit_ms)
      return false;
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  return true;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

int count_of(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Part 2, in the child: one key named, launches on both devices. Exit status: 0 pass, 1 fail, 77 one GPU.
int one_key_child() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count < 2) return 77;
  char dir[] = "/tmp/ptb-link-devices.XXXXXX";
  EXPECT(mkdtemp(dir) != nullptr, "mkdtemp failed");
  setenv("PTB_QOSD_DIR", dir, 1);
  setenv("PTB_QOSD", "GPU-ptb-link-devices-test", 1); // no controller has this key: device 0 keeps its safe state
  const std::string log = std::string(dir) + "/stderr.txt";
  std::fflush(stderr);
  const int saved = dup(2);
  const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  EXPECT(saved >= 0 && fd >= 0 && dup2(fd, 2) == 2, "cannot send stderr to %s", log.c_str());
  for (const int dev : {0, 1, 0}) {
    CK(cudaSetDevice(dev));
    ScaleAdd work;
    char what[48];
    std::snprintf(what, sizeof(what), "one key, device %d", dev);
    work.launch_and_check(what);
  }
  std::fflush(stderr);
  const std::string said = read_file(log);
  dup2(saved, 2);
  close(fd);
  std::fputs(said.c_str(), stderr); // what the runtime said, for the log
  const std::string message = "the launches on device 1 run under the same policy";
  EXPECT(count_of(said, message) == 1, "'%s' said %d times, expected once", message.c_str(), count_of(said, message));
  EXPECT(count_of(said, "no controller for GPU-ptb-link-devices-test") == 1,
         "device 0's link did not say once that no controller runs for its key");
  unlink(log.c_str());
  rmdir(dir);
  return g_failures ? 1 : 0;
}

} // namespace

int main() {
  // Part 2 first: its child must be made before this process touches CUDA.
  std::fflush(stdout);
  const pid_t child = fork();
  if (child == 0) {
    const int rc = one_key_child();
    std::fflush(stdout);
    _exit(rc);
  }
  int status = 0;
  EXPECT(child > 0 && waitpid(child, &status, 0) == child && WIFEXITED(status), "the one-key child did not end");
  const int child_rc = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
  if (child_rc == 77) {
    std::printf("SKIP test_link_devices: fewer than two GPUs\n");
    return 0;
  }
  EXPECT(child_rc == 0, "one key: the child failed (rc %d)", child_rc);

  // Part 1: PTB_QOSD=1, a controller per GPU (played here), one folder.
  char dir[] = "/tmp/ptb-link-each.XXXXXX";
  EXPECT(mkdtemp(dir) != nullptr, "mkdtemp failed");
  setenv("PTB_QOSD_DIR", dir, 1);
  setenv("PTB_QOSD", "1", 1);
  FakeController ctl[2];
  OnDevice on[2];
  ptb::SmSet mine[2];
  std::uint64_t seq[2] = {};
  for (int d = 0; d < 2; ++d) {
    on[d].open(d);
    int sms = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, d));
    const unsigned total = static_cast<unsigned>(sms);
    const std::string key = ptb::detail::gpu_key_of(d);
    EXPECT(!key.empty(), "device %d: no GPU key", d);
    if (!ctl[d].serve(dir, key, total)) return 1;
    mine[d] = d == 0 ? ptb::SmSet::first(16) : ptb::SmSet::range(total / 2, total / 2 + 16);
    seq[d] = ctl[d].publish(mine[d]);
  }
  // The first launch on each device starts its link; wait until each applied its own controller's policy.
  for (int d = 0; d < 2; ++d) {
    on[d].launch();
    EXPECT(wait_for([&] { return ctl[d].entry() && ctl[d].entry()->applied_seq.load() == seq[d]; }, 2000),
           "device %d: its controller's policy was never applied (no BE entry in its segment, or another seq)", d);
  }
  on[0].launch();
  on[0].check(mine[0], "PTB_QOSD=1, device 0");
  on[1].launch();
  on[1].check(mine[1], "PTB_QOSD=1, device 1");
  on[0].launch();
  on[0].check(mine[0], "PTB_QOSD=1, device 0 again");
  EXPECT(ptb::process_policy().sms() == mine[0], "the process policy is not device 0's controller's (%s)",
         ptb::process_policy().sms().str().c_str());
  // Each controller sees this process, with its own device's launches (3 on device 0, 2 on device 1).
  EXPECT(wait_for([&] { return ctl[0].entry()->launches.load() >= 3 && ctl[1].entry()->launches.load() >= 2; }, 1000),
         "BE entries count %llu and %llu launches", (unsigned long long)ctl[0].entry()->launches.load(),
         (unsigned long long)ctl[1].entry()->launches.load());
  EXPECT(ctl[1].entry()->launches.load() < 3, "device 1's entry counts device 0's launches too (%llu)",
         (unsigned long long)ctl[1].entry()->launches.load());
  (void)!std::system((std::string("rm -rf '") + dir + "'").c_str()); // the segments (the fakes do not own it)
  if (g_failures) {
    std::printf("test_link_devices: FAIL (%d)\n", g_failures);
    return 1;
  }
  std::printf("test_link_devices: PASS\n");
  return 0;
}
