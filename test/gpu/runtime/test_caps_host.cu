// Host-only (no GPU needed; check_build.sh runs it): the per-SM cap bytes a policy writes to the device
// (detail::compute_caps_locked) when its cap applies on a subset of its SMs (Policy::set's `capped`,
// G-Space), whether such a policy counts as restricting (it must: launches under it run as twins), and
// the bytes for the allocations the QoS controllers hand BE (qos::be_placement, what apply_to_be sets), and
// the policy's room written beside the bytes (detail::policy_room_locked), against the bytes.
// The device is a made-up one whose %smid values are not the dense indices: SM i (dense) reports %smid
// 2i + 1, so a mix-up of the two shows. The expected byte of each %smid is worked out here from that
// mapping, not read from the DeviceState the code under test reads.
#include <ptb/ptb.cuh>
#include <ptb/qos/apply.cuh>  // qos::be_placement, qos::Allocation
#include "common.cuh"
#include <algorithm>

constexpr unsigned kSms = 66;  // dense 0..65 on %smid 1, 3, ..., 131

static void fake_device(ptb::detail::DeviceState& d) {
  d.discovered = true;  // discover_locked returns at once: no kernel, no GPU
  for (unsigned i = 0; i < ptb::detail::kMaxSm; ++i) d.dense_of[i] = -1;
  for (unsigned k = 0; k < kSms; ++k) {
    d.dense_of[2 * k + 1] = static_cast<int>(k);
    d.raw_of[k] = static_cast<int>(2 * k + 1);
  }
  d.ndense = kSms;
  d.sms = kSms;
}

// What %smid `id` must get: 0 off the set, the cap on capped SMs of the set, 255 elsewhere in it.
static unsigned expected(unsigned id, const ptb::SmSet& sms, unsigned per_sm, const ptb::SmSet& capped) {
  const bool real = id % 2 == 1 && id / 2 < kSms;
  const unsigned dense = id / 2;
  const bool all = sms == ptb::SmSet::all();
  const bool allowed = all || (real && sms.contains(dense));
  if (!allowed) return 0;
  if (per_sm == 0) return 255;
  const bool cap_here = capped == ptb::SmSet::all() || (real && capped.contains(dense));
  return cap_here ? std::min(per_sm, 255u) : 255;
}

static int check(ptb::detail::DeviceState& d, const ptb::SmSet& sms, unsigned per_sm, const ptb::SmSet& capped,
                 const char* what) {
  ptb::detail::PolicyState p;
  p.sms = sms;
  p.per_sm = per_sm;
  p.capped = capped;
  unsigned char out[ptb::detail::kMaxSm];
  ptb::detail::compute_caps_locked(d, p, out);
  int bad = 0;
  for (unsigned id = 0; id < ptb::detail::kMaxSm; ++id) {
    const unsigned want = expected(id, sms, per_sm, capped);
    if (out[id] != want && bad++ < 3)
      std::printf("  %s: sms %s cap %u capped %s: %%smid %u has %u, expected %u\n", what, sms.str().c_str(), per_sm,
                  capped.str().c_str(), id, out[id], want);
  }
  EXPECT(bad == 0, "%s: %d cap bytes wrong", what, bad);
  // The room written beside the bytes (detail::PolicyRoom, read by a leaving worker: ask_if_thin) holds
  // as many places as the bytes of the device's own SMs give a kernel of `occ` blocks per SM.
  const ptb::detail::PolicyRoom room = ptb::detail::policy_room_locked(d, p);
  for (unsigned occ : {1u, 3u, 8u, 32u}) {
    unsigned long long want = 0;
    for (unsigned k = 0; k < kSms; ++k) {
      const unsigned b = expected(2 * k + 1, sms, per_sm, capped);
      want += b == 0 ? 0 : b == 255 ? occ : std::min(b, occ);
    }
    const unsigned long long got = ptb::detail::places(room, occ);
    if (got != want) {
      ++bad;
      std::printf("  %s: sms %s cap %u capped %s: room for %u per SM is %llu, expected %llu\n", what, sms.str().c_str(),
                  per_sm, capped.str().c_str(), occ, got, want);
    }
  }
  EXPECT(bad == 0, "%s: room wrong", what);
  return bad;
}

static void test_subset_caps() {
  ptb::detail::DeviceState d;
  fake_device(d);
  using ptb::SmSet;
  // the forms that existed before capped subsets: unchanged
  check(d, SmSet::all(), 0, SmSet::all(), "all, no cap");
  check(d, SmSet::all(), 3, SmSet::all(), "all, cap everywhere");
  check(d, SmSet::range(10, 40), 2, SmSet::all(), "range, cap everywhere");
  check(d, SmSet::range(10, 40), 0, SmSet::all(), "range, no cap");
  // G-Space: BE on every SM, k on the lowest n
  check(d, SmSet::all(), 2, SmSet::first(20), "all, cap on the first 20");
  check(d, SmSet::range(4, kSms), 1, SmSet::range(4, 24), "range, cap on its low end");
  check(d, SmSet::range(10, 40), 3, SmSet::range(30, 60), "cap on a set overlapping the allowed one");
  check(d, SmSet::range(10, 40), 3, SmSet::none(), "cap on no SM");
  check(d, SmSet::all(), 300, SmSet::first(5), "cap above 255");  // clamped to 255 = no cap
  int bad = 0;
  for (int rep = 0; rep < 300; ++rep) {
    SmSet sms, capped;
    for (unsigned i = 0; i < kSms + 4; ++i) {  // a few indices the device lacks, too
      if (rnd(0, 2)) sms.add(i);
      if (rnd(0, 1)) capped.add(i);
    }
    if (rep % 5 == 0) sms = SmSet::all();
    if (rep % 7 == 0) capped = SmSet::all();
    bad += check(d, sms, rep % 4 == 0 ? 0 : rnd(1, 8), capped, "random") != 0;
  }
  std::printf("  subset caps: 9 forms and 300 random (set, cap, capped) on a device with %%smid != dense index, %d wrong\n",
              bad);
}

static void test_restricts() {
  using ptb::SmSet;
  using ptb::detail::restricts;
  EXPECT(!restricts(SmSet::all(), 0), "all SMs, no cap");
  EXPECT(restricts(SmSet::all(), 2), "a cap everywhere");
  EXPECT(restricts(SmSet::first(8), 0), "a set");
  EXPECT(restricts(SmSet::all(), 2, SmSet::first(8)), "a cap on a subset restricts");
  EXPECT(!restricts(SmSet::all(), 2, SmSet::none()), "a cap on no SM does not");
  EXPECT(!restricts(SmSet::all(), 0, SmSet::first(8)), "no cap, whatever the subset");
  ptb::detail::PolicyState p;
  EXPECT(p.capped == SmSet::all() && !ptb::detail::restricted(p), "a new policy: cap everywhere, not restricting");
  p.per_sm = 1;
  p.capped = SmSet::range(0, 4);
  EXPECT(ptb::detail::restricted(p), "restricted() reads capped");
}

// The allocations the controllers hand apply_to_be, down to the bytes on the device.
static void test_placements() {
  ptb::detail::DeviceState d;
  fake_device(d);
  using ptb::qos::Allocation;
  struct Case {
    Allocation a;
    unsigned per_sm;
    const char* what;
  } cases[] = {
      {{10, 50, 6}, 0, "feedback: BE on [10, 60)"},
      {{10, 56, 0}, 2, "feedback with the caller's cap"},
      {{0, kSms, 0, 20, 2}, 0, "gspace: 2 workers on the lowest 20"},
      {{0, kSms, 0, 20, 0}, 0, "gspace: the lowest 20 LS's alone"},
      {{8, 58, 0, 10, 3}, 5, "a subset next to LS's SMs"},
  };
  for (const Case& c : cases) {
    const ptb::qos::BePlacement pl = ptb::qos::be_placement(c.a, c.per_sm);
    ptb::detail::PolicyState p;
    p.sms = pl.sms;
    p.per_sm = pl.per_sm;
    p.capped = pl.capped;
    unsigned char out[ptb::detail::kMaxSm];
    ptb::detail::compute_caps_locked(d, p, out);
    int bad = 0;
    for (unsigned k = 0; k < kSms; ++k) {  // by dense index, from the allocation's own terms
      const bool be = k >= c.a.ls && k < c.a.ls + c.a.be;
      const bool shared = c.a.shared > 0 && k >= c.a.ls && k < c.a.ls + c.a.shared;
      unsigned want = !be ? 0 : shared ? c.a.shared_cap : c.a.shared > 0 ? 255 : c.per_sm ? c.per_sm : 255;
      if (out[2 * k + 1] != want && bad++ < 3)
        std::printf("  %s: SM %u has %u, expected %u\n", c.what, k, out[2 * k + 1], want);
    }
    EXPECT(bad == 0, "%s: %d SMs wrong", c.what, bad);
  }
  std::printf("  placements: %zu allocations\n", sizeof(cases) / sizeof(cases[0]));
}

int main() {
  test_subset_caps();
  test_restricts();
  test_placements();
  return finish("test_caps_host");
}
