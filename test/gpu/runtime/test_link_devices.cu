// A BE process that follows a controller (PTB_QOSD) and launches on two GPUs (controller_link.cuh): it follows
// one controller, the one of the device current at its first launch, and says so once, on stderr, at its
// first launch on the other device. Needs two GPUs (prints SKIP on one). No controller runs: PTB_QOSD names
// a key with no segment, so the process keeps to its safe state (the highest quarter of the SMs), where the
// twins still run every block once. Checks: the launches on both devices exact against a CPU reference
// (fresh random inputs, poisoned output, every block once); the message once, naming both devices; none
// while every launch was on the first device.
#include <ptb/ptb.cuh>
#include "common.cuh"
#include "scale_add.cuh"

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

// Two launches on the current device, each checked.
static void launches_here(int dev) {
  ScaleAdd work;
  for (int rep = 0; rep < 2; ++rep) {
    char what[48];
    std::snprintf(what, sizeof(what), "device %d, launch %d", dev, rep);
    work.launch_and_check(what);
  }
}

static std::string read_file(const char* path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

static int count_of(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

int main() {
  int count = 0;
  CK(cudaGetDeviceCount(&count));
  if (count < 2) {
    std::printf("SKIP test_link_devices: %d GPU(s), two needed\n", count);
    return 0;
  }
  // No controller has this key: the link keeps the process in its safe state.
  char dir[] = "/tmp/ptb-link-devices.XXXXXX";
  EXPECT(mkdtemp(dir) != nullptr, "mkdtemp failed");
  setenv("PTB_QOSD_DIR", dir, 1);
  setenv("PTB_QOSD", "GPU-ptb-link-devices-test", 1);
  // The runtime's messages go to a file, to be read back.
  const std::string log = std::string(dir) + "/stderr.txt";
  std::fflush(stderr);
  const int saved = dup(2);
  const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  EXPECT(saved >= 0 && fd >= 0 && dup2(fd, 2) == 2, "cannot send stderr to %s", log.c_str());

  CK(cudaSetDevice(0));
  launches_here(0);
  std::fflush(stderr);
  const std::string before = read_file(log.c_str());
  CK(cudaSetDevice(1));
  launches_here(1);
  CK(cudaSetDevice(0));
  launches_here(0);
  std::fflush(stderr);
  const std::string after = read_file(log.c_str());
  dup2(saved, 2);
  close(fd);
  std::fputs(after.c_str(), stderr); // what the runtime said, for the log

  const std::string message = "this process follows the controller of device 0's GPU";
  EXPECT(count_of(before, message) == 0, "said before any launch on device 1");
  EXPECT(count_of(after, message) == 1, "said %d times, expected once", count_of(after, message));
  EXPECT(count_of(after, "this launch is on device 1") == 1, "the message does not name device 1");
  unlink(log.c_str());
  rmdir(dir);
  if (g_failures) {
    std::printf("test_link_devices: FAIL (%d)\n", g_failures);
    return 1;
  }
  std::printf("test_link_devices: PASS\n");
  return 0;
}
