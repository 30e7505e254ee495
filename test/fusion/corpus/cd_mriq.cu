// mriq: the Q computation of Parboil MRI-Q (non-Cartesian MRI reconstruction).
//
//   for each voxel t:  arg_k = 2*pi*(kx_k*x_t + ky_k*y_t + kz_k*z_t)
//                      Qr[t] = sum_k phi_k * cos(arg_k),  Qi[t] = sum_k phi_k * sin(arg_k)
//   kvals: numK float4 (kx, ky, kz, phiMag) in global memory (read with __ldg; every thread of a warp
//   reads the same element, a broadcast); x, y, z, Qr, Qi: numX floats
//   block: 256 threads (1-D); grid: ceil(numX / 256); no shared memory, no barrier
//
// Sine and cosine: the fast intrinsic __sincosf (SFU, MUFU.SIN/MUFU.COS) after an explicit range
// reduction of the argument to [-pi, pi] in turns (t - rintf(t)), where __sincosf is accurate to ~2^-21.
// Compute-bound (SFU + FP32). One voxel per thread, one task per block; blocks are independent.

constexpr float mriq_two_pi = 6.28318530717958647692f;

__global__ void mriq_compute_q(int numK, int numX, const float4* kvals, const float* x, const float* y,
                               const float* z, float* Qr, float* Qi)
{
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < numX) {
    const float sx = x[t], sy = y[t], sz = z[t];
    float qr = 0.0f, qi = 0.0f;
    for (int k = 0; k < numK; ++k) {
      const float4 kv = __ldg(&kvals[k]);
      float turns = kv.x * sx + kv.y * sy + kv.z * sz;
      turns -= rintf(turns);
      float s, c;
      __sincosf(mriq_two_pi * turns, &s, &c);
      qr += kv.w * c;
      qi += kv.w * s;
    }
    Qr[t] = qr;
    Qi[t] = qi;
  }
}
