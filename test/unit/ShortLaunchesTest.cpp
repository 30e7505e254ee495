// The table that decides which launches of a process that follows a controller may run as their original
// kernel (runtime/include/ptb/detail/short_launches.h): learned from timed launches, per kernel and grid.
#include <ptb/detail/short_launches.h>

#include <gtest/gtest.h>

namespace {

using ptb::detail::ShortLaunches;
using Form = ShortLaunches::Form;

const int kernelA = 0, kernelB = 0; // two distinct addresses stand for two kernels
const void *const a = &kernelA, *const b = &kernelB;

// Off (budget 0): every launch a twin, none timed.
TEST(ShortLaunches, OffByDefault) {
  ShortLaunches table(0);
  for (int i = 0; i < 100; ++i) {
    const ShortLaunches::Plan p = table.plan(a, 1024);
    EXPECT_EQ(p.form, Form::twin);
    EXPECT_FALSE(p.timed);
  }
}

// A key's first launch is an untimed twin (it carries set-up); the next ones are timed twins; once `first` are
// observed under the budget, originals, one in `every` timed (not the first original: its module load); a key
// over the budget stays on twins.
TEST(ShortLaunches, LearnsPerKernelAndGrid) {
  ShortLaunches table(50.0, 3, 8);
  const ShortLaunches::Plan setup = table.plan(a, 1024);
  EXPECT_EQ(setup.form, Form::twin);
  EXPECT_FALSE(setup.timed);
  for (int i = 0; i < 3; ++i) {
    const ShortLaunches::Plan p = table.plan(a, 1024);
    EXPECT_EQ(p.form, Form::twin);
    EXPECT_TRUE(p.timed);
  }
  // Not observed yet: still twins, and no more than `first` timed at once.
  EXPECT_FALSE(table.plan(a, 1024).timed);
  EXPECT_EQ(table.plan(a, 1024).form, Form::twin);
  for (double us : {20.0, 22.0, 21.0}) table.observe(a, 1024, us);
  EXPECT_DOUBLE_EQ(table.estimate_us(a, 1024), 22.0 * 0.75 + 21.0 * 0.25);
  unsigned originals = 0, timed = 0;
  for (int i = 0; i < 64; ++i) {
    const ShortLaunches::Plan p = table.plan(a, 1024);
    originals += p.form == Form::original;
    timed += p.timed;
  }
  EXPECT_EQ(originals, 64u);
  EXPECT_EQ(timed, 8u); // launches 8, 16, ..., 64 of the key (launch 7 was the first original)
  // Another grid of the same kernel, and another kernel: learned apart.
  EXPECT_EQ(table.plan(a, 8192).form, Form::twin);
  EXPECT_EQ(table.plan(b, 1024).form, Form::twin);
  EXPECT_LT(table.estimate_us(a, 8192), 0.0);
}

// A longer sample raises the estimate at once (back to twins); shorter ones lower it slowly.
TEST(ShortLaunches, LongerSampleGoesBackToTwins) {
  ShortLaunches table(50.0, 1, 1);
  EXPECT_FALSE(table.plan(a, 64).timed); // set-up
  ASSERT_TRUE(table.plan(a, 64).timed);
  table.observe(a, 64, 10.0);
  const ShortLaunches::Plan first_original = table.plan(a, 64);
  EXPECT_EQ(first_original.form, Form::original);
  EXPECT_FALSE(first_original.timed); // its module load
  ASSERT_TRUE(table.plan(a, 64).timed);
  table.observe(a, 64, 400.0); // the launch above, timed: the kernel got long
  EXPECT_EQ(table.plan(a, 64).form, Form::twin);
  int n = 0;
  for (; n < 100 && table.plan(a, 64).form == Form::twin; ++n) table.observe(a, 64, 10.0);
  // 400 -> below 50 by 0.75 steps: about 8 samples
  EXPECT_GE(n, 7);
  EXPECT_LE(n, 9);
}

// A timed launch that failed is forgotten (it frees its place among the timed ones); too many shapes: twins.
TEST(ShortLaunches, ForgottenAndBoundedKeys) {
  ShortLaunches table(50.0, 1, 64, 2);
  EXPECT_FALSE(table.plan(a, 1).timed); // set-up
  EXPECT_FALSE(table.plan(a, 2).timed);
  ASSERT_TRUE(table.plan(a, 1).timed);
  EXPECT_FALSE(table.plan(a, 1).timed); // one in flight already
  table.forget(a, 1);
  EXPECT_TRUE(table.plan(a, 1).timed);
  EXPECT_TRUE(table.plan(a, 2).timed);
  const ShortLaunches::Plan third = table.plan(a, 3); // a third key over max_keys 2
  EXPECT_EQ(third.form, Form::twin);
  EXPECT_FALSE(third.timed);
  EXPECT_LT(table.estimate_us(a, 3), 0.0);
}

} // namespace
