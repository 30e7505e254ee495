// test/unit/TestSeed.h: fresh random inputs, repeatable. One base seed per run of ptb-unit-tests
// (PTB_TEST_SEED, else a random one), printed once; each test mixes its own name in, so a test's inputs do
// not depend on which other tests ran. Set PTB_TEST_SEED to the printed value to repeat a run.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>

inline unsigned test_seed(const char *test) {
  static const unsigned base = [] {
    const char *e = std::getenv("PTB_TEST_SEED");
    const unsigned b = e ? unsigned(std::strtoul(e, nullptr, 10)) : std::random_device{}();
    std::printf("ptb-unit-tests: PTB_TEST_SEED=%u\n", b);
    return b;
  }();
  return base ^ unsigned(std::hash<std::string>{}(test));
}
