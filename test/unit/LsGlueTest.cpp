// libptb-ls.so's CUPTI/driver glue (runtime/ls/ptb_ls.cpp) against a fake driver and a fake CUPTI, without a
// GPU: the test subscribes through InitializeInjection, calls the launch callbacks as the driver would
// (API exit, with the launch's parameters), and plays the device: it keeps each stream's enqueued memory
// writes and host functions, and runs them when it "synchronizes" the stream. The segment is a real one
// in a temporary PTB_QOSD_DIR. What the GPU itself does is checked by test/gpu/ls/run.sh.
#include "LsFakeDriver.h"
#include "ls_tracker.h"
#include "ptb_ls.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace shm = ptb::qos::shm;
namespace ls = ptb::ls;

namespace {

// The driver's callbacks of one launch: entry, then exit with its result.
void driver_call(CUpti_CallbackId cbid, const void *params, CUresult result = CUDA_SUCCESS) {
  ASSERT_NE(fake.callback, nullptr);
  CUpti_CallbackData data{};
  data.functionParams = params;
  data.functionReturnValue = &result;
  data.context = reinterpret_cast<CUcontext>(0x5000);
  data.callbackSite = CUPTI_API_ENTER;
  fake.callback(nullptr, CUPTI_CB_DOMAIN_DRIVER_API, cbid, &data);
  data.callbackSite = CUPTI_API_EXIT;
  fake.callback(nullptr, CUPTI_CB_DOMAIN_DRIVER_API, cbid, &data);
}
void launch(CUstream s, CUresult result = CUDA_SUCCESS) {
  cuLaunchKernel_params p{};
  p.hStream = s;
  driver_call(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &p, result);
}
void launch_ptsz(CUstream s) {
  cuLaunchKernel_ptsz_params p{};
  p.hStream = s;
  driver_call(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz, &p);
}
void launch_ex(CUstream s) {
  CUlaunchConfig config{};
  config.hStream = s;
  cuLaunchKernelEx_params p{};
  p.config = &config;
  driver_call(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, &p);
}
void graph_launch(CUstream s) {
  cuGraphLaunch_params p{};
  p.hStream = s;
  driver_call(CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch, &p);
}
// A runtime launch: the runtime's callbacks around it, and between them the driver's launch when
// `through_driver` (what a runtime that calls cuLaunchKernel makes CUPTI report).
void runtime_launch(CUstream s, bool through_driver, cudaError_t result = cudaSuccess) {
  ASSERT_NE(fake.callback, nullptr);
  cudaLaunchKernel_v7000_params p{};
  p.stream = s;
  CUpti_CallbackData data{};
  data.functionName = "cudaLaunchKernel_v7000";
  data.functionParams = &p;
  data.functionReturnValue = &result;
  data.callbackSite = CUPTI_API_ENTER;
  fake.callback(nullptr, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, &data);
  if (through_driver) launch(s, result == cudaSuccess ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE);
  data.callbackSite = CUPTI_API_EXIT;
  fake.callback(nullptr, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, &data);
}
CUstream stream(std::uintptr_t handle) { return reinterpret_cast<CUstream>(handle); }
std::uint64_t key(CUstream s) { return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(s)); }

shm::LsStream *slot_of(shm::LsClient &c, std::uint64_t k) {
  for (shm::LsStream &s : c.streams)
    if (s.key.load() == k) return &s;
  return nullptr;
}

// One test: the library's state (its devices, their segments) lives for the process, as in a program.
TEST(LsGlue, InjectedLibraryMarksLaunchesThroughTheFakeDriver) {
  char tmpl[] = "/tmp/ptb-ls-glue.XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  setenv("PTB_QOSD_DIR", dir.c_str(), 1);
  unsetenv("PTB_LS_QUIET");

  // Subscribed to every launch callback and to context destruction.
  EXPECT_EQ(InitializeInjection(), 1);
  ASSERT_NE(fake.callback, nullptr);
  auto enabled = [](CUpti_CallbackDomain d, CUpti_CallbackId id) {
    for (const auto &e : fake.enabled)
      if (e.first == d && e.second == id) return true;
    return false;
  };
  for (CUpti_CallbackId id :
       {CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
        CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
        CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel, CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
        CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch, CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz})
    EXPECT_TRUE(enabled(CUPTI_CB_DOMAIN_DRIVER_API, id)) << id;
  EXPECT_TRUE(enabled(CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING));
  EXPECT_TRUE(enabled(CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_STREAM_DESTROY_STARTING));

  // No controller: said once, nothing enqueued, the C API says so.
  testing::internal::CaptureStderr();
  launch(stream(0x7000));
  launch(stream(0x7000));
  const std::string said = testing::internal::GetCapturedStderr();
  EXPECT_EQ(said, "ptb-ls: no controller for GPU-10111213-1415-1617-1819-1a1b1c1d1e1f (PTB_QOSD_DIR=" + dir +
                      "): LS work is not marked\n");
  EXPECT_TRUE(fake.queued[stream(0x7000)].empty());
  EXPECT_EQ(ptb_ls_begin(), PTB_LS_NO_CONTROLLER);

  // The controller starts: found within a second, not sooner.
  const std::string key_text = "GPU-10111213-1415-1617-1819-1a1b1c1d1e1f";
  shm::Mapping ctl;
  bool taken = true;
  ASSERT_EQ(shm::create_or_take(shm::segment_path(dir, key_text), 132, key_text, ctl, taken), shm::Status::ok);
  launch(stream(0x7000));
  EXPECT_EQ(fake.registrations, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  launch(stream(0x7000));
  ASSERT_EQ(fake.registrations, 1);
  EXPECT_EQ(fake.register_flags, unsigned{CU_MEMHOSTREGISTER_DEVICEMAP | CU_MEMHOSTREGISTER_PORTABLE});
  EXPECT_EQ(fake.capture_mode_exchanges, 2); // relaxed for the registration, then put back
  shm::LsClient *c = nullptr;
  for (shm::LsClient &client : ctl->ls)
    if (client.pid.load() == static_cast<std::uint64_t>(getpid())) c = &client;
  ASSERT_NE(c, nullptr);
  shm::LsStream *a = slot_of(*c, 0x7000);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->submitted.load(), 1u);
  EXPECT_EQ(c->launches.load(), 1u);
  EXPECT_TRUE(ls::busy(*a));
  run_stream(stream(0x7000)); // the device writes completed <- 1 at the device address of the word
  EXPECT_FALSE(ls::busy(*a));
  EXPECT_EQ(a->completed.load(), 1u);

  // A failed launch, and the entry callback, count nothing.
  launch(stream(0x7000), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(c->launches.load(), 1u);

  // Runtime launches are marked once, whether the driver's callback comes inside them or not.
  EXPECT_TRUE(enabled(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000));
  runtime_launch(stream(0x7000), true);
  EXPECT_EQ(c->launches.load(), 2u);
  runtime_launch(stream(0x7000), false);
  EXPECT_EQ(c->launches.load(), 3u);
  runtime_launch(stream(0x7000), false, cudaErrorInvalidValue);
  runtime_launch(stream(0x7000), true, cudaErrorInvalidValue);
  EXPECT_EQ(c->launches.load(), 3u);
  EXPECT_EQ(fake.queued[stream(0x7000)].size(), 2u);
  EXPECT_EQ(a->submitted.load(), 3u);
  run_stream(stream(0x7000));
  EXPECT_FALSE(ls::busy(*a));

  // The legacy stream (0 and CU_STREAM_LEGACY) is key 1 and never asked about captures; the per-thread
  // default stream (0 in a _ptsz call) is the thread's own; cuLaunchKernelEx's stream is in its config.
  launch(stream(0));
  launch(CU_STREAM_LEGACY);
  launch_ptsz(stream(0));
  launch_ex(stream(0x8000));
  shm::LsStream *legacy = slot_of(*c, ls::kLegacyKey);
  ASSERT_NE(legacy, nullptr);
  EXPECT_EQ(legacy->submitted.load(), 2u);
  EXPECT_EQ(fake.queued[CU_STREAM_LEGACY].size(), 2u);
  EXPECT_EQ(fake.queued[CU_STREAM_PER_THREAD].size(), 1u);
  ASSERT_NE(slot_of(*c, key(stream(0x8000))), nullptr);
  run_stream(CU_STREAM_LEGACY);
  run_stream(CU_STREAM_PER_THREAD);
  run_stream(stream(0x8000));
  EXPECT_EQ(c->launches.load(), 7u);

  // Launches inside a capture: nothing; the graph's launches: one each.
  fake.capturing[stream(0x9000)] = true;
  for (int i = 0; i < 5; ++i) launch(stream(0x9000));
  EXPECT_EQ(c->launches.load(), 7u);
  EXPECT_TRUE(fake.queued[stream(0x9000)].empty());
  fake.capturing[stream(0x9000)] = false;
  graph_launch(stream(0x9000));
  graph_launch(stream(0x9000));
  EXPECT_EQ(c->launches.load(), 9u);
  EXPECT_EQ(slot_of(*c, 0x9000)->submitted.load(), 2u);
  run_stream(stream(0x9000));
  EXPECT_EQ(slot_of(*c, 0x9000)->completed.load(), 2u);

  // The C API: begin, end in a stream, the device reaches it.
  EXPECT_EQ(ptb_ls_end(stream(0x7000)), PTB_LS_NOT_OPEN);
  EXPECT_EQ(ptb_ls_begin(), PTB_LS_OK);
  EXPECT_EQ(ptb_ls_begin(), PTB_LS_OK);
  EXPECT_EQ(c->requests_begun.load(), 2u);
  EXPECT_NE(c->request_begin_ns[1].load(), 0u);
  EXPECT_EQ(ptb_ls_end(stream(0x7000)), PTB_LS_OK);
  EXPECT_EQ(ptb_ls_end(nullptr), PTB_LS_OK); // the legacy stream
  EXPECT_EQ(c->requests_done.load(), 0u);
  run_stream(stream(0x7000));
  EXPECT_EQ(c->requests_done.load(), 1u);
  run_stream(CU_STREAM_LEGACY);
  EXPECT_EQ(c->requests_done.load(), 2u);
  fake.capturing[stream(0x9000)] = true;
  EXPECT_EQ(ptb_ls_begin(), PTB_LS_OK);
  EXPECT_EQ(ptb_ls_end(stream(0x9000)), PTB_LS_CAPTURING);
  fake.capturing[stream(0x9000)] = false;
  EXPECT_EQ(ptb_ls_end(stream(0x9000)), PTB_LS_OK);
  run_stream(stream(0x9000));
  EXPECT_EQ(c->requests_done.load(), 3u);
  fake.have_context = false;
  EXPECT_EQ(ptb_ls_begin(), PTB_LS_NO_CONTEXT);
  fake.have_context = true;

  // Streams beyond the table: the shared slot, counted by host functions in any order.
  std::vector<CUstream> many;
  for (std::uintptr_t i = 0; i < 40; ++i) many.push_back(stream(0x100000 + 0x100 * i));
  for (CUstream s : many) launch(s);
  EXPECT_GT(c->overflow.load(), 0u);
  shm::LsStream &shared = c->streams[shm::kLsStreams - 1];
  EXPECT_EQ(shared.key.load(), ls::kSharedKey);
  EXPECT_TRUE(ls::busy(shared));
  for (auto it = many.rbegin(); it != many.rend(); ++it) run_stream(*it);
  EXPECT_FALSE(ls::busy(shared));
  for (const shm::LsStream &s : c->streams) EXPECT_FALSE(ls::busy(s));

  // A destroyed stream's slot (idle) serves the next new stream instead of the shared slot.
  const std::uint64_t overflow = c->overflow.load();
  CUpti_ResourceData gone{};
  gone.resourceHandle.stream = many.front();
  fake.callback(nullptr, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_STREAM_DESTROY_STARTING, &gone);
  launch(stream(0x999000));
  EXPECT_EQ(c->overflow.load(), overflow);
  ASSERT_NE(slot_of(*c, 0x999000), nullptr);
  EXPECT_EQ(slot_of(*c, key(many.front())), nullptr);
  run_stream(stream(0x999000));

  // The context that registered the segment is destroyed: the next launch registers it again.
  CUpti_ResourceData res{};
  res.context = reinterpret_cast<CUcontext>(0x5000);
  fake.callback(nullptr, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING, &res);
  launch(stream(0x7000));
  EXPECT_EQ(fake.registrations, 2);
  run_stream(stream(0x7000));
  EXPECT_FALSE(ls::busy(*a));

  // A write that cannot be enqueued: the launch is taken back, said once, nothing more is marked.
  const std::uint64_t before = c->launches.load(), sub = a->submitted.load();
  fake.write_result = CUDA_ERROR_ILLEGAL_STATE;
  testing::internal::CaptureStderr();
  launch(stream(0x7000));
  launch(stream(0x7000));
  const std::string failed = testing::internal::GetCapturedStderr();
  fake.write_result = CUDA_SUCCESS;
  launch(stream(0x7000));
  EXPECT_EQ(std::count(failed.begin(), failed.end(), '\n'), 1) << failed;
  EXPECT_NE(failed.find("ptb-ls: cannot enqueue"), std::string::npos) << failed;
  EXPECT_EQ(c->launches.load(), before);
  EXPECT_EQ(a->submitted.load(), sub);
  EXPECT_FALSE(ls::busy(*a));

  unsetenv("PTB_QOSD_DIR");
  (void)std::system(("rm -rf '" + dir + "'").c_str());
}

} // namespace
