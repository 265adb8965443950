/* The single-core peak of the exact int8 kernels' inner step (docs/quantization.md,
 * "The C kernels"), the one the kernels compile to for this target: with AVX-512
 * VNNI, 12 independent chains of `acc = vpdpbusd(acc, x, w)` on 16 int32 lanes
 * (64 u8 x s8 products each); otherwise 12 chains of `acc = vpmaddwd(acc, w) + x`
 * on 8 int32 lanes (16 int16 products each). Each chain multiplies its own sum,
 * so nothing is hoisted; timed in the calling thread's CPU time, best of 5.
 * Build: cc -O2 -march=native scripts/bench/int8-peak.c -o int8-peak
 * (needs AVX2); prints the GOP/s (2 ops, a multiply and an add, per product)
 * and the step, the unit the per-layer int8 efficiency of
 * scripts/bench/profile.py uses. */
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

/* Each chain feeds its own sum back as the next products' input (wrapping). */
#if defined(__AVX512VNNI__) && defined(__AVX512F__)
typedef __m512i vec;
#define SET1(v) _mm512_set1_epi32(v)
#define STEP(a) a = _mm512_dpbusd_epi32(a, a, w)
#define ADD(a, b) _mm512_add_epi32(a, b)
#define LANE0(a) _mm_cvtsi128_si32(_mm512_castsi512_si128(a))
#define PRODUCTS 64
#define NAME "vpdpbusd"
#else
typedef __m256i vec;
#define SET1(v) _mm256_set1_epi32(v)
#define STEP(a) a = _mm256_add_epi32(_mm256_madd_epi16(a, w), x)
#define ADD(a, b) _mm256_add_epi32(a, b)
#define LANE0(a) _mm256_extract_epi32(a, 0)
#define PRODUCTS 16
#define NAME "vpmaddwd"
#endif

int main(int argc, char **argv) {
  const long iters = argc > 1 ? atol(argv[1]) : 20000000;
#if PRODUCTS == 16
  const __m256i x = _mm256_set1_epi16(3);
  const __m256i w = _mm256_set1_epi16((short)(argc + 1));
#else
  const __m512i w = _mm512_set1_epi8((char)(argc + 1));
#endif
  double best = 0;
  int sink = 0;
  for (int r = 0; r < 5; r++) {
    /* Distinct starts, so the compiler cannot merge the chains. */
    vec a0 = SET1(1), a1 = SET1(2), a2 = SET1(3), a3 = SET1(4), a4 = SET1(5), a5 = SET1(6);
    vec a6 = SET1(7), a7 = SET1(8), a8 = SET1(9), a9 = SET1(10), a10 = SET1(11), a11 = SET1(12);
    const double t0 = now();
    for (long i = 0; i < iters; i++) {
      STEP(a0); STEP(a1); STEP(a2); STEP(a3); STEP(a4); STEP(a5);
      STEP(a6); STEP(a7); STEP(a8); STEP(a9); STEP(a10); STEP(a11);
    }
    const double s = now() - t0;
    const vec all = ADD(ADD(ADD(a0, a1), ADD(a2, a3)),
                        ADD(ADD(ADD(a4, a5), ADD(a6, a7)), ADD(ADD(a8, a9), ADD(a10, a11))));
    sink += LANE0(all);
    const double gop = 12.0 * PRODUCTS * 2 * (double)iters / s / 1e9;
    if (gop > best) best = gop;
  }
  printf("%.1f GOP/s %s (checksum %d)\n", best, NAME, sink);
  return 0;
}
