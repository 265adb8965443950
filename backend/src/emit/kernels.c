/*@common*/
/* Shared kernels: each output element accumulates its products in the index
 * order of the reference interpreter, from 0.0f, each with one fused
 * multiply-add (acc = fmaf(x, w, acc): one rounding), and adds the bias after
 * the sum; tiling only changes which elements are computed together, so
 * results are bit-identical to the interpreter.
 * GLOW_TP (output pixels or rows per tile) and GLOW_PW (output channels per
 * packed panel) are defined before this text from the emitter's constants
 * (emit::runtime::TILE_PIXELS, PANEL_WIDTH), and GLOW_EACH_TP(X) is X(0) ...
 * X(GLOW_TP - 1): a tile's accumulators are named variables (registers; an
 * indexed array of them would live on the stack), one per pixel, so another
 * tile height computes the same numbers. */
#if GLOW_PW != 16
#error "the vector paths hold a panel of 16 channels in one glow_v16 or two glow_v8"
#endif
#if defined(__GNUC__) || defined(__clang__)
typedef float glow_v8 __attribute__((vector_size(32)));
#define GLOW_VEC 1
#define GLOW_SPLAT8(s) ((glow_v8){s, s, s, s, s, s, s, s})
#if defined(__AVX512F__)
/* 32 vector registers: two 16-channel panels per tile. */
typedef float glow_v16 __attribute__((vector_size(64)));
#define GLOW_VEC16 1
#define GLOW_SPLAT16(s) _mm512_set1_ps(s)
#endif
#endif
#if defined(GLOW_VEC) && (defined(__FMA__) || defined(__AVX512F__))
#include <immintrin.h>
#endif

/* acc = fmaf(x, w, acc) lane by lane (x, w, acc variables): the FMA
 * instruction where the target has one, else libm's fmaf (exact too, only
 * slower; through pointers, since vectors wider than the target's registers
 * are not passed by value). */
#ifdef GLOW_VEC
#if defined(__FMA__)
#define GLOW_FMA8(acc, x, w) ((acc) = _mm256_fmadd_ps((x), (w), (acc)))
#else
static inline void glow_fma8_lanes(glow_v8 *acc, const glow_v8 *x, const glow_v8 *w) {
  for (int l = 0; l < 8; l++) (*acc)[l] = fmaf((*x)[l], (*w)[l], (*acc)[l]);
}
#define GLOW_FMA8(acc, x, w) glow_fma8_lanes(&(acc), &(x), &(w))
#endif
#endif
#ifdef GLOW_VEC16
#define GLOW_FMA16(acc, x, w) ((acc) = _mm512_fmadd_ps((x), (w), (acc)))
#endif

/* Window positions a tile keeps pointers for. */
#define GLOW_KMAX 64
static inline size_t glow_min(size_t a, size_t b) { return a < b ? a : b; }
static inline size_t glow_max(size_t a, size_t b) { return a > b ? a : b; }

/*@act*/

/* Integer power by squaring, wrapping (ops::ipow): a negative exponent gives
 * 1 / a^-b truncated. */
static inline int64_t glow_ipow(int64_t a, int64_t b) {
  if (b < 0) return a == 1 ? 1 : a == -1 ? ((b & 1) ? -1 : 1) : 0;
  uint64_t base = (uint64_t)a, e = (uint64_t)b, r = 1;
  while (e) {
    if (e & 1) r *= base;
    base *= base;
    e >>= 1;
  }
  return (int64_t)r;
}

/* Glow's modulo (ops::modulo): truncating, 0 for d = -1, plus d for a
 * negative remainder when follow is set, wrapping. */
static inline int64_t glow_modulo(int64_t x, int64_t d, int64_t follow) {
  int64_t r = (d == 0 || d == -1) ? 0 : x % d;
  return (follow && r < 0) ? (int64_t)((uint64_t)r + (uint64_t)d) : r;
}

/* Stores `lanes` results of one output pixel (or row): d[l * ds] =
 * act(acc[l] + bias[l] (+ r[l * ds])). The activation is chosen outside the
 * loops so a contiguous row vectorises. */
static inline void glow_store(float *d, size_t ds, const float *acc, const float *bias,
                              const float *r, size_t lanes, int act, float a0, float a1) {
  float x[64];
  for (size_t l = 0; l < lanes; l++) x[l] = bias ? acc[l] + bias[l] : acc[l];
  if (r) {
    if (ds == 1) {
      for (size_t l = 0; l < lanes; l++) x[l] = x[l] + r[l];
    } else {
      for (size_t l = 0; l < lanes; l++) x[l] = x[l] + r[l * ds];
    }
  }
  if (ds != 1) {
    for (size_t l = 0; l < lanes; l++) d[l * ds] = glow_act(x[l], act, a0, a1);
    return;
  }
  switch (act) {
  case GLOW_ACT_NONE:
    for (size_t l = 0; l < lanes; l++) d[l] = x[l];
    break;
  case GLOW_ACT_RELU:
    for (size_t l = 0; l < lanes; l++) d[l] = x[l] > 0.0f ? x[l] : 0.0f;
    break;
  case GLOW_ACT_CLIP:
    for (size_t l = 0; l < lanes; l++) {
      const float m = x[l] < a0 ? a0 : x[l];
      d[l] = a1 < m ? a1 : m;
    }
    break;
  default:
    for (size_t l = 0; l < lanes; l++) d[l] = glow_act(x[l], act, a0, a1);
  }
}

#ifdef GLOW_VEC
/* glow_finish<W> (W = 8, 16): bias b, residual r (if any) and activation of
 * the W sums in *x, with the same f32 additions as glow_store and relu/clip
 * as bit selections of the same values; lo and hi are the clip bounds
 * broadcast. glow_store<W> is it for W contiguous lanes of memory. Always
 * inlined, so the vectors behind the pointers stay in registers (a call
 * would put the results a tile holds in registers through memory), and a
 * caller that hoists b, lo and hi out of its pixel loop keeps them there.
 * Pointers, not values: a vector argument wider than the target's registers
 * changes the ABI (-Wpsabi). */
#define GLOW_DEFINE_STORE(W, V, I, SPLAT)                                                   \
  static inline __attribute__((always_inline)) void glow_finish##W(                         \
      V *xp, const V *b, const float *r, int act, const V *lo, const V *hi, float a0,        \
      float a1) {                                                                            \
    V x = *xp + *b;                                                                          \
    if (r) {                                                                                 \
      V q;                                                                                   \
      memcpy(&q, r, sizeof q);                                                               \
      x = x + q;                                                                             \
    }                                                                                        \
    if (act == GLOW_ACT_RELU) {                                                              \
      const V zero = {0};                                                                    \
      x = (V)((I)x & (x > zero));                                                            \
    } else if (act == GLOW_ACT_CLIP) {                                                       \
      I m = x < *lo;                                                                         \
      x = (V)(((I)*lo & m) | ((I)x & ~m));                                                   \
      m = *hi < x;                                                                           \
      x = (V)(((I)*hi & m) | ((I)x & ~m));                                                   \
    } else if (act != GLOW_ACT_NONE) {                                                       \
      for (int l = 0; l < W; l++) x[l] = glow_act(x[l], act, a0, a1);                        \
    }                                                                                        \
    *xp = x;                                                                                 \
  }                                                                                          \
  static inline __attribute__((always_inline)) void glow_store##W(                          \
      float *d, const float *acc, const float *bias, const float *r, int act, float a0,      \
      float a1) {                                                                            \
    V x, b;                                                                                  \
    memcpy(&x, acc, sizeof x);                                                               \
    memcpy(&b, bias, sizeof b);                                                              \
    /* A broadcast: filling the lanes one by one compiles to a masked move each. */         \
    const V lo = SPLAT(a0), hi = SPLAT(a1);                                                  \
    glow_finish##W(&x, &b, r, act, &lo, &hi, a0, a1);                                        \
    memcpy(d, &x, sizeof x);                                                                 \
  }
typedef int glow_i8 __attribute__((vector_size(32)));
GLOW_DEFINE_STORE(8, glow_v8, glow_i8, GLOW_SPLAT8)
#ifdef GLOW_VEC16
typedef int glow_i16 __attribute__((vector_size(64)));
GLOW_DEFINE_STORE(16, glow_v16, glow_i16, GLOW_SPLAT16)
#endif
#undef GLOW_DEFINE_STORE
#endif

/* One pixel's (or row's) `lanes` results at d, d + ds, ...: whole vectors
 * where the row is contiguous, then the rest lane by lane. */
static inline void glow_store_row(float *d, size_t ds, const float *acc, const float *bias,
                                  const float *r, size_t lanes, int act, float a0, float a1) {
  size_t l = 0;
#ifdef GLOW_VEC
  if (ds == 1 && bias) {
#ifdef GLOW_VEC16
    for (; l + 16 <= lanes; l += 16)
      glow_store16(d + l, acc + l, bias + l, r ? r + l : 0, act, a0, a1);
#endif
    for (; l + 8 <= lanes; l += 8)
      glow_store8(d + l, acc + l, bias + l, r ? r + l : 0, act, a0, a1);
  }
#endif
  if (l < lanes)
    glow_store(d + l * ds, ds, acc + l, bias ? bias + l : 0, r ? r + l * ds : 0, lanes - l, act,
               a0, a1);
}


/* Work split: a kernel's outputs are cut into `parts` contiguous ranges of
 * whole tiles; each range is computed by one thread in the order one thread
 * would use, so results do not depend on the number of threads. With
 * GLOW_THREADS = N the bundle keeps N - 1 workers (started at the first call)
 * and the calling thread works too. The entry point is not reentrant. */
typedef void (*glow_task)(const void *args, size_t part, size_t parts);
#ifdef GLOW_THREADS
/* A kernel is cut into GLOW_CHUNKS ranges that the threads claim one at a
 * time, so a worker that is late (asleep, or its core taken by another
 * process) leaves its share to the others instead of holding up the caller.
 * A claim is a compare-and-swap on `ticket` (generation << 32 | next range)
 * that also checks the generation, so a worker that read the job of a kernel
 * that has since finished claims nothing from the next one; the caller
 * writes the next job only after closing the ticket. Every shared field is a
 * sequentially consistent atomic (GCC/Clang __atomic builtins); the mutex
 * and condition variables only put threads to sleep and wake them. */
#define GLOW_CHUNKS (4 * GLOW_THREADS)
#define GLOW_CLOSED 0xffffffffull
static struct {
  pthread_mutex_t m;
  pthread_cond_t go, done;
  glow_task fn;
  const void *args;
  unsigned long long ticket;
  size_t finished, sleepers;
  int started;
} glow_pool = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER,
               0, 0, GLOW_CLOSED, 0, 0, 0};

/* Spins before sleeping: most kernels take well under a millisecond, and
 * waking a sleeping thread costs about as much as a small one. */
#define GLOW_SPIN 20000
#define GLOW_SC __ATOMIC_SEQ_CST
static inline void glow_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

/* Claims and runs ranges of the job of generation `gen` until none is left. */
static void glow_claim(unsigned long long gen) {
  for (;;) {
    unsigned long long t = __atomic_load_n(&glow_pool.ticket, GLOW_SC);
    if (t >> 32 != gen || (t & GLOW_CLOSED) >= GLOW_CHUNKS) return;
    const glow_task fn = __atomic_load_n(&glow_pool.fn, GLOW_SC);
    const void *args = __atomic_load_n(&glow_pool.args, GLOW_SC);
    if (!__atomic_compare_exchange_n(&glow_pool.ticket, &t, t + 1, 0, GLOW_SC, GLOW_SC))
      continue;
    fn(args, (size_t)(t & GLOW_CLOSED), GLOW_CHUNKS);
    if (__atomic_add_fetch(&glow_pool.finished, 1, GLOW_SC) == GLOW_CHUNKS) {
      pthread_mutex_lock(&glow_pool.m);
      pthread_cond_signal(&glow_pool.done);
      pthread_mutex_unlock(&glow_pool.m);
    }
  }
}

static void *glow_worker(void *id) {
  (void)id;
  unsigned long long seen = 0;
  for (;;) {
    unsigned long long gen = seen;
    for (int i = 0; i < GLOW_SPIN && (gen = __atomic_load_n(&glow_pool.ticket, GLOW_SC) >> 32) == seen;
         i++)
      glow_relax();
    if (gen == seen) {
      pthread_mutex_lock(&glow_pool.m);
      __atomic_add_fetch(&glow_pool.sleepers, 1, GLOW_SC);
      while ((gen = __atomic_load_n(&glow_pool.ticket, GLOW_SC) >> 32) == seen)
        pthread_cond_wait(&glow_pool.go, &glow_pool.m);
      __atomic_sub_fetch(&glow_pool.sleepers, 1, GLOW_SC);
      pthread_mutex_unlock(&glow_pool.m);
    }
    seen = gen;
    glow_claim(gen);
  }
  return 0;
}

static void glow_parallel(glow_task fn, const void *args) {
  if (!glow_pool.started) {
    /* Only the calling thread writes `started`: the entry is not reentrant. */
    int ran = 1;
    for (size_t i = 1; i < GLOW_THREADS; i++) {
      pthread_t t;
      if (pthread_create(&t, 0, glow_worker, (void *)i) == 0) {
        pthread_detach(t);
        ran++;
      }
    }
    glow_pool.started = ran;
  }
  if (glow_pool.started < 2) {
    /* No worker could start: the calling thread runs every range. */
    for (size_t i = 0; i < GLOW_CHUNKS; i++) fn(args, i, GLOW_CHUNKS);
    return;
  }
  /* The previous job is finished and its ticket closed: publish this one. */
  const unsigned long long gen = (__atomic_load_n(&glow_pool.ticket, GLOW_SC) >> 32) + 1;
  __atomic_store_n(&glow_pool.fn, fn, GLOW_SC);
  __atomic_store_n(&glow_pool.args, args, GLOW_SC);
  __atomic_store_n(&glow_pool.finished, 0, GLOW_SC);
  __atomic_store_n(&glow_pool.ticket, gen << 32, GLOW_SC);
  if (__atomic_load_n(&glow_pool.sleepers, GLOW_SC)) {
    pthread_mutex_lock(&glow_pool.m);
    pthread_cond_broadcast(&glow_pool.go);
    pthread_mutex_unlock(&glow_pool.m);
  }
  glow_claim(gen);
  for (int i = 0; i < GLOW_SPIN && __atomic_load_n(&glow_pool.finished, GLOW_SC) < GLOW_CHUNKS; i++)
    glow_relax();
  if (__atomic_load_n(&glow_pool.finished, GLOW_SC) < GLOW_CHUNKS) {
    pthread_mutex_lock(&glow_pool.m);
    while (__atomic_load_n(&glow_pool.finished, GLOW_SC) < GLOW_CHUNKS)
      pthread_cond_wait(&glow_pool.done, &glow_pool.m);
    pthread_mutex_unlock(&glow_pool.m);
  }
  /* Close the ticket before the next job's fields change. */
  __atomic_store_n(&glow_pool.ticket, (gen << 32) | GLOW_CLOSED, GLOW_SC);
}
#else
static inline void glow_parallel(glow_task fn, const void *args) { fn(args, 0, 1); }
#endif

/* [*lo, *hi): part `part` of `parts` of `units` units. */
static inline void glow_range(size_t units, size_t part, size_t parts, size_t *lo, size_t *hi) {
  *lo = units * part / parts;
  *hi = units * (part + 1) / parts;
}

/* The output coordinates of a tile's GLOW_TP pixels, from linear pixel `pix`
 * in raster order over rows of `w` pixels (those past the image are not
 * stored). */
static inline void glow_tile_coords(size_t w, size_t pix, size_t *oh, size_t *ow) {
  /* One division, then steps: a division per pixel cost a short tile a
   * sizeable share of its time. */
  size_t h = pix / w, x = pix % w;
  for (size_t t = 0; t < GLOW_TP; t++) {
    oh[t] = h;
    ow[t] = x;
    if (++x == w) {
      x = 0;
      h++;
    }
  }
}
/*@end*/

/*@convbase*/
/* Shape of one convolution; strides in elements over (n, c, h, w). */
typedef struct {
  size_t n, h, w, c, oh, ow, oc, kh, kw, sh, sw, pt, pl, dh, dw, group;
  size_t s_n, s_c, s_h, s_w, d_n, d_c, d_h, d_w;
  int act;
  float a0, a1;
} glow_conv_t;

/* Output element (n, o, pixel) of a convolution: bias, residual, activation. */
static inline void glow_conv_store(float *dst, const float *res, const glow_conv_t *p, size_t n,
                                   size_t o, size_t pix, float sum, const float *bias) {
  size_t oh = pix / p->ow, ow = pix % p->ow;
  size_t at = n * p->d_n + o * p->d_c + oh * p->d_h + ow * p->d_w;
  float x = sum + bias[o];
  if (res) x = x + res[at];
  dst[at] = glow_act(x, p->act, p->a0, p->a1);
}

/* Whether padded window positions may read zeros instead of being skipped
 * (the reference skips them). With a finite filter, x * 0 is +-0, and an FMA
 * adding it leaves the running sum unchanged unless the sum is -0 (an FMA can
 * round a tiny negative to -0, and -0 + +0 is +0). Sums that differ only in
 * the sign of a zero become equal when a bias other than -0 is added, so the
 * filter must be finite (checked at emit time) and no bias element -0. */
static inline int glow_zeros_ok(int finite, const float *bias, size_t n) {
  if (!finite) return 0;
  for (size_t i = 0; i < n; i++)
    if (bias[i] == 0.0f && signbit(bias[i])) return 0;
  return 1;
}

/* A convolution kernel's arguments, for the work split. */
typedef struct {
  float *dst;
  const float *src, *pk, *bias, *res;
  const glow_conv_t *p;
  /* Padding may read zeros (glow_zeros_ok). */
  int zeros;
} glow_conv_args;
/*@end*/

/*@conv*/
/* Convolution with the filter packed at emit time into panels of GLOW_PW
 * output channels per group, [group][panel][kh][kw][c][GLOW_PW] (zero lanes
 * past the group's channels), over tiles of GLOW_TP output pixels x one
 * panel (two with AVX-512).
 * A window position outside the input adds nothing in the reference. Here
 * it reads zeros from glow_zero instead where glow_zeros_ok allows it
 * (`zeros` in the arguments). Pixels past the end of a tile read zeros too
 * and are not stored. */

/* One tile: output pixels pix .. pix + np - 1 of image n (at oh[t], ow[t]),
 * the np2 panels from `panel` (first output channel o0, `lanes` stored). */
typedef struct {
  const glow_conv_args *q;
  const float *sbase, *panel;
  size_t n, np2, o0, lanes, np;
  size_t oh[GLOW_TP], ow[GLOW_TP];
  /* Per convolution (glow_conv_part): channels per group, products per
   * output, whether a window row is one run (see glow_conv_tile_taps), and
   * the output rows [ih_lo, ih_hi) and columns [iw_lo, iw_hi) whose windows
   * lie wholly inside the input. */
  size_t cg, kk, ih_lo, ih_hi, iw_lo, iw_hi;
  int rows;
  /* The register path's pointer table (glow_conv_tile_taps), which depends
   * on the pixels only, so a pixel tile's panels share it: taps is -1 until
   * it is built, then whether the register path applies. */
  int taps;
  size_t entries, run;
  /* The quad path's share of each output's products, [k0, k1) of the
   * kk of the (kh, kw, c) sequence; where k0 > 0 the sums so far come from
   * part ([GLOW_TP][4 * GLOW_PW]), and where k1 < kk they go back to it (see
   * glow_conv_chunked). Without part, [0, kk). */
  size_t k0, k1;
  float *part;
  const float *spt[GLOW_KMAX][GLOW_TP];
} glow_tile_t;

/* Where the tile's pixel i stores its first output channel. */
static inline float *glow_tile_dst(const glow_tile_t *t, size_t i) {
  const glow_conv_t *p = t->q->p;
  return t->q->dst + t->n * p->d_n + t->oh[i] * p->d_h + t->ow[i] * p->d_w + t->o0 * p->d_c;
}

/* A write hint for the same pixel 4 tiles on (and a read hint for its
 * residual r, if any): an output larger than L2 otherwise stalls each store
 * on its miss, and each residual load on its own. As integers, since the
 * addresses may lie past the buffers (a prefetch never faults). */
static inline void glow_tile_prefetch(const float *d, const float *r, const glow_conv_t *p) {
  const uintptr_t ahead = 4 * GLOW_TP * p->d_w * sizeof(float);
  const uintptr_t f = (uintptr_t)d + ahead;
  __builtin_prefetch((const void *)f, 1);
  __builtin_prefetch((const void *)(f + 64), 1);
  if (r) {
    /* Into L2 only: brought into L1 this far ahead, with the output's
     * lines, it was mostly evicted again before its use. */
    __builtin_prefetch((const void *)((uintptr_t)r + ahead), 0, 2);
    __builtin_prefetch((const void *)((uintptr_t)r + ahead + 64), 0, 2);
  }
}

/* Where pixel t reads window position (a, b): its input, glow_zero (padding
 * that may read zeros, or a pixel past the tile's end), or 0 (padding that
 * must be skipped). */
static inline const float *glow_tap(const glow_tile_t *t, size_t i, size_t a, size_t b) {
  const glow_conv_t *p = t->q->p;
  const long long ih = (long long)(t->oh[i] * p->sh + a * p->dh) - (long long)p->pt;
  const long long iw = (long long)(t->ow[i] * p->sw + b * p->dw) - (long long)p->pl;
  if (i >= t->np) return glow_zero;
  if (ih < 0 || ih >= (long long)p->h || iw < 0 || iw >= (long long)p->w)
    return t->q->zeros && p->s_c == 1 ? glow_zero : 0;
  return t->sbase + (size_t)ih * p->s_h + (size_t)iw * p->s_w;
}

#ifdef GLOW_VEC16
/* The register path: the whole tile's accumulators stay in registers from the
 * first product to the last, which needs every window position of every
 * pixel to be inside the input or to read zeros. Where a window row's
 * (kw, c) elements are contiguous in the input (t->rows) and every pixel's
 * row is inside the input or wholly in the padding, a whole row is one run
 * of kw * c products, in the packed filter's [kh][kw][c] order: fewer,
 * longer inner loops for few channels. A tile whose windows all lie inside
 * the input (the usual case) needs no test per position. glow_conv_tile_taps
 * builds the table of where each pixel reads each run (t->spt, t->entries
 * runs of t->run products) and returns 0 when some position must be
 * skipped instead. */
static int glow_conv_tile_taps(glow_tile_t *t) {
  const glow_conv_t *p = t->q->p;
  const size_t cg = t->cg;
  int rows = t->rows;
  t->entries = p->kh;
  t->run = p->kw * cg;
  if (p->s_c != 1 || p->kh * p->kw > GLOW_KMAX) return 0;
  int inside = rows;
  for (size_t i = 0; i < t->np && inside; i++)
    inside = t->oh[i] >= t->ih_lo && t->oh[i] < t->ih_hi && t->ow[i] >= t->iw_lo &&
             t->ow[i] < t->iw_hi;
  if (inside) {
    /* Every window inside the input: no test per position. */
    const size_t step = p->dh * p->s_h;
    for (size_t i = 0; i < GLOW_TP; i++) {
      if (i >= t->np) {
        for (size_t a = 0; a < p->kh; a++) t->spt[a][i] = glow_zero;
        continue;
      }
      const float *s = t->sbase + (t->oh[i] * p->sh - p->pt) * p->s_h +
                       (t->ow[i] * p->sw - p->pl) * p->s_w;
      for (size_t a = 0; a < p->kh; a++, s += step) t->spt[a][i] = s;
    }
    return 1;
  }
  for (size_t a = 0; a < p->kh && rows; a++)
    for (size_t i = 0; i < GLOW_TP; i++) {
      const long long ih = (long long)(t->oh[i] * p->sh + a * p->dh) - (long long)p->pt;
      const long long iw = (long long)(t->ow[i] * p->sw) - (long long)p->pl;
      if (i >= t->np) {
        t->spt[a][i] = glow_zero;
      } else if (ih < 0 || ih >= (long long)p->h) {
        t->spt[a][i] = glow_zero;
        rows = rows && t->q->zeros;
      } else if (iw < 0 || iw + (long long)p->kw > (long long)p->w) {
        rows = 0;
      } else {
        t->spt[a][i] = t->sbase + (size_t)ih * p->s_h + (size_t)iw * p->s_w;
      }
    }
  if (!rows) {
    t->entries = p->kh * p->kw;
    t->run = cg;
    for (size_t a = 0; a < p->kh; a++)
      for (size_t b = 0; b < p->kw; b++)
        for (size_t i = 0; i < GLOW_TP; i++)
          if (!(t->spt[a * p->kw + b][i] = glow_tap(t, i, a, b))) return 0;
  }
  return 1;
}

/* The register kernels' stores: GLOW_FIN finishes accumulator V (bias B,
 * the residual r, the activation ACT) as panel K of the pixel at d, from the
 * store's locals lo, hi, a0, a1. GLOW_ACT_SWITCH runs OUT(T, ACT) over the
 * tile once per common activation with ACT a constant: with the activation
 * tested per pixel, the lane-by-lane fallback kept every result on the
 * stack. */
#define GLOW_FIN(V, B, K, ACT)                                                              \
  glow_finish16(&V, &B, r ? r + (K) * GLOW_PW : 0, ACT, &lo, &hi, a0, a1);                  \
  memcpy(d + (K) * GLOW_PW, &V, 64);
#define GLOW_ACT_SWITCH(OUT, act)                                                           \
  switch (act) {                                                                            \
  case GLOW_ACT_NONE: GLOW_EACH_TP_ARGS(OUT, GLOW_ACT_NONE) break;                          \
  case GLOW_ACT_RELU: GLOW_EACH_TP_ARGS(OUT, GLOW_ACT_RELU) break;                          \
  case GLOW_ACT_CLIP: GLOW_EACH_TP_ARGS(OUT, GLOW_ACT_CLIP) break;                          \
  default: GLOW_EACH_TP_ARGS(OUT, act) break;                                               \
  }

/* The register path's products and store, over the table built by
 * glow_conv_tile_taps. Returns 2 when it stored the tile itself (whole
 * vectors with a bias), else 1, the sums in acc. Only the first H pixels are
 * computed (H >= t->np, a constant once inlined in glow_conv_tile_regs<H>),
 * so an image's last, shorter tile does not pay for the pixels past its
 * end. */
static inline __attribute__((always_inline)) int glow_conv_tile_regs_h(
    const glow_tile_t *t, float acc[][2 * GLOW_PW], const size_t H) {
  const glow_conv_t *p = t->q->p;
  const size_t kk = t->kk;
  const size_t entries = t->entries, run = t->run;
  const glow_v16 z = {0};
#define GLOW_ACC(T) glow_v16 c##T##a = z, c##T##b = z;
  GLOW_EACH_TP(GLOW_ACC)
#undef GLOW_ACC
  for (size_t ab = 0; ab < entries; ab++) {
    const float *wp = t->panel + ab * run * GLOW_PW, *wq = wp + kk * GLOW_PW;
#define GLOW_SRC(T) const float *s##T = t->spt[ab][T];
    GLOW_EACH_TP(GLOW_SRC)
#undef GLOW_SRC
    if (t->np2 == 2) {
      for (size_t c = 0; c < run; c++) {
        glow_v16 w0, w1;
        memcpy(&w0, wp + c * GLOW_PW, 64);
        memcpy(&w1, wq + c * GLOW_PW, 64);
#define GLOW_STEP(T) if (T < H) { const glow_v16 x = GLOW_SPLAT16(s##T[c]); GLOW_FMA16(c##T##a, x, w0); GLOW_FMA16(c##T##b, x, w1); }
        GLOW_EACH_TP(GLOW_STEP)
#undef GLOW_STEP
      }
    } else {
      for (size_t c = 0; c < run; c++) {
        glow_v16 w0;
        memcpy(&w0, wp + c * GLOW_PW, 64);
#define GLOW_STEP(T) if (T < H) { const glow_v16 x = GLOW_SPLAT16(s##T[c]); GLOW_FMA16(c##T##a, x, w0); }
        GLOW_EACH_TP(GLOW_STEP)
#undef GLOW_STEP
      }
    }
  }
  const glow_conv_args *q = t->q;
  if (p->d_c == 1 && q->bias && t->lanes == GLOW_PW * t->np2) {
    /* Whole vectors: glow_store_row's work straight from the registers, with
     * the bias, the clip bounds and the shape in locals (a store through a
     * float pointer could otherwise change them, so each pixel reloaded them). */
    const int two = t->np2 == 2;
    const float a0 = p->a0, a1 = p->a1;
    const glow_v16 lo = GLOW_SPLAT16(a0), hi = GLOW_SPLAT16(a1);
    glow_v16 b0, b1 = z;
    memcpy(&b0, q->bias + t->o0, 64);
    if (two) memcpy(&b1, q->bias + t->o0 + GLOW_PW, 64);
    float *const dst = q->dst;
    const float *const res = q->res;
#define GLOW_OUT(T, ACT)                                                                    \
  if (T < t->np) {                                                                          \
    float *d = glow_tile_dst(t, T);                                                         \
    const float *r = res ? res + (d - dst) : 0;                                             \
    glow_tile_prefetch(d, r, p);                                                            \
    GLOW_FIN(c##T##a, b0, 0, ACT)                                                           \
    if (two) {                                                                              \
      GLOW_FIN(c##T##b, b1, 1, ACT)                                                         \
    }                                                                                       \
  }
    GLOW_ACT_SWITCH(GLOW_OUT, p->act)
#undef GLOW_OUT
    return 2;
  }
#define GLOW_OUT(T) if (T < H) { memcpy(acc[T], &c##T##a, 64); memcpy(acc[T] + GLOW_PW, &c##T##b, 64); }
  GLOW_EACH_TP(GLOW_OUT)
#undef GLOW_OUT
  return 1;
}

/* glow_conv_tile_regs_h for each tile height H = T + 1, and the dispatch on
 * the tile's pixel count. Not inlined: inlined into its caller, the kernel
 * shares that function's registers and spills its accumulators. */
#define GLOW_REGS_H(T)                                                                    \
  static __attribute__((noinline)) int glow_conv_tile_regs##T(const glow_tile_t *t,        \
                                                              float acc[][2 * GLOW_PW]) {  \
    return glow_conv_tile_regs_h(t, acc, T + 1);                                          \
  }
GLOW_EACH_TP(GLOW_REGS_H)
#undef GLOW_REGS_H
/* 0 when the register path does not apply (having computed nothing). */
static int glow_conv_tile_regs(glow_tile_t *t, float acc[][2 * GLOW_PW]) {
  if (t->taps < 0) t->taps = glow_conv_tile_taps(t);
  if (!t->taps) return 0;
  switch (t->np) {
#define GLOW_REGS_CASE(T) case T + 1: return glow_conv_tile_regs##T(t, acc);
    GLOW_EACH_TP(GLOW_REGS_CASE)
#undef GLOW_REGS_CASE
  default: return 0;
  }
}

/* The register path over four panels (64 output channels) at once, for
 * tiles of whole vectors with a bias and dense output channels
 * (glow_conv_quad_ok): each broadcast input value feeds four FMAs instead of
 * two, and the tile's fixed costs (pointer setup, the loop's start and
 * drain, the store) are shared by twice the products, which is most of the
 * difference for 1x1 convolutions of few input channels. Only the first H
 * pixels are computed, as in glow_conv_tile_regs_h. */
static inline __attribute__((always_inline)) void glow_conv_tile_quad_h(const glow_tile_t *t,
                                                                        const size_t H) {
  const glow_conv_t *p = t->q->p;
  const size_t ps = t->kk * GLOW_PW, run = t->run;
  float *const part = t->part;
  const size_t k0 = part ? t->k0 : 0, k1 = part ? t->k1 : t->kk;
  const glow_v16 z = {0};
#define GLOW_ACC(T) glow_v16 c##T##a = z, c##T##b = z, c##T##c = z, c##T##d = z;
  GLOW_EACH_TP(GLOW_ACC)
#undef GLOW_ACC
  if (k0 > 0) {
    /* The sums so far: the same fmaf chain, continued. */
#define GLOW_LOAD(T)                                                                        \
  if (T < H) {                                                                              \
    const float *a = part + (T) * 4 * GLOW_PW;                                              \
    memcpy(&c##T##a, a, 64); memcpy(&c##T##b, a + GLOW_PW, 64);                             \
    memcpy(&c##T##c, a + 2 * GLOW_PW, 64); memcpy(&c##T##d, a + 3 * GLOW_PW, 64);           \
  }
    GLOW_EACH_TP(GLOW_LOAD)
#undef GLOW_LOAD
  }
  for (size_t ab = k0 / run; ab * run < k1; ab++) {
    const float *wp = t->panel + ab * run * GLOW_PW;
    const size_t cb = k0 > ab * run ? k0 - ab * run : 0, ce = glow_min(run, k1 - ab * run);
#define GLOW_SRC(T) const float *s##T = t->spt[ab][T];
    GLOW_EACH_TP(GLOW_SRC)
#undef GLOW_SRC
    for (size_t c = cb; c < ce; c++) {
      glow_v16 w0, w1, w2, w3;
      memcpy(&w0, wp + c * GLOW_PW, 64);
      memcpy(&w1, wp + ps + c * GLOW_PW, 64);
      memcpy(&w2, wp + 2 * ps + c * GLOW_PW, 64);
      memcpy(&w3, wp + 3 * ps + c * GLOW_PW, 64);
#define GLOW_STEP(T)                                                                        \
  if (T < H) {                                                                              \
    const glow_v16 x = GLOW_SPLAT16(s##T[c]);                                               \
    GLOW_FMA16(c##T##a, x, w0); GLOW_FMA16(c##T##b, x, w1);                                 \
    GLOW_FMA16(c##T##c, x, w2); GLOW_FMA16(c##T##d, x, w3);                                 \
  }
      GLOW_EACH_TP(GLOW_STEP)
#undef GLOW_STEP
    }
  }
  if (k1 < t->kk) {
#define GLOW_SAVE(T)                                                                        \
  if (T < H) {                                                                              \
    float *a = part + (T) * 4 * GLOW_PW;                                                    \
    memcpy(a, &c##T##a, 64); memcpy(a + GLOW_PW, &c##T##b, 64);                             \
    memcpy(a + 2 * GLOW_PW, &c##T##c, 64); memcpy(a + 3 * GLOW_PW, &c##T##d, 64);           \
  }
    GLOW_EACH_TP(GLOW_SAVE)
#undef GLOW_SAVE
    return;
  }
  const glow_conv_args *q = t->q;
  const float a0 = p->a0, a1 = p->a1;
  const glow_v16 lo = GLOW_SPLAT16(a0), hi = GLOW_SPLAT16(a1);
  glow_v16 b0, b1, b2, b3;
  memcpy(&b0, q->bias + t->o0, 64);
  memcpy(&b1, q->bias + t->o0 + GLOW_PW, 64);
  memcpy(&b2, q->bias + t->o0 + 2 * GLOW_PW, 64);
  memcpy(&b3, q->bias + t->o0 + 3 * GLOW_PW, 64);
  float *const dst = q->dst;
  const float *const res = q->res;
#define GLOW_OUT(T, ACT)                                                                    \
  if (T < H) {                                                                              \
    float *d = glow_tile_dst(t, T);                                                         \
    const float *r = res ? res + (d - dst) : 0;                                             \
    glow_tile_prefetch(d, r, p);                                                            \
    glow_tile_prefetch(d + 2 * GLOW_PW, r ? r + 2 * GLOW_PW : 0, p);                        \
    GLOW_FIN(c##T##a, b0, 0, ACT) GLOW_FIN(c##T##b, b1, 1, ACT)                             \
    GLOW_FIN(c##T##c, b2, 2, ACT) GLOW_FIN(c##T##d, b3, 3, ACT)                             \
  }
  GLOW_ACT_SWITCH(GLOW_OUT, p->act)
#undef GLOW_OUT
}
#define GLOW_QUAD_H(T)                                                                    \
  static __attribute__((noinline)) void glow_conv_tile_quad##T(const glow_tile_t *t) {      \
    glow_conv_tile_quad_h(t, T + 1);                                                      \
  }
GLOW_EACH_TP(GLOW_QUAD_H)
#undef GLOW_QUAD_H
#undef GLOW_FIN
#undef GLOW_ACT_SWITCH

/* Whether a tile of four panels from output channel o0 may take the quad
 * path: four whole panels of the group, a bias, dense output channels. */
static inline int glow_conv_quad_ok(const glow_conv_args *q, size_t ocg, size_t pb, size_t pe) {
  return q->bias && q->p->d_c == 1 && pb + 4 <= pe && (pb + 4) * GLOW_PW <= ocg;
}

/* A tile of four panels: the quad path where the register path applies,
 * else two tiles of two panels. */
static void glow_conv_tile(glow_tile_t *t);
static void glow_conv_tile_four(glow_tile_t *t) {
  if (t->taps < 0) t->taps = glow_conv_tile_taps(t);
  if (t->taps) {
    switch (t->np) {
#define GLOW_QUAD_CASE(T) case T + 1: glow_conv_tile_quad##T(t); return;
      GLOW_EACH_TP(GLOW_QUAD_CASE)
#undef GLOW_QUAD_CASE
    default: break;
    }
  }
  const float *panel = t->panel;
  const size_t o0 = t->o0;
  t->np2 = 2;
  t->lanes = 2 * GLOW_PW;
  glow_conv_tile(t);
  t->panel = panel + 2 * t->kk * GLOW_PW;
  t->o0 = o0 + 2 * GLOW_PW;
  glow_conv_tile(t);
}
#endif

/* The window path: one window position at a time, with vector code where
 * every pixel of the tile reads (its input or zeros), else lane by lane
 * skipping what must be skipped; acc starts at zero. */
static void glow_conv_tile_window(const glow_tile_t *t, float acc[][2 * GLOW_PW]) {
  const glow_conv_t *p = t->q->p;
  const size_t cg = t->cg, kk = t->kk;
  for (size_t a = 0; a < p->kh; a++)
    for (size_t b = 0; b < p->kw; b++) {
      const float *sp[GLOW_TP];
      int all = p->s_c == 1;
      const float *wp = t->panel + (a * p->kw + b) * cg * GLOW_PW;
      for (size_t i = 0; i < GLOW_TP; i++) {
        sp[i] = glow_tap(t, i, a, b);
        all = all && sp[i];
      }
#if defined(GLOW_VEC16)
      if (all) {
        const float *wq = wp + kk * GLOW_PW;
#define GLOW_LOAD(T) glow_v16 c##T##a, c##T##b; const float *s##T = sp[T]; \
  memcpy(&c##T##a, acc[T], 64); memcpy(&c##T##b, acc[T] + GLOW_PW, 64);
        GLOW_EACH_TP(GLOW_LOAD)
#undef GLOW_LOAD
        for (size_t c = 0; c < cg; c++) {
          glow_v16 w0, w1;
          memcpy(&w0, wp + c * GLOW_PW, 64);
          if (t->np2 == 2) {
            memcpy(&w1, wq + c * GLOW_PW, 64);
#define GLOW_STEP(T) { const glow_v16 x = GLOW_SPLAT16(s##T[c]); GLOW_FMA16(c##T##a, x, w0); GLOW_FMA16(c##T##b, x, w1); }
            GLOW_EACH_TP(GLOW_STEP)
#undef GLOW_STEP
          } else {
#define GLOW_STEP(T) { const glow_v16 x = GLOW_SPLAT16(s##T[c]); GLOW_FMA16(c##T##a, x, w0); }
            GLOW_EACH_TP(GLOW_STEP)
#undef GLOW_STEP
          }
        }
#define GLOW_STORE(T) memcpy(acc[T], &c##T##a, 64); memcpy(acc[T] + GLOW_PW, &c##T##b, 64);
        GLOW_EACH_TP(GLOW_STORE)
#undef GLOW_STORE
        continue;
      }
#elif defined(GLOW_VEC)
      if (all) {
#define GLOW_LOAD(T) glow_v8 c##T##0, c##T##1; const float *s##T = sp[T]; \
  memcpy(&c##T##0, acc[T], 32); memcpy(&c##T##1, acc[T] + 8, 32);
        GLOW_EACH_TP(GLOW_LOAD)
#undef GLOW_LOAD
        for (size_t c = 0; c < cg; c++) {
          glow_v8 w0, w1, x;
          memcpy(&w0, wp + c * GLOW_PW, 32);
          memcpy(&w1, wp + c * GLOW_PW + 8, 32);
#define GLOW_STEP(T) x = GLOW_SPLAT8(s##T[c]); GLOW_FMA8(c##T##0, x, w0); GLOW_FMA8(c##T##1, x, w1);
          GLOW_EACH_TP(GLOW_STEP)
#undef GLOW_STEP
        }
#define GLOW_STORE(T) memcpy(acc[T], &c##T##0, 32); memcpy(acc[T] + 8, &c##T##1, 32);
        GLOW_EACH_TP(GLOW_STORE)
#undef GLOW_STORE
        continue;
      }
#endif
      for (size_t i = 0; i < t->np; i++) {
        if (!sp[i]) continue;
        for (size_t q = 0; q < t->np2; q++) {
          const float *wq = wp + q * kk * GLOW_PW;
          float *ac = acc[i] + q * GLOW_PW;
          for (size_t c = 0; c < cg; c++) {
            const float s = sp[i][c * p->s_c];
            for (size_t l = 0; l < GLOW_PW; l++) ac[l] = fmaf(s, wq[c * GLOW_PW + l], ac[l]);
          }
        }
      }
    }
}

/* Bias, residual and activation of the tile's stored pixels. */
static void glow_conv_tile_store(const glow_tile_t *t, float acc[][2 * GLOW_PW]) {
  const glow_conv_args *q = t->q;
  const glow_conv_t *p = q->p;
  for (size_t i = 0; i < t->np; i++) {
    float *d = glow_tile_dst(t, i);
    const float *r = q->res ? q->res + (d - q->dst) : 0;
    glow_store_row(d, p->d_c, acc[i], q->bias + t->o0, r, t->lanes, p->act, p->a0, p->a1);
    glow_tile_prefetch(d, r, p);
  }
}

/* One tile: the register path where it applies, else the window path. */
static void glow_conv_tile(glow_tile_t *t) {
  float acc[GLOW_TP][2 * GLOW_PW];
  int done = 0;
#ifdef GLOW_VEC16
  /* 0: not applicable; 1: results in acc; 2: results stored. */
  done = glow_conv_tile_regs(t, acc);
  if (done == 2) return;
#endif
  if (!done) {
    memset(acc, 0, sizeof acc);
    glow_conv_tile_window(t, acc);
  }
  glow_conv_tile_store(t, acc);
}

#ifndef GLOW_VEC16
/* Without AVX-512 every tile has at most two panels. */
static inline int glow_conv_quad_ok(const glow_conv_args *q, size_t ocg, size_t pb, size_t pe) {
  (void)q, (void)ocg, (void)pb, (void)pe;
  return 0;
}
static inline void glow_conv_tile_four(glow_tile_t *t) { glow_conv_tile(t); }
#endif

/* The outputs [lo, hi) of n along one axis whose window (first input o * s -
 * pad, extent + 1 positions) lies inside the input's `in` positions. */
static void glow_inside(size_t in, size_t n, size_t s, size_t pad, size_t extent, size_t *lo,
                        size_t *hi) {
  *lo = (pad + s - 1) / s;
  *hi = in + pad < extent + 1 ? 0 : glow_min(n, (in + pad - extent - 1) / s + 1);
  if (*hi < *lo) *hi = *lo;
}

/* The share of L2 a packed filter may take while pixels sweep it. */
#define GLOW_FILTER_CACHE ((size_t)256 << 10)

#ifdef GLOW_VEC16
/* At most this many products per chunk (a quad's chunk of filter: 32 KiB, in
 * L1), and pixel tiles per group, for glow_conv_chunked. */
#define GLOW_KCHUNK 128
#define GLOW_KGROUP 12
/* Whether a group's convolution takes glow_conv_chunked: every panel in
 * quads, and a quad's filter larger than one chunk. */
static inline int glow_conv_chunked_ok(const glow_conv_args *q, size_t ocg, size_t kk) {
  const glow_conv_t *p = q->p;
  return q->bias && p->d_c == 1 && p->s_c == 1 && ocg % (4 * GLOW_PW) == 0 &&
         kk > GLOW_KCHUNK + GLOW_KCHUNK / 4 && p->kh * p->kw <= GLOW_KMAX;
}
/* Quads of panels whose filter outgrows L1: each output's products in
 * chunks of GLOW_KCHUNK, a quad's chunk of filter (in L1) swept over a group
 * of GLOW_KGROUP pixel tiles before the next chunk, the sums between chunks
 * in acc. Each output's fmaf chain is the one of the whole tile; it only
 * pauses between chunks. Work units are (quad, group), quad-major, so a
 * quad's filter stays in L2 while its groups sweep it. base holds the
 * group's per-convolution fields. */
static void glow_conv_chunked(const glow_tile_t *base, const float *gpk, size_t g, size_t ocg,
                              size_t part, size_t parts) {
  const glow_conv_t *p = base->q->p;
  const size_t kk = base->kk, npix = p->oh * p->ow, quads = ocg / (4 * GLOW_PW);
  /* Chunks of equal length. */
  const size_t chunks = (kk + GLOW_KCHUNK - 1) / GLOW_KCHUNK, chunk = (kk + chunks - 1) / chunks;
  const size_t tiles = (npix + GLOW_TP - 1) / GLOW_TP;
  /* Groups of equal size: a short last group would stream the quad's
   * filter through L1 again for a few pixels. */
  const size_t groups = (tiles + GLOW_KGROUP - 1) / GLOW_KGROUP;
  const size_t per = (tiles + groups - 1) / groups;
  glow_tile_t ts[GLOW_KGROUP];
  float acc[GLOW_KGROUP][GLOW_TP * 4 * GLOW_PW] __attribute__((aligned(64)));
  size_t u0, u1;
  glow_range(quads * groups, part, parts, &u0, &u1);
  for (size_t u = u0; u < u1; u++) {
    const size_t qd = u / groups, gr = u % groups;
    size_t nt = 0;
    for (; nt < per && (gr * per + nt) * GLOW_TP < npix; nt++) {
      const size_t pix = (gr * per + nt) * GLOW_TP;
      glow_tile_t *t = &ts[nt];
      memcpy(t, base, offsetof(glow_tile_t, spt));
      t->panel = gpk + qd * 4 * kk * GLOW_PW;
      t->o0 = g * ocg + qd * 4 * GLOW_PW;
      t->np = glow_min(GLOW_TP, npix - pix);
      t->np2 = 4;
      t->lanes = 4 * GLOW_PW;
      t->part = 0;
      glow_tile_coords(p->ow, pix, t->oh, t->ow);
      t->taps = glow_conv_tile_taps(t);
      /* A window position to skip: the whole tile now, by the window path. */
      if (!t->taps) glow_conv_tile_four(t);
      t->part = acc[nt];
    }
    for (size_t k0 = 0; k0 < kk; k0 += chunk)
      for (size_t i = 0; i < nt; i++) {
        glow_tile_t *t = &ts[i];
        if (!t->taps) continue;
        t->k0 = k0;
        t->k1 = glow_min(kk, k0 + chunk);
        switch (t->np) {
#define GLOW_QUAD_CASE(T) case T + 1: glow_conv_tile_quad##T(t); break;
          GLOW_EACH_TP(GLOW_QUAD_CASE)
#undef GLOW_QUAD_CASE
        default: break;
        }
      }
  }
}
#endif

static void glow_conv_part(const void *args, size_t part, size_t parts) {
  const glow_conv_args *q = args;
  const glow_conv_t *p = q->p;
  const size_t cg = p->c / p->group, ocg = p->oc / p->group;
  const size_t panels = (ocg + GLOW_PW - 1) / GLOW_PW, kk = p->kh * p->kw * cg;
  const size_t npix = p->oh * p->ow, tiles = (npix + GLOW_TP - 1) / GLOW_TP;
#ifdef GLOW_VEC16
  const size_t step = 2;
#else
  const size_t step = 1;
#endif
  const int pixels_outer = panels * kk * GLOW_PW * sizeof(float) <= GLOW_FILTER_CACHE;
  size_t t0, t1;
  glow_range(tiles, part, parts, &t0, &t1);
  for (size_t n = 0; n < p->n; n++)
    for (size_t g = 0; g < p->group; g++) {
      glow_tile_t t;
      const float *gpk = q->pk + g * panels * kk * GLOW_PW;
      t.q = q;
      t.part = 0;
      t.sbase = q->src + n * p->s_n + g * cg * p->s_c;
      t.n = n;
      t.cg = cg;
      t.kk = kk;
      /* A window row is one run of kw * cg products where its (kw, c)
       * elements are contiguous (one column, or dilation 1 over dense NHWC). */
      t.rows = p->kw == 1 || (p->dw == 1 && p->s_w == cg);
      glow_inside(p->h, p->oh, p->sh, p->pt, (p->kh - 1) * p->dh, &t.ih_lo, &t.ih_hi);
      glow_inside(p->w, p->ow, p->sw, p->pl, (p->kw - 1) * p->dw, &t.iw_lo, &t.iw_hi);
#ifdef GLOW_VEC16
      if (glow_conv_chunked_ok(q, ocg, kk)) {
        glow_conv_chunked(&t, gpk, g, ocg, part, parts);
        continue;
      }
#endif
      /* Tile (pix, panels pb ..) of the group, ending before panel PE; W is
       * set to its number of panels. */
#define GLOW_TILE(PIX, PB, PE, W)                                           \
  t.panel = gpk + (PB) * kk * GLOW_PW;                                      \
  t.o0 = g * ocg + (PB) * GLOW_PW;                                          \
  t.np = glow_min(GLOW_TP, npix - (PIX));                                   \
  if (glow_conv_quad_ok(q, ocg, PB, PE)) {                                  \
    W = 4;                                                                  \
    t.np2 = 4;                                                              \
    t.lanes = 4 * GLOW_PW;                                                  \
    glow_conv_tile_four(&t);                                                \
  } else {                                                                  \
    W = glow_min(step, (PE) - (PB));                                        \
    t.np2 = W;                                                              \
    t.lanes = glow_min(GLOW_PW * t.np2, ocg - (PB) * GLOW_PW);              \
    glow_conv_tile(&t);                                                     \
  }
      if (pixels_outer) {
        for (size_t pix = t0 * GLOW_TP; pix < t1 * GLOW_TP && pix < npix; pix += GLOW_TP) {
          glow_tile_coords(p->ow, pix, t.oh, t.ow);
          t.taps = -1;
          for (size_t pb = 0, w = 0; pb < panels; pb += w) {
            GLOW_TILE(pix, pb, panels, w)
          }
        }
      } else {
        /* A filter too large for the cache is split by panel pairs instead,
         * each thread its own share, swept in blocks that fit the cache: each
         * block over every pixel, a pixel tile's coordinates and pointer
         * table shared by the block's pairs. */
        const size_t pairs = (panels + step - 1) / step;
        const size_t block = glow_max(1, GLOW_FILTER_CACHE / (step * kk * GLOW_PW * sizeof(float)));
        size_t q0, q1;
        glow_range(pairs, part, parts, &q0, &q1);
        for (size_t b0 = q0; b0 < q1; b0 += block) {
          const size_t b1 = glow_min(q1, b0 + block);
          for (size_t pix = 0; pix < npix; pix += GLOW_TP) {
            glow_tile_coords(p->ow, pix, t.oh, t.ow);
            t.taps = -1;
            const size_t pe = glow_min(b1 * step, panels);
            for (size_t pb = b0 * step, w = 0; pb < pe; pb += w) {
              GLOW_TILE(pix, pb, pe, w)
            }
          }
        }
      }
#undef GLOW_TILE
    }
}

/* The packed convolution. A group's whole filter that fits in L2 stays
 * there while tiles of pixels sweep it (each input tile read once); a larger
 * one is swept panel by panel, each panel over the part's pixels. */
static void glow_conv_f32(float *dst, const float *src, const float *pk, const float *bias,
                          const float *res, const glow_conv_t *p, int finite) {
  const glow_conv_args q = {dst, src, pk, bias, res, p, glow_zeros_ok(finite, bias, p->oc)};
  glow_parallel(glow_conv_part, &q);
}

/*@end*/

/*@depthwise*/
/* Depthwise convolution (one input and one output channel per group) with
 * the filter packed as [kh][kw][c]: tiles of GLOW_TP output pixels x 16
 * channels in registers, vectorised across channels. Padding reads glow_zero
 * where glow_zeros_ok allows it (see glow_conv_f32); otherwise, and for the
 * channels past the last whole block, the reference loop skips it. */
#define GLOW_DW_MAXK 64
static void glow_depthwise_part(const void *args, size_t part, size_t parts) {
  const glow_conv_args *q = args;
  const glow_conv_t *p = q->p;
  float *dst = q->dst;
  const float *pk = q->pk, *bias = q->bias, *res = q->res;
  const size_t npix = p->oh * p->ow, C = p->c, kk = p->kh * p->kw;
  const size_t tiles = (npix + GLOW_TP - 1) / GLOW_TP;
  const int vec = q->zeros && p->s_c == 1 && kk <= GLOW_DW_MAXK;
  size_t t0, t1;
  glow_range(tiles, part, parts, &t0, &t1);
  for (size_t n = 0; n < p->n; n++) {
    const float *sn = q->src + n * p->s_n;
    for (size_t pix = t0 * GLOW_TP; pix < t1 * GLOW_TP && pix < npix; pix += GLOW_TP) {
      const size_t np = glow_min(GLOW_TP, npix - pix);
      size_t oh[GLOW_TP], ow[GLOW_TP];
      size_t c0 = 0;
      glow_tile_coords(p->ow, pix, oh, ow);
#ifdef GLOW_VEC
      if (vec) {
        const float *sp[GLOW_DW_MAXK][GLOW_TP];
        /* A tile whose windows are all inside the input needs no bounds tests. */
        int inside = np == GLOW_TP;
        long long ih0[GLOW_TP], iw0[GLOW_TP];
        for (size_t t = 0; t < GLOW_TP; t++) {
          ih0[t] = (long long)(oh[t] * p->sh) - (long long)p->pt;
          iw0[t] = (long long)(ow[t] * p->sw) - (long long)p->pl;
          inside = inside && ih0[t] >= 0 && iw0[t] >= 0 &&
                   ih0[t] + (long long)((p->kh - 1) * p->dh) < (long long)p->h &&
                   iw0[t] + (long long)((p->kw - 1) * p->dw) < (long long)p->w;
        }
        for (size_t a = 0; a < p->kh; a++)
          for (size_t b = 0; b < p->kw; b++)
            for (size_t t = 0; t < GLOW_TP; t++) {
              long long ih = ih0[t] + (long long)(a * p->dh);
              long long iw = iw0[t] + (long long)(b * p->dw);
              if (!inside &&
                  (t >= np || ih < 0 || ih >= (long long)p->h || iw < 0 || iw >= (long long)p->w))
                sp[a * p->kw + b][t] = glow_zero;
              else
                sp[a * p->kw + b][t] = sn + (size_t)ih * p->s_h + (size_t)iw * p->s_w;
            }
#ifdef GLOW_VEC16
        /* 32 channels at a time in two 16-lane vectors: 2 * GLOW_TP independent sums. */
        for (; c0 + 32 <= C; c0 += 32) {
          float acc[GLOW_TP][32];
          const glow_v16 z16 = {0};
#define GLOW_ACC(T) glow_v16 y##T##a = z16, y##T##b = z16;
          GLOW_EACH_TP(GLOW_ACC)
#undef GLOW_ACC
          for (size_t ab = 0; ab < kk; ab++) {
            glow_v16 wa, wb, v;
            memcpy(&wa, pk + ab * C + c0, 64);
            memcpy(&wb, pk + ab * C + c0 + 16, 64);
#define GLOW_STEP(T) memcpy(&v, sp[ab][T] + c0, 64); GLOW_FMA16(y##T##a, v, wa); \
  memcpy(&v, sp[ab][T] + c0 + 16, 64); GLOW_FMA16(y##T##b, v, wb);
            GLOW_EACH_TP(GLOW_STEP)
#undef GLOW_STEP
          }
#define GLOW_OUT(T) memcpy(acc[T], &y##T##a, 64); memcpy(acc[T] + 16, &y##T##b, 64);
          GLOW_EACH_TP(GLOW_OUT)
#undef GLOW_OUT
          for (size_t t = 0; t < np; t++) {
            float *d = dst + n * p->d_n + oh[t] * p->d_h + ow[t] * p->d_w + c0 * p->d_c;
            glow_store_row(d, p->d_c, acc[t], bias + c0, res ? res + (d - dst) : 0, 32, p->act,
                           p->a0, p->a1);
          }
        }
#endif
        for (; c0 + 16 <= C; c0 += 16) {
          float acc[GLOW_TP][16];
#define GLOW_ACC(T) glow_v8 x##T##a = {0}, x##T##b = {0};
          GLOW_EACH_TP(GLOW_ACC)
#undef GLOW_ACC
          for (size_t ab = 0; ab < kk; ab++) {
            glow_v8 wa, wb, v;
            memcpy(&wa, pk + ab * C + c0, 32);
            memcpy(&wb, pk + ab * C + c0 + 8, 32);
#define GLOW_STEP(T) memcpy(&v, sp[ab][T] + c0, 32); GLOW_FMA8(x##T##a, v, wa); \
  memcpy(&v, sp[ab][T] + c0 + 8, 32); GLOW_FMA8(x##T##b, v, wb);
            GLOW_EACH_TP(GLOW_STEP)
#undef GLOW_STEP
          }
#define GLOW_OUT(T) memcpy(acc[T], &x##T##a, 32); memcpy(acc[T] + 8, &x##T##b, 32);
          GLOW_EACH_TP(GLOW_OUT)
#undef GLOW_OUT
          for (size_t t = 0; t < np; t++) {
            float *d = dst + n * p->d_n + oh[t] * p->d_h + ow[t] * p->d_w + c0 * p->d_c;
            glow_store_row(d, p->d_c, acc[t], bias + c0, res ? res + (d - dst) : 0, 16, p->act,
                           p->a0, p->a1);
          }
        }
      }
#endif
      /* The reference order for what the vector path did not cover. */
      for (size_t t = 0; t < np && c0 < C; t++) {
        float acc[64];
        for (size_t cb0 = c0; cb0 < C; cb0 += 64) {
          const size_t cb = glow_min(64, C - cb0);
          for (size_t l = 0; l < cb; l++) acc[l] = 0.0f;
          for (size_t a = 0; a < p->kh; a++) {
            long long ih = (long long)(oh[t] * p->sh + a * p->dh) - (long long)p->pt;
            if (ih < 0 || ih >= (long long)p->h) continue;
            for (size_t b = 0; b < p->kw; b++) {
              long long iw = (long long)(ow[t] * p->sw + b * p->dw) - (long long)p->pl;
              if (iw < 0 || iw >= (long long)p->w) continue;
              const float *sv = sn + (size_t)ih * p->s_h + (size_t)iw * p->s_w + cb0 * p->s_c;
              const float *w = pk + (a * p->kw + b) * C + cb0;
              for (size_t l = 0; l < cb; l++) acc[l] = fmaf(sv[l * p->s_c], w[l], acc[l]);
            }
          }
          float *d = dst + n * p->d_n + oh[t] * p->d_h + ow[t] * p->d_w + cb0 * p->d_c;
          glow_store_row(d, p->d_c, acc, bias + cb0, res ? res + (d - dst) : 0, cb, p->act,
                         p->a0, p->a1);
        }
      }
    }
  }
}

#ifdef GLOW_VEC
/* Three-wide windows (kw = 3, no horizontal dilation) at stride 1 or 2 over
 * tiles of GLOW_TP output pixels of one output row: pixel t's tap (a, b)
 * reads column t * SW + b of window row a, so neighbouring pixels share
 * their columns and each is loaded once per row a (the compiler merges the
 * equal loads: nothing is stored in between). Each pixel still takes its
 * taps in the order (a, b). cols[a * GLOW_DW_NC(SW) + j] is that column's
 * input, or glow_zero for padding and past the row's end. */
#define GLOW_DW_NC(SW) ((GLOW_TP - 1) * (SW) + 3)
#define GLOW_DEFINE_DW3(NAME, V, FMA, SW)                                                   \
  static inline void NAME(V *out, const float *const *cols, const float *pk, size_t C,      \
                          size_t kh, size_t c0) {                                           \
    const V z = {0};                                                                         \
    GLOW_DW3_ACC(V)                                                                          \
    for (size_t a = 0; a < kh; a++) {                                                        \
      const float *const *ca = cols + a * GLOW_DW_NC(SW);                                    \
      V w, x;                                                                                \
      GLOW_DW3_TAP(FMA, SW, 0) GLOW_DW3_TAP(FMA, SW, 1) GLOW_DW3_TAP(FMA, SW, 2)             \
    }                                                                                        \
    GLOW_EACH_TP(GLOW_DW3_OUT)                                                               \
  }
#define GLOW_DW3_ACC1(T, V) V y##T = z;
#define GLOW_DW3_ACC(V) GLOW_EACH_TP_ARGS(GLOW_DW3_ACC1, V)
#define GLOW_DW3_STEP(T, FMA, SW, B) memcpy(&x, ca[(T) * (SW) + (B)] + c0, sizeof x); FMA(y##T, x, w);
#define GLOW_DW3_TAP(FMA, SW, B)                                                              \
  memcpy(&w, pk + (a * 3 + (B)) * C + c0, sizeof w);                                         \
  GLOW_EACH_TP_ARGS(GLOW_DW3_STEP, FMA, SW, B)
#define GLOW_DW3_OUT(T) out[T] = y##T;
GLOW_DEFINE_DW3(glow_dw3s1_8, glow_v8, GLOW_FMA8, 1)
GLOW_DEFINE_DW3(glow_dw3s2_8, glow_v8, GLOW_FMA8, 2)
#ifdef GLOW_VEC16
GLOW_DEFINE_DW3(glow_dw3s1_16, glow_v16, GLOW_FMA16, 1)
GLOW_DEFINE_DW3(glow_dw3s2_16, glow_v16, GLOW_FMA16, 2)
#endif
#undef GLOW_DEFINE_DW3

/* The depthwise convolution by row tiles for glow_dw3*: tiles of GLOW_TP
 * pixels never cross an output row. */
static void glow_depthwise3_part(const void *args, size_t part, size_t parts) {
  const glow_conv_args *q = args;
  const glow_conv_t *p = q->p;
  float *dst = q->dst;
  const float *pk = q->pk, *bias = q->bias, *res = q->res;
  const size_t C = p->c, per_row = (p->ow + GLOW_TP - 1) / GLOW_TP, sw = p->sw;
  const size_t nc = GLOW_DW_NC(sw);
  size_t t0, t1;
  glow_range(p->oh * per_row, part, parts, &t0, &t1);
  for (size_t n = 0; n < p->n; n++) {
    const float *sn = q->src + n * p->s_n;
    for (size_t tile = t0; tile < t1; tile++) {
      const size_t oh = tile / per_row, ow0 = (tile % per_row) * GLOW_TP;
      const size_t np = glow_min(GLOW_TP, p->ow - ow0);
      const float *cols[GLOW_DW_MAXK * GLOW_DW_NC(2)];
      for (size_t a = 0; a < p->kh; a++) {
        const long long ih = (long long)(oh * p->sh + a * p->dh) - (long long)p->pt;
        for (size_t j = 0; j < nc; j++) {
          const long long iw = (long long)(ow0 * sw + j) - (long long)p->pl;
          cols[a * nc + j] = ih < 0 || ih >= (long long)p->h || iw < 0 || iw >= (long long)p->w
                                 ? glow_zero
                                 : sn + (size_t)ih * p->s_h + (size_t)iw * p->s_w;
        }
      }
      float *d0 = dst + n * p->d_n + oh * p->d_h + ow0 * p->d_w;
      size_t c0 = 0;
#ifdef GLOW_VEC16
      for (; c0 + 16 <= C; c0 += 16) {
        glow_v16 y[GLOW_TP];
        (sw == 1 ? glow_dw3s1_16 : glow_dw3s2_16)(y, cols, pk, C, p->kh, c0);
        for (size_t t = 0; t < np; t++) {
          float *d = d0 + t * p->d_w + c0;
          glow_store16(d, (const float *)&y[t], bias + c0, res ? res + (d - dst) : 0, p->act,
                       p->a0, p->a1);
        }
      }
#endif
      for (; c0 + 8 <= C; c0 += 8) {
        glow_v8 y[GLOW_TP];
        (sw == 1 ? glow_dw3s1_8 : glow_dw3s2_8)(y, cols, pk, C, p->kh, c0);
        for (size_t t = 0; t < np; t++) {
          float *d = d0 + t * p->d_w + c0;
          glow_store8(d, (const float *)&y[t], bias + c0, res ? res + (d - dst) : 0, p->act,
                      p->a0, p->a1);
        }
      }
      /* The reference order for the channels past the last vector. */
      for (size_t t = 0; t < np && c0 < C; t++) {
        float acc[8];
        const size_t cb = C - c0;
        for (size_t l = 0; l < cb; l++) acc[l] = 0.0f;
        for (size_t a = 0; a < p->kh; a++)
          for (size_t b = 0; b < 3; b++) {
            const float *sv = cols[a * nc + t * sw + b];
            if (sv == glow_zero) continue;
            const float *w = pk + (a * 3 + b) * C + c0;
            for (size_t l = 0; l < cb; l++) acc[l] = fmaf(sv[c0 + l], w[l], acc[l]);
          }
        float *d = d0 + t * p->d_w + c0;
        glow_store_row(d, 1, acc, bias + c0, res ? res + (d - dst) : 0, cb, p->act, p->a0,
                       p->a1);
      }
    }
  }
}
#endif

static void glow_depthwise_f32(float *dst, const float *src, const float *pk, const float *bias,
                               const float *res, const glow_conv_t *p, int finite) {
  const glow_conv_args q = {dst, src, pk, bias, res, p, glow_zeros_ok(finite, bias, p->oc)};
#ifdef GLOW_VEC
  /* Row tiles need padding that may read zeros, channels contiguous in both
   * tensors, and at most GLOW_DW_MAXK window rows. */
  if (q.zeros && p->kw == 3 && p->dw == 1 && (p->sw == 1 || p->sw == 2) && p->s_c == 1 &&
      p->d_c == 1 && p->kh <= GLOW_DW_MAXK) {
    glow_parallel(glow_depthwise3_part, &q);
    return;
  }
#endif
  glow_parallel(glow_depthwise_part, &q);
}

/*@end*/

/*@convpack*/
/* A run-time filter (strides fs over oc, kh, kw, cg) packed as the emitter
 * packs a constant one (PackKind::ConvPanels): [group][panel][kh][kw][cg]
 * [GLOW_PW], zero past the group's channels. Returns whether every value is
 * finite. */
static int glow_conv_pack_f32(float *out, const float *f, const glow_conv_t *p,
                              const size_t *fs) {
  const size_t cg = p->c / p->group, ocg = p->oc / p->group;
  const size_t panels = (ocg + GLOW_PW - 1) / GLOW_PW;
  int finite = 1;
  float *blk = out;
  /* Each tap's block of cg x GLOW_PW stays in L1 while the panel's rows are
   * read along their channels (the filter's channels contiguous in NHWC). */
  for (size_t g = 0; g < p->group; g++)
    for (size_t pb = 0; pb < panels; pb++)
      for (size_t a = 0; a < p->kh; a++)
        for (size_t b = 0; b < p->kw; b++, blk += cg * GLOW_PW)
          for (size_t l = 0; l < GLOW_PW; l++) {
            const size_t o = pb * GLOW_PW + l;
            if (o >= ocg) {
              for (size_t c = 0; c < cg; c++) blk[c * GLOW_PW + l] = 0.0f;
              continue;
            }
            const float *row = f + (g * ocg + o) * fs[0] + a * fs[1] + b * fs[2];
            int ok = 1;
            for (size_t c = 0; c < cg; c++) {
              const float v = row[c * fs[3]];
              ok &= isfinite(v) != 0;
              blk[c * GLOW_PW + l] = v;
            }
            finite &= ok;
          }
  return finite;
}
/*@end*/

/*@dwpack*/
/* A run-time depthwise filter packed as PackKind::Depthwise: [kh][kw][c].
 * Returns whether every value is finite. */
static int glow_depthwise_pack_f32(float *out, const float *f, const glow_conv_t *p,
                                   const size_t *fs) {
  int finite = 1;
  size_t at = 0;
  for (size_t a = 0; a < p->kh; a++)
    for (size_t b = 0; b < p->kw; b++)
      for (size_t o = 0; o < p->oc; o++, at++) {
        const float v = f[o * fs[0] + a * fs[1] + b * fs[2]];
        finite &= isfinite(v) != 0;
        out[at] = v;
      }
  return finite;
}
/*@end*/

/*@convref*/
/* Convolution with the filter as stored (a runtime filter): the reference
 * loop nest; fs = filter strides over (oc, kh, kw, c). */
typedef struct {
  glow_conv_args c;
  const size_t *fs;
} glow_convref_args;

static void glow_conv_ref_part(const void *args, size_t part, size_t parts) {
  const glow_convref_args *q = args;
  const glow_conv_t *p = q->c.p;
  float *dst = q->c.dst;
  const float *src = q->c.src, *filt = q->c.pk, *bias = q->c.bias, *res = q->c.res;
  const size_t *fs = q->fs;
  const size_t cg = p->c / p->group, ocg = p->oc / p->group;
  size_t p0, p1;
  glow_range(p->oh * p->ow, part, parts, &p0, &p1);
  for (size_t n = 0; n < p->n; n++)
    for (size_t pix = p0; pix < p1; pix++)
      for (size_t o = 0; o < p->oc; o++) {
        const size_t g = o / ocg, oh = pix / p->ow, ow = pix % p->ow;
        float sum = 0.0f;
        for (size_t a = 0; a < p->kh; a++) {
          long long ih = (long long)(oh * p->sh + a * p->dh) - (long long)p->pt;
          if (ih < 0 || ih >= (long long)p->h) continue;
          for (size_t b = 0; b < p->kw; b++) {
            long long iw = (long long)(ow * p->sw + b * p->dw) - (long long)p->pl;
            if (iw < 0 || iw >= (long long)p->w) continue;
            for (size_t c = 0; c < cg; c++)
              sum = fmaf(src[n * p->s_n + (g * cg + c) * p->s_c + (size_t)ih * p->s_h +
                             (size_t)iw * p->s_w],
                         filt[o * fs[0] + a * fs[1] + b * fs[2] + c * fs[3]], sum);
          }
        }
        glow_conv_store(dst, res, p, n, o, pix, sum, bias);
      }
}

static void glow_conv_ref_f32(float *dst, const float *src, const float *filt, const float *bias,
                              const float *res, const glow_conv_t *p, const size_t fs[4]) {
  const glow_convref_args q = {{dst, src, filt, bias, res, p, 0}, fs};
  glow_parallel(glow_conv_ref_part, &q);
}
/*@end*/

/*@gemm*/
/* C[i][j] = act(sum_k A[i][k] * B[k][j] + bias[j]) over `batches` matrices.
 * B is either packed at emit time into panels [j / GLOW_PW][k][GLOW_PW] (zero
 * lanes past n) or read in place with row stride ldb; tiles of GLOW_TP rows x
 * GLOW_PW columns. */
typedef struct {
  size_t batches, m, n, k, lda, ldb, ldc, a_batch, b_batch, c_batch;
  int packed, act;
  float a0, a1;
} glow_gemm_t;

typedef struct {
  float *C;
  const float *A, *B, *bias;
  const glow_gemm_t *p;
} glow_gemm_args;

#ifdef GLOW_VEC
/* Row `row` of a short matrix (fewer rows than a tile) against W packed
 * panels from `panel` at once (W a constant once inlined): with one panel,
 * each sum's fmaf chain waits on its last FMA, and a fully connected layer of
 * batch 1 ran at the FMA latency with its weights' stream stalled behind it.
 * Each sum is still one chain in k order. */
static inline __attribute__((always_inline)) void glow_gemm_short_h(
    const glow_gemm_args *q, const float *Ab, const float *panel, float *Cb, size_t j0,
    size_t row, const size_t W) {
  const glow_gemm_t *p = q->p;
  const size_t ps = p->k * GLOW_PW;
  const float *a = Ab + row * p->lda;
  glow_v8 c[8] = {{0}};
  for (size_t kk = 0; kk < p->k; kk++) {
    const glow_v8 x = GLOW_SPLAT8(a[kk]);
    for (size_t w = 0; w < W; w++) {
      const float *pw = panel + w * ps + kk * GLOW_PW;
      glow_v8 w0, w1;
      /* The weights are read once: ask for them well ahead. */
      __builtin_prefetch(pw + 32 * GLOW_PW);
      memcpy(&w0, pw, 32);
      memcpy(&w1, pw + 8, 32);
      GLOW_FMA8(c[2 * w], x, w0);
      GLOW_FMA8(c[2 * w + 1], x, w1);
    }
  }
  for (size_t w = 0; w < W; w++) {
    const size_t jw = j0 + w * GLOW_PW, lanes = glow_min(GLOW_PW, p->n - jw);
    float acc[GLOW_PW];
    memcpy(acc, &c[2 * w], 32);
    memcpy(acc + 8, &c[2 * w + 1], 32);
    glow_store_row(Cb + row * p->ldc + jw, 1, acc, q->bias ? q->bias + jw : 0, 0, lanes, p->act,
                   p->a0, p->a1);
  }
}
#define GLOW_SHORT_W(W)                                                                     \
  static __attribute__((noinline)) void glow_gemm_short##W(                                 \
      const glow_gemm_args *q, const float *Ab, const float *panel, float *Cb, size_t j0,   \
      size_t row) {                                                                         \
    glow_gemm_short_h(q, Ab, panel, Cb, j0, row, W);                                        \
  }
GLOW_SHORT_W(1)
GLOW_SHORT_W(2)
GLOW_SHORT_W(3)
GLOW_SHORT_W(4)
#undef GLOW_SHORT_W
#endif

static void glow_gemm_part(const void *args, size_t part, size_t parts) {
  const glow_gemm_args *q = args;
  const glow_gemm_t *p = q->p;
  const float *bias = q->bias;
  const size_t panels = (p->n + GLOW_PW - 1) / GLOW_PW;
  size_t u0, u1;
  glow_range(p->batches * panels, part, parts, &u0, &u1);
  for (size_t u = u0; u < u1; u++) {
    const size_t bt = u / panels, pb = u % panels;
    const float *Ab = q->A + bt * p->a_batch, *Bb = q->B + bt * p->b_batch;
    float *Cb = q->C + bt * p->c_batch;
#ifdef GLOW_VEC
    if (p->packed && p->m < GLOW_TP) {
      /* A short matrix: up to four of the part's panels of this batch at once. */
      size_t w = 1;
      while (w < 4 && u + w < u1 && (u + w) / panels == bt) w++;
      const float *panel = Bb + pb * p->k * GLOW_PW;
      for (size_t row = 0; row < p->m; row++) {
        switch (w) {
        case 1: glow_gemm_short1(q, Ab, panel, Cb, pb * GLOW_PW, row); break;
        case 2: glow_gemm_short2(q, Ab, panel, Cb, pb * GLOW_PW, row); break;
        case 3: glow_gemm_short3(q, Ab, panel, Cb, pb * GLOW_PW, row); break;
        default: glow_gemm_short4(q, Ab, panel, Cb, pb * GLOW_PW, row); break;
        }
      }
      u += w - 1;
      continue;
    }
#endif
    const size_t j0 = pb * GLOW_PW, lanes = glow_min(GLOW_PW, p->n - j0);
    const float *panel = p->packed ? Bb + pb * p->k * GLOW_PW : Bb + j0;
    const size_t pstride = p->packed ? GLOW_PW : p->ldb;
    const int full = p->packed || lanes == GLOW_PW;
    for (size_t i0 = 0; i0 < p->m; i0 += GLOW_TP) {
      const size_t np = glow_min(GLOW_TP, p->m - i0);
      float acc[GLOW_TP][GLOW_PW];
      memset(acc, 0, sizeof acc);
#ifdef GLOW_VEC
      if (full && np == GLOW_TP) {
        const float *a0 = Ab + i0 * p->lda;
#define GLOW_ACC(T) glow_v8 c##T##0 = {0}, c##T##1 = {0};
        GLOW_EACH_TP(GLOW_ACC)
#undef GLOW_ACC
        for (size_t kk = 0; kk < p->k; kk++) {
          glow_v8 w0, w1, x;
          memcpy(&w0, panel + kk * pstride, 32);
          memcpy(&w1, panel + kk * pstride + 8, 32);
#define GLOW_STEP(T) x = GLOW_SPLAT8(a0[T * p->lda + kk]); GLOW_FMA8(c##T##0, x, w0); \
  GLOW_FMA8(c##T##1, x, w1);
          GLOW_EACH_TP(GLOW_STEP)
#undef GLOW_STEP
        }
#define GLOW_OUT(T) memcpy(acc[T], &c##T##0, 32); memcpy(acc[T] + 8, &c##T##1, 32);
        GLOW_EACH_TP(GLOW_OUT)
#undef GLOW_OUT
      } else if (full) {
        for (size_t t = 0; t < np; t++) {
          glow_v8 x0 = {0}, x1 = {0};
          const float *a0 = Ab + (i0 + t) * p->lda;
          for (size_t kk = 0; kk < p->k; kk++) {
            glow_v8 w0, w1, x = GLOW_SPLAT8(a0[kk]);
            memcpy(&w0, panel + kk * pstride, 32);
            memcpy(&w1, panel + kk * pstride + 8, 32);
            GLOW_FMA8(x0, x, w0);
            GLOW_FMA8(x1, x, w1);
          }
          memcpy(acc[t], &x0, 32);
          memcpy(acc[t] + 8, &x1, 32);
        }
      } else
#endif
      {
        for (size_t t = 0; t < np; t++) {
          const float *a0 = Ab + (i0 + t) * p->lda;
          for (size_t kk = 0; kk < p->k; kk++) {
            const float s = a0[kk];
            for (size_t l = 0; l < lanes; l++)
              acc[t][l] = fmaf(s, panel[kk * pstride + l], acc[t][l]);
          }
        }
      }
      for (size_t t = 0; t < np; t++)
        glow_store_row(Cb + (i0 + t) * p->ldc + j0, 1, acc[t], bias ? bias + j0 : 0, 0, lanes,
                       p->act, p->a0, p->a1);
    }
  }
}

static void glow_gemm_f32(float *C, const float *A, const float *B, const float *bias,
                          const glow_gemm_t *p) {
  const glow_gemm_args q = {C, A, B, bias, p};
  glow_parallel(glow_gemm_part, &q);
}
/*@end*/

/*@move*/
/* Moves element bits between two strided tensors of `rank` dimensions
 * (byte strides; the destination and source start at dst and src), in
 * row-major index order, a contiguous innermost row at a time. */
#define GLOW_MAX_RANK 8
static void glow_move(uint8_t *dst, const uint8_t *src, size_t esize, size_t rank,
                      const size_t *dims, const size_t *ds, const size_t *ss) {
  size_t idx[GLOW_MAX_RANK] = {0};
  size_t total = 1, row, inner;
  for (size_t k = 0; k < rank; k++) total *= dims[k];
  if (total == 0) return;
  if (rank == 0) {
    memmove(dst, src, esize);
    return;
  }
  inner = dims[rank - 1];
  row = ds[rank - 1] == esize && ss[rank - 1] == esize;
  for (size_t done = 0; done < total; done += inner) {
    size_t doff = 0, soff = 0;
    for (size_t k = 0; k + 1 < rank; k++) {
      doff += idx[k] * ds[k];
      soff += idx[k] * ss[k];
    }
    if (row) {
      memmove(dst + doff, src + soff, inner * esize);
    } else {
      for (size_t i = 0; i < inner; i++)
        memmove(dst + doff + i * ds[rank - 1], src + soff + i * ss[rank - 1], esize);
    }
    for (size_t k = rank - 1; k-- > 0;) {
      if (++idx[k] < dims[k]) break;
      idx[k] = 0;
    }
  }
}
/*@end*/



/*@batchnorm*/
/* Inference batch normalization over the channel axis of [outer][at][inner]. */
static void glow_batchnorm_f32(float *dst, const float *src, const float *scale, const float *bias,
                               const float *mean, const float *var, size_t outer, size_t at,
                               size_t inner, float eps) {
  for (size_t o = 0; o < outer; o++)
    for (size_t ch = 0; ch < at; ch++) {
      const float inv = 1.0f / sqrtf(var[ch] + eps);
      const float m = mean[ch], s = scale[ch], b = bias[ch];
      const size_t base = o * at * inner + ch * inner;
      for (size_t n = 0; n < inner; n++) dst[base + n] = (src[base + n] - m) * inv * s + b;
    }
}
/*@end*/

/*@fill*/
/* n elements of `esize` bytes set to the bits of `v` (little-endian). */
static void glow_fill(uint8_t *dst, size_t n, size_t esize, uint64_t v) {
  uint8_t e[8];
  for (size_t b = 0; b < esize; b++) e[b] = (uint8_t)(v >> (8 * b));
  for (size_t i = 0; i < n; i++) memcpy(dst + i * esize, e, esize);
}
/*@end*/

/*@qbase*/
#if defined(__AVX2__)
#include <immintrin.h>
#endif
/* Quantized NHWC convolution (docs/quantization.md). The filter is packed at
 * emit time as int16 `w - woff[o]` in [group][block of 16 output channels]
 * [kh][kw][pair of input channels][16][2] (zero past the group's channels);
 * each thread widens the input rows one output row needs to int16 `x - xoff`
 * (zero outside the input) and sums pairs of products into 32-bit lanes
 * (vpmaddwd with AVX2). Every sum is exact modulo 2^32 in any order, so the
 * result equals the reference loop's bit for bit. */
typedef struct {
  size_t n, h, w, c, oh, ow, oc, kh, kw, sh, sw, pt, pl, dh, dw, group;
  int src_signed, dst_signed;
  int64_t xoff, ooff, lo, hi;
  /* Output rows widened at once (glow_qconv); 0 elsewhere. */
  size_t rows;
} glow_qconv_t;

typedef struct {
  void *dst;
  const void *src;
  const int16_t *pk;
  const int64_t *bterm, *qm;
  const int *qs;
  const glow_qconv_t *p;
  /* The filter packed for VNNI (glow_qconv_vnni) and its bias terms, or
   * null when the emitter did not pack one. */
  const int8_t *pk8;
  const int64_t *bterm8;
} glow_qconv_args;

/* AVX-512 VNNI: vpdpbusd sums four u8 x s8 products into each 32-bit lane.
 * Defining GLOW_QVNNI_YMM builds the 256-bit form below instead. */
#if defined(__AVX512VNNI__) && defined(__AVX512BW__) && defined(__AVX512F__) && \
    defined(__AVX2__) && !defined(GLOW_QVNNI_YMM)
#define GLOW_QVNNI 1
#endif
/* The 256-bit form of the byte convolution (16 ymm registers, no AVX-512):
 * AVX-VNNI's vpdpbusd, or AVX-512 VNNI's 256-bit one under GLOW_QVNNI_YMM,
 * which is how machines without AVX-VNNI test it. */
#if defined(__AVX2__) && !defined(GLOW_QVNNI)
#if defined(__AVXVNNI__)
#define GLOW_QVNNI8 1
#define glow_dpbusd8(acc, x, w) _mm256_dpbusd_avx_epi32(acc, x, w)
#elif defined(GLOW_QVNNI_YMM) && defined(__AVX512VNNI__) && defined(__AVX512VL__)
#define GLOW_QVNNI8 1
#define glow_dpbusd8(acc, x, w) _mm256_dpbusd_epi32(acc, x, w)
#endif
#endif
/* Either form: the emitter passes the byte-packed filter (glow_qconv's pk8)
 * where this is defined. */
#if defined(GLOW_QVNNI) || defined(GLOW_QVNNI8)
#define GLOW_VPDPBUSD 1
#endif

#define GLOW_QP 6

/* 64-byte alignment for bands read 64 bytes at a time. */
#if defined(__GNUC__) || defined(__clang__)
#define GLOW_ALIGN64 __attribute__((aligned(64)))
#else
#define GLOW_ALIGN64
#endif

/* Stores one pixel's `lanes` sums of output channels o0.. at `at`. */
static inline void glow_qconv_store(const glow_qconv_args *q, size_t at, size_t o0,
                                    const uint32_t *acc, size_t lanes) {
  const glow_qconv_t *p = q->p;
  for (size_t l = 0; l < lanes; l++) {
    const size_t o = o0 + l;
    const int64_t s = glow_wrap32((int64_t)acc[l] + q->bterm[o]);
    const int64_t v = glow_clamp64(p->ooff + glow_rq(s, q->qm[o], q->qs[o]), p->lo, p->hi);
    if (p->dst_signed)
      ((int8_t *)q->dst)[at + o] = (int8_t)v;
    else
      ((uint8_t *)q->dst)[at + o] = (uint8_t)v;
  }
}

#if defined(__AVX2__)
/* The requantization of 8 output channels in 64-bit lanes: the even and odd
 * channels' products `(acc + bterm) * M`, plus the rounding half and 2^62 so
 * the logical shift floors like the arithmetic one, minus 2^(62 - s). */
typedef struct {
  __m256i bt, m, m_odd, rnd_e, rnd_o, sub_e, sub_o, sh_e, sh_o;
  /* When every shift is at least 32, |rq| < 2^30 fits 32 bits, so the
   * offset minus 2^(62 - s) (add32) and the clamp are applied in 32-bit
   * lanes: the low 32 bits of the 64-bit sums are the same, and the value
   * is exact. `clamp` is 0 when [lo, hi] is the destination's whole range,
   * which the saturating packs of the store clamp to anyway. */
  __m256i add32, lo32, hi32;
  /* When every shift s is at least 33, rq is (high half of the product +
   * 2^(s - 33)) >> (s - 32) in 32 bits: the low half cannot carry into the
   * floor (hi_rnd, hi_sh, off32). */
  __m256i hi_rnd, hi_sh, off32;
  int narrow, high, clamp;
} glow_qrq8;

/* Channels o0 .. o0 + 7 of which the first `lanes` exist (the others get
 * a zero multiplier and are not stored). */
static inline void glow_qrq8_init(glow_qrq8 *r, const glow_qconv_args *q, size_t o0,
                                  size_t lanes) {
  int32_t bt[8], m[8];
  int64_t rnd[8], sub[8], sh[8];
  for (size_t l = 0; l < 8; l++) {
    /* Lanes past the channels read nothing (o0 itself may be past them). */
    const int live = l < lanes;
    const size_t o = o0 + l;
    const int s = live ? q->qs[o] : 0;
    bt[l] = live ? (int32_t)glow_wrap32(q->bterm[o]) : 0;
    m[l] = live ? (int32_t)q->qm[o] : 0;
    rnd[l] = (s ? (int64_t)1 << (s - 1) : 0) + ((int64_t)1 << 62);
    sub[l] = (int64_t)1 << (62 - s);
    sh[l] = s;
  }
  memcpy(&r->bt, bt, 32);
  memcpy(&r->m, m, 32);
  r->m_odd = _mm256_srli_epi64(r->m, 32);
  r->rnd_e = _mm256_setr_epi64x(rnd[0], rnd[2], rnd[4], rnd[6]);
  r->rnd_o = _mm256_setr_epi64x(rnd[1], rnd[3], rnd[5], rnd[7]);
  r->sub_e = _mm256_setr_epi64x(sub[0], sub[2], sub[4], sub[6]);
  r->sub_o = _mm256_setr_epi64x(sub[1], sub[3], sub[5], sub[7]);
  r->sh_e = _mm256_setr_epi64x(sh[0], sh[2], sh[4], sh[6]);
  r->sh_o = _mm256_setr_epi64x(sh[1], sh[3], sh[5], sh[7]);
  const glow_qconv_t *p = q->p;
  int32_t add32[8], hr[8], hs[8];
  r->narrow = 1;
  r->high = 1;
  for (size_t l = 0; l < 8; l++) {
    if (l < lanes && sh[l] < 32) r->narrow = 0;
    if (l < lanes && sh[l] < 33) r->high = 0;
    add32[l] = (int32_t)(uint32_t)((uint64_t)p->ooff - (uint64_t)sub[l]);
    hs[l] = sh[l] >= 33 ? (int32_t)sh[l] - 32 : 1;
    hr[l] = (int32_t)1 << (hs[l] - 1);
  }
  memcpy(&r->add32, add32, 32);
  memcpy(&r->hi_rnd, hr, 32);
  memcpy(&r->hi_sh, hs, 32);
  r->off32 = _mm256_set1_epi32((int32_t)p->ooff);
  r->lo32 = _mm256_set1_epi32((int32_t)p->lo);
  r->hi32 = _mm256_set1_epi32((int32_t)p->hi);
  r->clamp = p->dst_signed ? (p->lo != -128 || p->hi != 127) : (p->lo != 0 || p->hi != 255);
}

static inline __m256i glow_clamp64x4(__m256i v, __m256i lo, __m256i hi) {
  v = _mm256_blendv_epi8(v, lo, _mm256_cmpgt_epi64(lo, v));
  return _mm256_blendv_epi8(v, hi, _mm256_cmpgt_epi64(v, hi));
}

/* clamp(ooff + rq(wrap32(acc + bterm))) of 8 channels, as 8 int32 lanes. */
static inline __m256i glow_qrq8_apply(__m256i acc, const glow_qrq8 *r, __m256i off, __m256i lo,
                                      __m256i hi) {
  const __m256i s = _mm256_add_epi32(acc, r->bt);
  __m256i e = _mm256_mul_epi32(s, r->m);
  __m256i o = _mm256_mul_epi32(_mm256_srli_epi64(s, 32), r->m_odd);
  if (r->high) {
    __m256i v = _mm256_blend_epi32(_mm256_srli_epi64(e, 32), o, 0xAA);
    v = _mm256_add_epi32(_mm256_srav_epi32(_mm256_add_epi32(v, r->hi_rnd), r->hi_sh), r->off32);
    if (r->clamp) v = _mm256_min_epi32(_mm256_max_epi32(v, r->lo32), r->hi32);
    return v;
  }
  if (r->narrow) {
    e = _mm256_srlv_epi64(_mm256_add_epi64(e, r->rnd_e), r->sh_e);
    o = _mm256_srlv_epi64(_mm256_add_epi64(o, r->rnd_o), r->sh_o);
    __m256i v = _mm256_add_epi32(_mm256_blend_epi32(e, _mm256_slli_epi64(o, 32), 0xAA), r->add32);
    if (r->clamp) v = _mm256_min_epi32(_mm256_max_epi32(v, r->lo32), r->hi32);
    return v;
  }
  e = _mm256_sub_epi64(_mm256_srlv_epi64(_mm256_add_epi64(e, r->rnd_e), r->sh_e), r->sub_e);
  o = _mm256_sub_epi64(_mm256_srlv_epi64(_mm256_add_epi64(o, r->rnd_o), r->sh_o), r->sub_o);
  e = glow_clamp64x4(_mm256_add_epi64(e, off), lo, hi);
  o = glow_clamp64x4(_mm256_add_epi64(o, off), lo, hi);
  return _mm256_blend_epi32(e, _mm256_slli_epi64(o, 32), 0xAA);
}

/* Stores 16 clamped int32 lanes as bytes. */
static inline void glow_qstore16(void *d, __m256i a, __m256i b, int is_signed) {
  const __m256i w = _mm256_permute4x64_epi64(_mm256_packs_epi32(a, b), 0xD8);
  const __m256i x = is_signed ? _mm256_packs_epi16(w, w) : _mm256_packus_epi16(w, w);
  _mm_storeu_si128((__m128i *)d, _mm256_castsi256_si128(_mm256_permute4x64_epi64(x, 0x08)));
}

/* The requantization of 16 channels (or columns) o0.., `lanes` of which exist. */
typedef struct {
  glow_qrq8 a, b;
  __m256i off, lo, hi;
} glow_qrq16;

static inline void glow_qrq16_init(glow_qrq16 *r, const glow_qconv_args *q, size_t o0,
                                   size_t lanes) {
  glow_qrq8_init(&r->a, q, o0, lanes);
  glow_qrq8_init(&r->b, q, o0 + 8, lanes > 8 ? lanes - 8 : 0);
  r->off = _mm256_set1_epi64x(q->p->ooff);
  r->lo = _mm256_set1_epi64x(q->p->lo);
  r->hi = _mm256_set1_epi64x(q->p->hi);
}

/* Requantizes the 16 lanes v[0], v[1] and stores the first `lanes` of them
 * as bytes at d. */
static inline void glow_qstore_lanes(void *d, const __m256i *v, const glow_qrq16 *r,
                                     size_t lanes, int is_signed) {
  const __m256i r0 = glow_qrq8_apply(v[0], &r->a, r->off, r->lo, r->hi);
  const __m256i r1 = glow_qrq8_apply(v[1], &r->b, r->off, r->lo, r->hi);
  if (lanes == 16) {
    glow_qstore16(d, r0, r1, is_signed);
  } else {
    uint8_t t[16];
    glow_qstore16(t, r0, r1, is_signed);
    memcpy(d, t, lanes);
  }
}

#if defined(GLOW_VPDPBUSD)
/* The weights are loaded once a step into registers: the empty asm keeps
 * the compiler from folding the load into every vpdpbusd or vpdpwssd (a load each). */
#if defined(__GNUC__) || defined(__clang__)
#define GLOW_VREG(v) __asm__("" : "+v"(v))
#else
#define GLOW_VREG(v) (void)0
#endif
/* Tiles are not inlined: the caller's requantization constants would take the
 * registers the accumulators need and spill them inside the loop. */
#if defined(__GNUC__) || defined(__clang__)
#define GLOW_VNOINLINE __attribute__((noinline))
#else
#define GLOW_VNOINLINE
#endif
#endif

#if defined(GLOW_QVNNI)
/* The requantization of 16 channels in one register when every shift is at
 * least 33 (glow_qrq8's `high` form, the same arithmetic 16 lanes wide):
 * rq = (high half of (acc + bterm) * M + 2^(s - 33)) >> (s - 32). Null
 * `ok` sends a block to the 8-lane forms. */
typedef struct {
  __m512i bt, m, m_odd, rnd, sh, off, lo, hi;
  /* `fold`: rnd already holds + off * 2^(s - 32), which the floor of the
   * shift passes through exactly (|high half| < 2^30, s - 32 <= 21 and
   * |off| <= 255 keep the sum within 31 bits). */
  int ok, clamp, fold;
} glow_qrqz;

static inline void glow_qrqz_init(glow_qrqz *r, const glow_qrq8 *a, const glow_qrq8 *b) {
  r->ok = a->high && b->high;
  r->clamp = a->clamp;
  r->bt = _mm512_inserti64x4(_mm512_castsi256_si512(a->bt), b->bt, 1);
  r->m = _mm512_inserti64x4(_mm512_castsi256_si512(a->m), b->m, 1);
  r->m_odd = _mm512_srli_epi64(r->m, 32);
  r->rnd = _mm512_inserti64x4(_mm512_castsi256_si512(a->hi_rnd), b->hi_rnd, 1);
  r->sh = _mm512_inserti64x4(_mm512_castsi256_si512(a->hi_sh), b->hi_sh, 1);
  r->off = _mm512_inserti64x4(_mm512_castsi256_si512(a->off32), b->off32, 1);
  r->lo = _mm512_inserti64x4(_mm512_castsi256_si512(a->lo32), b->lo32, 1);
  r->hi = _mm512_inserti64x4(_mm512_castsi256_si512(a->hi32), b->hi32, 1);
  int32_t sh[16], rnd[16], off[16];
  memcpy(sh, &r->sh, 64);
  memcpy(rnd, &r->rnd, 64);
  memcpy(off, &r->off, 64);
  r->fold = 1;
  for (int l = 0; l < 16; l++)
    if (sh[l] > 21 || off[l] > 255 || off[l] < -255) r->fold = 0;
  if (r->fold) {
    for (int l = 0; l < 16; l++) rnd[l] += (int32_t)((uint32_t)off[l] << sh[l]);
    memcpy(&r->rnd, rnd, 64);
  }
}

/* The requantized 16 lanes in int32, clamped to [lo, hi] when that is
 * narrower than the destination's range (the packs below saturate). */
static inline __m512i glow_qrqz_apply_sum(__m512i s, const glow_qrqz *r) {
  const __m512i e = _mm512_mul_epi32(s, r->m);
  const __m512i o = _mm512_mul_epi32(_mm512_srli_epi64(s, 32), r->m_odd);
  __m512i v = _mm512_mask_blend_epi32(0xAAAA, _mm512_srli_epi64(e, 32), o);
  v = _mm512_srav_epi32(_mm512_add_epi32(v, r->rnd), r->sh);
  if (!r->fold) v = _mm512_add_epi32(v, r->off);
  if (r->clamp) v = _mm512_min_epi32(_mm512_max_epi32(v, r->lo), r->hi);
  return v;
}

/* The same of an accumulator the bias term is not yet added to. */
static inline __m512i glow_qrqz_apply(__m512i acc, const glow_qrqz *r) {
  return glow_qrqz_apply_sum(_mm512_add_epi32(acc, r->bt), r);
}

/* Requantizes 16 lanes and stores the first `lanes` as bytes at d. */
static inline void glow_qrqz_store(void *d, __m512i acc, const glow_qrqz *r, size_t lanes,
                                   int is_signed) {
  const __m512i v = glow_qrqz_apply(acc, r);
  const __m128i b = is_signed ? _mm512_cvtsepi32_epi8(v)
                              : _mm512_cvtusepi32_epi8(_mm512_max_epi32(v, _mm512_setzero_si512()));
  _mm_mask_storeu_epi8(d, (__mmask16)(lanes >= 16 ? 0xFFFF : (1u << lanes) - 1), b);
}

/* Requantizes 32 lanes (a, then b) and stores them as 32 bytes at d: two
 * saturating packs (the same saturation as the one-register store) and one
 * permutation back to channel order. The first pack is signed for both
 * destinations: an unsigned one would leave 32768..65535, which the second
 * pack reads as negative int16 and saturates to 0 instead of 255. */
static inline __m256i glow_qrqz_bytes32(__m512i x, __m512i y, int is_signed) {
  const __m512i w = _mm512_packs_epi32(x, y);
  const __m512i z = is_signed ? _mm512_packs_epi16(w, w) : _mm512_packus_epi16(w, w);
  /* Each 128-bit lane l of z holds a's channels 4l..4l+3, then b's. */
  const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 0, 0, 0, 0, 0, 0, 0, 0);
  return _mm512_castsi512_si256(_mm512_permutexvar_epi32(order, z));
}

static inline void glow_qrqz_store32(void *d, __m512i a, __m512i b, const glow_qrqz *ra,
                                     const glow_qrqz *rb, int is_signed) {
  _mm256_storeu_si256((__m256i *)d, glow_qrqz_bytes32(glow_qrqz_apply(a, ra),
                                                      glow_qrqz_apply(b, rb), is_signed));
}

#endif
#endif

/* One widened band row: input row iy (zero when outside the input) as
 * [span][groups][cg2] int16 `x - xoff`, zero outside the input and past each
 * group's cg channels. In 16 bits (x - xoff lies in -255..255), so the loops
 * vectorize 16 wide. */
static inline void glow_qconv_band_row(int16_t *r, const glow_qconv_args *q, size_t n,
                                       long long iy, size_t span, size_t groups, size_t cg,
                                       size_t cg2) {
  const glow_qconv_t *p = q->p;
  const size_t pix = groups * cg2;
  const int16_t xo = (int16_t)p->xoff;
  if (iy < 0 || iy >= (long long)p->h) {
    memset(r, 0, span * pix * sizeof(int16_t));
    return;
  }
  /* Band pixels j0 .. j1 - 1 lie inside the input row. */
  const size_t j0 = glow_min(p->pl, span), j1 = glow_min(p->pl + p->w, span);
  memset(r, 0, j0 * pix * sizeof(int16_t));
  if (j1 <= j0) {
    memset(r + j0 * pix, 0, (span - j0) * pix * sizeof(int16_t));
    return;
  }
  memset(r + j1 * pix, 0, (span - j1) * pix * sizeof(int16_t));
  const size_t at = ((n * p->h + (size_t)iy) * p->w + (j0 - p->pl)) * p->c;
  int16_t *e = r + j0 * pix;
  const size_t np = j1 - j0;
  if (groups == 1 && cg == cg2) {
    if (p->src_signed) {
      const int8_t *x = (const int8_t *)q->src + at;
      for (size_t i = 0; i < np * cg; i++) e[i] = (int16_t)(x[i] - xo);
    } else {
      const uint8_t *x = (const uint8_t *)q->src + at;
      for (size_t i = 0; i < np * cg; i++) e[i] = (int16_t)(x[i] - xo);
    }
    return;
  }
  for (size_t j = 0; j < np; j++, e += pix)
    for (size_t g = 0; g < groups; g++) {
      int16_t *o = e + g * cg2;
      const size_t from = at + j * p->c + g * cg;
      if (p->src_signed) {
        const int8_t *x = (const int8_t *)q->src + from;
        for (size_t c = 0; c < cg; c++) o[c] = (int16_t)(x[c] - xo);
      } else {
        const uint8_t *x = (const uint8_t *)q->src + from;
        for (size_t c = 0; c < cg; c++) o[c] = (int16_t)(x[c] - xo);
      }
      for (size_t c = cg; c < cg2; c++) o[c] = 0;
    }
}

/* The widened band of one output row: [kh][span][groups][cg2] (above). */
static inline void glow_qconv_band(int16_t *band, const glow_qconv_args *q, size_t n, size_t oy,
                                   size_t span, size_t groups, size_t cg, size_t cg2) {
  const glow_qconv_t *p = q->p;
  const size_t row = span * groups * cg2;
  for (size_t a = 0; a < p->kh; a++)
    glow_qconv_band_row(band + a * row, q, n,
                        (long long)(oy * p->sh + a * p->dh) - (long long)p->pt, span, groups, cg,
                        cg2);
}

/*@end*/

/*@qtile*/
#if defined(__AVX2__)
/* One tile: P pixels (at offsets d[i] in the band) x 16 output channels, in
 * 2P named accumulators (an indexed array of them would live on the stack),
 * over every tap and pair of input channels; out[2i], out[2i + 1] are pixel
 * i's channels 0-7 and 8-15. */
#define GLOW_QACC(i) __m256i a##i##0 = _mm256_setzero_si256(), a##i##1 = a##i##0;
#define GLOW_QSTEP(i)                                                                       \
  memcpy(&pr, x + d[i] + c, 4);                                                             \
  {                                                                                         \
    const __m256i xb = _mm256_set1_epi32(pr);                                               \
    a##i##0 = _mm256_add_epi32(a##i##0, _mm256_madd_epi16(xb, w0));                         \
    a##i##1 = _mm256_add_epi32(a##i##1, _mm256_madd_epi16(xb, w1));                         \
  }
#define GLOW_QOUT(i)                                                                        \
  out[2 * i] = a##i##0;                                                                     \
  out[2 * i + 1] = a##i##1;
#define GLOW_QTILE(P, ACCS, STEPS, OUTS)                                                     \
  static void glow_qtile##P(const int16_t *band, const size_t *d, const int16_t *w,           \
                            size_t kh, size_t kw, size_t row, size_t kstride, size_t pairs, \
                            __m256i *out) {                                                 \
    ACCS                                                                                    \
    for (size_t a = 0; a < kh; a++)                                                         \
      for (size_t kx = 0; kx < kw; kx++) {                                                  \
        const int16_t *x = band + a * row + kx * kstride;                                   \
        for (size_t c = 0; c < 2 * pairs; c += 2, w += 32) {                                \
          const __m256i w0 = _mm256_loadu_si256((const __m256i *)w);                        \
          const __m256i w1 = _mm256_loadu_si256((const __m256i *)(w + 16));                 \
          int32_t pr;                                                                       \
          STEPS                                                                             \
        }                                                                                   \
      }                                                                                     \
    OUTS                                                                                    \
  }
GLOW_QTILE(6, GLOW_QACC(0) GLOW_QACC(1) GLOW_QACC(2) GLOW_QACC(3) GLOW_QACC(4) GLOW_QACC(5),
           GLOW_QSTEP(0) GLOW_QSTEP(1) GLOW_QSTEP(2) GLOW_QSTEP(3) GLOW_QSTEP(4) GLOW_QSTEP(5),
           GLOW_QOUT(0) GLOW_QOUT(1) GLOW_QOUT(2) GLOW_QOUT(3) GLOW_QOUT(4) GLOW_QOUT(5))
GLOW_QTILE(4, GLOW_QACC(0) GLOW_QACC(1) GLOW_QACC(2) GLOW_QACC(3),
           GLOW_QSTEP(0) GLOW_QSTEP(1) GLOW_QSTEP(2) GLOW_QSTEP(3),
           GLOW_QOUT(0) GLOW_QOUT(1) GLOW_QOUT(2) GLOW_QOUT(3))
#undef GLOW_QTILE
#undef GLOW_QOUT
#undef GLOW_QSTEP
#undef GLOW_QACC
#endif

/*@end*/

/*@qconv*/
/* The tiles of `np` output pixels whose band offsets are i * pstride from x
 * (the group's first channel), for one block of 16 channels; pixel i is
 * stored at dst + i * p->oc. */
static void glow_qconv_pixels(const glow_qconv_args *q, const int16_t *x, const int16_t *wk,
                              size_t np_all, size_t pstride, size_t row, size_t kstride,
                              size_t pairs, uint8_t *dst, size_t o0, size_t lanes) {
  const glow_qconv_t *p = q->p;
#if defined(__AVX2__)
  glow_qrq16 rq;
  glow_qrq16_init(&rq, q, o0, lanes);
#endif
  for (size_t i0 = 0, np = 0; i0 < np_all; i0 += np) {
    /* Tiles of 6 pixels, ending in tiles of 4 where the rest is 7, 8 or at
     * most 4 (so 14 = 6 + 4 + 4 computes no extra pixel). */
    const size_t left = np_all - i0;
    const size_t tp = (left <= 4 || left == 7 || left == 8) ? 4 : 6;
    np = glow_min(tp, left);
#if defined(__AVX2__)
    /* Pixels past the end read the first pixel and are not stored. */
    size_t d[GLOW_QP];
    for (size_t i = 0; i < GLOW_QP; i++) d[i] = (i0 + (i < np ? i : 0)) * pstride;
    __m256i v[2 * GLOW_QP];
    /* When the taps of a window row are adjacent in the band (one group,
     * no dilation), the row is one run of kw x pairs pairs, in the same
     * order as the packed filter: fewer, longer inner loops (the 7x7 stem
     * has 2 pairs per tap). */
    const int merge = p->group == 1 && p->dw == 1;
    const size_t kw = merge ? 1 : p->kw, run = merge ? p->kw * pairs : pairs;
    if (tp == 6)
      glow_qtile6(x, d, wk, p->kh, kw, row, kstride, run, v);
    else
      glow_qtile4(x, d, wk, p->kh, kw, row, kstride, run, v);
    for (size_t i = 0; i < np; i++)
      glow_qstore_lanes(dst + (i0 + i) * p->oc + o0, v + 2 * i, &rq, lanes, p->dst_signed);
#else
    uint32_t acc[GLOW_QP][16];
    memset(acc, 0, sizeof acc);
    const int16_t *w = wk;
    for (size_t a = 0; a < p->kh; a++)
      for (size_t kx = 0; kx < p->kw; kx++) {
        const int16_t *xa = x + a * row + kx * kstride;
        for (size_t c = 0; c < pairs; c++, w += 32)
          for (size_t i = 0; i < np; i++) {
            const int16_t *xp = xa + (i0 + i) * pstride + 2 * c;
            const int32_t x0 = xp[0], x1 = xp[1];
            for (size_t l = 0; l < 16; l++)
              acc[i][l] += (uint32_t)(x0 * w[2 * l] + x1 * w[2 * l + 1]);
          }
      }
    for (size_t i = 0; i < np; i++)
      glow_qconv_store(q, (size_t)(dst - (uint8_t *)q->dst) + (i0 + i) * p->oc, o0, acc[i], lanes);
#endif
  }
}

static void glow_qconv_part(const void *args, size_t part, size_t parts) {
  const glow_qconv_args *q = args;
  const glow_qconv_t *p = q->p;
  const size_t cg = p->c / p->group, ocg = p->oc / p->group, cg2 = (cg + 1) & ~(size_t)1;
  const size_t pairs = cg2 / 2, blocks = (ocg + 15) / 16;
  const size_t span = (p->ow - 1) * p->sw + (p->kw - 1) * p->dw + 1;
  const size_t gstride = p->group * cg2, row = span * gstride, rband = p->kh * row;
  const size_t kblock = p->kh * p->kw * pairs * 32;
  /* Up to p->rows output rows are widened at once, so each block of the
   * filter is read once per chunk of rows, not once per row. A 1x1
   * stride-1 window's rows are contiguous in the band and in Dest, so its
   * chunk is tiled as one run of pixels. */
  const int flat = p->kh == 1 && p->kw == 1 && p->sw == 1;
  /* The band lives on the stack: the emitter checks rows x the band fits. */
  int16_t band[GLOW_QBAND];
  size_t r0, r1;
  glow_range(p->n * p->oh, part, parts, &r0, &r1);
  for (size_t c0 = r0; c0 < r1; c0 += p->rows) {
    const size_t nr = glow_min(p->rows, r1 - c0);
    for (size_t i = 0; i < nr; i++)
      glow_qconv_band(band + i * rband, q, (c0 + i) / p->oh, (c0 + i) % p->oh, span, p->group,
                      cg, cg2);
    uint8_t *dst = (uint8_t *)q->dst + c0 * p->ow * p->oc;
    for (size_t g = 0; g < p->group; g++)
      for (size_t b = 0; b < blocks; b++) {
        const int16_t *wk = q->pk + (g * blocks + b) * kblock;
        const size_t o0 = g * ocg + b * 16, lanes = glow_min(16, ocg - b * 16);
        if (flat) {
          glow_qconv_pixels(q, band + g * cg2, wk, nr * p->ow, gstride, row, 0, pairs, dst, o0,
                            lanes);
          continue;
        }
        for (size_t i = 0; i < nr; i++)
          glow_qconv_pixels(q, band + i * rband + g * cg2, wk, p->ow, p->sw * gstride, row,
                            p->dw * gstride, pairs, dst + i * p->ow * p->oc, o0, lanes);
      }
  }
}

#if defined(GLOW_VPDPBUSD)
/* The VNNI form of the direct convolution. The filter is packed as int8
 * `w - woff[o]` (the emitter packs it only when every value fits) in
 * [group][block of 16 output channels][kh][kw][quad of input channels][16]
 * [4], zero past the group's channels. The band holds the input bytes as
 * unsigned `x + 128 * signed` (xu), with xoff + 128 * signed (xou) outside
 * the input, so that sum(xu * w) - xou * sum(w) = sum((x - xoff) * w): the
 * emitter folds xou * sum(w) into bterm8. Every sum is exact modulo 2^32, so
 * the result is the reference loop's bit for bit. */
/* Band pixel j is input column j * step - pl: step 1, or a 1x1 window's
 * stride (the band then holds only the pixels the window reads). */
static inline void glow_qconv_band8(uint8_t *band, const glow_qconv_args *q, size_t n, size_t oy,
                                    size_t span, size_t step, size_t groups, size_t cg,
                                    size_t cg4) {
  const glow_qconv_t *p = q->p;
  const size_t row = span * groups * cg4, pix = groups * cg4;
  const uint8_t flip = p->src_signed ? 0x80 : 0, xou = (uint8_t)(p->xoff + (p->src_signed ? 128 : 0));
  for (size_t a = 0; a < p->kh; a++) {
    uint8_t *r = band + a * row;
    const long long iy = (long long)(oy * p->sh + a * p->dh) - (long long)p->pt;
    if (iy < 0 || iy >= (long long)p->h) {
      memset(r, xou, row);
      continue;
    }
    /* Band pixels j0 .. j1 - 1 lie inside the input row. */
    const size_t j0 = glow_min((p->pl + step - 1) / step, span);
    const size_t j1 = glow_min((p->pl + p->w + step - 1) / step, span);
    memset(r, xou, j0 * pix);
    if (j1 > j0) memset(r + j1 * pix, xou, (span - j1) * pix);
    if (j1 <= j0) {
      memset(r + j0 * pix, xou, (span - j0) * pix);
      continue;
    }
    const uint8_t *s =
        (const uint8_t *)q->src + ((n * p->h + (size_t)iy) * p->w + (j0 * step - p->pl)) * p->c;
    uint8_t *e = r + j0 * pix;
    const size_t np = j1 - j0;
    if (groups == 1 && cg == cg4 && !flip && step == 1) {
      memcpy(e, s, np * cg);
    } else if (groups == 1 && cg == cg4 && !flip) {
      for (size_t j = 0; j < np; j++, s += step * p->c, e += pix) memcpy(e, s, cg);
    } else if (groups == 1 && cg == 3 && step == 1) {
      /* The 3-channel stem: four bytes per pixel. */
      for (size_t j = 0; j < np; j++, s += 3, e += 4) {
        e[0] = (uint8_t)(s[0] ^ flip);
        e[1] = (uint8_t)(s[1] ^ flip);
        e[2] = (uint8_t)(s[2] ^ flip);
        e[3] = xou;
      }
    } else {
      for (size_t j = 0; j < np; j++, s += step * p->c, e += pix)
        for (size_t g = 0; g < groups; g++) {
          uint8_t *o = e + g * cg4;
          for (size_t c = 0; c < cg; c++) o[c] = (uint8_t)(s[g * cg + c] ^ flip);
          for (size_t c = cg; c < cg4; c++) o[c] = xou;
        }
    }
  }
}


/* The band offsets of a tile's `slots` pixels from pixel i0, np of which
 * exist: pixel i is column i % ow of band row i / ow. Pixels past the end
 * read the first pixel and are not stored. */
static inline void glow_vtile_offsets(size_t *d, size_t slots, size_t i0, size_t np, size_t ow,
                                      size_t rstride, size_t pstride) {
  for (size_t i = 0, r = i0 / ow, col = i0 % ow; i < slots; i++) {
    d[i] = i < np ? r * rstride + col * pstride : d[0];
    if (++col == ow) {
      col = 0;
      r++;
    }
  }
}
#endif

#if defined(GLOW_QVNNI)
/* Where a storing tile puts its pixels, and their requantization. */
typedef struct {
  const glow_qrqz *rz;
  uint8_t *dst;
  size_t stride, np;
  int is_signed;
} glow_vstore;

/* One tile: P pixels (band offsets d[i]) x NB blocks of 16 output channels
 * (filter blocks kblock apart), over every tap and quad of input channels;
 * out[NB * i + b] is pixel i's block b. */
#define GLOW_VACC1(i) __m512i a##i##0 = _mm512_setzero_si512();
#define GLOW_VACC2(i) __m512i a##i##0 = _mm512_setzero_si512(), a##i##1 = a##i##0;
#define GLOW_VSTEP1(i)                                                                      \
  {                                                                                         \
    int32_t xq;                                                                             \
    memcpy(&xq, x + d[i] + c, 4);                                                           \
    const __m512i xb = _mm512_set1_epi32(xq);                                               \
    a##i##0 = _mm512_dpbusd_epi32(a##i##0, xb, w0);                                         \
  }
#define GLOW_VSTEP2(i)                                                                      \
  {                                                                                         \
    int32_t xq;                                                                             \
    memcpy(&xq, x + d[i] + c, 4);                                                           \
    const __m512i xb = _mm512_set1_epi32(xq);                                               \
    a##i##0 = _mm512_dpbusd_epi32(a##i##0, xb, w0);                                         \
    a##i##1 = _mm512_dpbusd_epi32(a##i##1, xb, w1);                                         \
  }
/* The storing tiles start each sum at its channel's bias term (the wrapping
 * int32 sum is the same in any order) and requantize and store pixel i of
 * the first st->np at st->dst + i * st->stride themselves, so the sums never
 * leave registers. */
#define GLOW_VACCB(i) __m512i a##i##0 = b0, a##i##1 = b1;
#define GLOW_VSTORE(i)                                                                      \
  if (i < st->np)                                                                           \
    _mm256_storeu_si256((__m256i *)(st->dst + i * st->stride),                              \
                        glow_qrqz_bytes32(glow_qrqz_apply_sum(a##i##0, &st->rz[0]),         \
                                          glow_qrqz_apply_sum(a##i##1, &st->rz[1]),         \
                                          st->is_signed));
#define GLOW_VOUT1(i) out[i] = a##i##0;
#define GLOW_VOUT2(i)                                                                       \
  out[2 * i] = a##i##0;                                                                     \
  out[2 * i + 1] = a##i##1;
#define GLOW_VLOAD1                                                                         \
  __m512i w0 = _mm512_loadu_si512((const void *)w);                                         \
  GLOW_VREG(w0);
#define GLOW_VLOAD2                                                                         \
  __m512i w0 = _mm512_loadu_si512((const void *)w);                                         \
  __m512i w1 = _mm512_loadu_si512((const void *)(w + kblock));                              \
  GLOW_VREG(w0);                                                                            \
  GLOW_VREG(w1);
#define GLOW_VTILE(NAME, LOAD, ACCS, STEPS, OUTS, OUT)                                      \
  static GLOW_VNOINLINE void NAME(const uint8_t *band, const size_t *d, const int8_t *w,    \
                                  size_t kblock, size_t kh, size_t kw, size_t row,           \
                                  size_t kstride, size_t quads, OUT) {                       \
    (void)kblock;                                                                           \
    ACCS                                                                                    \
    for (size_t a = 0; a < kh; a++)                                                         \
      for (size_t kx = 0; kx < kw; kx++) {                                                  \
        const uint8_t *x = band + a * row + kx * kstride;                                   \
        for (size_t c = 0; c < 4 * quads; c += 4, w += 64) {                                \
          LOAD                                                                              \
          STEPS                                                                             \
        }                                                                                   \
      }                                                                                     \
    OUTS                                                                                    \
  }
#define GLOW_V8(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)
#define GLOW_V6(X) X(0) X(1) X(2) X(3) X(4) X(5)
#define GLOW_V4(X) X(0) X(1) X(2) X(3)
#define GLOW_VOUTS __m512i *out
#define GLOW_VSTORES const glow_vstore *st
#define GLOW_VBT const __m512i b0 = st->rz[0].bt, b1 = st->rz[1].bt;
GLOW_VTILE(glow_vtile8x2, GLOW_VLOAD2, GLOW_V8(GLOW_VACC2), GLOW_V8(GLOW_VSTEP2), GLOW_V8(GLOW_VOUT2), GLOW_VOUTS)
GLOW_VTILE(glow_vtile6x2, GLOW_VLOAD2, GLOW_V6(GLOW_VACC2), GLOW_V6(GLOW_VSTEP2), GLOW_V6(GLOW_VOUT2), GLOW_VOUTS)
GLOW_VTILE(glow_vtile4x2, GLOW_VLOAD2, GLOW_V4(GLOW_VACC2), GLOW_V4(GLOW_VSTEP2), GLOW_V4(GLOW_VOUT2), GLOW_VOUTS)
GLOW_VTILE(glow_vtile8x1, GLOW_VLOAD1, GLOW_V8(GLOW_VACC1), GLOW_V8(GLOW_VSTEP1), GLOW_V8(GLOW_VOUT1), GLOW_VOUTS)
GLOW_VTILE(glow_vtile6x1, GLOW_VLOAD1, GLOW_V6(GLOW_VACC1), GLOW_V6(GLOW_VSTEP1), GLOW_V6(GLOW_VOUT1), GLOW_VOUTS)
GLOW_VTILE(glow_vtile4x1, GLOW_VLOAD1, GLOW_V4(GLOW_VACC1), GLOW_V4(GLOW_VSTEP1), GLOW_V4(GLOW_VOUT1), GLOW_VOUTS)
GLOW_VTILE(glow_vtile8x2s, GLOW_VLOAD2, GLOW_VBT GLOW_V8(GLOW_VACCB), GLOW_V8(GLOW_VSTEP2), GLOW_V8(GLOW_VSTORE), GLOW_VSTORES)
GLOW_VTILE(glow_vtile6x2s, GLOW_VLOAD2, GLOW_VBT GLOW_V6(GLOW_VACCB), GLOW_V6(GLOW_VSTEP2), GLOW_V6(GLOW_VSTORE), GLOW_VSTORES)
GLOW_VTILE(glow_vtile4x2s, GLOW_VLOAD2, GLOW_VBT GLOW_V4(GLOW_VACCB), GLOW_V4(GLOW_VSTEP2), GLOW_V4(GLOW_VSTORE), GLOW_VSTORES)
#undef GLOW_VBT
#undef GLOW_VSTORES
#undef GLOW_VOUTS
#undef GLOW_VSTORE
#undef GLOW_VACCB
#undef GLOW_V4
#undef GLOW_V6
#undef GLOW_V8
#undef GLOW_VTILE
#undef GLOW_VLOAD2
#undef GLOW_VLOAD1
#undef GLOW_VOUT2
#undef GLOW_VOUT1
#undef GLOW_VSTEP2
#undef GLOW_VSTEP1
#undef GLOW_VACC2
#undef GLOW_VACC1

/* Pixels per tile for `left` pixels still to compute: 8, ending in 6 or 4
 * so that few computed pixels are thrown away. */
static inline size_t glow_vtile_pixels(size_t left) {
  if (left >= 11 || left == 7 || left == 8) return 8;
  if (left == 5 || left == 6 || left == 9 || left == 10) return 6;
  return 4;
}

/* The tiles of `np_all` pixels for nb (1 or 2) blocks of channels from o0:
 * pixel i is column i % ow of band row i / ow (band offset
 * (i / ow) * rstride + (i % ow) * pstride from x), so a tile may span output
 * rows (a 7-pixel row wastes no lanes), and is stored at dst + i * p->oc. */
static void glow_qconv_pixels8(const glow_qconv_args *q, const uint8_t *x, const int8_t *wk,
                               size_t kblock, size_t nb, size_t np_all, size_t ow,
                               size_t rstride, size_t pstride, size_t row, size_t kstride,
                               size_t quads, uint8_t *dst, size_t o0, size_t lanes) {
  const glow_qconv_t *p = q->p;
  const glow_qconv_args q8 = {q->dst, q->src, q->pk, q->bterm8, q->qm, q->qs, p, q->pk8, q->bterm8};
  glow_qrq16 rq[2];
  glow_qrqz rz[2];
  glow_qrq16_init(&rq[0], &q8, o0, glow_min(16, lanes));
  glow_qrqz_init(&rz[0], &rq[0].a, &rq[0].b);
  if (nb == 2) {
    glow_qrq16_init(&rq[1], &q8, o0 + 16, lanes - 16);
    glow_qrqz_init(&rz[1], &rq[1].a, &rq[1].b);
  }
  const int merge = p->group == 1 && p->dw == 1;
  const size_t kw = merge ? 1 : p->kw, run = merge ? p->kw * quads : quads;
  /* Two whole blocks in the 16-lane form: the storing tiles. */
  const int pair = nb == 2 && lanes == 32 && rz[0].ok && rz[1].ok;
  for (size_t i0 = 0, np = 0; i0 < np_all; i0 += np) {
    const size_t tp = glow_vtile_pixels(np_all - i0);
    np = glow_min(tp, np_all - i0);
    size_t d[8];
    glow_vtile_offsets(d, 8, i0, np, ow, rstride, pstride);
    if (pair) {
      const glow_vstore st = {rz, dst + i0 * p->oc + o0, p->oc, np, p->dst_signed};
      if (tp == 8) glow_vtile8x2s(x, d, wk, kblock, p->kh, kw, row, kstride, run, &st);
      else if (tp == 6) glow_vtile6x2s(x, d, wk, kblock, p->kh, kw, row, kstride, run, &st);
      else glow_vtile4x2s(x, d, wk, kblock, p->kh, kw, row, kstride, run, &st);
      continue;
    }
    __m512i v[16];
    if (nb == 2) {
      if (tp == 8) glow_vtile8x2(x, d, wk, kblock, p->kh, kw, row, kstride, run, v);
      else if (tp == 6) glow_vtile6x2(x, d, wk, kblock, p->kh, kw, row, kstride, run, v);
      else glow_vtile4x2(x, d, wk, kblock, p->kh, kw, row, kstride, run, v);
    } else {
      if (tp == 8) glow_vtile8x1(x, d, wk, kblock, p->kh, kw, row, kstride, run, v);
      else if (tp == 6) glow_vtile6x1(x, d, wk, kblock, p->kh, kw, row, kstride, run, v);
      else glow_vtile4x1(x, d, wk, kblock, p->kh, kw, row, kstride, run, v);
    }
    for (size_t i = 0; i < np; i++) {
      for (size_t b = 0; b < nb; b++) {
        const __m512i a = v[nb * i + b];
        const size_t l = b == 0 ? glow_min(16, lanes) : lanes - 16;
        uint8_t *at = dst + (i0 + i) * p->oc + o0 + 16 * b;
        if (rz[b].ok) {
          glow_qrqz_store(at, a, &rz[b], l, p->dst_signed);
          continue;
        }
        const __m256i h[2] = {_mm512_castsi512_si256(a), _mm512_extracti64x4_epi64(a, 1)};
        glow_qstore_lanes(at, h, &rq[b], l, p->dst_signed);
      }
    }
  }
}

/* Blocks of 16 output channels per tile. */
#define GLOW_VNB 2
#elif defined(GLOW_QVNNI8)
/* The 256-bit tiles: P pixels (band offsets d[i]) x one block of 16 output
 * channels (two registers: channels 0-7 and 8-15 of the packed block's 64
 * bytes a quad), over every tap and quad; out[2i], out[2i + 1] are pixel
 * i's. Six pixels take 12 of the 16 registers, the two weights and the
 * broadcast input the rest. */
#define GLOW_YACC(i) __m256i a##i##0 = _mm256_setzero_si256(), a##i##1 = a##i##0;
#define GLOW_YSTEP(i)                                                                       \
  {                                                                                         \
    int32_t xq;                                                                             \
    memcpy(&xq, x + d[i] + c, 4);                                                           \
    const __m256i xb = _mm256_set1_epi32(xq);                                               \
    a##i##0 = glow_dpbusd8(a##i##0, xb, w0);                                                \
    a##i##1 = glow_dpbusd8(a##i##1, xb, w1);                                                \
  }
#define GLOW_YOUT(i)                                                                        \
  out[2 * i] = a##i##0;                                                                     \
  out[2 * i + 1] = a##i##1;
#define GLOW_YTILE(NAME, X)                                                                 \
  static GLOW_VNOINLINE void NAME(const uint8_t *band, const size_t *d, const int8_t *w,    \
                                  size_t kh, size_t kw, size_t row, size_t kstride,          \
                                  size_t quads, __m256i *out) {                              \
    X(GLOW_YACC)                                                                            \
    for (size_t a = 0; a < kh; a++)                                                         \
      for (size_t kx = 0; kx < kw; kx++) {                                                  \
        const uint8_t *x = band + a * row + kx * kstride;                                   \
        for (size_t c = 0; c < 4 * quads; c += 4, w += 64) {                                \
          __m256i w0 = _mm256_loadu_si256((const __m256i *)w);                              \
          __m256i w1 = _mm256_loadu_si256((const __m256i *)(w + 32));                       \
          GLOW_VREG(w0);                                                                    \
          GLOW_VREG(w1);                                                                    \
          X(GLOW_YSTEP)                                                                     \
        }                                                                                   \
      }                                                                                     \
    X(GLOW_YOUT)                                                                            \
  }
#define GLOW_Y6(X) X(0) X(1) X(2) X(3) X(4) X(5)
#define GLOW_Y4(X) X(0) X(1) X(2) X(3)
GLOW_YTILE(glow_ytile6, GLOW_Y6)
GLOW_YTILE(glow_ytile4, GLOW_Y4)
#undef GLOW_Y4
#undef GLOW_Y6
#undef GLOW_YTILE
#undef GLOW_YOUT
#undef GLOW_YSTEP
#undef GLOW_YACC

/* The tiles of `np_all` pixels for one block of channels from o0, laid out
 * as in the 512-bit form (pixel i is column i % ow of band row i / ow). */
static void glow_qconv_pixels8(const glow_qconv_args *q, const uint8_t *x, const int8_t *wk,
                               size_t kblock, size_t nb, size_t np_all, size_t ow,
                               size_t rstride, size_t pstride, size_t row, size_t kstride,
                               size_t quads, uint8_t *dst, size_t o0, size_t lanes) {
  (void)kblock;
  (void)nb;
  const glow_qconv_t *p = q->p;
  const glow_qconv_args q8 = {q->dst, q->src, q->pk, q->bterm8, q->qm, q->qs, p, q->pk8, q->bterm8};
  glow_qrq16 rq;
  glow_qrq16_init(&rq, &q8, o0, lanes);
  const int merge = p->group == 1 && p->dw == 1;
  const size_t kw = merge ? 1 : p->kw, run = merge ? p->kw * quads : quads;
  for (size_t i0 = 0, np = 0; i0 < np_all; i0 += np) {
    /* Four pixels when that wastes fewer lanes than six. */
    const size_t left = np_all - i0;
    const size_t tp = left == 4 || left == 7 || left == 8 ? 4 : 6;
    np = glow_min(tp, left);
    size_t d[6];
    glow_vtile_offsets(d, 6, i0, np, ow, rstride, pstride);
    __m256i v[12];
    if (tp == 6) glow_ytile6(x, d, wk, p->kh, kw, row, kstride, run, v);
    else glow_ytile4(x, d, wk, p->kh, kw, row, kstride, run, v);
    for (size_t i = 0; i < np; i++)
      glow_qstore_lanes(dst + (i0 + i) * p->oc + o0, v + 2 * i, &rq, lanes, p->dst_signed);
  }
}
#define GLOW_VNB 1
#endif

#if defined(GLOW_VPDPBUSD)

static void glow_qconv_vnni_part(const void *args, size_t part, size_t parts) {
  const glow_qconv_args *q = args;
  const glow_qconv_t *p = q->p;
  const size_t cg = p->c / p->group, ocg = p->oc / p->group, cg4 = (cg + 3) & ~(size_t)3;
  const size_t quads = cg4 / 4, blocks = (ocg + 15) / 16;
  /* A 1x1 window's band holds the pixels it reads (every sw-th), so its
   * rows are contiguous in the band and in Dest: its chunk is tiled as one
   * run of pixels. */
  const int flat = p->kh == 1 && p->kw == 1;
  const size_t step = flat ? p->sw : 1;
  const size_t span = flat ? p->ow : (p->ow - 1) * p->sw + (p->kw - 1) * p->dw + 1;
  const size_t gstride = p->group * cg4, row = span * gstride, rband = p->kh * row;
  const size_t kblock = p->kh * p->kw * quads * 64;
  /* A 1x1 window that reads every input pixel once, unpadded, of unsigned
   * bytes in whole quads, reads the input itself as its band. */
  const int direct = flat && p->sh == 1 && p->sw == 1 && p->group == 1 && cg == cg4 &&
                     !p->src_signed && p->pt == 0 && p->pl == 0 && p->oh == p->h && p->ow == p->w;
  /* The int16 band's stack space holds the byte band (cg4 <= 2 * cg2). */
  int16_t band16[GLOW_QBAND];
  uint8_t *band = (uint8_t *)band16;
  size_t r0, r1;
  glow_range(p->n * p->oh, part, parts, &r0, &r1);
  for (size_t c0 = r0; c0 < r1; c0 += p->rows) {
    const size_t nr = glow_min(p->rows, r1 - c0);
    const uint8_t *x0 = band;
    if (direct)
      x0 = (const uint8_t *)q->src + c0 * p->w * p->c;
    else
      for (size_t i = 0; i < nr; i++)
        glow_qconv_band8(band + i * rband, q, (c0 + i) / p->oh, (c0 + i) % p->oh, span, step,
                         p->group, cg, cg4);
    uint8_t *dst = (uint8_t *)q->dst + c0 * p->ow * p->oc;
    for (size_t g = 0; g < p->group; g++)
      for (size_t b = 0; b < blocks; b += GLOW_VNB) {
        const int8_t *wk = q->pk8 + (g * blocks + b) * kblock;
        const size_t nb = glow_min(GLOW_VNB, blocks - b);
        const size_t o0 = g * ocg + b * 16, lanes = glow_min(16 * nb, ocg - b * 16);
        if (flat) {
          glow_qconv_pixels8(q, x0 + g * cg4, wk, kblock, nb, nr * p->ow, nr * p->ow, 0,
                             gstride, row, 0, quads, dst, o0, lanes);
          continue;
        }
        glow_qconv_pixels8(q, band + g * cg4, wk, kblock, nb, nr * p->ow, p->ow, rband,
                           p->sw * gstride, row, p->dw * gstride, quads, dst, o0, lanes);
      }
  }
}
#endif

static void glow_qconv(void *dst, const void *src, const int16_t *pk, const int64_t *bterm,
                       const int64_t *qm, const int *qs, const glow_qconv_t *p,
                       const int8_t *pk8, const int64_t *bterm8) {
  const glow_qconv_args q = {dst, src, pk, bterm, qm, qs, p, pk8, bterm8};
#if defined(GLOW_VPDPBUSD)
  if (pk8) {
    glow_parallel(glow_qconv_vnni_part, &q);
    return;
  }
#else
  (void)pk8;
  (void)bterm8;
#endif
  glow_parallel(glow_qconv_part, &q);
}
/*@end*/

/*@qdw*/
/* Depthwise (one input and one output channel per group). The filter is
 * packed as int16 `w - woff[c]` in pairs of taps (kh, kw in order; the last
 * of an odd count paired with zero weights): [pair][block of 16 channels]
 * [16][2], the 16 channel pairs in the order unpacklo/unpackhi_epi16 leave
 * them (0-3, 8-11, then 4-7, 12-15), channels padded to a multiple of 32.
 * Each thread widens the rows one output row reads (glow_qconv_band: zero
 * outside the input, which adds nothing to an exact integer sum) into a
 * 64-byte aligned band and sums two taps per vpmaddwd under AVX2, or 32
 * channels per vpdpwssd with VNNI. */
#define GLOW_QDW_MAXT 64

/* Where channel j of a block of 16 sits in its packed tap pairs. */
static inline size_t glow_qdw_lane(size_t j) {
  return j < 4 ? j : j < 8 ? j + 4 : j < 12 ? j - 4 : j;
}

#if defined(__AVX2__)
/* Four pixels (band offsets d[i]) x 16 channels over every tap pair; out[2i],
 * out[2i + 1] are pixel i's channels 0-7 and 8-15. */
static void glow_qdw_tile4(const int16_t *x, const size_t *d, const int16_t *w,
                           const size_t *toff, size_t pairs, size_t wstride, __m256i *out) {
  __m256i a0 = _mm256_setzero_si256(), b0 = a0, a1 = a0, b1 = a0, a2 = a0, b2 = a0, a3 = a0,
          b3 = a0;
  for (size_t t = 0; t < pairs; t++, w += wstride) {
    const __m256i w0 = _mm256_loadu_si256((const __m256i *)w);
    const __m256i w1 = _mm256_loadu_si256((const __m256i *)(w + 16));
    const int16_t *u = x + toff[2 * t], *v = x + toff[2 * t + 1];
#define GLOW_QDW_STEP(i, A, B)                                                             \
  {                                                                                        \
    const __m256i p = _mm256_loadu_si256((const __m256i *)(u + d[i]));                     \
    const __m256i q = _mm256_loadu_si256((const __m256i *)(v + d[i]));                     \
    A = _mm256_add_epi32(A, _mm256_madd_epi16(_mm256_unpacklo_epi16(p, q), w0));           \
    B = _mm256_add_epi32(B, _mm256_madd_epi16(_mm256_unpackhi_epi16(p, q), w1));           \
  }
    GLOW_QDW_STEP(0, a0, b0)
    GLOW_QDW_STEP(1, a1, b1)
    GLOW_QDW_STEP(2, a2, b2)
    GLOW_QDW_STEP(3, a3, b3)
#undef GLOW_QDW_STEP
  }
  /* Back to channel order: a holds 0-3 | 8-11, b 4-7 | 12-15. */
  out[0] = _mm256_permute2x128_si256(a0, b0, 0x20);
  out[1] = _mm256_permute2x128_si256(a0, b0, 0x31);
  out[2] = _mm256_permute2x128_si256(a1, b1, 0x20);
  out[3] = _mm256_permute2x128_si256(a1, b1, 0x31);
  out[4] = _mm256_permute2x128_si256(a2, b2, 0x20);
  out[5] = _mm256_permute2x128_si256(a2, b2, 0x31);
  out[6] = _mm256_permute2x128_si256(a3, b3, 0x20);
  out[7] = _mm256_permute2x128_si256(a3, b3, 0x31);
}
#endif

#if defined(GLOW_QVNNI)
/* Four pixels x 32 channels (two packed blocks: their halves joined, so the
 * 512-bit unpacks of the tap rows meet their weights) over every tap pair,
 * with vpdpwssd (VNNI: two int16 products added to each 32-bit lane,
 * exactly); out[2i], out[2i + 1] are pixel i's channels 0-15 and 16-31. */
static GLOW_VNOINLINE void glow_qdw_tile4z(const int16_t *x, const size_t *d, const int16_t *w,
                                           const size_t *toff, size_t pairs, size_t wstride,
                                           __m512i *out) {
  __m512i a0 = _mm512_setzero_si512(), b0 = a0, a1 = a0, b1 = a0, a2 = a0, b2 = a0, a3 = a0,
          b3 = a0;
  for (size_t t = 0; t < pairs; t++, w += wstride) {
    __m512i w0 = _mm512_inserti64x4(
        _mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)w)),
        _mm256_loadu_si256((const __m256i *)(w + 32)), 1);
    __m512i w1 = _mm512_inserti64x4(
        _mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)(w + 16))),
        _mm256_loadu_si256((const __m256i *)(w + 48)), 1);
    GLOW_VREG(w0);
    GLOW_VREG(w1);
    const int16_t *u = x + toff[2 * t], *v = x + toff[2 * t + 1];
#define GLOW_QDWZ_STEP(i, A, B)                                                            \
  {                                                                                        \
    const __m512i p = _mm512_loadu_si512((const void *)(u + d[i]));                        \
    const __m512i q = _mm512_loadu_si512((const void *)(v + d[i]));                        \
    A = _mm512_dpwssd_epi32(A, _mm512_unpacklo_epi16(p, q), w0);                           \
    B = _mm512_dpwssd_epi32(B, _mm512_unpackhi_epi16(p, q), w1);                           \
  }
    GLOW_QDWZ_STEP(0, a0, b0)
    GLOW_QDWZ_STEP(1, a1, b1)
    GLOW_QDWZ_STEP(2, a2, b2)
    GLOW_QDWZ_STEP(3, a3, b3)
#undef GLOW_QDWZ_STEP
  }
  /* Back to channel order: each 128-bit lane of a holds channels 8l..8l+3
   * (of 32), of b 8l+4..8l+7. */
  const __m512i lo = _mm512_setr_epi64(0, 1, 8, 9, 2, 3, 10, 11);
  const __m512i hi = _mm512_setr_epi64(4, 5, 12, 13, 6, 7, 14, 15);
  out[0] = _mm512_permutex2var_epi64(a0, lo, b0);
  out[1] = _mm512_permutex2var_epi64(a0, hi, b0);
  out[2] = _mm512_permutex2var_epi64(a1, lo, b1);
  out[3] = _mm512_permutex2var_epi64(a1, hi, b1);
  out[4] = _mm512_permutex2var_epi64(a2, lo, b2);
  out[5] = _mm512_permutex2var_epi64(a2, hi, b2);
  out[6] = _mm512_permutex2var_epi64(a3, lo, b3);
  out[7] = _mm512_permutex2var_epi64(a3, hi, b3);
}
#endif

static void glow_qdw_part(const void *args, size_t part, size_t parts) {
  const glow_qconv_args *q = args;
  const glow_qconv_t *p = q->p;
  const size_t c = p->c, cp = (c + 31) & ~(size_t)31, blocks = cp / 16;
  const size_t taps = p->kh * p->kw, pairs = (taps + 1) / 2;
  const size_t span = (p->ow - 1) * p->sw + (p->kw - 1) * p->dw + 1, row = span * cp;
  /* Band offsets of each tap; an odd count's last pair repeats its tap,
   * whose partner weights are zero. The band lives on the stack: the
   * emitter checks it is small and that taps <= GLOW_QDW_MAXT. */
  size_t toff[GLOW_QDW_MAXT + 1];
  /* The band is a ring of kh widened input rows: input row iy lives in slot
   * iy mod kh, so consecutive output rows widen only the rows they add (a
   * window's kh rows, one apart, fall in distinct slots). */
  int64_t held[GLOW_QDW_MAXT];
  size_t held_n = (size_t)-1;
  int16_t band[GLOW_QBAND] GLOW_ALIGN64;
#if defined(__AVX2__)
  glow_qrq8 rq[GLOW_QDWC / 8];
  for (size_t b = 0; b < cp; b += 8)
    glow_qrq8_init(&rq[b / 8], q, b < c ? b : 0, b < c ? glow_min(8, c - b) : 0);
  const __m256i off = _mm256_set1_epi64x(p->ooff), lo = _mm256_set1_epi64x(p->lo),
                hi = _mm256_set1_epi64x(p->hi);
#endif
#if defined(GLOW_QVNNI)
  glow_qrqz rz[GLOW_QDWC / 16];
  for (size_t b = 0; b < cp; b += 16) glow_qrqz_init(&rz[b / 16], &rq[b / 8], &rq[b / 8 + 1]);
#endif
  size_t r0, r1;
  glow_range(p->n * p->oh, part, parts, &r0, &r1);
  for (size_t r = r0; r < r1; r++) {
    const size_t n = r / p->oh, oy = r % p->oh;
    if (held_n != n) {
      /* Another image: no slot holds one of its rows. */
      for (size_t a = 0; a < p->kh; a++) held[a] = INT64_MIN;
      held_n = n;
    }
    size_t slot[GLOW_QDW_MAXT];
    for (size_t a = 0; a < p->kh; a++) {
      const long long iy = (long long)(oy * p->sh + a * p->dh) - (long long)p->pt;
      const long long kh = (long long)p->kh;
      /* Dilated windows' rows may share a slot: they are widened each time. */
      const size_t sl = p->dh == 1 ? (size_t)(((iy % kh) + kh) % kh) : a;
      if (p->dh != 1 || held[sl] != (int64_t)iy) {
        glow_qconv_band_row(band + sl * row, q, n, iy, span, 1, c, cp);
        held[sl] = (int64_t)iy;
      }
      slot[a] = sl;
    }
    for (size_t t = 0; t < 2 * pairs; t++) {
      const size_t tt = t < taps ? t : taps - 1;
      toff[t] = slot[tt / p->kw] * row + (tt % p->kw) * p->dw * cp;
    }
    uint8_t *dst = (uint8_t *)q->dst + (n * p->oh + oy) * p->ow * c;
#if defined(__AVX2__)
    for (size_t ox0 = 0; ox0 < p->ow; ox0 += 4) {
      const size_t np = glow_min(4, p->ow - ox0);
      /* Pixels past the row end read the first pixel and are not stored. */
      size_t d[4];
      for (size_t i = 0; i < 4; i++) d[i] = (ox0 + (i < np ? i : 0)) * p->sw * cp;
      size_t k0 = 0;
#if defined(GLOW_QVNNI)
      /* 32 channels at a time while they lie in the band's pixel. */
      for (; k0 + 32 <= cp; k0 += 32) {
        __m512i v[8];
        glow_qdw_tile4z(band + k0, d, q->pk + k0 * 2, toff, pairs, blocks * 32, v);
        const int pair = k0 + 32 <= c && rz[k0 / 16].ok && rz[k0 / 16 + 1].ok;
        for (size_t i = 0; i < np; i++)
          for (size_t h = 0; h < 2; h++) {
            if (pair) {
              glow_qrqz_store32(dst + (ox0 + i) * c + k0, v[2 * i], v[2 * i + 1], &rz[k0 / 16],
                                &rz[k0 / 16 + 1], p->dst_signed);
              break;
            }
            const size_t k = k0 + 16 * h;
            if (k >= c) continue;
            const size_t lanes = glow_min(16, c - k);
            uint8_t *at = dst + (ox0 + i) * c + k;
            if (rz[k / 16].ok) {
              glow_qrqz_store(at, v[2 * i + h], &rz[k / 16], lanes, p->dst_signed);
              continue;
            }
            const __m256i hv[2] = {_mm512_castsi512_si256(v[2 * i + h]),
                                   _mm512_extracti64x4_epi64(v[2 * i + h], 1)};
            const __m256i e = glow_qrq8_apply(hv[0], &rq[k / 8], off, lo, hi);
            const __m256i o = glow_qrq8_apply(hv[1], &rq[k / 8 + 1], off, lo, hi);
            uint8_t t[16];
            glow_qstore16(t, e, o, p->dst_signed);
            memcpy(at, t, lanes);
          }
      }
#endif
      for (size_t k = k0; k < c; k += 16) {
        __m256i v[8];
        glow_qdw_tile4(band + k, d, q->pk + k * 2, toff, pairs, blocks * 32, v);
        const size_t lanes = glow_min(16, c - k);
        for (size_t i = 0; i < np; i++) {
          const __m256i e = glow_qrq8_apply(v[2 * i], &rq[k / 8], off, lo, hi);
          const __m256i o = glow_qrq8_apply(v[2 * i + 1], &rq[k / 8 + 1], off, lo, hi);
          uint8_t *at = dst + (ox0 + i) * c + k;
          if (lanes == 16) {
            glow_qstore16(at, e, o, p->dst_signed);
          } else {
            uint8_t t[16];
            glow_qstore16(t, e, o, p->dst_signed);
            memcpy(at, t, lanes);
          }
        }
      }
    }
#else
    for (size_t ox = 0; ox < p->ow; ox++) {
      const int16_t *x = band + ox * p->sw * cp;
      for (size_t k = 0; k < c; k += 16) {
        const size_t lanes = glow_min(16, c - k);
        uint32_t acc[16];
        for (size_t l = 0; l < lanes; l++) {
          const int16_t *w = q->pk + (k / 16) * 32 + 2 * glow_qdw_lane(l);
          uint32_t sum = 0;
          for (size_t t = 0; t < pairs; t++, w += blocks * 32)
            sum += (uint32_t)(x[toff[2 * t] + k + l] * w[0] + x[toff[2 * t + 1] + k + l] * w[1]);
          acc[l] = sum;
        }
        glow_qconv_store(q, (n * p->oh + oy) * p->ow * c + ox * c, k, acc, lanes);
      }
    }
    (void)dst;
#endif
  }
}

static void glow_qdw(void *dst, const void *src, const int16_t *pk, const int64_t *bterm,
                     const int64_t *qm, const int *qs, const glow_qconv_t *p) {
  const glow_qconv_args q = {dst, src, pk, bterm, qm, qs, p, 0, 0};
  glow_parallel(glow_qdw_part, &q);
}

/*@end*/

/*@qgemm*/
/* Quantized GEMM (fullyconnected, matmul, batchmatmul): Dest[b][i][j] is the
 * requantized sum over k of (L[b][i][k] - xoff) (R[b][k][j] - woff). R is
 * int16 `r - woff` in [batch][block of 16 columns][pair of k][16][2], packed at
 * emit time when constant, else one block at a time on the stack; the rows of
 * a chunk are widened to int16 (zero past k) and summed by the convolution's
 * tiles as a 1x1 convolution. The parts split (batch, chunk of rows, column
 * block) units, so each sum is computed whole by one thread. */
typedef struct {
  size_t nb, m, k, n, chunk;
  int lhs_signed, rhs_signed, dst_signed;
  int64_t xoff, woff, ooff, lo, hi;
} glow_qgemm_t;

typedef struct {
  glow_qconv_args q;
  const void *rhs;
  const glow_qgemm_t *g;
} glow_qgemm_args;

/* Columns j0 .. j0 + lanes - 1 of batch b's K x N right-hand side, packed. */
static void glow_qgemm_panel(int16_t *pk, const glow_qgemm_t *g, const void *rhs, size_t b,
                             size_t j0, size_t lanes) {
  const size_t pairs = (g->k + 1) / 2;
  for (size_t p = 0; p < pairs; p++)
    for (size_t t = 0; t < 2; t++) {
      const size_t kk = 2 * p + t;
      int16_t *o = pk + p * 32 + t;
      for (size_t l = 0; l < 16; l++) {
        int64_t v = 0;
        if (kk < g->k && l < lanes) {
          const size_t at = (b * g->k + kk) * g->n + j0 + l;
          v = (g->rhs_signed ? (int64_t)((const int8_t *)rhs)[at]
                             : (int64_t)((const uint8_t *)rhs)[at]) -
              g->woff;
        }
        o[2 * l] = (int16_t)v;
      }
    }
}

static void glow_qgemm_part(const void *args, size_t part, size_t parts) {
  const glow_qgemm_args *a = args;
  const glow_qgemm_t *g = a->g;
  const glow_qconv_args *q = &a->q;
  const size_t k2 = (g->k + 1) & ~(size_t)1, pairs = k2 / 2, blocks = (g->n + 15) / 16;
  const size_t chunks = (g->m + g->chunk - 1) / g->chunk;
  /* The chunk's widened rows, then a block packed at run time: the emitter
   * checks both fit. */
  int16_t band[GLOW_QBAND];
  int16_t *panel = band + g->chunk * k2;
  size_t u0, u1, cur = (size_t)-1;
  glow_range(g->nb * chunks * blocks, part, parts, &u0, &u1);
  for (size_t u = u0; u < u1; u++) {
    const size_t blk = u % blocks, bc = u / blocks, b = bc / chunks;
    const size_t i0 = (bc % chunks) * g->chunk, rows = glow_min(g->chunk, g->m - i0);
    const size_t j0 = blk * 16, lanes = glow_min(16, g->n - j0);
    if (bc != cur) {
      for (size_t r = 0; r < rows; r++) {
        int16_t *o = band + r * k2;
        const size_t at = (b * g->m + i0 + r) * g->k;
        if (g->lhs_signed) {
          const int8_t *s = (const int8_t *)q->src + at;
          for (size_t c = 0; c < g->k; c++) o[c] = (int16_t)(s[c] - g->xoff);
        } else {
          const uint8_t *s = (const uint8_t *)q->src + at;
          for (size_t c = 0; c < g->k; c++) o[c] = (int16_t)(s[c] - g->xoff);
        }
        if (k2 > g->k) o[g->k] = 0;
      }
      cur = bc;
    }
    const int16_t *w = q->pk ? q->pk + (b * blocks + blk) * pairs * 32 : panel;
    if (!q->pk) glow_qgemm_panel(panel, g, a->rhs, b, j0, lanes);
#if defined(__AVX2__)
    glow_qrq16 rq;
    glow_qrq16_init(&rq, q, j0, lanes);
#endif
    for (size_t i = 0, np = 0; i < rows; i += np) {
      /* Tiles of 6 rows, ending in tiles of 4 (as the convolution's pixels). */
      const size_t left = rows - i;
      const size_t tp = (left <= 4 || left == 7 || left == 8) ? 4 : 6;
      np = glow_min(tp, left);
#if defined(__AVX2__)
      /* Rows past the chunk's end read its first row and are not stored. */
      size_t d[GLOW_QP];
      for (size_t t = 0; t < GLOW_QP; t++) d[t] = (i + (t < np ? t : 0)) * k2;
      __m256i v[2 * GLOW_QP];
      if (tp == 6)
        glow_qtile6(band, d, w, 1, 1, 0, 0, pairs, v);
      else
        glow_qtile4(band, d, w, 1, 1, 0, 0, pairs, v);
      for (size_t t = 0; t < np; t++)
        glow_qstore_lanes((uint8_t *)q->dst + (b * g->m + i0 + i + t) * g->n + j0, v + 2 * t,
                          &rq, lanes, g->dst_signed);
#else
      uint32_t acc[GLOW_QP][16];
      memset(acc, 0, sizeof acc);
      for (size_t c = 0; c < pairs; c++) {
        const int16_t *wc = w + c * 32;
        for (size_t t = 0; t < np; t++) {
          const int16_t *xp = band + (i + t) * k2 + 2 * c;
          const int32_t x0 = xp[0], x1 = xp[1];
          for (size_t l = 0; l < 16; l++)
            acc[t][l] += (uint32_t)(x0 * wc[2 * l] + x1 * wc[2 * l + 1]);
        }
      }
      for (size_t t = 0; t < np; t++)
        glow_qconv_store(q, (b * g->m + i0 + i + t) * g->n, j0, acc[t], lanes);
#endif
    }
  }
}

/* `pk` is the packed right-hand side, or null to pack `rhs` block by block. */
static void glow_qgemm(void *dst, const void *lhs, const void *rhs, const int16_t *pk,
                       const int64_t *bterm, const int64_t *qm, const int *qs,
                       const glow_qgemm_t *g) {
  glow_qconv_t p;
  memset(&p, 0, sizeof p);
  p.dst_signed = g->dst_signed;
  p.ooff = g->ooff;
  p.lo = g->lo;
  p.hi = g->hi;
  const glow_qgemm_args a = {{dst, lhs, pk, bterm, qm, qs, &p, 0, 0}, rhs, g};
  glow_parallel(glow_qgemm_part, &a);
}

/*@end*/

/*@qdyn*/
/* Dynamically quantized fullyconnected (docs/quantization.md): each row of
 * the float Src is quantized to int8 at its own symmetric scale
 * (glow_ir::quant::dynamic_scale), multiplied by int8 weights [k][n] less a
 * per-column offset, and the exact int32 sum becomes
 * acc * (sx * wscale[j]) + bias[j] in float, in that order. The integer part
 * is the quantized GEMM's: the weights as int16 panels (packed at emit time
 * when constant, else one block at a time on the stack), a chunk of rows
 * widened on the stack, the same tiles. */
typedef struct {
  size_t m, k, n, chunk;
} glow_qdyn_t;

typedef struct {
  float *dst;
  const float *src;
  const int8_t *w;
  const int16_t *pk;
  const float *wscale, *bias;
  const int32_t *woff;
  const glow_qdyn_t *g;
} glow_qdyn_args;

/* The row's range (NaN left out) holding 0, widened symmetrically, clamped
 * to finite values; (hi - lo) / 255 in double, rounded to float. */
static float glow_qdyn_scale(const float *x, size_t k) {
  float lo = 0.0f, hi = 0.0f;
  for (size_t i = 0; i < k; i++) {
    if (x[i] < lo) lo = x[i];
    if (x[i] > hi) hi = x[i];
  }
  const double rmin = (double)lo / -128.0, rmax = (double)hi / 127.0;
  if (rmin > rmax)
    hi = (float)(rmin * 127.0);
  else
    lo = (float)(rmax * -128.0);
  if (lo < -3.40282347e+38f) lo = -3.40282347e+38f;
  if (hi > 3.40282347e+38f) hi = 3.40282347e+38f;
  const float s = (float)(((double)hi - (double)lo) / 255.0);
  return s == 0.0f ? 0.1f : s;
}

/* round_half_even(x / s) clamped to int8 (NaN: -128), as `quantize`. */
static inline int16_t glow_qdyn_q(float x, float s) {
  const double r = nearbyint((double)(x / s));
  return (int16_t)(r > 127.0 ? 127.0 : r >= -128.0 ? r : -128.0);
}

/* Columns j0 .. j0 + lanes - 1 of the weights as one int16 panel. */
static void glow_qdyn_panel(int16_t *pk, const glow_qdyn_args *a, size_t j0, size_t lanes) {
  const glow_qdyn_t *g = a->g;
  const size_t pairs = (g->k + 1) / 2;
  for (size_t p = 0; p < pairs; p++)
    for (size_t t = 0; t < 2; t++) {
      const size_t kk = 2 * p + t;
      for (size_t l = 0; l < 16; l++) {
        int32_t v = 0;
        if (kk < g->k && l < lanes) v = (int32_t)a->w[kk * g->n + j0 + l] - a->woff[j0 + l];
        pk[p * 32 + t + 2 * l] = (int16_t)v;
      }
    }
}

static void glow_qdyn_part(const void *args, size_t part, size_t parts) {
  const glow_qdyn_args *a = args;
  const glow_qdyn_t *g = a->g;
  const size_t k2 = (g->k + 1) & ~(size_t)1, pairs = k2 / 2, blocks = (g->n + 15) / 16;
  const size_t chunks = (g->m + g->chunk - 1) / g->chunk;
  int16_t band[GLOW_QBAND];
  int16_t *panel = band + g->chunk * k2;
  float sx[24];
  size_t u0, u1, cur = (size_t)-1;
  glow_range(chunks * blocks, part, parts, &u0, &u1);
  for (size_t u = u0; u < u1; u++) {
    const size_t blk = u % blocks, ch = u / blocks;
    const size_t i0 = ch * g->chunk, rows = glow_min(g->chunk, g->m - i0);
    const size_t j0 = blk * 16, lanes = glow_min(16, g->n - j0);
    if (ch != cur) {
      for (size_t r = 0; r < rows; r++) {
        const float *x = a->src + (i0 + r) * g->k;
        int16_t *o = band + r * k2;
        sx[r] = glow_qdyn_scale(x, g->k);
        for (size_t c = 0; c < g->k; c++) o[c] = glow_qdyn_q(x[c], sx[r]);
        if (k2 > g->k) o[g->k] = 0;
      }
      cur = ch;
    }
    const int16_t *w = a->pk ? a->pk + blk * pairs * 32 : panel;
    if (!a->pk) glow_qdyn_panel(panel, a, j0, lanes);
    for (size_t i = 0, np = 0; i < rows; i += np) {
      const size_t left = rows - i;
      const size_t tp = (left <= 4 || left == 7 || left == 8) ? 4 : 6;
      np = glow_min(tp, left);
      int32_t acc[GLOW_QP][16];
#if defined(__AVX2__)
      size_t d[GLOW_QP];
      for (size_t t = 0; t < GLOW_QP; t++) d[t] = (i + (t < np ? t : 0)) * k2;
      __m256i v[2 * GLOW_QP];
      if (tp == 6)
        glow_qtile6(band, d, w, 1, 1, 0, 0, pairs, v);
      else
        glow_qtile4(band, d, w, 1, 1, 0, 0, pairs, v);
      for (size_t t = 0; t < np; t++) {
        _mm256_storeu_si256((__m256i *)acc[t], v[2 * t]);
        _mm256_storeu_si256((__m256i *)(acc[t] + 8), v[2 * t + 1]);
      }
#else
      uint32_t sum[GLOW_QP][16];
      memset(sum, 0, sizeof sum);
      for (size_t c = 0; c < pairs; c++) {
        const int16_t *wc = w + c * 32;
        for (size_t t = 0; t < np; t++) {
          const int16_t *xp = band + (i + t) * k2 + 2 * c;
          const int32_t x0 = xp[0], x1 = xp[1];
          for (size_t l = 0; l < 16; l++)
            sum[t][l] += (uint32_t)(x0 * wc[2 * l] + x1 * wc[2 * l + 1]);
        }
      }
      for (size_t t = 0; t < np; t++)
        for (size_t l = 0; l < 16; l++) acc[t][l] = (int32_t)glow_wrap32((int64_t)sum[t][l]);
#endif
      for (size_t t = 0; t < np; t++) {
        float *o = a->dst + (i0 + i + t) * g->n + j0;
        for (size_t l = 0; l < lanes; l++)
          o[l] = (float)acc[t][l] * (sx[i + t] * a->wscale[j0 + l]) + a->bias[j0 + l];
      }
    }
  }
}

/* Rows too long for the stack band: the reference loops (each row's
 * quantized values recomputed per column). */
static void glow_qdyn_ref(const glow_qdyn_args *a) {
  const glow_qdyn_t *g = a->g;
  for (size_t i = 0; i < g->m; i++) {
    const float *x = a->src + i * g->k;
    const float s = glow_qdyn_scale(x, g->k);
    for (size_t j = 0; j < g->n; j++) {
      int64_t sum = 0;
      for (size_t c = 0; c < g->k; c++)
        sum += (int64_t)glow_qdyn_q(x[c], s) * ((int64_t)a->w[c * g->n + j] - a->woff[j]);
      a->dst[i * g->n + j] = (float)(int32_t)glow_wrap32(sum) * (s * a->wscale[j]) + a->bias[j];
    }
  }
}

/* `pk` is the packed weights or null; `g->chunk` 0 takes the reference loops. */
static void glow_qdyn(float *dst, const float *src, const int8_t *w, const int16_t *pk,
                      const float *wscale, const int32_t *woff, const float *bias,
                      const glow_qdyn_t *g) {
  const glow_qdyn_args a = {dst, src, w, pk, wscale, bias, woff, g};
  if (g->chunk)
    glow_parallel(glow_qdyn_part, &a);
  else
    glow_qdyn_ref(&a);
}

/*@end*/

/*@qprofile*/
/* quantizationprofile: the steps of glow_ir::quant::profile_update (Glow's
 * generateTensorHistogram) in the same f32 order. The two products that an
 * addition follows go through a volatile so no mode contracts them. */
static float glow_qprofile_mul(float a, float b) {
  volatile float p = a * b;
  return p;
}

static size_t glow_qprofile_bin(size_t n, float width, float min, float x) {
  if (width == 0.0f) return 0;
  const float r = (x - min) / width;
  if (!(r > 0.0f)) return 0;
  return r >= (float)(n - 1) ? n - 1 : (size_t)r;
}

static void glow_qprofile(const float *x, size_t len, float *hist, size_t n, float *ci) {
  float lo = INFINITY, hi = -INFINITY;
  for (size_t i = 0; i < len; i++) {
    if (!isfinite(x[i])) continue;
    if (x[i] < lo) lo = x[i];
    if (x[i] > hi) hi = x[i];
  }
  if (lo > hi) return;
  float mn = ci[0], mx = ci[1];
  if (mn > mx) {
    mn = lo;
    mx = hi;
  } else if (lo < mn || hi > mx) {
    const float nmin = lo < mn ? lo : mn, nmax = hi > mx ? hi : mx;
    const float dw = (nmax - nmin) / (float)n, sw = (mx - mn) / (float)n;
    float out[n];
    for (size_t i = 0; i < n; i++) out[i] = 0.0f;
    for (size_t i = 0; i < n; i++) {
      const float c = hist[i];
      if (c == 0.0f) continue;
      const float sb = mn + glow_qprofile_mul(sw, (float)i);
      const size_t db = glow_qprofile_bin(n, dw, nmin, sb);
      const float de = nmin + glow_qprofile_mul(dw, (float)(db + 1));
      float part = c;
      if (sw != 0.0f) {
        const float p = roundf((de - sb) / sw * c);
        part = p < c ? p : c;
      }
      out[db] += part;
      if (part < c) out[glow_qprofile_bin(n, dw, nmin, sb + dw)] += c - part;
    }
    memcpy(hist, out, n * sizeof(float));
    mn = nmin;
    mx = nmax;
  }
  const float width = (mx - mn) / (float)n;
  for (size_t i = 0; i < len; i++)
    if (isfinite(x[i])) hist[glow_qprofile_bin(n, width, mn, x[i])] += 1.0f;
  ci[0] = mn;
  ci[1] = mx;
}

/*@end*/

/*@qadd*/
#if defined(__AVX2__)
#include <immintrin.h>
#endif
/* Quantized elementadd/elementsub of two 8-bit operands of n elements each
 * (docs/quantization.md): clamp(ooff + round_shift(dl a + dr b, s)) with
 * dl = l - loff and dr = r - roff in -255..255 (b negated for a
 * subtraction). Split at emit time as a = ah 2^16 + al, b = bh 2^16 + bl
 * (al, bl, ah, bh int16), the sum is ph 2^16 + pl with ph = dl ah + dr bh
 * and pl = dl al + dr bl, one vpmaddwd each, and for 17 <= s <= 47
 * round_shift(ph 2^16 + pl, s) = (ph + (pl >> 16) + 2^(s - 17)) >> (s - 16)
 * exactly (nested floors; every term fits 32 bits). */
typedef struct {
  int l_signed, r_signed, d_signed;
  int32_t loff, roff, ooff, lo, hi;
  int16_t ah, al, bh, bl;
  int s;
  int64_t a, b;
} glow_qadd_t;

static inline int64_t glow_qadd_in(const void *v, int is_signed, size_t i) {
  return is_signed ? (int64_t)((const int8_t *)v)[i] : (int64_t)((const uint8_t *)v)[i];
}

static void glow_qadd8(void *dst, const void *lhs, const void *rhs, size_t n,
                       const glow_qadd_t *p) {
  size_t i = 0;
#if defined(__AVX512BW__) && defined(__AVX512F__)
  /* The same steps 32 elements wide: each 128-bit lane l holds elements
   * 8l..8l+7 through the unpacks and the 32-bit pack, so only the last
   * byte pack needs a permutation. */
  {
    const __m512i lo16 = _mm512_set1_epi16((int16_t)p->loff), ro16 = _mm512_set1_epi16((int16_t)p->roff);
    const __m512i wh = _mm512_set1_epi32((int32_t)((uint32_t)(uint16_t)p->ah | ((uint32_t)(uint16_t)p->bh << 16)));
    const __m512i wl = _mm512_set1_epi32((int32_t)((uint32_t)(uint16_t)p->al | ((uint32_t)(uint16_t)p->bl << 16)));
    const __m512i rnd = _mm512_set1_epi32((int32_t)1 << (p->s - 17)), off = _mm512_set1_epi32(p->ooff);
    const __m512i lo = _mm512_set1_epi16((int16_t)p->lo), hi = _mm512_set1_epi16((int16_t)p->hi);
    const __m128i sh = _mm_cvtsi32_si128(p->s - 16);
    const __m512i order = _mm512_setr_epi64(0, 2, 4, 6, 1, 3, 5, 7);
    for (; i + 32 <= n; i += 32) {
      const __m256i lb = _mm256_loadu_si256((const __m256i *)((const uint8_t *)lhs + i));
      const __m256i rb = _mm256_loadu_si256((const __m256i *)((const uint8_t *)rhs + i));
      const __m512i dl = _mm512_sub_epi16(p->l_signed ? _mm512_cvtepi8_epi16(lb) : _mm512_cvtepu8_epi16(lb), lo16);
      const __m512i dr = _mm512_sub_epi16(p->r_signed ? _mm512_cvtepi8_epi16(rb) : _mm512_cvtepu8_epi16(rb), ro16);
      const __m512i x0 = _mm512_unpacklo_epi16(dl, dr), x1 = _mm512_unpackhi_epi16(dl, dr);
      __m512i v0 = _mm512_add_epi32(_mm512_madd_epi16(x0, wh), _mm512_srai_epi32(_mm512_madd_epi16(x0, wl), 16));
      __m512i v1 = _mm512_add_epi32(_mm512_madd_epi16(x1, wh), _mm512_srai_epi32(_mm512_madd_epi16(x1, wl), 16));
      v0 = _mm512_add_epi32(_mm512_sra_epi32(_mm512_add_epi32(v0, rnd), sh), off);
      v1 = _mm512_add_epi32(_mm512_sra_epi32(_mm512_add_epi32(v1, rnd), sh), off);
      const __m512i w = _mm512_min_epi16(_mm512_max_epi16(_mm512_packs_epi32(v0, v1), lo), hi);
      const __m512i x = p->d_signed ? _mm512_packs_epi16(w, w) : _mm512_packus_epi16(w, w);
      _mm256_storeu_si256((__m256i *)((uint8_t *)dst + i),
                          _mm512_castsi512_si256(_mm512_permutexvar_epi64(order, x)));
    }
  }
#endif
#if defined(__AVX2__)
  const __m256i lo16 = _mm256_set1_epi16((int16_t)p->loff), ro16 = _mm256_set1_epi16((int16_t)p->roff);
  const __m256i wh = _mm256_set1_epi32((int32_t)((uint32_t)(uint16_t)p->ah | ((uint32_t)(uint16_t)p->bh << 16)));
  const __m256i wl = _mm256_set1_epi32((int32_t)((uint32_t)(uint16_t)p->al | ((uint32_t)(uint16_t)p->bl << 16)));
  const __m256i rnd = _mm256_set1_epi32((int32_t)1 << (p->s - 17)), off = _mm256_set1_epi32(p->ooff);
  const __m256i lo = _mm256_set1_epi16((int16_t)p->lo), hi = _mm256_set1_epi16((int16_t)p->hi);
  const __m128i sh = _mm_cvtsi32_si128(p->s - 16);
  for (; i + 16 <= n; i += 16) {
    const __m128i lb = _mm_loadu_si128((const __m128i *)((const uint8_t *)lhs + i));
    const __m128i rb = _mm_loadu_si128((const __m128i *)((const uint8_t *)rhs + i));
    const __m256i dl = _mm256_sub_epi16(p->l_signed ? _mm256_cvtepi8_epi16(lb) : _mm256_cvtepu8_epi16(lb), lo16);
    const __m256i dr = _mm256_sub_epi16(p->r_signed ? _mm256_cvtepi8_epi16(rb) : _mm256_cvtepu8_epi16(rb), ro16);
    /* Elements 0-3 | 8-11 and 4-7 | 12-15 as (dl, dr) pairs. */
    const __m256i x0 = _mm256_unpacklo_epi16(dl, dr), x1 = _mm256_unpackhi_epi16(dl, dr);
    __m256i v0 = _mm256_add_epi32(_mm256_madd_epi16(x0, wh), _mm256_srai_epi32(_mm256_madd_epi16(x0, wl), 16));
    __m256i v1 = _mm256_add_epi32(_mm256_madd_epi16(x1, wh), _mm256_srai_epi32(_mm256_madd_epi16(x1, wl), 16));
    v0 = _mm256_add_epi32(_mm256_sra_epi32(_mm256_add_epi32(v0, rnd), sh), off);
    v1 = _mm256_add_epi32(_mm256_sra_epi32(_mm256_add_epi32(v1, rnd), sh), off);
    /* Back in element order; saturated to 16 bits, then clamped. */
    const __m256i w = _mm256_min_epi16(_mm256_max_epi16(_mm256_packs_epi32(v0, v1), lo), hi);
    const __m256i x = p->d_signed ? _mm256_packs_epi16(w, w) : _mm256_packus_epi16(w, w);
    _mm_storeu_si128((__m128i *)((uint8_t *)dst + i), _mm256_castsi256_si128(_mm256_permute4x64_epi64(x, 0x08)));
  }
#endif
  for (; i < n; i++) {
    const int64_t v = glow_clamp64(p->ooff + glow_rq((glow_qadd_in(lhs, p->l_signed, i) - p->loff) * p->a +
                                                       (glow_qadd_in(rhs, p->r_signed, i) - p->roff) * p->b,
                                                   1, p->s),
                                   p->lo, p->hi);
    if (p->d_signed)
      ((int8_t *)dst)[i] = (int8_t)v;
    else
      ((uint8_t *)dst)[i] = (uint8_t)v;
  }
}
/*@end*/

/*@convgrad*/
/* convolutiongrad's FilterGrad on AVX-512 (docs/training.md, "Spatial
 * gradients"): FG[o][ky][kx][c] = the sum over (b, y, x) ascending, taps
 * outside Src skipped, of DG[b][y][x][o] * Src[b][ih][iw][g*cg + c], each
 * term one fused multiply-add from 0.0f, exactly the interpreter's order. A
 * block is 4 output channels x 32 input channels (8 accumulators, each
 * input vector used 4 times) or, with fewer than 16 input channels, 32
 * output channels x 4 input channels (the stem); lanes past the end are
 * loaded as zero and never stored. Element strides: s_*, d_* of (b, c, h,
 * w) in Src and DestGrad (the channels contiguous), f_* of (o, ky, kx, c)
 * in FilterGrad. */
typedef struct {
  size_t n, h, w, oh, ow, kh, kw, sh, sw, dh, dw, pt, pl, group, cg, ocg;
  size_t s_b, s_h, s_w, d_b, d_h, d_w, f_o, f_y, f_x, f_c;
  /* SrcGrad is @inout: the sums are added to it (prev + sum). */
  size_t accumulate;
} glow_cg_t;

#if defined(GLOW_VEC16)
static inline __mmask16 glow_cg_mask(size_t n) {
  return n >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << n) - 1u);
}

/* The (b, y, x) terms of tap (ky, kx) in order, for the output rows r0 ..
 * r1 of all the images (row r is image r / oh, row r % oh): ih, iw inside
 * Src. */
#define GLOW_CG_TERMS(p, ky, kx, ...)                                              \
  for (size_t r = r0; r < r1; r++) {                                               \
    const size_t b = r / (p)->oh, y = r % (p)->oh;                                 \
    const long long ih = (long long)(y * (p)->sh + (ky) * (p)->dh) - (long long)(p)->pt; \
    if (ih < 0 || ih >= (long long)(p)->h) continue;                               \
    for (size_t x = 0; x < (p)->ow; x++) {                                         \
      const long long iw = (long long)(x * (p)->sw + (kx) * (p)->dw) - (long long)(p)->pl; \
      if (iw < 0 || iw >= (long long)(p)->w) continue;                             \
      const float *s = src + b * (p)->s_b + (size_t)ih * (p)->s_h + (size_t)iw * (p)->s_w; \
      const float *d = dg + b * (p)->d_b + y * (p)->d_h + x * (p)->d_w;           \
      __VA_ARGS__                                                                  \
    }                                                                              \
  }

/* A block's 4 x 2 accumulators from FilterGrad (the sums of the rows before
 * r0, so each element goes on in order) or zeros at the first rows; elem(j,
 * i) is the FilterGrad index of accumulator row j, lane i. */
#define GLOW_CG_LOAD(rows, lanes, ELEM)                                           \
  __m512 a00 = _mm512_setzero_ps(), a01 = a00, a10 = a00, a11 = a00, a20 = a00, a21 = a00, \
         a30 = a00, a31 = a00;                                                     \
  if (r0 > 0) {                                                                    \
    float t[4][32] = {{0}};                                                        \
    for (size_t j = 0; j < (rows); j++)                                            \
      for (size_t i = 0; i < (lanes); i++) t[j][i] = fg[ELEM(j, i)];               \
    a00 = _mm512_loadu_ps(t[0]), a01 = _mm512_loadu_ps(t[0] + 16);                 \
    a10 = _mm512_loadu_ps(t[1]), a11 = _mm512_loadu_ps(t[1] + 16);                 \
    a20 = _mm512_loadu_ps(t[2]), a21 = _mm512_loadu_ps(t[2] + 16);                 \
    a30 = _mm512_loadu_ps(t[3]), a31 = _mm512_loadu_ps(t[3] + 16);                 \
  }
#define GLOW_CG_STORE(rows, lanes, ELEM)                                          \
  {                                                                                \
    float t[4][32];                                                                \
    _mm512_storeu_ps(t[0], a00), _mm512_storeu_ps(t[0] + 16, a01);                 \
    _mm512_storeu_ps(t[1], a10), _mm512_storeu_ps(t[1] + 16, a11);                 \
    _mm512_storeu_ps(t[2], a20), _mm512_storeu_ps(t[2] + 16, a21);                 \
    _mm512_storeu_ps(t[3], a30), _mm512_storeu_ps(t[3] + 16, a31);                 \
    for (size_t j = 0; j < (rows); j++)                                            \
      for (size_t i = 0; i < (lanes); i++) fg[ELEM(j, i)] = t[j][i];               \
  }

/* 4 output channels (o .. o + no) x 32 input channels (c .. c + nc). */
#define GLOW_CG_ELEM_C(j, i) ((o + (j)) * p->f_o + ky * p->f_y + kx * p->f_x + (c + (i)) * p->f_c)
static void glow_cg_filter_c(float *fg, const float *src, const float *dg, const glow_cg_t *p,
                             size_t g, size_t o, size_t no, size_t c, size_t nc, size_t ky,
                             size_t kx, size_t r0, size_t r1) {
  const __mmask16 m0 = glow_cg_mask(nc), m1 = glow_cg_mask(nc > 16 ? nc - 16 : 0);
  const size_t sc = g * p->cg + c;
  GLOW_CG_LOAD(no, nc, GLOW_CG_ELEM_C)
  GLOW_CG_TERMS(p, ky, kx, {
    const __m512 s0 = _mm512_maskz_loadu_ps(m0, s + sc), s1 = _mm512_maskz_loadu_ps(m1, s + sc + 16);
    const float *dd = d + o;
    const __m512 d0 = _mm512_set1_ps(dd[0]);
    const __m512 d1 = _mm512_set1_ps(no > 1 ? dd[1] : 0.0f);
    const __m512 d2 = _mm512_set1_ps(no > 2 ? dd[2] : 0.0f);
    const __m512 d3 = _mm512_set1_ps(no > 3 ? dd[3] : 0.0f);
    a00 = _mm512_fmadd_ps(d0, s0, a00);
    a01 = _mm512_fmadd_ps(d0, s1, a01);
    a10 = _mm512_fmadd_ps(d1, s0, a10);
    a11 = _mm512_fmadd_ps(d1, s1, a11);
    a20 = _mm512_fmadd_ps(d2, s0, a20);
    a21 = _mm512_fmadd_ps(d2, s1, a21);
    a30 = _mm512_fmadd_ps(d3, s0, a30);
    a31 = _mm512_fmadd_ps(d3, s1, a31);
  })
  GLOW_CG_STORE(no, nc, GLOW_CG_ELEM_C)
}
#undef GLOW_CG_ELEM_C

/* 32 output channels (o .. o + no) x 4 input channels (c .. c + nc):
 * accumulator row i is input channel c + i, lane j output channel o + j. */
#define GLOW_CG_ELEM_O(i, j) ((o + (j)) * p->f_o + ky * p->f_y + kx * p->f_x + (c + (i)) * p->f_c)
static void glow_cg_filter_o(float *fg, const float *src, const float *dg, const glow_cg_t *p,
                             size_t g, size_t o, size_t no, size_t c, size_t nc, size_t ky,
                             size_t kx, size_t r0, size_t r1) {
  const __mmask16 m0 = glow_cg_mask(no), m1 = glow_cg_mask(no > 16 ? no - 16 : 0);
  const size_t sc = g * p->cg + c;
  GLOW_CG_LOAD(nc, no, GLOW_CG_ELEM_O)
  GLOW_CG_TERMS(p, ky, kx, {
    const __m512 d0 = _mm512_maskz_loadu_ps(m0, d + o), d1 = _mm512_maskz_loadu_ps(m1, d + o + 16);
    const __m512 s0 = _mm512_set1_ps(s[sc]);
    const __m512 s1 = _mm512_set1_ps(nc > 1 ? s[sc + 1] : 0.0f);
    const __m512 s2 = _mm512_set1_ps(nc > 2 ? s[sc + 2] : 0.0f);
    const __m512 s3 = _mm512_set1_ps(nc > 3 ? s[sc + 3] : 0.0f);
    a00 = _mm512_fmadd_ps(d0, s0, a00);
    a01 = _mm512_fmadd_ps(d1, s0, a01);
    a10 = _mm512_fmadd_ps(d0, s1, a10);
    a11 = _mm512_fmadd_ps(d1, s1, a11);
    a20 = _mm512_fmadd_ps(d0, s2, a20);
    a21 = _mm512_fmadd_ps(d1, s2, a21);
    a30 = _mm512_fmadd_ps(d0, s3, a30);
    a31 = _mm512_fmadd_ps(d1, s3, a31);
  })
  GLOW_CG_STORE(nc, no, GLOW_CG_ELEM_O)
}
#undef GLOW_CG_ELEM_O
#undef GLOW_CG_LOAD
#undef GLOW_CG_STORE
#undef GLOW_CG_TERMS

/* SrcGrad[b][ih][iw][g*cg + c] = the sum over ky, then kx, then the
 * group's output channels og (each ascending) of DG[b][y][x][g*ocg + og] *
 * F[g*ocg + og][ky][kx][c], for the one (y, x) whose tap (ky, kx) reads
 * (ih, iw): 4 pixels of a row (iw .. iw + np) x 32 channels (c .. c + nc)
 * at once. A tap that every pixel has runs the 4 x 2 block; otherwise each
 * pixel that has it runs alone, so every element keeps its order. */
#define GLOW_CG_PIXEL(J)                                                               \
  if (dp[J])                                                                           \
    for (size_t og = 0; og < p->ocg; og++) {                                           \
      const float *wr = fr + og * p->f_o;                                              \
      const __m512 dj = _mm512_set1_ps(dp[J][og]);                                     \
      a##J##0 = _mm512_fmadd_ps(dj, _mm512_maskz_loadu_ps(m0, wr), a##J##0);           \
      a##J##1 = _mm512_fmadd_ps(dj, _mm512_maskz_loadu_ps(m1, wr + 16), a##J##1);      \
    }
static void glow_cg_src_px(float *sg, const float *dg, const float *f, const glow_cg_t *p,
                           size_t b, size_t ih, size_t iw, size_t np, size_t g, size_t c,
                           size_t nc) {
  const __mmask16 m0 = glow_cg_mask(nc), m1 = glow_cg_mask(nc > 16 ? nc - 16 : 0);
  __m512 a00 = _mm512_setzero_ps(), a01 = a00, a10 = a00, a11 = a00, a20 = a00, a21 = a00,
         a30 = a00, a31 = a00;
  for (size_t ky = 0; ky < p->kh; ky++) {
    const long long fy = (long long)(ih + p->pt) - (long long)(ky * p->dh);
    if (fy < 0 || fy % (long long)p->sh != 0) continue;
    const size_t y = (size_t)(fy / (long long)p->sh);
    if (y >= p->oh) continue;
    for (size_t kx = 0; kx < p->kw; kx++) {
      const float *dp[4] = {0, 0, 0, 0};
      int all = np == 4;
      for (size_t j = 0; j < np; j++) {
        const long long fx = (long long)(iw + j + p->pl) - (long long)(kx * p->dw);
        if (fx >= 0 && fx % (long long)p->sw == 0 && (size_t)(fx / (long long)p->sw) < p->ow)
          dp[j] = dg + b * p->d_b + y * p->d_h + (size_t)(fx / (long long)p->sw) * p->d_w +
                  g * p->ocg;
        else
          all = 0;
      }
      const float *fr = f + g * p->ocg * p->f_o + ky * p->f_y + kx * p->f_x + c;
      if (all) {
        for (size_t og = 0; og < p->ocg; og++) {
          const float *wr = fr + og * p->f_o;
          const __m512 w0 = _mm512_maskz_loadu_ps(m0, wr), w1 = _mm512_maskz_loadu_ps(m1, wr + 16);
          const __m512 d0 = _mm512_set1_ps(dp[0][og]), d1 = _mm512_set1_ps(dp[1][og]);
          const __m512 d2 = _mm512_set1_ps(dp[2][og]), d3 = _mm512_set1_ps(dp[3][og]);
          a00 = _mm512_fmadd_ps(d0, w0, a00);
          a01 = _mm512_fmadd_ps(d0, w1, a01);
          a10 = _mm512_fmadd_ps(d1, w0, a10);
          a11 = _mm512_fmadd_ps(d1, w1, a11);
          a20 = _mm512_fmadd_ps(d2, w0, a20);
          a21 = _mm512_fmadd_ps(d2, w1, a21);
          a30 = _mm512_fmadd_ps(d3, w0, a30);
          a31 = _mm512_fmadd_ps(d3, w1, a31);
        }
      } else {
        GLOW_CG_PIXEL(0)
        GLOW_CG_PIXEL(1)
        GLOW_CG_PIXEL(2)
        GLOW_CG_PIXEL(3)
      }
    }
  }
  const __m512 acc[4][2] = {{a00, a01}, {a10, a11}, {a20, a21}, {a30, a31}};
  for (size_t j = 0; j < np; j++) {
    float *out = sg + b * p->s_b + ih * p->s_h + (iw + j) * p->s_w + g * p->cg + c;
    __m512 v0 = acc[j][0], v1 = acc[j][1];
    if (p->accumulate) {
      v0 = _mm512_add_ps(_mm512_maskz_loadu_ps(m0, out), v0);
      v1 = _mm512_add_ps(_mm512_maskz_loadu_ps(m1, out + 16), v1);
    }
    _mm512_mask_storeu_ps(out, m0, v0);
    _mm512_mask_storeu_ps(out + 16, m1, v1);
  }
}
#undef GLOW_CG_PIXEL

/* Needs f_c == 1 (the filter's channels contiguous). */
static void glow_cg_src_f32(float *sg, const float *dg, const float *f, const glow_cg_t *p) {
  for (size_t b = 0; b < p->n; b++)
    for (size_t g = 0; g < p->group; g++)
      for (size_t ih = 0; ih < p->h; ih++)
        for (size_t iw = 0; iw < p->w; iw += 4)
          for (size_t c = 0; c < p->cg; c += 32)
            glow_cg_src_px(sg, dg, f, p, b, ih, iw, glow_min(4, p->w - iw), g, c,
                           glow_min(32, p->cg - c));
}

/* The output rows are taken in chunks whose Src and DestGrad rows fit
 * GLOW_CG_CHUNK bytes (L2), each chunk running every block before the
 * next, so a large batch does not stream its activations once per block;
 * a block goes on from the sums FilterGrad holds. */
#ifndef GLOW_CG_CHUNK
#define GLOW_CG_CHUNK (256u * 1024u)
#endif
static void glow_cg_filter_f32(float *fg, const float *src, const float *dg, const glow_cg_t *p) {
  const int wide = p->cg >= 16;
  const size_t ob = wide ? 4 : 32, cb = wide ? 32 : 4;
  const size_t row_bytes = 4 * (p->ow * p->d_w + p->sh * p->w * p->s_w);
  const size_t chunk = glow_max(1, GLOW_CG_CHUNK / glow_max(1, row_bytes));
  const size_t rows = p->n * p->oh;
  for (size_t r0 = 0; r0 < rows; r0 += chunk) {
    const size_t r1 = glow_min(rows, r0 + chunk);
    for (size_t g = 0; g < p->group; g++)
      for (size_t o = g * p->ocg; o < (g + 1) * p->ocg; o += ob) {
        const size_t no = glow_min(ob, (g + 1) * p->ocg - o);
        for (size_t ky = 0; ky < p->kh; ky++)
          for (size_t kx = 0; kx < p->kw; kx++)
            for (size_t c = 0; c < p->cg; c += cb) {
              const size_t nc = glow_min(cb, p->cg - c);
              if (wide)
                glow_cg_filter_c(fg, src, dg, p, g, o, no, c, nc, ky, kx, r0, r1);
              else
                glow_cg_filter_o(fg, src, dg, p, g, o, no, c, nc, ky, kx, r0, r1);
            }
      }
  }
}

#endif
/*@end*/
