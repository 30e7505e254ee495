// The message of an llvm::Error, "" for success (consumes the error): for EXPECT_EQ(messageOf(f()), "").
#pragma once

#include "llvm/Support/Error.h"

#include <string>

inline std::string messageOf(llvm::Error e) { return e ? llvm::toString(std::move(e)) : std::string(); }
