// What a first launch pays for loading a module, per device image (issue 13, goal 2).
//
//   module_load [--reps 41] [--library] KERNEL IMAGE...
//
// For each IMAGE (a cubin or fatbin file), --reps times, the images interleaved: load it with
// cuModuleLoadData, get KERNEL (a mangled name) with cuModuleGetFunction, launch it once with zeroed
// arguments (the bench kernels return at once for a 0 x 0 problem) and wait, then unload it. Prints, per
// image, its size and the medians of the three steps and of their sum, in microseconds (host clock).
// Loading is lazy unless CUDA_MODULE_LOADING says otherwise, as for a program.
#include <cuda.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#define CK(x)                                                                  \
  do {                                                                         \
    CUresult r_ = (x);                                                         \
    if (r_ != CUDA_SUCCESS) {                                                  \
      const char* s_ = nullptr;                                                \
      cuGetErrorString(r_, &s_);                                               \
      std::fprintf(stderr, "%s:%d: %s -> %s\n", __FILE__, __LINE__, #x, s_);   \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

static double now_us() {
  using namespace std::chrono;
  return duration<double, std::micro>(steady_clock::now().time_since_epoch()).count();
}

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char** argv) {
  int reps = 41, a = 1;
  bool library = false;
  for (;;) {
    if (argc > a + 1 && std::strcmp(argv[a], "--reps") == 0) reps = std::atoi(argv[a + 1]), a += 2;
    else if (argc > a && std::strcmp(argv[a], "--library") == 0) library = true, a += 1;
    else break;
  }
  if (argc - a < 2) {
    std::fprintf(stderr, "usage: module_load [--reps N] KERNEL IMAGE...\n");
    return 2;
  }
  const char* kernel = argv[a];
  std::vector<std::string> names(argv + a + 1, argv + argc);
  std::vector<std::vector<char>> images;
  for (const auto& n : names) {
    std::ifstream f(n, std::ios::binary);
    if (!f) {
      std::fprintf(stderr, "module_load: cannot read %s\n", n.c_str());
      return 1;
    }
    images.emplace_back(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  }
  CK(cuInit(0));
  CUdevice dev;
  CK(cuDeviceGet(&dev, 0));
  CUcontext ctx;
  CK(cuDevicePrimaryCtxRetain(&ctx, dev));
  CK(cuCtxSetCurrent(ctx));
  alignas(16) unsigned char args[64] = {};  // pointers null, w = h = 0: the kernels return at once
  void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, args, CU_LAUNCH_PARAM_BUFFER_SIZE, nullptr, CU_LAUNCH_PARAM_END};
  size_t argbytes = 24;  // (const uchar*, ushort*, int, int): 8 + 8 + 4 + 4
  extra[3] = &argbytes;
  const size_t k = images.size();
  std::vector<std::vector<double>> load(k), get(k), launch(k), total(k), rest(k);
  std::vector<unsigned> nfunc(k);
  for (int r = -1; r < reps; ++r)  // r = -1: a warm-up round, not counted
    for (size_t i = 0; i < k; ++i) {
      CUmodule m = nullptr;
      CUlibrary lib = nullptr;
      CUfunction f;
      CUkernel kern;
      const double t0 = now_us();
      if (library) CK(cuLibraryLoadData(&lib, images[i].data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
      else CK(cuModuleLoadData(&m, images[i].data()));
      const double t1 = now_us();
      if (library) {
        CK(cuLibraryGetKernel(&kern, lib, kernel));
        f = reinterpret_cast<CUfunction>(kern);
      } else {
        CK(cuModuleGetFunction(&f, m, kernel));
      }
      const double t2 = now_us();
      CK(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, nullptr, nullptr, extra));
      CK(cuCtxSynchronize());
      const double t3 = now_us();
      unsigned n = 0;
      if (library) {
        CK(cuLibraryGetKernelCount(&n, lib));
        std::vector<CUkernel> ks(n);
        CK(cuLibraryEnumerateKernels(ks.data(), n, lib));
        for (CUkernel g : ks) {
          CUfunction h;
          CK(cuKernelGetFunction(&h, g));
          CK(cuFuncLoad(h));
        }
      } else {
        CK(cuModuleGetFunctionCount(&n, m));
        std::vector<CUfunction> fs(n);
        CK(cuModuleEnumerateFunctions(fs.data(), n, m));
        for (CUfunction g : fs) CK(cuFuncLoad(g));
      }
      const double t4 = now_us();
      nfunc[i] = n;
      if (library) CK(cuLibraryUnload(lib));
      else CK(cuModuleUnload(m));
      if (r < 0) continue;
      load[i].push_back(t1 - t0);
      get[i].push_back(t2 - t1);
      launch[i].push_back(t3 - t2);
      total[i].push_back(t3 - t0);
      rest[i].push_back(t4 - t3);
    }
  const char* mode = std::getenv("CUDA_MODULE_LOADING");
  std::printf("module_load: kernel %s, %d reps, %s API, CUDA_MODULE_LOADING=%s; medians in us\n", kernel, reps,
              library ? "library" : "module", mode ? mode : "(default)");
  std::printf("%-28s %9s %6s %9s %9s %9s %9s %9s\n", "image", "bytes", "funcs", "load", "get", "launch", "total", "rest");
  for (size_t i = 0; i < k; ++i)
    std::printf("%-28s %9zu %6u %9.1f %9.1f %9.1f %9.1f %9.1f\n", names[i].substr(names[i].rfind('/') + 1).c_str(),
                images[i].size(), nfunc[i], median(load[i]), median(get[i]), median(launch[i]), median(total[i]),
                median(rest[i]));
  CK(cuDevicePrimaryCtxRelease(dev));
  return 0;
}
