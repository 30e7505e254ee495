// Second translation unit of the multi-TU link check (see multi_tu_a.cu).
#include <ptb/ptb.cuh>
void fa(int*);
__global__ void k2(int* p) { p[blockIdx.x] = 2; }
__global__ void k2__ptb(int* p, const ::ptb::Launch ptb_launch) { ::ptb::run_tasks(ptb_launch, [&](const uint3 b, const dim3) { p[b.x] = 2; }); }
int main() { fa(nullptr); ::ptb::launch(::ptb::LaunchConfig(10, 32), k2, k2__ptb, (int*)nullptr); ptb::trace_start(); return (int)ptb::sm_ids().size(); }
