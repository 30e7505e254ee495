// ptb/host.cuh: the host side of the PTB runtime, kept as one name for what used to be one header: launch
// modes, tuning, policies, launch configuration, launch, SM identity.
// Part of the header-only runtime; include <ptb/ptb.cuh>, not this file.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <thread>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "device.cuh"
#include "launch.cuh"
#include "launch_config.cuh"
#include "launch_mode.cuh"
#include "policy.cuh"
#include "runtime_state.cuh"
#include "sm_identity.cuh"
#include "smset.cuh"
#include "tuning.cuh"
