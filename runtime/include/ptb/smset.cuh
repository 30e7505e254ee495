// ptb/smset.cuh: sets of SMs by dense index (0 .. number of SMs - 1). Host only.
// Part of the header-only runtime; include <ptb/ptb.cuh>, not this file.
#pragma once
#include <bitset>
#include <cstdlib>
#include <string>

namespace ptb {

constexpr unsigned kMaxSms = 256;

// A set of SMs, by dense index: the i-th smallest %smid value the device reports (on an H100 the dense
// index equals %smid, 0..131; PTX does not promise contiguous ids, so the runtime maps them).
class SmSet {
 public:
  SmSet() = default;
  static SmSet all() { SmSet s; s.b_.set(); return s; }          // every SM the device has
  static SmSet none() { return SmSet(); }
  static SmSet range(unsigned first, unsigned last_excl) {        // [first, last_excl)
    SmSet s;
    for (unsigned i = first; i < last_excl && i < kMaxSms; ++i) s.b_.set(i);
    return s;
  }
  static SmSet first(unsigned n) { return range(0, n); }
  static SmSet mask(unsigned long long lo, unsigned long long hi = 0) {  // bit i: SM i (0..127)
    SmSet s;
    for (unsigned i = 0; i < 64; ++i) {
      if ((lo >> i) & 1) s.b_.set(i);
      if ((hi >> i) & 1) s.b_.set(64 + i);
    }
    return s;
  }
  // Last n of `count` SMs, and all but the last n of them (count: the device's SM count).
  static SmSet last(unsigned n, unsigned count) { return range(n < count ? count - n : 0, count); }
  static SmSet all_but_last(unsigned n, unsigned count) { return range(0, n < count ? count - n : 0); }
  // Whole TPCs [first, last_excl): TPC t is SMs 2t and 2t+1 (consecutive dense indices share a TPC on
  // Hopper; the runtime does not verify the pairing).
  static SmSet tpcs(unsigned first, unsigned last_excl) { return range(2 * first, 2 * last_excl); }
  // "0-65,70,72-75" (ranges inclusive). Returns false on a syntax error.
  static bool parse(const std::string& text, SmSet& out) {
    SmSet s;
    size_t i = 0;
    if (text == "all") { out = all(); return true; }
    while (i < text.size()) {
      char* e = nullptr;
      const unsigned long a = std::strtoul(text.c_str() + i, &e, 10);
      if (e == text.c_str() + i) return false;
      i = e - text.c_str();
      unsigned long b = a;
      if (i < text.size() && text[i] == '-') {
        ++i;
        b = std::strtoul(text.c_str() + i, &e, 10);
        if (e == text.c_str() + i) return false;
        i = e - text.c_str();
      }
      if (b < a || b >= kMaxSms) return false;
      for (unsigned long k = a; k <= b; ++k) s.b_.set(k);
      if (i < text.size()) {
        if (text[i] != ',') return false;
        ++i;
      }
    }
    out = s;
    return true;
  }
  SmSet& add(unsigned i) { if (i < kMaxSms) b_.set(i); return *this; }
  SmSet& remove(unsigned i) { if (i < kMaxSms) b_.reset(i); return *this; }
  bool contains(unsigned i) const { return i < kMaxSms && b_.test(i); }
  unsigned count() const { return static_cast<unsigned>(b_.count()); }
  bool empty() const { return b_.none(); }
  SmSet operator|(const SmSet& o) const { SmSet s; s.b_ = b_ | o.b_; return s; }
  SmSet operator&(const SmSet& o) const { SmSet s; s.b_ = b_ & o.b_; return s; }
  bool operator==(const SmSet& o) const { return b_ == o.b_; }
  bool operator!=(const SmSet& o) const { return b_ != o.b_; }
  std::string str() const {
    std::string r;
    for (unsigned i = 0; i < kMaxSms;) {
      if (!b_.test(i)) { ++i; continue; }
      unsigned j = i;
      while (j + 1 < kMaxSms && b_.test(j + 1)) ++j;
      if (!r.empty()) r += ',';
      r += std::to_string(i);
      if (j > i) r += '-' + std::to_string(j);
      i = j + 1;
    }
    return r.empty() ? "none" : r;
  }

 private:
  std::bitset<kMaxSms> b_;
};

}  // namespace ptb
