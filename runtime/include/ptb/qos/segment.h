// ptb/qos/segment.h: the segment that ptb-qosd (the controller of one GPU), the BE programs and the LS
// programs on that GPU share: one file per GPU, `<dir>/ptb-qos.<gpu>` (dir: PTB_QOSD_DIR, default /dev/shm;
// gpu: the device's UUID as nvidia-smi prints it, "GPU-xxxxxxxx-..."), mapped by every process.
// docs/design/qos-controller.md has the whole picture. Plain C++ and POSIX, no CUDA.
//
// Who writes what (everything is a 64-bit atomic word, so the processes never hold a lock together):
//   - the controller: its words (pid, heartbeat, lease), the policy BE applies (a sequence lock over `policy`
//     and `safe`) and its statistics (for `ptb-qosd status`);
//   - each BE process, in a BeClient entry it claims: its pid, its heartbeat, the sequence it applied, the
//     twin launches it made;
//   - each LS process, in an LsClient entry it claims: its pid; per stream, the launches it submitted (by
//     the host) and the last of them the device finished (written by the device itself, with a stream
//     memory operation after each launch); the requests of the begin/end C API likewise.
//
// Trust: the controller creates the file with mode 0660 (owner and group), O_EXCL and O_NOFOLLOW; a client
// maps it only when it is a regular file that is not a link, owned by the client's own user, by root, or by
// the user named in PTB_QOSD_UID, writable by nobody else, of the right size, magic and version (attach).
// A second controller for the same GPU is refused: the controller holds an exclusive flock on the file
// for its whole life; the kernel drops it when the process ends, so a restarted controller takes over.
#pragma once

#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "../smset.cuh" // plain C++ (no CUDA), like this header

namespace ptb::qos::shm {

constexpr std::uint64_t kMagic = 0x5054425f514f5344ull; // "PTB_QOSD"
constexpr std::uint64_t kVersion = 2;                   // 2: BeClient::slice
constexpr unsigned kLsClients = 16;                     // LS processes on one GPU
constexpr unsigned kLsStreams = 32;    // streams per LS process; more share the last entry (LsClient::overflow)
constexpr unsigned kBeClients = 16;    // BE processes on one GPU
constexpr unsigned kRequestRing = 256; // begin times of an LS process's C-API requests in flight
constexpr unsigned kSmWords = kMaxSms / 64;

using Word = std::atomic<std::uint64_t>;
static_assert(Word::is_always_lock_free, "the segment's words must be lock-free to be shared between processes");

// CLOCK_MONOTONIC in nanoseconds: one clock for every process of the machine (containers included).
inline std::uint64_t now_ns() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

// What BE applies: Policy::set(sms, per_sm, capped).
struct PolicyWords {
  Word sms[kSmWords];
  Word capped[kSmWords];
  Word per_sm;
};
struct PolicyValue {
  SmSet sms = SmSet::all();
  unsigned per_sm = 0;
  SmSet capped = SmSet::all();
  bool operator==(const PolicyValue& __o) const {
    return sms == __o.sms && per_sm == __o.per_sm && capped == __o.capped;
  }
  bool operator!=(const PolicyValue& __o) const { return !(*this == __o); }
};

struct ControllerWords {
  Word pid;          // 0: no controller has run yet, or it stopped cleanly (`stopped`)
  Word incarnation;  // +1 each time a controller takes the segment
  Word heartbeat_ns; // now_ns() at its last poll; BE takes `safe` when older than lease_ns
  Word lease_ns;
  Word stopped;       // 1: the controller ended on a signal or by request (BE takes `safe` at once)
  Word seq;           // sequence lock over policy and safe: odd while the controller writes them
  PolicyWords policy; // what BE applies now
  PolicyWords safe;   // what BE applies when the controller is gone (docs/design/qos-controller.md)
};

// The controller's statistics, for `ptb-qosd status` and the metrics (written by the controller only).
struct StatsWords {
  Word policy_name[4]; // NUL-padded text, e.g. "gate", "feedback"
  Word sm_count;
  Word ls_busy;                         // 1 while some LS launch is in flight
  Word ls_requests;                     // LS latency samples taken (busy periods, or C-API requests)
  Word ls_p50_ns, ls_p99_ns, ls_max_ns; // over the controller's recent window
  Word ls_target_ns;                    // 0: none
  Word be_sms, be_per_sm;               // BE's allocation now (SM count, cap)
  Word yields;                          // times BE was told to leave SMs for LS
  Word releases;                        // times the gate's stuck or hold limit gave BE its SMs back
  Word policy_changes;                  // times `policy` was rewritten
  Word ls_clients, be_clients;          // live client entries
  Word be_launches;                     // the BE entries' twin launches, summed
  Word be_safe;                         // BE entries in their safe state
  Word be_parts;                        // BE's SMs divided among this many BE processes (be_share split); 0, 1: not
  Word reserved[11];
};

// One LS stream: `submitted` counts the launches the host made in it (the LS library adds 1 before it
// enqueues the write), `completed` is the count the device wrote after the last of them that finished.
// The stream is busy while they differ.
struct LsStream {
  Word key; // the stream's handle in its process (0 is the legacy default stream: key 1 is used for it)
  Word submitted;
  Word completed;
};
struct LsClient {
  Word pid; // 0: free; claimed by compare-and-swap
  Word launches;
  Word overflow;                       // launches of streams beyond kLsStreams, counted in the last entry
  Word requests_begun;                 // C API (ptb_ls_begin): by the host
  Word requests_done;                  // C API (ptb_ls_end): written by the device, the sequence of the last finished
  Word request_begin_ns[kRequestRing]; // begin time of request n at n % kRequestRing
  LsStream streams[kLsStreams];
};

struct BeClient {
  Word pid; // 0: free; claimed by compare-and-swap
  Word heartbeat_ns;
  Word applied_seq; // the controller's seq it applied last
  Word launches;    // twin launches made under the process policy (its progress, as the controller sees it)
  Word safe;        // 1 while it applies `safe`
  Word slice;       // the controller's division of BE's SMs: slice_word(part, parts); 0: all of them
};

struct Segment {
  Word magic;
  Word version;
  Word size;     // sizeof(Segment)
  Word sm_count; // the GPU's SMs, as the controller found them
  Word gpu[8];   // the GPU's key (NUL-padded text)
  ControllerWords controller;
  StatsWords stats;
  LsClient ls[kLsClients];
  BeClient be[kBeClients];
};
// Mapped whole pages: the LS library registers the segment with CUDA (cuMemHostRegister) so that the
// device can write its `completed` words, which needs page-aligned memory of whole pages.
constexpr std::size_t kPage = 4096;
constexpr std::size_t kSegmentBytes = (sizeof(Segment) + kPage - 1) / kPage * kPage;

// Text in words (policy_name, gpu): at most 8 bytes per word, less one for the terminating NUL.
template <unsigned __N> inline void put_text(Word (&__w)[__N], const std::string& text) {
  char buf[8 * __N] = {};
  std::memcpy(buf, text.data(), text.size() < sizeof(buf) - 1 ? text.size() : sizeof(buf) - 1);
  for (unsigned __i = 0; __i < __N; ++__i) {
    std::uint64_t word = 0;
    std::memcpy(&word, buf + 8 * __i, 8);
    __w[__i].store(word, std::memory_order_relaxed);
  }
}
template <unsigned __N> inline std::string get_text(const Word (&__w)[__N]) {
  char buf[8 * __N + 1] = {};
  for (unsigned __i = 0; __i < __N; ++__i) {
    const std::uint64_t word = __w[__i].load(std::memory_order_relaxed);
    std::memcpy(buf + 8 * __i, &word, 8);
  }
  return std::string(buf);
}

inline void store_policy(PolicyWords& __w, const PolicyValue& value) {
  for (unsigned __i = 0; __i < kSmWords; ++__i) {
    std::uint64_t sms = 0, capped = 0;
    for (unsigned bit = 0; bit < 64; ++bit) {
      if (value.sms.contains(64 * __i + bit)) sms |= 1ull << bit;
      if (value.capped.contains(64 * __i + bit)) capped |= 1ull << bit;
    }
    __w.sms[__i].store(sms, std::memory_order_relaxed);
    __w.capped[__i].store(capped, std::memory_order_relaxed);
  }
  __w.per_sm.store(value.per_sm, std::memory_order_relaxed);
}
inline PolicyValue load_policy(const PolicyWords& __w) {
  PolicyValue value;
  value.sms = SmSet::none();
  value.capped = SmSet::none();
  for (unsigned __i = 0; __i < kSmWords; ++__i) {
    const std::uint64_t sms = __w.sms[__i].load(std::memory_order_relaxed);
    const std::uint64_t capped = __w.capped[__i].load(std::memory_order_relaxed);
    for (unsigned bit = 0; bit < 64; ++bit) {
      if ((sms >> bit) & 1) value.sms.add(64 * __i + bit);
      if ((capped >> bit) & 1) value.capped.add(64 * __i + bit);
    }
  }
  value.per_sm = static_cast<unsigned>(__w.per_sm.load(std::memory_order_relaxed));
  return value;
}

// The safe state when nothing else is said: the highest quarter of the SMs (at least one), no cap. ptb-qosd
// publishes it unless configured otherwise; a BE link uses it before any controller was seen.
inline PolicyValue default_safe(unsigned sm_count) {
  PolicyValue value;
  value.sms = SmSet::last(sm_count / 4 > 0 ? sm_count / 4 : 1, sm_count);
  return value;
}

// The controller publishes BE's policy and its safe state together (the only writer of both).
inline void publish(Segment& seg, const PolicyValue& policy, const PolicyValue& safe) {
  ControllerWords& ctl = seg.controller;
  std::uint64_t seq = ctl.seq.load(std::memory_order_relaxed);
  if (seq % 2 == 1) ++seq; // a controller died while it wrote: the words are rewritten whole now
  ctl.seq.store(seq + 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  store_policy(ctl.policy, policy);
  store_policy(ctl.safe, safe);
  ctl.seq.store(seq + 2, std::memory_order_release);
}
// A reader's copy: false when the controller was writing at every try (it died while writing, or the
// reader was unlucky `tries` times); then the caller keeps what it has.
inline bool read_published(const Segment& seg, PolicyValue& policy, PolicyValue& safe, std::uint64_t& seq,
                           unsigned tries = 64) {
  const ControllerWords& ctl = seg.controller;
  for (unsigned __t = 0; __t < tries; ++__t) {
    const std::uint64_t before = ctl.seq.load(std::memory_order_acquire);
    if (before % 2 == 1) continue;
    PolicyValue got = load_policy(ctl.policy), got_safe = load_policy(ctl.safe);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (ctl.seq.load(std::memory_order_relaxed) != before) continue;
    policy = got;
    safe = got_safe;
    seq = before;
    return true;
  }
  return false;
}

// A BE entry's slice word: part `part` (from 0) of `parts` equal parts of BE's SMs; and back.
inline std::uint64_t slice_word(unsigned part, unsigned parts) {
  return (static_cast<std::uint64_t>(part) << 32) | parts;
}
inline unsigned slice_part(std::uint64_t slice) { return static_cast<unsigned>(slice >> 32); }
inline unsigned slice_parts(std::uint64_t slice) { return static_cast<unsigned>(slice & 0xffffffffu); }
// BE's policy as one BE process applies it, given its entry's slice word: the policy's SMs (those below
// sm_count) cut into `parts` equal runs in SM order, and run `part` of them; per_sm and capped unchanged.
// A word of 0 or 1 part, a part out of range, or fewer SMs than parts: the whole policy (shared).
inline PolicyValue slice_of(const PolicyValue& policy, std::uint64_t slice, unsigned sm_count) {
  const unsigned parts = slice_parts(slice), part = slice_part(slice);
  if (parts <= 1 || part >= parts) return policy;
  const SmSet members = policy.sms & SmSet::first(sm_count < kMaxSms ? sm_count : kMaxSms);
  const unsigned total = members.count();
  if (total < parts) return policy;
  const unsigned first_rank = part * total / parts, end_rank = (part + 1) * total / parts;
  PolicyValue out = policy;
  out.sms = SmSet::none();
  unsigned rank = 0;
  for (unsigned sm_id = 0; sm_id < kMaxSms && rank < end_rank; ++sm_id) {
    if (!members.contains(sm_id)) continue;
    if (rank >= first_rank) out.sms.add(sm_id);
    ++rank;
  }
  return out;
}

// An LS stream is busy while the device has not written the number of its last launch.
inline bool busy(const LsStream& __s) {
  return __s.submitted.load(std::memory_order_acquire) != __s.completed.load(std::memory_order_acquire);
}
// An LS process has work in flight: a busy stream, or a C-API request begun and not done.
inline bool busy(const LsClient& __c) {
  if (__c.requests_begun.load(std::memory_order_acquire) != __c.requests_done.load(std::memory_order_acquire))
    return true;
  for (const LsStream& __s : __c.streams)
    if (busy(__s)) return true;
  return false;
}

// Whether the controller is gone: it said so (stopped), never ran, or its heartbeat is older than its lease.
inline bool controller_gone(const Segment& seg, std::uint64_t now) {
  const ControllerWords& ctl = seg.controller;
  if (ctl.stopped.load(std::memory_order_acquire) != 0) return true;
  const std::uint64_t beat = ctl.heartbeat_ns.load(std::memory_order_acquire);
  const std::uint64_t lease = ctl.lease_ns.load(std::memory_order_relaxed);
  return beat == 0 || (now > beat && now - beat > lease);
}

// Claims a free client entry (pid 0) for `pid`; kLs/BeClients when all are taken. An entry whose process is
// gone is freed by the controller (reap), not here.
template <typename Client, unsigned __N> inline unsigned claim(Client (&entries)[__N], std::uint64_t pid) {
  for (unsigned __i = 0; __i < __N; ++__i) {
    std::uint64_t expected = 0;
    if (entries[__i].pid.compare_exchange_strong(expected, pid, std::memory_order_acq_rel)) return __i;
  }
  return __N;
}

// ---- The file ----

enum class Status {
  ok,
  missing,        // no such file (no controller runs for the GPU)
  not_regular,    // a link, a directory, a device...
  wrong_owner,    // owned by a user the client does not trust
  open_to_others, // writable by users outside the owner and group
  wrong_size,
  bad_magic,
  wrong_version,
  held, // another controller holds it (create only)
  io,   // a system call failed (errno_value says which)
};
inline const char* describe(Status __s) {
  switch (__s) {
  case Status::ok: return "ok";
  case Status::missing: return "no segment (no controller runs for this GPU)";
  case Status::not_regular: return "not a regular file (a link or a special file is never mapped)";
  case Status::wrong_owner: return "owned by another user (only its own user, root or PTB_QOSD_UID are trusted)";
  case Status::open_to_others: return "writable by other users (the controller makes it 0660)";
  case Status::wrong_size: return "of the wrong size (not a segment of this version)";
  case Status::bad_magic: return "not a ptb-qosd segment (wrong magic)";
  case Status::wrong_version: return "of another version of ptb-qosd";
  case Status::held: return "held by another controller";
  case Status::io: return "could not be opened or mapped";
  }
  return "?";
}

// PTB_QOSD_DIR, else /dev/shm.
inline std::string segment_dir() {
  const char* env = std::getenv("PTB_QOSD_DIR");
  return env && *env ? std::string(env) : std::string("/dev/shm");
}
// A GPU key names a file: letters, digits, '-', '_' and '.', not empty, not starting with '.'.
inline bool valid_key(const std::string& key) {
  if (key.empty() || key.size() > 63 || key[0] == '.') return false;
  for (const char ch : key)
    if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '-' || ch == '_' ||
          ch == '.'))
      return false;
  return true;
}
// The key of a GPU: its UUID (cudaDeviceProp::uuid, 16 bytes) as nvidia-smi prints it.
inline std::string key_of_uuid(const unsigned char* __u) {
  static const char hex[] = "0123456789abcdef";
  std::string key = "GPU-";
  for (unsigned __i = 0; __i < 16; ++__i) {
    if (__i == 4 || __i == 6 || __i == 8 || __i == 10) key += '-';
    key += hex[__u[__i] >> 4];
    key += hex[__u[__i] & 15];
  }
  return key;
}
inline std::string segment_path(const std::string& dir, const std::string& key) { return dir + "/ptb-qos." + key; }

// A mapped segment; unmapped and closed with the object (the controller's flock goes with the descriptor).
class Mapping {
public:
  Mapping() = default;
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  Mapping(Mapping&& __o) noexcept { swap(__o); }
  Mapping& operator=(Mapping&& __o) noexcept {
    swap(__o);
    return *this;
  }
  ~Mapping() { reset(); }
  void reset() {
    if (seg_) munmap(seg_, kSegmentBytes);
    if (fd_ >= 0) close(fd_);
    seg_ = nullptr;
    fd_ = -1;
  }
  Segment* get() const { return seg_; }
  Segment* operator->() const { return seg_; }
  Segment& operator*() const { return *seg_; }
  explicit operator bool() const { return seg_ != nullptr; }
  int fd() const { return fd_; }
  int errno_value() const { return errno_; }

  // Internal (attach, create).
  void adopt(int fd, Segment* seg) {
    reset();
    fd_ = fd;
    seg_ = seg;
  }
  void set_errno(int err) { errno_ = err; }

private:
  void swap(Mapping& __o) {
    std::swap(fd_, __o.fd_);
    std::swap(seg_, __o.seg_);
    std::swap(errno_, __o.errno_);
  }
  int fd_ = -1;
  Segment* seg_ = nullptr;
  int errno_ = 0;
};

inline bool trusted_owner(unsigned owner) {
  if (owner == 0 || owner == static_cast<unsigned>(geteuid())) return true;
  const char* env = std::getenv("PTB_QOSD_UID");
  return env && *env && std::strtoul(env, nullptr, 10) == owner;
}

// Checks an open descriptor of a segment file: a regular file, of a trusted owner, not open to others, of
// this version's size.
inline Status check_file(int fd) {
  struct stat st{};
  if (fstat(fd, &st) != 0) return Status::io;
  if (!S_ISREG(st.st_mode)) return Status::not_regular;
  if (!trusted_owner(st.st_uid)) return Status::wrong_owner;
  if (st.st_mode & S_IWOTH) return Status::open_to_others;
  if (static_cast<std::size_t>(st.st_size) != kSegmentBytes) return Status::wrong_size;
  return Status::ok;
}
inline Status check_header(const Segment& seg) {
  if (seg.magic.load(std::memory_order_acquire) != kMagic) return Status::bad_magic;
  if (seg.version.load(std::memory_order_relaxed) != kVersion) return Status::wrong_version;
  if (seg.size.load(std::memory_order_relaxed) != sizeof(Segment)) return Status::wrong_size;
  return Status::ok;
}

// Whether `path` names something other than a regular file (checked before it is opened, so that a device
// node or a FIFO put there is never opened; the descriptor is checked again after).
inline bool special_file(const std::string& path) {
  struct stat st{};
  return lstat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode);
}
constexpr int kOpenFlags = O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY;

// Maps the open segment `fd` into `out`, which then owns the descriptor; with `check`, only when its header
// is this version's. On failure the descriptor is closed.
inline Status map_checked(int fd, bool check, Mapping& out) {
  void* mem = mmap(nullptr, kSegmentBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (mem == MAP_FAILED) {
    out.set_errno(errno);
    close(fd);
    return Status::io;
  }
  Segment* seg = static_cast<Segment*>(mem);
  const Status __s = check ? check_header(*seg) : Status::ok;
  if (__s != Status::ok) {
    munmap(mem, kSegmentBytes);
    close(fd);
    return __s;
  }
  out.adopt(fd, seg);
  return Status::ok;
}

// A client (BE or LS) maps the segment at `path`, read and write, after the checks above.
inline Status attach(const std::string& path, Mapping& out) {
  if (special_file(path)) return Status::not_regular;
  const int fd = open(path.c_str(), kOpenFlags);
  if (fd < 0) {
    out.set_errno(errno);
    return errno == ENOENT ? Status::missing : errno == ELOOP ? Status::not_regular : Status::io;
  }
  Status __s = check_file(fd);
  if (__s != Status::ok) {
    close(fd);
    return __s;
  }
  return map_checked(fd, true, out);
}

// The controller's side: creates the segment (mode 0660) or takes the one a controller left, and holds an
// exclusive flock on it while `out` lives. `held` when a live controller holds it; a file that fails the
// checks is refused as attach refuses it (a segment of another version must be removed by hand: its
// clients may still run). `taken` tells whether the file existed. The header is (re)written; the client
// entries of a taken segment are kept (their processes may still run; the controller reaps the dead).
inline Status create_or_take(const std::string& path, std::uint64_t sm_count, const std::string& key, Mapping& out,
                             bool& taken) {
  taken = false;
  if (special_file(path)) return Status::not_regular;
  int fd = open(path.c_str(), kOpenFlags | O_CREAT | O_EXCL, 0660);
  if (fd < 0 && errno == EEXIST) {
    taken = true;
    if (special_file(path)) return Status::not_regular;
    fd = open(path.c_str(), kOpenFlags);
  }
  if (fd < 0) {
    out.set_errno(errno);
    return errno == ELOOP ? Status::not_regular : Status::io;
  }
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    close(fd);
    out.set_errno(err);
    return err == EWOULDBLOCK ? Status::held : Status::io;
  }
  if (!taken) {
    fchmod(fd, 0660); // the umask may have taken bits off: owner and group, exactly
    if (ftruncate(fd, static_cast<off_t>(kSegmentBytes)) != 0) {
      out.set_errno(errno);
      close(fd);
      unlink(path.c_str());
      return Status::io;
    }
  }
  Status __s = check_file(fd);
  if (__s == Status::ok && taken && geteuid() != 0) {
    struct stat st{};
    if (fstat(fd, &st) != 0 || st.st_uid != geteuid()) __s = Status::wrong_owner; // a controller takes its own only
  }
  if (__s != Status::ok) {
    close(fd);
    return __s;
  }
  __s = map_checked(fd, taken, out);
  if (__s != Status::ok) return __s;
  Segment* seg = out.get();
  if (!taken) {
    seg->version.store(kVersion, std::memory_order_relaxed);
    seg->size.store(sizeof(Segment), std::memory_order_relaxed);
  }
  seg->sm_count.store(sm_count, std::memory_order_relaxed);
  put_text(seg->gpu, key);
  ControllerWords& ctl = seg->controller;
  ctl.stopped.store(0, std::memory_order_relaxed);
  ctl.pid.store(static_cast<std::uint64_t>(getpid()), std::memory_order_relaxed);
  ctl.incarnation.fetch_add(1, std::memory_order_relaxed);
  seg->magic.store(kMagic, std::memory_order_release); // last: a client that sees it sees the rest
  return Status::ok;
}

} // namespace ptb::qos::shm
