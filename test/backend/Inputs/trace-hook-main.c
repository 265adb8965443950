/* Driver of test/backend/trace-hook.gir: prints each hook call's position
 * and the output %y as it is then. */
#include <stdio.h>
#include "hook.h"

static float mem[64] __attribute__((aligned(64)));

void glow_trace_hook(int pos, const uint8_t *constantWeight, const uint8_t *mutableWeight,
                     const uint8_t *activations) {
  (void)constantWeight;
  (void)activations;
  printf("%d %g\n", pos, (double)((const float *)(mutableWeight + hook_y))[0]);
}

int main(void) {
  uint8_t *m = (uint8_t *)mem;
  ((float *)(m + hook_x))[0] = -3.0f;
  return hook(0, m, (uint8_t *)(mem + 32));
}
