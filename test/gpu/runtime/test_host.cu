// Host-only checks of the runtime (no GPU needed): SmSet construction/parsing/printing, launch mode and
// tuning from the environment, the PNG and JSON trace writers (PNG re-read: chunk CRCs, stored deflate
// blocks, Adler-32, pixel rows).
#include <ptb/ptb.cuh>
#include <ptb/trace_png.cuh>  // trace_write_png, detail::crc32
#include "common.cuh"
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>

static unsigned be32(const unsigned char* p) { return (unsigned)p[0] << 24 | (unsigned)p[1] << 16 | (unsigned)p[2] << 8 | p[3]; }

static void test_smset() {
  using ptb::SmSet;
  EXPECT(SmSet::range(3, 7).count() == 4 && SmSet::range(3, 7).contains(3) && !SmSet::range(3, 7).contains(7), "range");
  EXPECT(SmSet::first(66).str() == "0-65", "first: %s", SmSet::first(66).str().c_str());
  EXPECT(SmSet::last(2, 132).str() == "130-131", "last: %s", SmSet::last(2, 132).str().c_str());
  EXPECT(SmSet::all_but_last(2, 132).str() == "0-129", "all_but_last");
  EXPECT(SmSet::tpcs(1, 3).str() == "2-5", "tpcs: %s", SmSet::tpcs(1, 3).str().c_str());
  EXPECT(SmSet::mask(0x5ull, 0x1ull).str() == "0,2,64", "mask: %s", SmSet::mask(0x5ull, 0x1ull).str().c_str());
  EXPECT(SmSet::none().empty() && SmSet::none().str() == "none", "none");
  EXPECT(SmSet::all().count() == ptb::kMaxSms, "all");
  SmSet s;
  EXPECT(SmSet::parse("0-65,70,72-75", s) && s.count() == 66 + 1 + 4 && s.str() == "0-65,70,72-75", "parse: %s", s.str().c_str());
  EXPECT(SmSet::parse("all", s) && s == SmSet::all(), "parse all");
  for (const char* bad : {"", "x", "3-", "5-2", "1,,2", "0-999", "1;2"}) {
    SmSet t = SmSet::first(3);
    EXPECT(!SmSet::parse(bad, t) || std::strlen(bad) == 0, "parse accepted '%s'", bad);
    EXPECT(t == SmSet::first(3) || std::strlen(bad) == 0, "parse changed the set on '%s'", bad);
  }
  for (int rep = 0; rep < 200; ++rep) {  // str() / parse() round trip on random sets
    SmSet r;
    for (unsigned i = 0; i < ptb::kMaxSms; ++i) if (rnd(0, 3) == 0) r.add(i);
    if (r.empty()) continue;
    SmSet back;
    EXPECT(SmSet::parse(r.str(), back) && back == r, "round trip %s", r.str().c_str());
  }
  EXPECT((SmSet::first(4) | SmSet::range(10, 12)).str() == "0-3,10-11", "union");
  EXPECT((SmSet::first(10) & SmSet::range(5, 20)).str() == "5-9", "intersection");
}

static void test_png_json() {
  std::vector<ptb::TraceEvent> ev;
  const unsigned nsm = 7;
  for (unsigned i = 0; i < 500; ++i)
    ev.push_back({i, 1000ull * i, 1000ull * i + 5000 + rnd(0, 3000), i % nsm, i % 40, 1 + i % 3});
  const unsigned W = 333, R = 3;
  EXPECT(ptb::trace_write_png("test_host.png", ev, W, R), "png write");
  std::ifstream f("test_host.png", std::ios::binary);
  std::vector<unsigned char> d((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  EXPECT(d.size() > 8 && std::memcmp(d.data(), sig, 8) == 0, "png signature");
  size_t i = 8;
  unsigned w = 0, h = 0;
  std::vector<unsigned char> z;
  bool iend = false;
  while (i + 12 <= d.size()) {
    const unsigned n = be32(&d[i]);
    const std::string type(d.begin() + i + 4, d.begin() + i + 8);
    EXPECT(i + 12 + n <= d.size(), "chunk size");
    if (i + 12 + n > d.size()) break;
    EXPECT(ptb::detail::crc32(&d[i + 4], n + 4) == be32(&d[i + 8 + n]), "crc of %s", type.c_str());
    if (type == "IHDR") { w = be32(&d[i + 8]); h = be32(&d[i + 12]); EXPECT(d[i + 16] == 8 && d[i + 17] == 2, "8-bit RGB"); }
    if (type == "IDAT") z.insert(z.end(), d.begin() + i + 8, d.begin() + i + 8 + n);
    if (type == "IEND") iend = true;
    i += 12 + n;
  }
  EXPECT(iend && w == W && h == nsm * R, "png header %ux%u", w, h);
  // inflate stored blocks
  std::vector<unsigned char> raw;
  size_t p = 2;
  bool last = false;
  while (!last && p + 5 <= z.size()) {
    last = z[p] & 1;
    EXPECT((z[p] >> 1) == 0, "stored block");
    const unsigned len = z[p + 1] | z[p + 2] << 8, nlen = z[p + 3] | z[p + 4] << 8;
    EXPECT((len ^ 0xffffu) == nlen, "LEN/NLEN");
    raw.insert(raw.end(), z.begin() + p + 5, z.begin() + p + 5 + len);
    p += 5 + len;
  }
  unsigned a = 1, b = 0;
  for (unsigned char c : raw) { a = (a + c) % 65521; b = (b + a) % 65521; }
  EXPECT(p + 4 == z.size() && be32(&z[p]) == ((b << 16) | a), "adler32");
  EXPECT(raw.size() == (size_t)h * (3 * w + 1), "raw size %zu", raw.size());
  size_t colored = 0;
  for (unsigned y = 0; y < h; ++y) {
    EXPECT(raw[(size_t)y * (3 * w + 1)] == 0, "filter byte");
    for (unsigned x = 0; x < w; ++x) {
      const unsigned char* px = &raw[(size_t)y * (3 * w + 1) + 1 + 3 * x];
      if (!(px[0] == px[1] && px[1] == px[2])) ++colored;
    }
  }
  EXPECT(colored > (size_t)w * h / 4, "picture mostly blank (%zu coloured pixels)", colored);
  EXPECT(ptb::trace_write_json("test_host.json", ev), "json write");
  std::ifstream j("test_host.json");
  std::string js((std::istreambuf_iterator<char>(j)), std::istreambuf_iterator<char>());
  size_t slices = 0;
  for (size_t q = js.find("\"ph\":\"X\""); q != std::string::npos; q = js.find("\"ph\":\"X\"", q + 1)) ++slices;
  EXPECT(slices == ev.size() && js.find("traceEvents") != std::string::npos && js.back() == '\n', "json: %zu slices", slices);
}

// A process confined from its environment (PTB_SMS, PTB_BLOCKS_PER_SM) asks CUDA for 32 hardware queues
// before main unless the user set a number (detail/connections.cuh). PTB_TEST_EXPECT_CONNECTIONS: the value
// the run expects, "unset" for none (check_build.sh runs it unconfined, confined, and with a user's value).
static void test_connections() {
  const char* want = std::getenv("PTB_TEST_EXPECT_CONNECTIONS");
  if (!want) return;
  const char* got = std::getenv("CUDA_DEVICE_MAX_CONNECTIONS");
  EXPECT(std::strcmp(got ? got : "unset", want) == 0, "CUDA_DEVICE_MAX_CONNECTIONS is %s, expected %s",
         got ? got : "unset", want);
}

int main() {
  test_connections();
  EXPECT(std::getenv("PTB_MODE") || ptb::launch_mode() == ptb::LaunchMode::automatic, "default mode");
  ptb::set_launch_mode(ptb::LaunchMode::original);
  EXPECT(ptb::launch_mode() == ptb::LaunchMode::original, "set_launch_mode");
  ptb::set_launch_mode(ptb::LaunchMode::ptb);
  EXPECT(ptb::launch_mode() == ptb::LaunchMode::ptb, "set_launch_mode ptb");
  ptb::set_launch_mode(ptb::LaunchMode::automatic);
  EXPECT(ptb::launch_mode() == ptb::LaunchMode::automatic, "set_launch_mode automatic");
  ptb::LaunchConfig c(dim3(3, 2), dim3(64));
  EXPECT(c.grid.x == 3 && c.grid.y == 2 && c.block.x == 64 && c.shmem == 0 && c.stream == 0 && !c.policy, "LaunchConfig");
  ptb::set_tuning(ptb::Tuning{1000, 200, 300, 5});
  const ptb::Tuning t = ptb::tuning();
  EXPECT(t.check_cycles == 1000 && t.max_chunk == 127 && t.first_chunk == 127 && t.chunk_cycles == 5, "tuning clamp");
  ptb::Tuning share;
  EXPECT(share.first_share == 4 && share.first_chunk == 4, "first chunk defaults");
  share.first_share = 0;
  ptb::set_tuning(share);
  EXPECT(ptb::tuning().first_share == 1, "first_share clamp");
  ptb::set_tuning(ptb::Tuning{});
  test_smset();
  test_png_json();
  return finish("test_host");
}
