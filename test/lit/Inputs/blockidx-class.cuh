// A class in a header that ptb-transform does not select (test/lit/rewrite/members-refused.cu); not under that test's directory, so not selected by default.
struct Elsewhere {
  __device__ int block() const { return blockIdx.x; }
};
