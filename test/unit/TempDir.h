// test/unit/TempDir.h: a fresh temporary directory for a test, removed with everything in it afterwards
// (the segment tests make their files there, never in /dev/shm or another shared place).
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdlib>
#include <string>

class TempDir {
public:
  explicit TempDir(const char *prefix) {
    std::string tmpl = std::string("/tmp/") + prefix + ".XXXXXX";
    if (mkdtemp(tmpl.data())) path = tmpl;
    EXPECT_FALSE(path.empty()) << "mkdtemp failed";
  }
  ~TempDir() {
    if (!path.empty()) (void)std::system(("rm -rf '" + path + "'").c_str());
  }
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;
  std::string path;
};
