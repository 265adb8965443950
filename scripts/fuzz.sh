#!/bin/sh
# Long fuzzing runs: scripts/fuzz.sh MINUTES [TARGET...]
# Runs each cargo-fuzz target (default: all) for MINUTES minutes under
# libFuzzer, seeded from test/ and testdata/ (and the official ONNX suite's
# models, from $GLOW_CORPUS or ../shared/corpus, when present), then the glow-smith oracle for
# the same time. Crashes land in fuzz/artifacts/TARGET/; copy each into
# fuzz/regressions/TARGET/ so `cargo test` replays it (docs/fuzzing.md).
set -eu
minutes=${1:?usage: scripts/fuzz.sh MINUTES [TARGET...]}
shift
root=$(cd "$(dirname "$0")/.." && pwd)
targets=${*:-gir onnx filecheck lit trace smith}
seconds=$((minutes * 60))

# The official ONNX node suite's models seed the onnx target when the corpus
# is there (one flat directory, as libFuzzer wants).
corpus=${GLOW_CORPUS:-$root/../shared/corpus}
official_seeds=""
if [ -d "$corpus/onnx/official" ]; then
  official_seeds=$(mktemp -d)
  trap 'rm -rf "$official_seeds"' EXIT
  for d in "$corpus"/onnx/official/*/; do
    [ -f "$d/model.onnx" ] && cp "$d/model.onnx" "$official_seeds/$(basename "$d").onnx"
  done
fi

seeds() {
  case $1 in
    gir | lit) echo "$root/test" ;;
    onnx) echo "$root/testdata/onnx $official_seeds" ;;
    filecheck) echo "$root/test/filecheck" ;;
    trace) echo "$root/testdata/glow-traces" ;;
    *) echo "" ;;
  esac
}

cd "$root/fuzz"
cargo +nightly fuzz build -O
status=0
for t in $targets; do
  mkdir -p "corpus/$t" "artifacts/$t"
  echo "== $t: $minutes min"
  # shellcheck disable=SC2046 # an empty seed list must expand to nothing
  cargo +nightly fuzz run -O "$t" "corpus/$t" $(seeds "$t") -- \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
    -print_final_stats=1 || status=1
done

# The oracle, as many programs as fit in the same time (seeds from the clock).
cd "$root"
cargo build --release -p glow-smith
seed=$(date +%s)
end=$(($(date +%s) + seconds))
while [ "$(date +%s)" -lt "$end" ]; do
  ./target/release/glow-smith --count 200 --seed "$seed" --failures fuzz/artifacts/smith-oracle | tail -n 1 || status=1
  seed=$((seed + 200))
done
exit $status
