# shellcheck shell=bash
# Which data the experiments use. Sourced by run_experiments.sh.
#
#   LIBSVM_TRAIN / LIBSVM_TEST / LIBSVM_NAME   the convex problems: --libsvm PATH (test file PATH.t or
#       PATH with .gz -> .t.gz when present, else a held-out split), else a9a + a9a.t shipped with the
#       repository (datasets/libsvm, see datasets/README.md), else from $ASYNCDP_SHARED_DIR/datasets/libsvm
#       (default ../shared beside the repository), else a binary task cut from Fashion-MNIST (two classes,
#       written as LIBSVM text by fashion_binary.sh).
#   IMAGES_TRAIN / IMAGES_TEST / IMAGES_NAME   LeNet: --images DIR (train-images-idx3-ubyte[.gz] and
#       t10k-images-idx3-ubyte[.gz], labels beside them), default Debian's Fashion-MNIST.

# The first existing file among the arguments (empty if none).
first_file() {
  local f
  for f in "$@"; do
    if [ -f "$f" ]; then
      printf '%s' "$f"
      return
    fi
  done
}

resolve_libsvm() {
  local given=${1:-}
  if [ -n "$given" ]; then
    [ -f "$given" ] || die "--libsvm $given: no such file"
    LIBSVM_TRAIN=$(cd "$(dirname "$given")" && pwd)/$(basename "$given")
    LIBSVM_TEST=$(first_file "$LIBSVM_TRAIN.t" "${LIBSVM_TRAIN%.gz}.t.gz" "${LIBSVM_TRAIN%.gz}.t")
    LIBSVM_NAME=$(basename "${LIBSVM_TRAIN%.gz}")
    if [ -n "$LIBSVM_TEST" ]; then
      LIBSVM_ORIGIN="--libsvm $given, test file $(basename "$LIBSVM_TEST")"
    else
      LIBSVM_ORIGIN="--libsvm $given, no test file found: 20% of the rows held out (data.test_fraction)"
    fi
    return
  fi
  local dir
  for dir in "$REPO_DIR/datasets/libsvm" "$SHARED_DIR/datasets/libsvm"; do
    [ -d "$dir" ] || continue
    dir=$(cd "$dir" && pwd)
    if [ -f "$dir/a9a.gz" ] && [ -f "$dir/a9a.t.gz" ]; then
      LIBSVM_TRAIN=$dir/a9a.gz
      LIBSVM_TEST=$dir/a9a.t.gz
      LIBSVM_NAME=a9a
      LIBSVM_ORIGIN="LIBSVM a9a / a9a.t from $dir"
      return
    fi
  done
  dir="$REPO_DIR/datasets/libsvm or $SHARED_DIR/datasets/libsvm"
  resolve_images ""
  local pair=${ASYNCDP_FASHION_PAIR:-7,9}
  local cache=$REPO_DIR/.cache/experiments
  log "no LIBSVM data under $dir: cutting the binary task Fashion-MNIST classes {$pair} (LIBSVM text, cached)"
  "$EXP_DIR/fashion_binary.sh" "$IMAGES_TRAIN" "$pair" "$cache/fashion_${pair/,/_}.train.libsvm" ||
    die "could not write the Fashion-MNIST binary task"
  "$EXP_DIR/fashion_binary.sh" "$IMAGES_TEST" "$pair" "$cache/fashion_${pair/,/_}.test.libsvm" ||
    die "could not write the Fashion-MNIST binary task"
  LIBSVM_TRAIN=$cache/fashion_${pair/,/_}.train.libsvm
  LIBSVM_TEST=$cache/fashion_${pair/,/_}.test.libsvm
  LIBSVM_NAME="fashion-mnist-${pair/,/-vs-}"
  LIBSVM_ORIGIN="Fashion-MNIST classes {$pair} as a binary LIBSVM task (no LIBSVM data under $dir)"
}

resolve_images() {
  local dir=${1:-$FASHION_DIR}
  IMAGES_TRAIN=$(first_file "$dir/train-images-idx3-ubyte.gz" "$dir/train-images-idx3-ubyte")
  IMAGES_TEST=$(first_file "$dir/t10k-images-idx3-ubyte.gz" "$dir/t10k-images-idx3-ubyte")
  [ -n "$IMAGES_TRAIN" ] && [ -n "$IMAGES_TEST" ] ||
    die "no IDX images (train-images-idx3-ubyte[.gz], t10k-images-idx3-ubyte[.gz]) in $dir" \
      "(install dataset-fashion-mnist or pass --images DIR)"
  if [ "$dir" = "$FASHION_DIR" ]; then IMAGES_NAME=fashion-mnist; else IMAGES_NAME=$(basename "$dir"); fi
  IMAGES_ORIGIN="IDX images from $dir"
}

# --set overrides that point a configuration at the LIBSVM data (declared features = 0: inferred).
libsvm_data_overrides() {
  printf '%s\n' --set "data.train=$LIBSVM_TRAIN" --set "data.test=$LIBSVM_TEST" --set data.features=0 \
    --set data.format=libsvm
}
images_data_overrides() {
  printf '%s\n' --set "data.train=$IMAGES_TRAIN" --set "data.test=$IMAGES_TEST" --set data.format=idx
}
