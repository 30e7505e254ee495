// Two translation units that both include the runtime: the program must link (header-only, no duplicate
// symbols). Built by check_build.sh; running it needs a GPU.
#include <ptb/ptb.cuh>
__global__ void k(int* p) { p[blockIdx.x] = 1; }
__global__ void k__ptb(int* p, const ::ptb::Launch ptb_launch) { ::ptb::run_tasks(ptb_launch, [&](const uint3 b, const dim3) { p[b.x] = 1; }); }
void fa(int* p) { ::ptb::launch(::ptb::LaunchConfig(10, 32), k, k__ptb, p); ptb::set_tuning(ptb::tuning()); ptb::process_policy(); }
