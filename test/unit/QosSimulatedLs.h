// The LS service of the QoS controllers' simulated GPUs (QosFeedbackTest, QosGSpaceTest): it meets its
// target (at 80% of it) once it has `need` units of the GPU (SMs, or worker slots yielded to it), and
// misses it by 5-60% with fewer, in proportion to what it lacks; 1% noise from `rng`.
#pragma once

#include <random>

namespace qos_test {

inline double simulatedLsLatency(double target, unsigned need, unsigned have, std::mt19937 &rng) {
  std::uniform_real_distribution<double> noise(0.99, 1.01);
  const double base = have >= need ? 0.8 * target : target * (1.05 + 0.55 * double(need - have) / need);
  return base * noise(rng);
}

} // namespace qos_test
