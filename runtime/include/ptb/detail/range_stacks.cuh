// ptb/detail/range_stacks.cuh: the control block's lock-free stacks of handed-back ranges.
// Part of the header-only runtime; include <ptb/ptb.cuh>, not this file.
#pragma once
#include <cuda_runtime.h>

#include "config.cuh"
#include "control_block.cuh"
#include "intrinsics.cuh"

namespace ptb {

namespace detail {

// Lock-free stacks of nodes with tagged heads (the tag changes on every successful update, so a head
// that was popped and pushed again in between does not match: no ABA). Every failed CAS means another
// thread's operation succeeded, and the operations are finitely many: each loop ends.
__device__ inline bool stack_pop(unsigned long long* head, Node* nodes, unsigned& __idx) {
  for (;;) {
    const unsigned long long h = vload(head);
    const unsigned __i = static_cast<unsigned>(h);
    if (__i == 0) return false;
    __threadfence();
    const unsigned long long nx = vload(&nodes[__i - 1].next);
    const unsigned long long nh = (((h >> 32) + 1) << 32) | (nx & 0xffffffffull);
    if (atomicCAS(head, h, nh) == h) {
      __threadfence();
      __idx = __i - 1;
      return true;
    }
  }
}
__device__ inline void stack_push(unsigned long long* head, Node* nodes, unsigned __idx) {
  for (;;) {
    const unsigned long long h = vload(head);
    vstore(&nodes[__idx].next, h & 0xffffffffull);
    __threadfence();
    const unsigned long long nh = (((h >> 32) + 1) << 32) | (__idx + 1);
    if (atomicCAS(head, h, nh) == h) return;
  }
}
__device__ __forceinline__ bool ranges_pending(const ControlBlock* cb) { return vload(&cb->pending) != 0; }
// Hand a claimed-but-unstarted range back, onto the stack `shard` (the worker's). False if no node is
// left (the caller keeps the range). `pending` counts it before it is in the stack, so that it is never
// below the ranges there: a launch is closed only when it is 0.
__device__ inline bool push_range(ControlBlock* cb, unsigned shard, unsigned long long b, unsigned long long e) {
  RetShard& __r = cb->ret[shard % kRetShards];
  unsigned __idx;
  if (!stack_pop(&__r.fhead, cb->node, __idx)) {
    if (vload(&cb->nused) >= kRetCap) return false;
    __idx = atomicAdd(&cb->nused, 1u);
    if (__idx >= kRetCap) return false;
  }
  vstore(&cb->node[__idx].range, (b << 7) | (e - b));
  atomicAdd(&cb->pending, 1u);
  __threadfence();
  stack_push(&__r.rhead, cb->node, __idx);
  return true;
}
// Take a handed-back range, looking at the stacks from `shard` on; `pending` drops after it is out.
__device__ inline bool pop_range(ControlBlock* cb, unsigned shard, unsigned long long& b, unsigned long long& e) {
  for (unsigned __k = 0; __k < kRetShards; ++__k) {
    RetShard& __r = cb->ret[(shard + __k) % kRetShards];
    if (static_cast<unsigned>(vload(&__r.rhead)) == 0) continue;
    unsigned __idx;
    if (!stack_pop(&__r.rhead, cb->node, __idx)) continue;
    const unsigned long long v = vload(&cb->node[__idx].range);
    b = v >> 7;
    e = b + (v & 127);
    stack_push(&__r.fhead, cb->node, __idx);
    __threadfence();
    atomicSub(&cb->pending, 1u);
    return true;
  }
  return false;
}

} // namespace detail

} // namespace ptb
