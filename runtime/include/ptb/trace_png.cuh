// ptb/trace_png.cuh: a trace (ptb::trace_collect) as a PNG picture of SMs over time, with the runtime's own
// small PNG writer (stored deflate blocks, CRC-32, Adler-32). Host only. Opt-in: ptb.cuh does not include
// it; a program that writes pictures includes <ptb/trace_png.cuh> after (or instead of) <ptb/ptb.cuh>.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <string>
#include <vector>

#include "trace.cuh"

namespace ptb {

namespace detail {
inline unsigned crc32(const unsigned char* p, size_t n, unsigned c = 0) {
  static unsigned table[256];
  static bool init = false;
  if (!init) {
    for (unsigned __i = 0; __i < 256; ++__i) {
      unsigned v = __i;
      for (int __k = 0; __k < 8; ++__k) v = (v & 1) ? 0xedb88320u ^ (v >> 1) : v >> 1;
      table[__i] = v;
    }
    init = true;
  }
  c = ~c;
  for (size_t __i = 0; __i < n; ++__i) c = table[(c ^ p[__i]) & 0xff] ^ (c >> 8);
  return ~c;
}
inline void put32(std::vector<unsigned char>& v, unsigned x) {
  v.push_back(static_cast<unsigned char>(x >> 24));
  v.push_back(static_cast<unsigned char>(x >> 16));
  v.push_back(static_cast<unsigned char>(x >> 8));
  v.push_back(static_cast<unsigned char>(x));
}
inline void png_chunk(std::vector<unsigned char>& out, const char* type, const std::vector<unsigned char>& data) {
  put32(out, static_cast<unsigned>(data.size()));
  const size_t at = out.size();
  out.insert(out.end(), type, type + 4);
  out.insert(out.end(), data.begin(), data.end());
  put32(out, crc32(out.data() + at, data.size() + 4));
}
// An RGB image as PNG: zlib stream of stored (uncompressed) deflate blocks.
inline bool write_png(const std::string& path, unsigned w, unsigned h, const std::vector<unsigned char>& rgb) {
  std::vector<unsigned char> raw;
  raw.reserve(static_cast<size_t>(h) * (3 * w + 1));
  for (unsigned y = 0; y < h; ++y) {
    raw.push_back(0); // filter: none
    raw.insert(raw.end(), rgb.begin() + static_cast<size_t>(y) * 3 * w,
               rgb.begin() + static_cast<size_t>(y + 1) * 3 * w);
  }
  std::vector<unsigned char> z = {0x78, 0x01};
  for (size_t __i = 0; __i < raw.size() || __i == 0;) {
    const size_t n = std::min<size_t>(65535, raw.size() - __i);
    const bool last = __i + n >= raw.size();
    z.push_back(last ? 1 : 0);
    z.push_back(static_cast<unsigned char>(n));
    z.push_back(static_cast<unsigned char>(n >> 8));
    z.push_back(static_cast<unsigned char>(~n));
    z.push_back(static_cast<unsigned char>((~n) >> 8));
    z.insert(z.end(), raw.begin() + __i, raw.begin() + __i + n);
    __i += n;
    if (last) break;
  }
  unsigned a = 1, b = 0;
  for (unsigned char c : raw) {
    a = (a + c) % 65521;
    b = (b + a) % 65521;
  }
  put32(z, (b << 16) | a);
  std::vector<unsigned char> out = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  std::vector<unsigned char> ihdr;
  put32(ihdr, w);
  put32(ihdr, h);
  ihdr.insert(ihdr.end(), {8, 2, 0, 0, 0}); // 8-bit RGB
  png_chunk(out, "IHDR", ihdr);
  png_chunk(out, "IDAT", z);
  png_chunk(out, "IEND", {});
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return false;
  const bool ok = std::fwrite(out.data(), 1, out.size(), f) == out.size();
  return std::fclose(f) == 0 && ok;
}
} // namespace detail

// A picture of SMs over time: one row band per SM (top: SM 0), time left to right; each pixel's colour
// is the launch that kept that SM busiest there, its strength how many of its tasks ran there at once
// (full colour at `max_concurrent` or more; 0: the largest seen). A white column every 10% of the time.
inline bool trace_write_png(const std::string& path, const std::vector<TraceEvent>& ev, unsigned width = 1600,
                            unsigned row_px = 4, unsigned max_concurrent = 0) {
  if (ev.empty() || width == 0 || row_px == 0) return false;
  unsigned long long t0 = ~0ull, t1 = 0;
  unsigned nsm = 0, ntag = 0;
  for (const auto& e : ev) {
    t0 = std::min(t0, e.start_ns);
    t1 = std::max(t1, std::max(e.end_ns, e.start_ns));
    nsm = std::max(nsm, e.sm + 1);
    ntag = std::max(ntag, e.launch + 1);
  }
  const double span = static_cast<double>(t1 - t0 + 1), px_ns = span / width;
  const unsigned colours = std::min(ntag, 8u);
  std::vector<double> busy(static_cast<size_t>(nsm) * width * colours, 0.0);
  for (const auto& e : ev) {
    const double a = (e.start_ns - t0) / px_ns, b = (std::max(e.end_ns, e.start_ns) - t0) / px_ns;
    for (unsigned x = static_cast<unsigned>(a); x < width && x <= static_cast<unsigned>(b); ++x) {
      const double ov = std::min<double>(b, x + 1) - std::max<double>(a, x);
      if (ov > 0) busy[(static_cast<size_t>(e.sm) * width + x) * colours + e.launch % colours] += ov;
    }
  }
  double mx = max_concurrent;
  if (mx <= 0)
    for (size_t __i = 0; __i < busy.size(); __i += colours) {
      double t = 0;
      for (unsigned __k = 0; __k < colours; ++__k) t += busy[__i + __k];
      mx = std::max(mx, t);
    }
  static const unsigned char pal[8][3] = {{31, 119, 180},  {214, 39, 40},  {44, 160, 44}, {255, 127, 14},
                                          {148, 103, 189}, {23, 190, 207}, {140, 86, 75}, {227, 119, 194}};
  const unsigned h = nsm * row_px;
  std::vector<unsigned char> rgb(static_cast<size_t>(h) * width * 3, 255);
  for (unsigned sm = 0; sm < nsm; ++sm)
    for (unsigned x = 0; x < width; ++x) {
      const double* c = &busy[(static_cast<size_t>(sm) * width + x) * colours];
      unsigned best = 0;
      double tot = 0;
      for (unsigned __k = 0; __k < colours; ++__k) {
        tot += c[__k];
        if (c[__k] > c[best]) best = __k;
      }
      const double f = std::min(1.0, tot / (mx > 0 ? mx : 1));
      unsigned char px[3];
      for (int ch = 0; ch < 3; ++ch) px[ch] = static_cast<unsigned char>(255 - f * (255 - pal[best][ch]));
      if (x % (width / 10 ? width / 10 : 1) == 0 && tot == 0) px[0] = px[1] = px[2] = 235;
      for (unsigned __r = 0; __r < row_px; ++__r) {
        unsigned char* __o = &rgb[((static_cast<size_t>(sm) * row_px + __r) * width + x) * 3];
        const bool sep = (__r == row_px - 1 && row_px > 2); // thin line between SMs
        __o[0] = sep ? static_cast<unsigned char>(px[0] * 0.9) : px[0];
        __o[1] = sep ? static_cast<unsigned char>(px[1] * 0.9) : px[1];
        __o[2] = sep ? static_cast<unsigned char>(px[2] * 0.9) : px[2];
      }
    }
  return detail::write_png(path, width, h, rgb);
}

} // namespace ptb
