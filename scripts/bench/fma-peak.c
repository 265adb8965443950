/* The single-core fused multiply-add peak the convolution figures are set
 * against: 12 independent chains of 8-lane FMAs (more than latency x pipes on
 * current x86 cores), timed in the calling thread's CPU time, best of 5.
 * Build: cc -O2 -march=native scripts/bench/fma-peak.c -o fma-peak (needs
 * FMA); prints the GFLOP/s (2 flops per lane per FMA). */
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

int main(int argc, char **argv) {
  const long iters = argc > 1 ? atol(argv[1]) : 20000000;
  /* x = x * m + c converges to c / (1 - m): no overflow, no subnormals. */
  const __m256 m = _mm256_set1_ps(0.999f), c = _mm256_set1_ps(0.001f);
  double best = 0;
  float sink = 0;
  for (int r = 0; r < 5; r++) {
    /* Distinct starts, so the compiler cannot merge the chains. */
    __m256 x0 = _mm256_set1_ps(1), x1 = _mm256_set1_ps(2), x2 = _mm256_set1_ps(3);
    __m256 x3 = _mm256_set1_ps(4), x4 = _mm256_set1_ps(5), x5 = _mm256_set1_ps(6);
    __m256 x6 = _mm256_set1_ps(7), x7 = _mm256_set1_ps(8), x8 = _mm256_set1_ps(9);
    __m256 x9 = _mm256_set1_ps(10), x10 = _mm256_set1_ps(11), x11 = _mm256_set1_ps(12);
    const double t0 = now();
    for (long i = 0; i < iters; i++) {
      x0 = _mm256_fmadd_ps(x0, m, c); x1 = _mm256_fmadd_ps(x1, m, c);
      x2 = _mm256_fmadd_ps(x2, m, c); x3 = _mm256_fmadd_ps(x3, m, c);
      x4 = _mm256_fmadd_ps(x4, m, c); x5 = _mm256_fmadd_ps(x5, m, c);
      x6 = _mm256_fmadd_ps(x6, m, c); x7 = _mm256_fmadd_ps(x7, m, c);
      x8 = _mm256_fmadd_ps(x8, m, c); x9 = _mm256_fmadd_ps(x9, m, c);
      x10 = _mm256_fmadd_ps(x10, m, c); x11 = _mm256_fmadd_ps(x11, m, c);
    }
    const double s = now() - t0;
    const __m256 all = _mm256_add_ps(
        _mm256_add_ps(_mm256_add_ps(x0, x1), _mm256_add_ps(x2, x3)),
        _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(x4, x5), _mm256_add_ps(x6, x7)),
                      _mm256_add_ps(_mm256_add_ps(x8, x9), _mm256_add_ps(x10, x11))));
    float lanes[8];
    _mm256_storeu_ps(lanes, all);
    sink += lanes[0];
    const double gf = 12.0 * 8 * 2 * (double)iters / s / 1e9;
    if (gf > best) best = gf;
  }
  printf("%.1f GFLOP/s (checksum %g)\n", best, sink);
  return 0;
}
