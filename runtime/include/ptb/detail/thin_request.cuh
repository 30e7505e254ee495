// ptb/detail/thin_request.cuh: a launch that runs on fewer workers than its policy's room gives it (a thin
// launch) asks the host for more.
// Part of the header-only runtime; include <ptb/ptb.cuh>, not this file.
//
// How a launch gets thin: its workers came while another launch under the same policy held the room
// (two launches at once, launch_order.cuh; replays of graphs captured in several streams, which nothing
// orders), found their SMs over the cap or outside the set and left. The launch then runs on the few that
// found room, however much room frees later, unless someone asks the host for resume workers. Its anchor
// does not ask: there is no anchor while workers still run.
//
// Who asks, and when (the request is cheap for the device, a batch of resume workers is not):
// - a resume worker turned away or leaving, and an original worker that leaves after it has run about
//   kThinAfter itself (the chain: the host keeps sending batches, at most one per 500 us, until the
//   launch has its room);
// - a running worker, at a check of its SM's cap, once it has run about kThinAfter, then about every
//   kThinLookCycles (so a launch whose leavers all left at its start still asks once the room frees);
// and only a launch that has run for kThinAfter: a short launch beside another would otherwise fill the
// room with resume workers the launch beside it needed (measured at bac2ca9, where any leaver asked at
// once: a 6.5 us launch waited 255 us for the host, stranded beside such a batch).
// A launch asks when fewer workers are live on it (original workers not left, resume workers registered)
// than it can use (the policy's room, written after its caps: PolicyRoom; and no more than its tasks not
// started), at most once per 200 us (`thin`: when it last asked, %globaltimer >> 10). The request is
// counted in the high half of the strand word (kThinRequest), apart from the anchor's (the low half): the
// monitor limits each kind to a batch per 500 us on its own, so a batch for a thin launch never delays
// the batch its anchor asks for when it is left alone.
#pragma once
#include <cuda_runtime.h>

#include "../launch_params.cuh"
#include "config.cuh"
#include "control_block.cuh"
#include "intrinsics.cuh"

namespace ptb {

namespace detail {

// The strand word (Launch::strand_seq, host-mapped) counts requests for workers: the anchor's (a launch
// left alone, close.cuh) in its low half, a thin launch's in its high half. The monitor reads the halves.
constexpr unsigned kThinRequest = 1u << 16;
__host__ __device__ constexpr unsigned anchor_requests(unsigned strand) { return strand & (kThinRequest - 1); }
__host__ __device__ constexpr unsigned thin_requests(unsigned strand) { return strand / kThinRequest; }
constexpr unsigned kThinAfter = 1000;           // x 1024 ns: about 1 ms
constexpr long long kThinAfterCycles = 2000000; // about 1 ms at the H100's 1.98 GHz (clock64, per SM)
constexpr long long kThinLookCycles = 400000;   // about 200 us

// Inlined: as a called function (__noinline__, 6ed5dd4) it doubled a twin's cost per launch (bench/programs
// stencil2d_chain, 10 us launches: +31.8 us over the original, +14.9 us at a420a1d; H100).
__device__ inline void ask_if_thin(const Launch& __L) {
  ControlBlock* cb = __L.control;
  // six loads in flight at once (no short-circuit between them)
  const unsigned thin = vload(&cb->thin), rh = vload(&cb->pending), ex = vload(&cb->exited), t0 = vload(&cb->started);
  const unsigned long long nx = vload(&cb->next), st = vload(&cb->state);
  if (__L.gen != kAnyGen && static_cast<unsigned>(st >> 32) != __L.gen) return; // the launch has ended
  const unsigned long long claimed = __L.base + nx, left = (claimed < __L.ntasks ? __L.ntasks - claimed : 0ull) + rh;
  const unsigned now = static_cast<unsigned>(globaltimer() >> 10) | 1u; // never 0 (0: no request yet)
  if ((thin != 0 && now - thin < 200u) || left == 0 || t0 == 0 || now - t0 < kThinAfter) return;
  const PolicyRoom* room = reinterpret_cast<const PolicyRoom*>(__L.caps + kMaxSm);
  PolicyRoom __r;
  __r.free_sms = vload(&room->free_sms);
  __r.capped_sms = vload(&room->capped_sms);
  __r.cap = vload(&room->cap);
  const unsigned long long can_use = min(places(__r, __L.occ), left);
  const unsigned long long live = static_cast<unsigned long long>(__L.workers - ex) + (st & 0xffffffffull);
  if (live >= can_use || atomicCAS(&cb->thin, thin, now) != thin) return;
  __threadfence_system();
  atomicAdd(__L.strand_seq, kThinRequest);
}

} // namespace detail

} // namespace ptb
