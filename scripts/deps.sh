# Sourced by scripts/run and scripts/test: installs the Debian packages stepcast builds with,
# only those missing, then configures and builds into build/ (or $STEPCAST_BUILD_DIR).
STEPCAST_PACKAGES=(cmake ninja-build g++ libboost-graph-dev libeigen3-dev nlohmann-json3-dev libcli11-dev
                   doctest-dev libbenchmark-dev libfmt-dev python3
                   libprotobuf-dev protobuf-compiler  # Chakra trace export (src/report/chakra/et_def.proto)
                   libopenmpi-dev openmpi-bin)  # optional for the build: MPI sharing of table/search/validate

# Optional: the Python module `stepcast` (python/), its pytest suite and the notebook in examples/,
# all for Debian's interpreter /usr/bin/python3, whose dist-packages hold these. scripts/test
# installs them; without pybind11 or the Python headers the module is not built and its tests skip.
STEPCAST_PYTHON_PACKAGES=(python3-dev pybind11-dev python3-pybind11 python3-pytest python3-pandas python3-matplotlib
                          jupyter-nbconvert python3-ipykernel python3-nbformat)

# The sanitizer build: clang with ASan+UBSan and libFuzzer coverage, tests and fuzz targets in one
# tree, so CI compiles it once for `scripts/test --sanitize` and `scripts/fuzz`. Libraries compile
# as unity sources, as in Release (scripts/tidy-inputs gives clang-tidy one entry per source), and
# with line tables only: sanitizer reports keep their file:line, the objects lose the rest.
STEPCAST_FUZZ_PACKAGES=(clang libclang-rt-dev)
# scripts/test: Debian's Chromium (and the DejaVu fonts its text is measured in), to render the committed
# reports headless and look for cut-off text.
STEPCAST_BROWSER_PACKAGES=(chromium fonts-dejavu-core)
# scripts/lint: the formatter and the static checks (the same LLVM release as clang).
STEPCAST_LINT_PACKAGES=(clang-format clang-tidy)
STEPCAST_SANITIZE_CONFIG=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only"
                          -DSTEPCAST_SANITIZE=ON -DSTEPCAST_FUZZ=ON -DSTEPCAST_BUILD_BENCH=OFF
                          -DSTEPCAST_BUILD_VALIDATE=OFF -DSTEPCAST_UNITY=ON)

stepcast_install_missing() {
  local missing=()
  for p in "${STEPCAST_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "stepcast: installing ${missing[*]}" >&2
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
}

stepcast_build() {
  local build_dir=$1; shift
  # Configure every time: cheap once the cache exists, and it applies this script's settings to a
  # folder another script configured (scripts/run, then scripts/test with its benchmarks).
  # CUDA is optional: point CMake at nvcc where it is installed.
  local cuda_args=()
  [ -x /usr/local/cuda/bin/nvcc ] && cuda_args=(-DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc)
  cmake -S "$STEPCAST_ROOT" -B "$build_dir" -G Ninja "${cuda_args[@]}" "$@" >&2
  # STEPCAST_TARGET builds one target and what it needs (scripts/run: the stepcast executable).
  cmake --build "$build_dir" ${STEPCAST_TARGET:+--target "$STEPCAST_TARGET"} >&2
}
