/* The detection kernels (docs/gir.md, "Detection"), in the operation order
 * of the interpreter's `interp/detection.rs`. Index buffers are int32_t or
 * int64_t (`wide`). */
static inline int64_t glow_det_get(const void *p, int wide, size_t i) {
  return wide ? ((const int64_t *)p)[i] : (int64_t)((const int32_t *)p)[i];
}
static inline void glow_det_put(void *p, int wide, size_t i, int64_t v) {
  if (wide)
    ((int64_t *)p)[i] = v;
  else
    ((int32_t *)p)[i] = (int32_t)v;
}
static inline float glow_det_max(float a, float b) { return a < b ? b : a; }
static inline float glow_det_min(float a, float b) { return b < a ? b : a; }
static inline void glow_det_min_max(float l, float r, float *lo, float *hi) {
  if (l >= r) {
    *lo = r;
    *hi = l;
  } else {
    *lo = l;
    *hi = r;
  }
}

/* Box s (selected) suppresses box c (candidate): Glow's doIOU. */
static int glow_det_suppresses(const float *s, const float *c, int center, float iou) {
  float xs0, ys0, xs1, ys1, xc0, yc0, xc1, yc1;
  if (!center) {
    glow_det_min_max(s[0], s[2], &xs0, &xs1);
    glow_det_min_max(s[1], s[3], &ys0, &ys1);
    glow_det_min_max(c[0], c[2], &xc0, &xc1);
    glow_det_min_max(c[1], c[3], &yc0, &yc1);
  } else {
    const float hws = s[2] / 2.0f, hhs = s[3] / 2.0f;
    const float hwc = c[2] / 2.0f, hhc = c[3] / 2.0f;
    xs0 = s[0] - hws;
    ys0 = s[1] - hhs;
    xs1 = s[0] + hws;
    ys1 = s[1] + hhs;
    xc0 = c[0] - hwc;
    yc0 = c[1] - hhc;
    xc1 = c[0] + hwc;
    yc1 = c[1] + hhc;
  }
  const float x0 = glow_det_max(xs0, xc0), y0 = glow_det_max(ys0, yc0);
  const float x1 = glow_det_min(xs1, xc1), y1 = glow_det_min(ys1, yc1);
  const float inter = glow_det_max(0.0f, x1 - x0) * glow_det_max(0.0f, y1 - y0);
  if (inter == 0.0f) return 0;
  const float sa = (xs1 - xs0) * (ys1 - ys0);
  const float ca = (xc1 - xc0) * (yc1 - yc0);
  const float uni = sa + ca - inter;
  return inter > iou * uni;
}

/* nonmaxsuppression: limit < 0 is no limit; rows of Indices; cn elements of
 * NumberOfSelectedIndices. */
static void glow_nms(void *idx, void *count, int wide, const float *boxes, const float *scores,
                     size_t nb, size_t nc, size_t n, int v4, int center, int64_t limit, float iou,
                     float score, size_t rows, size_t cn, int compact) {
  const size_t w = v4 ? 1 : 3;
  const size_t per = compact ? rows : (nb ? rows / nb : 0);
  size_t out = 0;
  int64_t total = 0;
  for (size_t i = 0; i < rows * w; i++) glow_det_put(idx, wide, i, compact ? -1 : 0);
  for (size_t i = 0; i < cn; i++) glow_det_put(count, wide, i, 0);
  for (size_t b = 0; b < nb; b++) {
    if (!compact) out = b * per;
    const size_t end = compact ? rows : (b + 1) * per;
    float min_score = nc * n != 0 ? scores[b * nc * n] : 0.0f;
    int64_t min_class = 0, min_box = 0, detected = 0;
    int full = 0;
    for (size_t c = 0; c < nc; c++) {
      const float *s = scores + (b * nc + c) * n;
      const size_t first = out;
      float t = min_score;
      int64_t picked = 0;
      size_t prev = 0;
      int has_prev = 0;
      while (limit < 0 || picked < limit) {
        size_t best = 0;
        int found = 0;
        for (size_t i = 0; i < n; i++) {
          if (!(s[i] > score)) continue;
          if (has_prev && !(s[i] < s[prev] || (s[i] == s[prev] && i > prev))) continue;
          if (!found || s[i] > s[best] || (s[i] == s[best] && i < best)) {
            best = i;
            found = 1;
          }
        }
        if (!found) break;
        prev = best;
        has_prev = 1;
        int kept = 1;
        const float *cb = boxes + (v4 ? best * 4 : (b * n + best) * 4);
        for (size_t r = first; r < out; r++) {
          const size_t j = (size_t)glow_det_get(idx, wide, r * w + w - 1);
          const float *sb = boxes + (v4 ? j * 4 : (b * n + j) * 4);
          if (glow_det_suppresses(sb, cb, center, iou)) {
            kept = 0;
            break;
          }
        }
        if (!kept) continue;
        if (out >= end) {
          full = 1;
          break;
        }
        if (v4) {
          glow_det_put(idx, wide, out, (int64_t)best);
        } else {
          glow_det_put(idx, wide, out * 3, (int64_t)b);
          glow_det_put(idx, wide, out * 3 + 1, (int64_t)c);
          glow_det_put(idx, wide, out * 3 + 2, (int64_t)best);
        }
        out++;
        picked++;
        detected++;
        t = s[best];
      }
      if (t < min_score) {
        min_score = t;
        min_class = (int64_t)c;
        min_box = glow_det_get(idx, wide, (out - 1) * w + w - 1);
      }
      if (full) break;
    }
    total += detected;
    if (!compact) {
      for (; out < end; out++) {
        if (v4) {
          glow_det_put(idx, wide, out, min_box);
        } else {
          glow_det_put(idx, wide, out * 3, (int64_t)b);
          glow_det_put(idx, wide, out * 3 + 1, min_class);
          glow_det_put(idx, wide, out * 3 + 2, min_box);
        }
      }
      const size_t share = cn / nb;
      for (size_t i = b * share; i < (b + 1) * share; i++) glow_det_put(count, wide, i, detected);
    } else if (full) {
      break;
    }
  }
  if (compact)
    for (size_t i = 0; i < cn; i++) glow_det_put(count, wide, i, total);
}

/* roialign: the most samples per bin side taken from a box's size. */
#define GLOW_ROI_MAX_SAMPLES 1024
static size_t glow_roi_samples(float side, size_t bins) {
  const float r = ceilf(side / (float)bins);
  if (!(r > 0.0f)) return 0;
  if (r > (float)GLOW_ROI_MAX_SAMPLES) return GLOW_ROI_MAX_SAMPLES;
  return (size_t)r;
}

/* roialign, mode 0 AVG, 1 MAX, 2 ONNX_MAX; `batch` int32_t or int64_t. */
static void glow_roi_align(float *out, const float *map, const float *boxes, const void *batch,
                           int wide, size_t n, size_t h, size_t w, size_t c, size_t k, size_t oh,
                           size_t ow, size_t cols, int mode, int aligned, int rotated,
                           size_t ratio, float scale) {
  const float offset = aligned ? 0.5f : 0.0f;
  for (size_t i = 0; i < k * oh * ow * c; i++) out[i] = 0.0f;
  for (size_t b = 0; b < k; b++) {
    const float *bx = boxes + b * cols;
    int64_t nb;
    if (cols == 4 && !rotated) {
      nb = glow_det_get(batch, wide, b);
    } else {
      const float v = bx[0];
      nb = (v > -1.0f && v < (float)n) ? (int64_t)v : -1;
    }
    if (nb < 0 || (uint64_t)nb >= (uint64_t)n || h == 0 || w == 0) continue;
    const size_t first = (cols == 4 && !rotated) ? 0 : 1;
    float y_ref, x_ref, bh, bw;
    float sn = 0.0f, cs = 0.0f, cy = 0.0f, cx = 0.0f;
    if (rotated) {
      cx = bx[1] * scale - offset;
      cy = bx[2] * scale - offset;
      float wd = bx[3] * scale, ht = bx[4] * scale;
      const float theta = bx[5] * 3.14159274101257324f / 180.0f;
      if (!aligned) {
        ht = glow_det_max(ht, 1.0f);
        wd = glow_det_max(wd, 1.0f);
      }
      sn = sinf(theta);
      cs = cosf(theta);
      y_ref = -ht / 2.0f;
      x_ref = -wd / 2.0f;
      bh = ht;
      bw = wd;
    } else {
      const float c0 = bx[first] * scale - offset;
      const float c1 = bx[first + 1] * scale - offset;
      float c2 = bx[first + 2] * scale - offset;
      float c3 = bx[first + 3] * scale - offset;
      if (!aligned) {
        c2 = glow_det_max(c2, c0 + 1.0f);
        c3 = glow_det_max(c3, c1 + 1.0f);
      }
      y_ref = c1;
      x_ref = c0;
      bh = c3 - c1;
      bw = c2 - c0;
    }
    const size_t sh = ratio > 0 ? ratio : glow_roi_samples(bh, oh);
    const size_t sw = ratio > 0 ? ratio : glow_roi_samples(bw, ow);
    const float bin_h = bh / (float)oh, bin_w = bw / (float)ow;
    const float step_h = bin_h / (float)sh, step_w = bin_w / (float)sw;
    const float *m = map + (size_t)nb * h * w * c;
    for (size_t py = 0; py < oh; py++)
      for (size_t px = 0; px < ow; px++) {
        float *o = out + ((b * oh + py) * ow + px) * c;
        for (size_t gy = 0; gy < sh; gy++)
          for (size_t gx = 0; gx < sw; gx++) {
            float iy = y_ref + (float)py * bin_h + ((float)gy + 0.5f) * step_h;
            float ix = x_ref + (float)px * bin_w + ((float)gx + 0.5f) * step_w;
            if (rotated) {
              const float yy = iy, xx = ix;
              iy = yy * cs - xx * sn + cy;
              ix = xx * cs + yy * sn + cx;
            }
            size_t top = 0, left = 0, bottom = 0, right = 0;
            float tw = 0.0f, lw = 0.0f, bwt = 0.0f, rw = 0.0f;
            if (iy >= -1.0f && iy <= (float)h && ix >= -1.0f && ix <= (float)w) {
              const float y = glow_det_min(glow_det_max(iy, 0.0f), (float)(h - 1));
              const float x = glow_det_min(glow_det_max(ix, 0.0f), (float)(w - 1));
              top = (size_t)floorf(y);
              left = (size_t)floorf(x);
              bottom = top + 1 < h - 1 ? top + 1 : h - 1;
              right = left + 1 < w - 1 ? left + 1 : w - 1;
              bwt = y - (float)top;
              rw = x - (float)left;
              tw = 1.0f - bwt;
              lw = 1.0f - rw;
            }
            const size_t i = gy * sw + gx;
            for (size_t ch = 0; ch < c; ch++) {
              const float tl = m[(top * w + left) * c + ch], tr = m[(top * w + right) * c + ch];
              const float bl = m[(bottom * w + left) * c + ch];
              const float br = m[(bottom * w + right) * c + ch];
              float v;
              if (mode == 2) {
                const float p0 = tl * (tw * lw), p1 = tr * (tw * rw);
                const float p2 = bl * (bwt * lw), p3 = br * (bwt * rw);
                v = p0;
                if (p1 > v) v = p1;
                if (p2 > v) v = p2;
                if (p3 > v) v = p3;
              } else {
                v = tl * (tw * lw) + tr * (tw * rw) + bl * (bwt * lw) + br * (bwt * rw);
              }
              if (mode == 0)
                o[ch] = o[ch] + v;
              else if (i == 0 || (mode == 1 ? o[ch] < v : v > o[ch]))
                o[ch] = v;
            }
          }
        if (mode == 0)
          for (size_t ch = 0; ch < c; ch++)
            o[ch] = sh * sw == 0 ? 0.0f : o[ch] / (float)(sh * sw);
      }
  }
}

/* A float truncated toward zero, saturating, NaN to 0 (Rust's `as`). */
static inline int64_t glow_det_trunc(float v) {
  if (v != v) return 0;
  if (v >= 9223372036854775808.0f) return INT64_MAX;
  if (v < -9223372036854775808.0f) return INT64_MIN;
  return (int64_t)v;
}

/* An image side from ImInfo: side / scale + 0.5 in double, truncated; NaN or
 * negative is 0, at most INT32_MAX. */
static inline int64_t glow_det_side(float side, float scale) {
  const double v = (double)(side / scale) + 0.5;
  if (!(v >= 0.0)) return 0;
  if (v >= (double)INT32_MAX) return INT32_MAX;
  return (int64_t)v;
}

/* bboxtransform: wt the 4 weights; plus 1 or 0 (LegacyPlusOne); clip the
 * bound on the log-space deltas (ln(1000 / 16) as f32, Glow's
 * bboxXformClip). */
static void glow_bbox_transform(float *out, float *splits, const float *rois, const float *deltas,
                                const float *info, size_t n, size_t rc, size_t dc, size_t nb,
                                const float *wt, int apply_scale, int rotated, int bound_on,
                                int64_t lo, int64_t hi, float thresh, float plus, float clip) {
  const size_t d = rotated ? 5 : 4, classes = dc / d, first = rc == d ? 0 : 1;
  const int64_t plus_i = (int64_t)plus;
  for (size_t i = 0; i < n * dc; i++) out[i] = 0.0f;
  size_t offset = 0;
  for (size_t b = 0; b < nb; b++) {
    size_t rows = 0;
    if (rc == d) {
      rows = b == 0 ? n : 0;
    } else {
      for (size_t i = 0; i < n; i++) {
        const int64_t id = glow_det_trunc(rois[i * rc]);
        if (id >= 0 && (uint64_t)id == (uint64_t)b) rows++;
      }
    }
    splits[b] = (float)rows;
    const float scale = info[b * 3 + 2];
    const float scale_after = apply_scale ? scale : 1.0f;
    const int64_t ih = glow_det_side(info[b * 3], scale);
    const int64_t iw = glow_det_side(info[b * 3 + 1], scale);
    const float sbi = 1.0f / scale;
    const float wl = (float)(iw - plus_i), hl = (float)(ih - plus_i);
    const float lim[4] = {wl, hl, wl, hl};
    for (size_t c = 0; c < classes; c++)
      for (size_t i = offset; i < offset + rows; i++) {
        const float *r = rois + i * rc + first;
        const float *dl = deltas + i * dc + c * d;
        float *o = out + i * dc + c * d;
        const float dx = dl[0] / wt[0];
        const float dy = dl[1] / wt[1];
        const float dw = glow_det_min(dl[2] / wt[2], clip);
        const float dh = glow_det_min(dl[3] / wt[3], clip);
        if (!rotated) {
          const float w = r[2] * sbi - r[0] * sbi + plus;
          const float h = r[3] * sbi - r[1] * sbi + plus;
          const float cx = r[0] * sbi + 0.5f * w;
          const float cy = r[1] * sbi + 0.5f * h;
          const float pcx = dx * w + cx, pcy = dy * h + cy;
          const float pw = expf(dw) * w, ph = expf(dh) * h;
          const float v[4] = {pcx - 0.5f * pw, pcy - 0.5f * ph, pcx + 0.5f * pw - plus,
                              pcy + 0.5f * ph - plus};
          for (size_t j = 0; j < 4; j++)
            o[j] = scale_after * glow_det_max(glow_det_min(v[j], lim[j]), 0.0f);
          continue;
        }
        const float da = dl[4] * 180.0f / 3.14159274101257324f;
        o[0] = dx * r[2] * sbi + r[0] * sbi;
        o[1] = dy * r[3] * sbi + r[1] * sbi;
        o[2] = expf(dw) * r[2] * sbi;
        o[3] = expf(dh) * r[3] * sbi;
        o[4] = da + r[4];
        if (bound_on) {
          const int64_t period = (int64_t)((uint64_t)hi - (uint64_t)lo);
          const int64_t a = glow_det_trunc(o[4]);
          if (a < lo)
            o[4] += (float)period;
          else if (a > hi)
            o[4] -= (float)period;
        }
        if (fabsf(o[4]) <= thresh) {
          const float cx = o[0], cy = o[1], w = o[2], h = o[3];
          const float cr[4] = {cx - (w - plus) / 2.0f, cy - (h - plus) / 2.0f,
                               cx + (w - plus) / 2.0f, cy + (h - plus) / 2.0f};
          float k[4];
          for (size_t j = 0; j < 4; j++)
            k[j] = 1.0f * glow_det_max(glow_det_min(cr[j], lim[j]), 0.0f);
          o[0] = (k[0] + k[2]) / 2.0f;
          o[1] = (k[1] + k[3]) / 2.0f;
          o[2] = k[2] - k[0] + plus;
          o[3] = k[3] - k[1] + plus;
        }
        for (size_t j = 0; j < 4; j++) o[j] *= scale_after;
      }
    offset += rows;
  }
}

/* mfcc: f mel bins (ranges: 2 * f int32), nc coefficients; log_zero the
 * logarithm of a zero power. The mel powers are recomputed, in bin order, for
 * each coefficient (no scratch memory; the same values each time). */
static void glow_mfcc(float *out, const float *spec, const float *weights, size_t nwt,
                      const int32_t *ranges, const float *dct, size_t nw, size_t ns, size_t f,
                      size_t nc, float log_zero) {
  for (size_t w = 0; w < nw; w++) {
    const float *row = spec + w * ns;
    for (size_t k = 0; k < nc; k++) {
      float acc = 0.0f;
      int64_t wi = 0;
      for (size_t b = 0; b < f; b++) {
        const int64_t lo = ranges[2 * b], hi = ranges[2 * b + 1];
        float p = 0.0f;
        const int64_t q0 = lo > 0 ? lo : 0, q1 = hi < (int64_t)ns - 1 ? hi : (int64_t)ns - 1;
        for (int64_t q = q0; q <= q1; q++) {
          const int64_t at = wi + (q - lo);
          if ((uint64_t)at < (uint64_t)nwt) p += sqrtf(row[q]) * weights[at];
        }
        if (hi >= lo) wi += hi - lo + 1;
        const float m = p == 0.0f ? log_zero : logf(p);
        acc += dct[k * f + b] * m;
      }
      out[w * nc + k] = acc;
    }
  }
}
