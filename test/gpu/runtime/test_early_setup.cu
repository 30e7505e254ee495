// The device's set-up before the first twin launch (PTB_EARLY_SETUP=1, ptb/detail/early_setup.cuh), run by
// run_on_gpu.sh in three environments:
//   PTB_MODE=ptb PTB_EARLY_SETUP=1   the runtime sets the device up on its own thread once the program's context is
//                                    active, before any launch; the first twin launch then finds it ready
//   PTB_MODE=ptb                     no early set-up: nothing is set up before the first launch
//   PTB_EARLY_SETUP=1                (automatic mode, no policy) no twins expected: nothing set up, ever
// In each: a program that forks before its first CUDA call (the child must be able to use CUDA: the runtime's
// thread touched nothing of CUDA before the program did), then twin launches checked against a CPU reference
// (fresh random inputs, poisoned output, every block once), and the form every launch ran as.
#include <ptb/ptb.cuh>
#include "common.cuh"
#include "scale_add.cuh"

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <thread>

static bool env_is(const char* name, const char* value) {
  const char* e = std::getenv(name);
  return e && std::strcmp(e, value) == 0;
}

int main() {
  const bool early = env_is("PTB_EARLY_SETUP", "1") && env_is("PTB_MODE", "ptb");
  const bool twins = env_is("PTB_MODE", "ptb");
  // A child forked before the program's first CUDA call uses CUDA: the runtime's thread must not have
  // initialised it.
  const pid_t child = fork();
  if (child == 0) {
    int* p = nullptr;
    const bool ok = cudaMalloc(&p, 4) == cudaSuccess && cudaFree(p) == cudaSuccess;
    std::_Exit(ok ? 0 : 3);
  }
  int status = 0;
  EXPECT(child > 0 && waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0,
         "a child forked before the first CUDA call could not use CUDA (status %d)", status);

  // The program's own set-up: the context becomes active here.
  ScaleAdd work;
  // Wait up to 2 s for the early set-up (it takes about 1 ms on an H200); without it, 100 ms of nothing.
  bool set_up = false;
  const auto t0 = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(early ? 2000 : 100)) {
    if ((set_up = ptb::runtime_set_up(0))) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  const double waited_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  EXPECT(set_up == early, "set up before the first launch: %d, expected %d (after %.1f ms)", set_up, early, waited_ms);
  if (early) std::printf("  set up %.1f ms after the context's first allocations\n", waited_ms);

  for (int rep = 0; rep < 3; ++rep) {
    char what[32];
    std::snprintf(what, sizeof(what), "launch %d", rep);
    work.launch_and_check(what);
  }
  EXPECT(ptb::runtime_set_up(0) == twins, "set up after the launches: %d, expected %d", ptb::runtime_set_up(0), twins);
  if (g_failures) {
    std::printf("test_early_setup: FAIL (%d)\n", g_failures);
    return 1;
  }
  std::printf("test_early_setup: PASS (early set-up %s, twins %s)\n", early ? "on" : "off", twins ? "on" : "off");
  return 0;
}
