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
  static SmSet all() {
    SmSet s;
    s.b_.set();
    return s;
  } // every SM the device has
  static SmSet none() { return SmSet(); }
  static SmSet range(unsigned first, unsigned last_excl) { // [first, last_excl)
    SmSet s;
    for (unsigned __i = first; __i < last_excl && __i < kMaxSms; ++__i) s.b_.set(__i);
    return s;
  }
  static SmSet first(unsigned n) { return range(0, n); }
  static SmSet mask(unsigned long long lo, unsigned long long hi = 0) { // bit i: SM i (0..127)
    SmSet s;
    for (unsigned __i = 0; __i < 64; ++__i) {
      if ((lo >> __i) & 1) s.b_.set(__i);
      if ((hi >> __i) & 1) s.b_.set(64 + __i);
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
    size_t __i = 0;
    if (text == "all") {
      out = all();
      return true;
    }
    while (__i < text.size()) {
      char* e = nullptr;
      const unsigned long a = std::strtoul(text.c_str() + __i, &e, 10);
      if (e == text.c_str() + __i) return false;
      __i = e - text.c_str();
      unsigned long b = a;
      if (__i < text.size() && text[__i] == '-') {
        ++__i;
        b = std::strtoul(text.c_str() + __i, &e, 10);
        if (e == text.c_str() + __i) return false;
        __i = e - text.c_str();
      }
      if (b < a || b >= kMaxSms) return false;
      for (unsigned long __k = a; __k <= b; ++__k) s.b_.set(__k);
      if (__i < text.size()) {
        if (text[__i] != ',') return false;
        ++__i;
      }
    }
    out = s;
    return true;
  }
  SmSet& add(unsigned __i) {
    if (__i < kMaxSms) b_.set(__i);
    return *this;
  }
  SmSet& remove(unsigned __i) {
    if (__i < kMaxSms) b_.reset(__i);
    return *this;
  }
  bool contains(unsigned __i) const { return __i < kMaxSms && b_.test(__i); }
  unsigned count() const { return static_cast<unsigned>(b_.count()); }
  bool empty() const { return b_.none(); }
  SmSet operator|(const SmSet& __o) const {
    SmSet s;
    s.b_ = b_ | __o.b_;
    return s;
  }
  SmSet operator&(const SmSet& __o) const {
    SmSet s;
    s.b_ = b_ & __o.b_;
    return s;
  }
  bool operator==(const SmSet& __o) const { return b_ == __o.b_; }
  bool operator!=(const SmSet& __o) const { return b_ != __o.b_; }
  std::string str() const {
    std::string __r;
    for (unsigned __i = 0; __i < kMaxSms;) {
      if (!b_.test(__i)) {
        ++__i;
        continue;
      }
      unsigned __j = __i;
      while (__j + 1 < kMaxSms && b_.test(__j + 1)) ++__j;
      if (!__r.empty()) __r += ',';
      __r += std::to_string(__i);
      if (__j > __i) __r += '-' + std::to_string(__j);
      __i = __j + 1;
    }
    return __r.empty() ? "none" : __r;
  }

private:
  std::bitset<kMaxSms> b_;
};

} // namespace ptb
