// diagnostic: poll the LS entries every ~2 us for SECS, print busy periods and launches
#include <ptb/qos/segment.h>
#include <cstdio>
#include <vector>
#include <algorithm>
#include <thread>
namespace shm = ptb::qos::shm;
int main(int argc, char** argv) {
  shm::Mapping m; bool taken=false;
  if (shm::create_or_take(argv[1], 132, "GPU-x", m, taken) != shm::Status::ok) { printf("no seg\n"); return 1; }
  double secs = atof(argv[2]);
  m->controller.lease_ns.store(1000000000ull);
  std::vector<double> periods; bool busy=false; uint64_t since=0, t0=shm::now_ns(), polls=0;
  uint64_t l0=0; bool l0set=false; unsigned maxstreams=0;
  while (shm::now_ns() - t0 < secs*1e9) {
    uint64_t now = shm::now_ns(); ++polls;
    m->controller.heartbeat_ns.store(now);
    bool b=false; unsigned nb=0;
    for (auto& e : m->ls) { if (!e.pid.load()) continue; if(!l0set){l0=e.launches.load(); l0set=true;}
      for (auto& s : e.streams) if (s.submitted.load()!=s.completed.load()) {b=true; ++nb;} }
    maxstreams = std::max(maxstreams, nb);
    if (b && !busy) since=now; if (!b && busy) periods.push_back((now-since)/1e3); busy=b;
  }
  uint64_t l1=0; unsigned streams=0; for (auto& e : m->ls) if (e.pid.load()) { l1=e.launches.load(); for (auto& s: e.streams) if (s.submitted.load()) ++streams; }
  std::sort(periods.begin(), periods.end());
  auto q=[&](double p){ return periods.empty()?0:periods[std::min(periods.size()-1,(size_t)(p*periods.size()))]; };
  printf("WATCH polls %lu (%.2f us each) periods %zu p10 %.1f p50 %.1f p90 %.1f p99 %.1f max %.1f; launches %lu (from %lu); streams used %u; max busy streams %u\n",
    polls, secs*1e6/polls, periods.size(), q(.1), q(.5), q(.9), q(.99), periods.empty()?0:periods.back(), l1-l0, l0, streams, maxstreams);
}
