// atomicCAS: (1) a lock-free open-addressing hash set (insert with atomicCAS, linear probing), checked
// against the CPU's set of keys; (2) a float maximum per group built from an atomicCAS loop on the bits;
// (3) a per-block spin lock (atomicCAS/atomicExch) protecting a non-atomic 64-bit read-modify-write.
#include "common.cuh"

constexpr unsigned kEmpty = 0xFFFFFFFFu;

__global__ void hash_insert(const unsigned* keys, int n, unsigned* table, unsigned mask, unsigned* inserted) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned k = keys[i];
  unsigned slot = tg::hash32(k) & mask;
  for (;;) {
    unsigned prev = atomicCAS(&table[slot], kEmpty, k);
    if (prev == kEmpty) {
      atomicAdd(inserted, 1u);
      return;
    }
    if (prev == k) return;
    slot = (slot + 1) & mask;
  }
}

__device__ void atomic_max_float(float* addr, float v) {
  int* p = (int*)addr;
  int old = *p;
  while (__int_as_float(old) < v) {
    int assumed = old;
    old = atomicCAS(p, assumed, __float_as_int(v));
    if (old == assumed) break;
  }
}

__global__ void group_max(const float* x, const int* group, int n, float* gmax) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomic_max_float(&gmax[group[i]], x[i]);
}

__global__ void locked_sum(const int* x, int n, int* lock, long long* total) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  // one thread per warp takes the lock, so lanes of a warp never spin against each other
  long long part = 0;
  for (int k = 0; k < 32; ++k) {
    int j = (i / 32) * 32 + k;
    if (j < n) part += x[j];
  }
  if (threadIdx.x % 32 == 0 && (i / 32) * 32 < n) {
    while (atomicCAS(lock, 0, 1) != 0) {
    }
    __threadfence();
    volatile long long* t = total;
    *t = *t + part;
    __threadfence();
    atomicExch(lock, 0);
  }
}

int main(int argc, char** argv) {
  tg::init(argc, argv, "atomic_cas");
  if (tg::bench_mode()) {
    int n = 1 << 24;
    unsigned mask = (1u << 26) - 1;
    std::vector<unsigned> hk(n);
    for (int i = 0; i < n; ++i) hk[i] = tg::hash32(i * 7u + 1);
    tg::DevBuf<unsigned> keys(n), table(mask + 1), ins(1);
    keys.upload(hk);
    return tg::bench("atomic_cas", [&] {
      CUDA_CHECK(cudaMemsetAsync(table, 0xFF, table.bytes()));
      hash_insert<<<(n + 255) / 256, 256>>>(keys, n, table, mask, ins);
    });
  }
  {
    int n = (int)tg::rand_int(1, 500000);
    auto hk = tg::random_ints<unsigned>(n, 0, 300000);  // many duplicates
    unsigned mask = (1u << 20) - 1;
    tg::DevBuf<unsigned> keys(n), table(mask + 1), ins(1);
    keys.upload(hk);
    table.fill_bytes(0xFF);
    ins.fill_bytes(0);
    hash_insert<<<(n + 127) / 128, 128>>>(keys, n, table, mask, ins);
    tg::sync_check("hash_insert");
    std::vector<unsigned> want(hk);
    std::sort(want.begin(), want.end());
    want.erase(std::unique(want.begin(), want.end()), want.end());
    auto t = table.download();
    std::vector<unsigned> got;
    for (unsigned v : t)
      if (v != kEmpty) got.push_back(v);
    std::sort(got.begin(), got.end());
    tg::compare_exact(got, want, "hash set contents");
    unsigned ni = ins.download()[0];
    tg::check(ni == want.size(), "%u insertions, want %zu", ni, want.size());
  }
  {
    int n = (int)tg::rand_int(1, 1000000), ng = (int)tg::rand_int(1, 100);
    auto hx = tg::random_reals<float>(n, -1000, 1000);
    auto hg = tg::random_ints<int>(n, 0, ng - 1);
    tg::DevBuf<float> x(n), gm(ng);
    tg::DevBuf<int> grp(n);
    x.upload(hx);
    grp.upload(hg);
    gm.upload(std::vector<float>(ng, -INFINITY));
    group_max<<<(n + 255) / 256, 256>>>(x, grp, n, gm);
    tg::sync_check("group_max");
    std::vector<float> want(ng, -INFINITY);
    for (int i = 0; i < n; ++i) want[hg[i]] = std::max(want[hg[i]], hx[i]);
    tg::compare_exact(gm.download(), want, "per-group float max");
  }
  {
    int n = (int)tg::rand_int(1, 200000);
    auto hx = tg::random_ints<int>(n, -1000000, 1000000);
    tg::DevBuf<int> x(n), lock(1);
    tg::DevBuf<long long> total(1);
    x.upload(hx);
    lock.fill_bytes(0);
    total.fill_bytes(0);
    locked_sum<<<(n + 255) / 256, 256>>>(x, n, lock, total);
    tg::sync_check("locked_sum");
    long long want = 0;
    for (int v : hx) want += v;
    long long got = total.download()[0];
    tg::check(got == want, "spin-locked sum %lld, want %lld", got, want);
  }
  return tg::finish();
}
