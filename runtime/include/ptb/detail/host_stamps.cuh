// ptb/detail/host_stamps.cuh: diagnosis only: the host side of a launch's set-up, stamped step by step.
// Part of the header-only runtime; include <ptb/ptb.cuh>, not this file.
//
// With -DPTB_DEBUG_HOST_STAMPS the runtime calls a function the program defines before including ptb.cuh,
// `void ptb_debug_host_stamp(const char* what)`, after each step of a device's set-up and of a twin's
// preparation and launch (the names below). bench/programs/probes/host_stamps.cuh defines it;
// bench/programs/first_twin.sh uses it to split the first twin launch's time. Without the macro the calls
// compile to nothing.
#pragma once

#ifdef PTB_DEBUG_HOST_STAMPS
void ptb_debug_host_stamp(const char* __what);
#endif

namespace ptb {

namespace detail {

inline void host_stamp([[maybe_unused]] const char* __what) {
#ifdef PTB_DEBUG_HOST_STAMPS
  ::ptb_debug_host_stamp(__what);
#endif
}

} // namespace detail

} // namespace ptb
