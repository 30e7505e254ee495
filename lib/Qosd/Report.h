// lib/Qosd/Report.h: what ptb-qosd tells about a GPU's segment: the Prometheus text of --metrics-file and
// `status --prometheus`, and the table of `status`. Both read the segment only (any process may call them).
#pragma once

#include <cstdint>
#include <string>

#include "ptb/qos/segment.h"

namespace ptb::qosd {

// The metrics of one GPU in Prometheus' text format (# HELP and # TYPE once per name when `headers`).
std::string prometheus(const qos::shm::Segment &seg, std::uint64_t now, bool headers = true);

// Whether the GPU's controller is up: it beats within its lease, did not stop, and its pid exists.
bool controllerUp(const qos::shm::Segment &seg, std::uint64_t now);

// A few lines for a person: the controller (alive or not, and why), the policy, BE's SMs, LS's latency,
// the clients.
std::string statusText(const qos::shm::Segment &seg, std::uint64_t now);

} // namespace ptb::qosd
