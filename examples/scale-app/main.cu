// Checks scale_add against the CPU on fresh random inputs, the output poisoned first. Prints PASS or FAIL.
#include "scale.h"
#include "check.h"

#include <cmath>
#include <random>
#include <vector>

int main() {
  std::mt19937 rng(std::random_device{}());
  int n = std::uniform_int_distribution<int>(1, 3000000)(rng);
  float a = std::uniform_real_distribution<float>(-4.f, 4.f)(rng);
  std::vector<float> x(n), y(n), out(n);
  std::uniform_real_distribution<float> value(-1.f, 1.f);
  for (int i = 0; i < n; ++i) x[i] = value(rng), y[i] = value(rng);
  float *dx, *dy;
  CHECK(cudaMalloc(&dx, n * sizeof(float)));
  CHECK(cudaMalloc(&dy, n * sizeof(float)));
  CHECK(cudaMemcpy(dx, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dy, y.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  scale_add(dx, dy, n, a, 7);
  CHECK(cudaDeviceSynchronize());
  std::fill(out.begin(), out.end(), NAN);
  CHECK(cudaMemcpy(out.data(), dy, n * sizeof(float), cudaMemcpyDeviceToHost));
  long bad = 0;
  for (int i = 0; i < n; ++i)
    if (!(std::fabs(out[i] - (a * x[i] + y[i])) <= 1e-5f * (1.f + std::fabs(a * x[i] + y[i])))) ++bad;
  std::printf("scale_app: n=%d, %ld wrong: %s\n", n, bad, bad ? "FAIL" : "PASS");
  return bad ? 1 : 0;
}
