// ptb/detail/control_block.cuh: the per-launch control block in device memory (task counter, stacks of
// handed-back ranges, per-SM ranks, close state).
// "Slot" names only a fused kernel's thread range (fused_slots.cuh), never this block.
// Part of the header-only runtime; include <ptb/ptb.cuh>, not this file.
#pragma once
#include "config.cuh"

namespace ptb {

namespace detail {

struct Node {
  unsigned long long range; // begin << 7 | length
  unsigned long long next;  // index + 1 of the next node, 0: none
};

// One stack of handed-back ranges and its stack of free nodes, alone on a 128-byte line: when a policy
// removes half the SMs, a thousand workers hand their ranges back at once, and on one stack head their
// CAS loops ran one after another (measured: the last removed SM was free ~2 ms after the request).
struct alignas(128) RetShard {
  unsigned long long rhead; // stack of handed-back ranges: tag << 32 | node index + 1
  unsigned long long fhead; // stack of free nodes (same encoding)
};

// Per-launch control block in device memory, from a pool allocated once. At rest every field is 0 except
// the generation in `state`; the last original worker of a launch puts it back to rest.
struct alignas(128) ControlBlock {
  unsigned long long next; // dynamic claims: tasks [base + next, ...) are unclaimed
  unsigned long long pad0[15];
  unsigned long long state; // generation << 32 | resume workers registered
  unsigned pending;         // handed-back ranges in the stacks, or about to be (never fewer)
  unsigned exited;          // original workers that left
  unsigned running;         // 1 while the launch's original workers run
  unsigned nused;           // nodes taken from node[] (fresh ones)
  unsigned heard;           // resume workers that reached the device (any launch of this control
                            // block; only its changes count: the host answers; never reset)
  unsigned thin;            // when a worker last asked the host for workers for a thin launch (%globaltimer >> 10)
  unsigned started;         // when worker 0 started (%globaltimer >> 10, never 0; 0: not yet)
  unsigned pad1[23];
  RetShard ret[kRetShards];
  unsigned sm_live[kMaxSm]; // ranked workers per SM (rank source for a per-SM cap)
  Node node[kRetCap];
};

} // namespace detail

} // namespace ptb
