/* The single-core peak of the exact int8 kernels' inner step (docs/quantization.md,
 * "The C kernels"): 12 independent chains of `acc = vpmaddwd(acc, w) + x` on 8 int32
 * lanes (16 int16 products each; each chain multiplies its own sum, so nothing
 * is hoisted), timed in the calling thread's CPU time, best of 5.
 * Build: cc -O2 -march=native scripts/bench/int8-peak.c -o int8-peak
 * (needs AVX2); prints the GOP/s (2 ops, a multiply and an add, per product),
 * the unit the per-layer int8 efficiency of scripts/bench/profile.py uses. */
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
#define STEP(a) a = _mm256_add_epi32(_mm256_madd_epi16(a, w), x)

int main(int argc, char **argv) {
  const long iters = argc > 1 ? atol(argv[1]) : 20000000;
  const __m256i x = _mm256_set1_epi16(3);
  const __m256i w = _mm256_set1_epi16((short)(argc + 1));
  double best = 0;
  int sink = 0;
  for (int r = 0; r < 5; r++) {
    /* Distinct starts, so the compiler cannot merge the chains. */
    __m256i a0 = _mm256_set1_epi32(1), a1 = _mm256_set1_epi32(2), a2 = _mm256_set1_epi32(3);
    __m256i a3 = _mm256_set1_epi32(4), a4 = _mm256_set1_epi32(5), a5 = _mm256_set1_epi32(6);
    __m256i a6 = _mm256_set1_epi32(7), a7 = _mm256_set1_epi32(8), a8 = _mm256_set1_epi32(9);
    __m256i a9 = _mm256_set1_epi32(10), a10 = _mm256_set1_epi32(11), a11 = _mm256_set1_epi32(12);
    const double t0 = now();
    for (long i = 0; i < iters; i++) {
      STEP(a0); STEP(a1); STEP(a2); STEP(a3); STEP(a4); STEP(a5);
      STEP(a6); STEP(a7); STEP(a8); STEP(a9); STEP(a10); STEP(a11);
    }
    const double s = now() - t0;
    const __m256i all = _mm256_add_epi32(
        _mm256_add_epi32(_mm256_add_epi32(a0, a1), _mm256_add_epi32(a2, a3)),
        _mm256_add_epi32(_mm256_add_epi32(_mm256_add_epi32(a4, a5), _mm256_add_epi32(a6, a7)),
                         _mm256_add_epi32(_mm256_add_epi32(a8, a9), _mm256_add_epi32(a10, a11))));
    sink += _mm256_extract_epi32(all, 0);
    const double gop = 12.0 * 16 * 2 * (double)iters / s / 1e9;
    if (gop > best) best = gop;
  }
  printf("%.1f GOP/s (checksum %d)\n", best, sink);
  return 0;
}
