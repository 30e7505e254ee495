// ptb/detail/trace_record.cuh: the per-task record a traced launch writes, and where it writes it.
// Part of the header-only runtime; include <ptb/ptb.cuh>, not this file.
#pragma once

namespace ptb {

namespace detail {

// One trace record per task.
struct TraceRec {
  unsigned long long task;
  unsigned long long start, end; // %globaltimer, ns (end: when the worker's thread 0 finished it)
  unsigned sm, worker;           // %smid; the worker's blockIdx.x
  unsigned tag, pad;             // the launch's trace tag (host counter)
};
struct TraceBuf {
  TraceRec* recs;
  unsigned long long* count; // records written (may exceed cap: the rest are dropped)
  unsigned long long cap;
  unsigned tag;
};

} // namespace detail

} // namespace ptb
