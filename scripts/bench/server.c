/* Timing server around one bundle, for scripts/bench_models.py. Built with
 * -DB=<bundle> -DIN=<input macro suffix> -DOUT=<output macro suffix>.
 * argv: WEIGHTS INPUT.bin; stdin commands: `r` runs once and prints
 * "WALL_MS RC CPU_MS" (CPU time of the calling thread), `o PATH` writes the
 * output tensor, `q` quits. With -DGLOW_PROFILE (a bundle emitted with
 * `glow-opt --trace-hook`) the hook records the monotonic time after each
 * instruction, and `p PATH` writes the last run's "POS NS" lines, NS the time
 * since the previous instruction ended (scripts/bench/profile.py). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
#define M(s) CAT(CAT(B, _), s)
#define STR2(x) #x
#define STR(x) STR2(x)
#include STR(B.h)

#ifdef GLOW_PROFILE
#define GLOW_PROFILE_MAX 100000
static struct timespec glow_prof_t0;
static int glow_prof_pos[GLOW_PROFILE_MAX];
static struct timespec glow_prof_at[GLOW_PROFILE_MAX];
static int glow_prof_n;
void glow_trace_hook(int pos, const uint8_t *c, const uint8_t *m, const uint8_t *a) {
  (void)c;
  (void)m;
  (void)a;
  if (glow_prof_n < GLOW_PROFILE_MAX) {
    clock_gettime(CLOCK_MONOTONIC, &glow_prof_at[glow_prof_n]);
    glow_prof_pos[glow_prof_n++] = pos;
  }
}
static double glow_prof_ns(struct timespec a, struct timespec b) {
  return (b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec);
}
#endif

static uint8_t *region(size_t n) {
  void *p = NULL;
  if (posix_memalign(&p, M(MEM_ALIGN), n ? n : 64)) return NULL;
  memset(p, 0, n ? n : 64);
  return p;
}
static double ms(clockid_t c) {
  struct timespec t;
  clock_gettime(c, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}
int main(int argc, char **argv) {
  uint8_t *cw = region(M(CONSTANT_MEM_SIZE)), *mw = region(M(MUTABLE_MEM_SIZE)),
          *act = region(M(ACTIVATIONS_MEM_SIZE));
  size_t in_bytes = (size_t)(M(OUT) - M(IN)), out_bytes = M(MUTABLE_MEM_SIZE) - M(OUT);
  uint8_t *in = malloc(in_bytes);
  char line[4096];
  FILE *f;
  if (argc < 3 || !cw || !mw || !act || !in) return 2;
  f = fopen(argv[1], "rb");
  if (!f || fread(cw, 1, M(CONSTANT_MEM_SIZE), f) != M(CONSTANT_MEM_SIZE)) return 1;
  fclose(f);
  f = fopen(argv[2], "rb");
  if (!f || fread(in, 1, in_bytes, f) != in_bytes) return 1;
  fclose(f);
  printf("ready\n");
  fflush(stdout);
  while (fgets(line, sizeof line, stdin)) {
    if (line[0] == 'r') {
      double c0, t0, t1, c1;
      int rc;
      memcpy(mw + M(IN), in, in_bytes);
#ifdef GLOW_PROFILE
      glow_prof_n = 0;
      clock_gettime(CLOCK_MONOTONIC, &glow_prof_t0);
#endif
      c0 = ms(CLOCK_THREAD_CPUTIME_ID);
      t0 = ms(CLOCK_MONOTONIC);
      rc = B(cw, mw, act);
      t1 = ms(CLOCK_MONOTONIC);
      c1 = ms(CLOCK_THREAD_CPUTIME_ID);
      printf("%.4f %d %.4f\n", t1 - t0, rc, c1 - c0);
    } else if (line[0] == 'o') {
      FILE *g;
      line[strcspn(line, "\n")] = 0;
      g = fopen(line + 2, "wb");
      if (!g || fwrite(mw + M(OUT), 1, out_bytes, g) != out_bytes) return 1;
      fclose(g);
      printf("ok\n");
#ifdef GLOW_PROFILE
    } else if (line[0] == 'p') {
      FILE *g;
      line[strcspn(line, "\n")] = 0;
      g = fopen(line + 2, "w");
      if (!g) return 1;
      for (int i = 0; i < glow_prof_n; i++)
        fprintf(g, "%d %.0f\n", glow_prof_pos[i],
                glow_prof_ns(i ? glow_prof_at[i - 1] : glow_prof_t0, glow_prof_at[i]));
      fclose(g);
      printf("ok\n");
#endif
    } else {
      break;
    }
    fflush(stdout);
  }
  return 0;
}
