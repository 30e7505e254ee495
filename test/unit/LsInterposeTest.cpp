// libptb-ls's interposed entry points (runtime/ls/interpose.cpp) against the fake driver, without a GPU:
// the program looks the driver's functions up as the CUDA runtime does (dlsym, then cuGetProcAddress), gets
// the library's wrappers, and launches through them. Checked: the launch is counted before the driver's
// call (LS busy while it runs), its completion write is enqueued behind it, failures and captures count
// nothing, the legacy and per-thread null streams are told apart from the lookup, context destruction
// makes the library register the segment again, CUPTI is not subscribed, and dlsym(RTLD_NEXT) stays libc's.
#include "LsFakeDriver.h"
#include "ls_glue.h"
#include "ls_tracker.h"
#include "ptb_ls.h"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string>
#include <thread>

namespace ls = ptb::ls;

namespace {

// What the fake launch functions saw: the stream, and whether the launch's slot was already counted busy.
struct Seen {
  CUstream stream = nullptr;
  int calls = 0;
  bool busy_during = false;
  bool ptsz = false;
};
Seen seen;
CUresult launch_result = CUDA_SUCCESS;
shm::LsClient *client = nullptr; // the test's LS client entry, once claimed

bool any_busy() {
  if (!client) return false;
  for (const shm::LsStream &s : client->streams)
    if (ls::busy(s)) return true;
  return false;
}
CUresult record(CUstream s, bool ptsz) {
  seen.stream = s;
  seen.ptsz = ptsz;
  ++seen.calls;
  seen.busy_during = any_busy();
  return launch_result;
}

} // namespace

// ---- The fake driver's launch functions and cuGetProcAddress ----
extern "C" {
CUresult CUDAAPI cuLaunchKernel(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                CUstream s, void **, void **) {
  return record(s, false);
}
CUresult CUDAAPI cuLaunchKernel_ptsz(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                     CUstream s, void **, void **) {
  return record(s, true);
}
CUresult CUDAAPI cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction, void **, void **) {
  return config ? record(config->hStream, false) : CUDA_ERROR_INVALID_VALUE;
}
CUresult CUDAAPI cuGraphLaunch(CUgraphExec, CUstream s) { return record(s, false); }
CUresult CUDAAPI cuGraphLaunch_ptsz(CUgraphExec, CUstream s) { return record(s, true); }
int ctx_destroyed = 0;
CUresult CUDAAPI cuCtxDestroy_v2(CUcontext) {
  ++ctx_destroyed;
  return CUDA_SUCCESS;
}
// The driver's lookup: the default form is the legacy one (a program not built for per-thread streams).
CUresult CUDAAPI cuGetProcAddress_v2(const char *symbol, void **pfn, int, cuuint64_t flags,
                                     CUdriverProcAddressQueryResult *status) {
  const bool per_thread = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
  void *fn = nullptr;
  if (std::strcmp(symbol, "cuLaunchKernel") == 0)
    fn = per_thread ? reinterpret_cast<void *>(&cuLaunchKernel_ptsz) : reinterpret_cast<void *>(&cuLaunchKernel);
  else if (std::strcmp(symbol, "cuGraphLaunch") == 0)
    fn = per_thread ? reinterpret_cast<void *>(&cuGraphLaunch_ptsz) : reinterpret_cast<void *>(&cuGraphLaunch);
  else if (std::strcmp(symbol, "cuLaunchKernelEx") == 0)
    fn = reinterpret_cast<void *>(&cuLaunchKernelEx);
  else if (std::strcmp(symbol, "cuGetProcAddress") == 0)
    fn = reinterpret_cast<void *>(&cuGetProcAddress_v2);
  else if (std::strcmp(symbol, "cuCtxDestroy") == 0)
    fn = reinterpret_cast<void *>(&cuCtxDestroy_v2);
  else if (std::strcmp(symbol, "cuCtxGetDevice") == 0)
    fn = reinterpret_cast<void *>(&cuCtxGetDevice);
  if (status) *status = fn ? CU_GET_PROC_ADDRESS_SUCCESS : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  *pfn = fn;
  return fn ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}
}

namespace {

using Gpa = CUresult(CUDAAPI *)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);
using Launch = decltype(&::cuLaunchKernel);
using LaunchEx = decltype(&::cuLaunchKernelEx);
using GraphLaunch = decltype(&::cuGraphLaunch);
using CtxDestroy = decltype(&::cuCtxDestroy);

template <typename F> F lookup(Gpa gpa, const char *name, cuuint64_t flags = CU_GET_PROC_ADDRESS_DEFAULT) {
  void *fn = nullptr;
  CUdriverProcAddressQueryResult status{};
  EXPECT_EQ(gpa(name, &fn, 13000, flags, &status), CUDA_SUCCESS) << name;
  return reinterpret_cast<F>(fn);
}
CUstream stream(std::uintptr_t handle) { return reinterpret_cast<CUstream>(handle); }
shm::LsStream *slot_of(shm::LsClient &c, std::uint64_t k) {
  for (shm::LsStream &s : c.streams)
    if (s.key.load() == k) return &s;
  return nullptr;
}
CUresult kernel(Launch fn, CUstream s) { return fn(nullptr, 1, 1, 1, 32, 1, 1, 0, s, nullptr, nullptr); }

// One test: the library's state lives for the process, as in a program.
TEST(LsInterpose, WrappersHandedOutByDlsymAndCuGetProcAddressMarkLaunchesAtTheirEntry) {
  char tmpl[] = "/tmp/ptb-ls-interpose.XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  setenv("PTB_QOSD_DIR", dir.c_str(), 1);
  setenv("PTB_LS_QUIET", "1", 1);
  const std::string key_text = "GPU-10111213-1415-1617-1819-1a1b1c1d1e1f";
  shm::Mapping ctl;
  bool taken = true;
  ASSERT_EQ(shm::create_or_take(shm::segment_path(dir, key_text), 132, key_text, ctl, taken), shm::Status::ok);

  // dlsym: the listed entry points are wrapped, anything else is what libc's dlsym finds.
  EXPECT_FALSE(ls::interposed());
  void *gpa_found = dlsym(RTLD_DEFAULT, "cuGetProcAddress_v2");
  ASSERT_NE(gpa_found, nullptr);
  EXPECT_NE(gpa_found, reinterpret_cast<void *>(&cuGetProcAddress_v2));
  EXPECT_TRUE(ls::interposed());
  EXPECT_EQ(dlsym(RTLD_DEFAULT, "cuGetProcAddress_v2"), gpa_found); // the same wrapper every time
  EXPECT_EQ(dlsym(RTLD_DEFAULT, "cuCtxGetDevice"), reinterpret_cast<void *>(&cuCtxGetDevice));
  EXPECT_EQ(dlsym(RTLD_DEFAULT, "no_such_symbol_anywhere"), nullptr);
  // RTLD_NEXT is looked up from its caller (this program): the next dlsym is libc's, not ours.
  void *next = dlsym(RTLD_NEXT, "dlsym");
  EXPECT_NE(next, nullptr);
  EXPECT_NE(next, reinterpret_cast<void *>(&dlsym));
  EXPECT_EQ(next, dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34") ? dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34")
                                                           : dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5"));

  // cuGetProcAddress's wrapper wraps what it hands out, itself included.
  const auto gpa = reinterpret_cast<Gpa>(gpa_found);
  EXPECT_EQ(lookup<Gpa>(gpa, "cuGetProcAddress"), gpa);
  const auto launch = lookup<Launch>(gpa, "cuLaunchKernel");
  const auto launch_pt = lookup<Launch>(gpa, "cuLaunchKernel", CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
  const auto launch_ex = lookup<LaunchEx>(gpa, "cuLaunchKernelEx");
  const auto graph = lookup<GraphLaunch>(gpa, "cuGraphLaunch");
  EXPECT_NE(reinterpret_cast<void *>(launch), reinterpret_cast<void *>(&cuLaunchKernel));
  EXPECT_NE(reinterpret_cast<void *>(launch_pt), reinterpret_cast<void *>(&cuLaunchKernel_ptsz));
  EXPECT_NE(launch, launch_pt);
  EXPECT_EQ(lookup<void *>(gpa, "cuCtxGetDevice"), reinterpret_cast<void *>(&cuCtxGetDevice));
  void *missing = reinterpret_cast<void *>(0x1);
  EXPECT_EQ(gpa("cuNoSuchThing", &missing, 13000, 0, nullptr), CUDA_ERROR_NOT_FOUND);

  // Injected as well: CUPTI is not subscribed (the wrappers already mark).
  EXPECT_EQ(InitializeInjection(), 1);
  EXPECT_EQ(fake.callback, nullptr);

  // The first launch finds the segment and registers it; it is counted before the driver's call.
  ASSERT_EQ(kernel(launch, stream(0x7000)), CUDA_SUCCESS);
  EXPECT_EQ(seen.calls, 1);
  EXPECT_EQ(seen.stream, stream(0x7000));
  ASSERT_EQ(fake.registrations, 1);
  for (shm::LsClient &c : ctl->ls)
    if (c.pid.load() == static_cast<std::uint64_t>(getpid())) client = &c;
  ASSERT_NE(client, nullptr);
  shm::LsStream *a = slot_of(*client, 0x7000);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->submitted.load(), 1u);
  EXPECT_EQ(client->launches.load(), 1u);
  ASSERT_EQ(fake.queued[stream(0x7000)].size(), 1u);
  run_stream(stream(0x7000));
  EXPECT_FALSE(ls::busy(*a));
  ASSERT_EQ(kernel(launch, stream(0x7000)), CUDA_SUCCESS);
  EXPECT_TRUE(seen.busy_during); // LS was busy while the launch call ran
  EXPECT_TRUE(ls::busy(*a));
  run_stream(stream(0x7000));
  EXPECT_FALSE(ls::busy(*a));
  EXPECT_EQ(a->completed.load(), 2u);

  // A failed launch is taken back: counted during the call, idle after it, nothing enqueued.
  launch_result = CUDA_ERROR_INVALID_VALUE;
  EXPECT_EQ(kernel(launch, stream(0x7000)), CUDA_ERROR_INVALID_VALUE);
  launch_result = CUDA_SUCCESS;
  EXPECT_TRUE(seen.busy_during);
  EXPECT_FALSE(ls::busy(*a));
  EXPECT_EQ(client->launches.load(), 2u);
  EXPECT_TRUE(fake.queued[stream(0x7000)].empty());

  // The null stream: legacy from the default lookup, the thread's own from the per-thread one.
  ASSERT_EQ(kernel(launch, stream(0)), CUDA_SUCCESS);
  EXPECT_FALSE(seen.ptsz);
  ASSERT_EQ(kernel(launch_pt, stream(0)), CUDA_SUCCESS);
  EXPECT_TRUE(seen.ptsz);
  ASSERT_NE(slot_of(*client, ls::kLegacyKey), nullptr);
  ASSERT_NE(slot_of(*client, ls::per_thread_key(static_cast<std::uint64_t>(syscall(SYS_gettid)))), nullptr);
  EXPECT_EQ(fake.queued[CU_STREAM_LEGACY].size(), 1u);
  EXPECT_EQ(fake.queued[CU_STREAM_PER_THREAD].size(), 1u);
  run_stream(CU_STREAM_LEGACY);
  run_stream(CU_STREAM_PER_THREAD);

  // cuLaunchKernelEx's stream is in its config; a null config is the driver's error, not counted.
  CUlaunchConfig config{};
  config.hStream = stream(0x8000);
  ASSERT_EQ(launch_ex(&config, nullptr, nullptr, nullptr), CUDA_SUCCESS);
  EXPECT_EQ(seen.stream, stream(0x8000));
  EXPECT_EQ(launch_ex(nullptr, nullptr, nullptr, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(client->launches.load(), 5u);
  run_stream(stream(0x8000));

  // Launches into a capturing stream: passed on, not counted; the graph's launch counts once.
  fake.capturing[stream(0x9000)] = true;
  const int calls = seen.calls;
  for (int i = 0; i < 3; ++i) ASSERT_EQ(kernel(launch, stream(0x9000)), CUDA_SUCCESS);
  EXPECT_EQ(seen.calls, calls + 3);
  EXPECT_EQ(client->launches.load(), 5u);
  fake.capturing[stream(0x9000)] = false;
  ASSERT_EQ(graph(nullptr, stream(0x9000)), CUDA_SUCCESS);
  EXPECT_EQ(client->launches.load(), 6u);
  run_stream(stream(0x9000));
  // cuGraphLaunch found by dlsym (as Triton or ctypes would) is the same wrapper.
  EXPECT_EQ(reinterpret_cast<void *>(graph), dlsym(RTLD_DEFAULT, "cuGraphLaunch"));

  // Launches from another thread into one stream: each counted once.
  std::thread other([&] {
    for (int i = 0; i < 100; ++i) kernel(launch, stream(0x7000));
  });
  for (int i = 0; i < 100; ++i) kernel(launch, stream(0x7000));
  other.join();
  EXPECT_EQ(client->launches.load(), 206u);
  EXPECT_EQ(a->submitted.load(), 202u);
  run_stream(stream(0x7000));
  EXPECT_EQ(a->completed.load(), 202u);

  // The context is destroyed: the driver's call is made, and the next launch registers the segment again.
  const auto destroy = lookup<CtxDestroy>(gpa, "cuCtxDestroy");
  EXPECT_NE(reinterpret_cast<void *>(destroy), reinterpret_cast<void *>(&cuCtxDestroy_v2));
  ASSERT_EQ(destroy(reinterpret_cast<CUcontext>(0x5000)), CUDA_SUCCESS);
  EXPECT_EQ(ctx_destroyed, 1);
  ASSERT_EQ(kernel(launch, stream(0x7000)), CUDA_SUCCESS);
  EXPECT_EQ(fake.registrations, 2);
  EXPECT_EQ(client->launches.load(), 207u);
  run_stream(stream(0x7000));
  EXPECT_FALSE(any_busy());

  unlink(shm::segment_path(dir, key_text).c_str());
  rmdir(dir.c_str());
}

} // namespace
