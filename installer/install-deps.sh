#!/usr/bin/env bash
# Installs the Debian 12 packages Clausewright needs to build, test and run.
# Does nothing when everything is there. Needs root or sudo for apt-get.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git
  qt6-base-dev qt6-base-dev-tools qt6-declarative-dev qml6-module-qtquick
  qml6-module-qtquick-controls libqt6sql6-sqlite qt6-svg-dev qt6-tools-dev qt6-tools-dev-tools
  qt6-l10n-tools libpoppler-qt6-dev qcoro-qt6-dev libsqlite3-dev libquazip1-qt6-dev
  nlohmann-json3-dev libpcre2-dev libicu-dev libcli11-dev liblzma-dev libyaml-cpp-dev
  libgtest-dev libbenchmark-dev
  libcpp-httplib-dev prometheus-cpp-dev qtkeychain-qt6-dev libxlsxwriter-dev
  xvfb xauth fonts-dejavu fonts-noto-cjk poppler-utils xz-utils
  desktop-file-utils appstream libxml2-utils
  # Running generated tests: the sandbox and the toolchains of its runners (node:test needs
  # node 20 or newer, which Debian 12 does not have: JavaScript runs where one is installed).
  bubblewrap libseccomp-dev python3-pytest python3-coverage golang-go
)
# tests/install/package_test.sh: a Debian 12 root to install into, Xvfb's screen to PNG.
if [[ "${CW_WITH_PACKAGING:-0}" == 1 ]]; then
  packages+=(debootstrap dpkg-dev fakeroot netpbm librsvg2-bin)
fi
# The slow tests that open redlines and folder tables in LibreOffice (ctest -L slow).
if [[ "${CW_WITH_LIBREOFFICE:-0}" == 1 ]]; then
  packages+=(libreoffice-writer-nogui libreoffice-calc-nogui)
fi
if [[ "${CW_WITH_FUZZ:-0}" == 1 ]]; then
  packages+=(clang libclang-rt-14-dev)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
if ((${#missing[@]} == 0)); then
  exit 0
fi

echo "Installing ${#missing[@]} missing Debian packages: ${missing[*]}"
sudo=""
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "install-deps: need root or sudo to run apt-get" >&2; exit 1; }
  sudo=sudo
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
