// A launch inside the argument of a macro that expands its argument twice: TWICE((K<<<g, b>>>(p, n)))
// must launch twice in both builds (the rewrite happens once in the spelling, both expansions use it),
// and a macro that stringizes and evaluates its argument.
#include "common.cuh"

#define TWICE(stmt) \
  do {              \
    stmt;           \
    stmt;           \
  } while (0)

static int g_logged = 0;
#define LOGGED(expr)                                   \
  do {                                                 \
    if (strlen(#expr) > 0) ++g_logged;                 \
    expr;                                              \
  } while (0)

__global__ void add_one(int* p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] += 1;
}

int main(int argc, char** argv) {
  tg::init(argc, argv, "launch_macro_twice");
  if (tg::bench_mode()) {
    int n = 1 << 26;
    tg::DevBuf<int> d(n);
    d.fill_bytes(0);
    return tg::bench("launch_macro_twice", [&] { TWICE((add_one<<<(n + 255) / 256, 256>>>(d, n))); });
  }
  int n = (int)tg::rand_int(1, 1000000);
  auto h = tg::random_ints<int>(n, -1000000, 1000000);
  tg::DevBuf<int> d(n);
  d.upload(h);
  TWICE((add_one<<<dim3((n + 127) / 128), dim3(128)>>>(d, n)));
  LOGGED((add_one<<<(n + 63) / 64, 64>>>(d, n)));
  tg::sync_check("macro launches");
  for (auto& v : h) v += 3;
  tg::compare_exact(d.download(), h, "TWICE + LOGGED launches");
  tg::check(g_logged == 1, "LOGGED ran %d times", g_logged);
  return tg::finish();
}
