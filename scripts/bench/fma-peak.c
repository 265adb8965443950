/* The single-core fused multiply-add peak the convolution figures are set
 * against: 12 independent chains of 8-lane FMAs (more than latency x pipes on
 * current x86 cores), timed in the calling thread's CPU time, best of 5.
 * Build: cc -O2 -march=native scripts/bench/fma-peak.c -o fma-peak (needs
 * FMA); prints the GFLOP/s (2 flops per lane per FMA). With AVX-512 the chains
 * are 16-lane, as the kernels' (cores with full-width 512-bit FMA pipes double
 * the AVX2 figure). */
#include <immintrin.h>
#if defined(__AVX512F__)
#define V __m512
#define LANES 16
#define SET1 _mm512_set1_ps
#define FMADD _mm512_fmadd_ps
#define ADD _mm512_add_ps
#define STORE _mm512_storeu_ps
#else
#define V __m256
#define LANES 8
#define SET1 _mm256_set1_ps
#define FMADD _mm256_fmadd_ps
#define ADD _mm256_add_ps
#define STORE _mm256_storeu_ps
#endif
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
  const V m = SET1(0.999f), c = SET1(0.001f);
  double best = 0;
  float sink = 0;
  for (int r = 0; r < 5; r++) {
    /* Distinct starts, so the compiler cannot merge the chains. */
    V x0 = SET1(1), x1 = SET1(2), x2 = SET1(3);
    V x3 = SET1(4), x4 = SET1(5), x5 = SET1(6);
    V x6 = SET1(7), x7 = SET1(8), x8 = SET1(9);
    V x9 = SET1(10), x10 = SET1(11), x11 = SET1(12);
    const double t0 = now();
    for (long i = 0; i < iters; i++) {
      x0 = FMADD(x0, m, c); x1 = FMADD(x1, m, c);
      x2 = FMADD(x2, m, c); x3 = FMADD(x3, m, c);
      x4 = FMADD(x4, m, c); x5 = FMADD(x5, m, c);
      x6 = FMADD(x6, m, c); x7 = FMADD(x7, m, c);
      x8 = FMADD(x8, m, c); x9 = FMADD(x9, m, c);
      x10 = FMADD(x10, m, c); x11 = FMADD(x11, m, c);
    }
    const double s = now() - t0;
    const V all = ADD(
        ADD(ADD(x0, x1), ADD(x2, x3)),
        ADD(ADD(ADD(x4, x5), ADD(x6, x7)),
                      ADD(ADD(x8, x9), ADD(x10, x11))));
    float lanes[LANES];
    STORE(lanes, all);
    sink += lanes[0];
    const double gf = 12.0 * LANES * 2 * (double)iters / s / 1e9;
    if (gf > best) best = gf;
  }
  printf("%.1f GFLOP/s (checksum %g)\n", best, sink);
  return 0;
}
