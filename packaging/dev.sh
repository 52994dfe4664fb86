#!/usr/bin/env bash
# Developer entry point on Debian 12: installs what is missing, builds, then runs the app or the tests.
#   packaging/dev.sh run    build and launch Fluxmap on its start page: a demo of every family
#   packaging/dev.sh test   build and run every test suite (GUI tests under xvfb-run)
set -euo pipefail
cd "$(dirname "$(readlink -f "$0")")/.."

packages=(build-essential meson ninja-build pkg-config libglib2.0-dev libgtk-3-dev libtiff-dev
  libsqlite3-dev libjson-glib-dev xvfb xauth gettext appstream desktop-file-utils
  libglib2.0-bin dbus-x11 libnifti2-dev libdcmtk-dev libfftw3-dev g++ python3-scipy libssl-dev
  zlib1g-dev libopenjp2-7-dev python3-pydicom dicom3tools libaravis-dev
  slurm-wlm munge) # slurm-wlm, munge: tests/batch/slurm-localhost.sh starts a Slurm on localhost

install_missing() {
  local missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "dev.sh: installing ${missing[*]}"
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

meson_at_least() {
  [ "$(printf '%s\n%s\n' "$1" "$(meson --version)" | sort -V | head -1)" = "$1" ]
}

build() {
  local dir=${FLUXMAP_BUILD_DIR:-build}
  if [ ! -f "$dir/build.ninja" ]; then
    local native=()
    # Meson before 1.4 leaves header changes out of CUDA objects' dependencies: compile through
    # packaging/nvcc-deps.sh, which asks nvcc for them.
    if command -v nvcc >/dev/null && ! meson_at_least 1.4.0; then
      mkdir -p "$dir"
      printf "[binaries]\ncuda = '%s'\n" "$PWD/packaging/nvcc-deps.sh" >"$dir/nvcc-deps.ini"
      native=(--native-file "$dir/nvcc-deps.ini")
    fi
    meson setup "$dir" -Dgui=enabled -Dtests=true "${native[@]}"
  fi
  meson compile -C "$dir"
}

case "${1:-}" in
  run)
    install_missing
    build
    dir=${FLUXMAP_BUILD_DIR:-build}
    # Run uninstalled: the compiled settings schema lives in the build tree.
    export GSETTINGS_SCHEMA_DIR="$PWD/$dir/data"
    export FLUXMAP_DEMO_DIR="$PWD/$dir/data/demo"
    exec "$dir/app/gui/fluxmap"
    ;;
  test)
    install_missing
    build
    dir=${FLUXMAP_BUILD_DIR:-build}
    # One meson invocation so that its summary ("Ok: N  Fail: N ...") is the last thing printed.
    xvfb-run -a -s '-screen 0 1920x1080x24' \
      meson test -C "$dir" --print-errorlogs --num-processes "$(nproc)" --timeout-multiplier 3
    ;;
  *)
    echo "usage: packaging/dev.sh run|test" >&2
    exit 2
    ;;
esac
