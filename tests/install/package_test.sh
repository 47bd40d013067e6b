#!/usr/bin/env bash
# Builds the Debian package and the portable archive, installs them into clean Debian 12
# roots and uses them the way a workstation user would:
#   tests/install/package_test.sh [BUILD_DIR]
#
# The clean root is a `debootstrap --variant=minbase bookworm` tree (no X server, no Qt, no
# NVIDIA driver), made once and cached in $CW_BASE_ROOT; every run copies it afresh. In a copy,
# apt installs the .deb with the dependencies it declares; a user runs `clausewright --version`
# and `clausewright-cli review` on the bundled sample, then the GUI from the .desktop file's
# Exec line (%F replaced by the sample, as a file manager does) on an Xvfb screen of the host,
# whose framebuffer is saved as PNG; then the package is removed and purged and the user's
# history must still be there. A second fresh copy gets the portable archive, with only what a
# desktop has (OpenGL, X11, fontconfig), and runs the same from the user's home.
#
# BUILD_DIR defaults to build-package, configured Release with debug symbols (packaged apart
# as clausewright-dbgsym) and without tests (`cpack` builds
# everything the build folder builds). Needs root (debootstrap, chroot, mounts) and network
# for apt. Packages it needs: `CW_WITH_PACKAGING=1 installer/install-deps.sh`.
# Results (logs, screenshots, the review) go to BUILD_DIR/package-test.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$src/build-package}
base=${CW_BASE_ROOT:-/var/tmp/cw-debian12-base}
mirror=${CW_DEBIAN_MIRROR:-http://deb.debian.org/debian}
id=io.github.clausewright.Clausewright
[[ $(id -u) -eq 0 ]] || { echo "package_test: needs root (debootstrap, chroot)" >&2; exit 1; }

start=$(date +%s)
step() { echo "== [$(($(date +%s) - start)) s] $*"; }
fail() { echo "FAILED: $*" >&2; exit 1; }

if [[ ! -f "$build/CMakeCache.txt" ]]; then
  step "configure $build"
  cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCW_BUILD_TESTS=OFF \
    -DCW_DEBUG_SYMBOLS=ON >/dev/null
fi
out=$build/package-test
rm -rf "$out" && mkdir -p "$out"

step "build and package (cpack -G DEB)"
cmake --build "$build" -j "${CW_JOBS:-1}" >"$out/build.log"
(cd "$build" && cpack -G DEB -B "$out/deb" >"$out/cpack.log" 2>&1) || { tail -30 "$out/cpack.log"; fail "cpack"; }
rm -rf "$out/deb/_CPack_Packages" # the staged tree: 1.5 GB with the CUDA libraries
deb=$(ls "$out"/deb/clausewright_*.deb)
dpkg-deb -I "$deb" | tee "$out/deb-info.txt" | sed -n '/Package:/,/Description:/p'
ls -l "$deb" "$out"/deb/clausewright-dbgsym_*.ddeb
step "portable archive"
portable=$("$src/installer/make-portable.sh" "$build" "$out")
ls -l "$portable"

if [[ ! -x "$base/usr/bin/apt-get" ]]; then
  step "debootstrap Debian 12 minbase into $base (cached for later runs)"
  rm -rf "$base"
  debootstrap --variant=minbase bookworm "$base" "$mirror" >"$out/debootstrap.log"
fi

roots=()
mounted=()
xvfb=
cleanup() {
  [[ -n "$xvfb" ]] && kill "$xvfb" 2>/dev/null || true
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -l "${mounted[i]}" 2>/dev/null || true; done
  for r in "${roots[@]}"; do rm -rf "$r"; done
}
trap cleanup EXIT

display=:$((90 + RANDOM % 9))
mkdir -p "$out/fb"
[[ -d /tmp/.X11-unix ]] || install -d -m 1777 /tmp/.X11-unix # bind-mounted into the roots

fresh_root() { # name: sets root to a copy of the base root, mounted, with a user "reviewer"
  local r=/var/tmp/cw-root-$1.$$
  rm -rf "$r" && cp -a "$base" "$r"
  roots+=("$r")
  cp /etc/resolv.conf "$r/etc/resolv.conf"
  mount -t proc proc "$r/proc" && mounted+=("$r/proc")
  mount --bind /dev "$r/dev" && mounted+=("$r/dev")
  mkdir -p "$r/tmp/.X11-unix" && mount --bind /tmp/.X11-unix "$r/tmp/.X11-unix" && mounted+=("$r/tmp/.X11-unix")
  chroot "$r" useradd -m -s /bin/sh reviewer
  chroot "$r" install -d -m 700 -o reviewer -g reviewer /run/user/reviewer
  root=$r
}
as_root() { chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"; }
as_user() {
  chroot --userspec=reviewer:reviewer "$root" env -i HOME=/home/reviewer USER=reviewer \
    PATH=/usr/bin:/bin LANG=C.UTF-8 DISPLAY="$display" XDG_RUNTIME_DIR=/run/user/reviewer "$@"
}
screenshot() { # file
  xwdtopnm "$out/fb/Xvfb_screen0" 2>/dev/null | pnmtopng >"$1"
  ls -l "$1"
}
# The user's history holds a review (the CLI's review of the sample runs with --no-save, so
# a review found there was saved by the GUI).
has_review() { as_user $cli history list 2>/dev/null | grep -E ' of [1-9][0-9]* reviews' >/dev/null; }
# Starts the GUI command line, waits until the history holds a review of the sample (or
# `seconds` pass when no review is expected), saves a screenshot, and stops the GUI.
run_gui() { # name seconds expect_review command...
  local name=$1 seconds=$2 expect=$3
  shift 3
  # A new X server per run: its framebuffer shows this GUI only, never the last one's frame.
  Xvfb "$display" -screen 0 1400x900x24 -fbdir "$out/fb" -nolisten tcp >"$out/xvfb-$name.log" 2>&1 &
  xvfb=$!
  sleep 1
  as_user sh -c "$*" >"$out/$name.log" 2>&1 &
  local gui=$! waited=0
  while ((waited < seconds)); do
    sleep 2 && waited=$((waited + 2))
    kill -0 "$gui" 2>/dev/null || { cat "$out/$name.log"; fail "$name: the GUI exited"; }
    if [[ $expect == 1 ]] && has_review; then
      sleep 3 # the review view paints after the save
      break
    fi
  done
  screenshot "$out/$name.png"
  kill "$gui" 2>/dev/null || true
  pkill -TERM -P "$gui" 2>/dev/null || true
  wait "$gui" 2>/dev/null || true
  kill "$xvfb" && wait "$xvfb" 2>/dev/null || true
  xvfb=
  if [[ $expect == 1 ]] && ! has_review; then
    fail "$name: no review of the sample in the history after ${seconds} s"
  fi
}
check_user_data() {
  local data=$root/home/reviewer/.local/share/Clausewright/Clausewright
  [[ -f "$data/history.sqlite" && -d "$data/plugins" ]] || fail "user data folder incomplete: $(ls -la "$data" 2>&1)"
  echo "user data: $(cd "$root/home/reviewer" && find .local/share/Clausewright .config/Clausewright 2>/dev/null | tr '\n' ' ')"
}

# ---- the Debian package
step "fresh root for the .deb"
fresh_root deb
if as_root ldconfig -p | grep 'libcuda\.so' >/dev/null; then fail "the clean root has an NVIDIA driver library"; fi
cp "$deb" "$root/tmp/"
step "apt-get install ./$(basename "$deb")"
as_root apt-get update -qq >"$out/apt.log" 2>&1
as_root apt-get install -y -q --no-install-recommends "/tmp/$(basename "$deb")" >>"$out/apt.log" 2>&1 \
  || { tail -30 "$out/apt.log"; fail "apt-get install"; }
grep -E '^(Need to get|After this operation)' "$out/apt.log" || true
for bin in clausewright clausewright-cli; do
  as_root ldd "/usr/bin/$bin" >"$out/ldd-$bin.txt"
  if grep 'not found' "$out/ldd-$bin.txt"; then fail "$bin: unresolved libraries"; fi
  if grep 'libcuda\.so' "$out/ldd-$bin.txt"; then fail "$bin links the CUDA driver"; fi
done
grep -E 'libcudart|libcublas' "$out/ldd-clausewright-cli.txt" || echo "(CPU-only build: no CUDA libraries)"

step "as the user: --version, devices, review of the sample"
cli=clausewright-cli
as_user clausewright-cli --version
as_user env QT_QPA_PLATFORM=offscreen clausewright --version
as_user clausewright-cli devices || true
sample=/usr/share/clausewright/samples/sample-contract.pdf
time as_user clausewright-cli review "$sample" --heads fast --format md --no-save >"$out/review.md"
grep -q 'Governing Law' "$out/review.md" || fail "the review has no Governing Law finding"
head -5 "$out/review.md"

step "GUI from the .desktop Exec line under Xvfb"
exec_line=$(sed -n 's/^Exec=//p' "$root/usr/share/applications/$id.desktop")
[[ -n "$exec_line" ]] || fail "no Exec line"
echo "Exec=$exec_line"
run_gui gui-first-start 12 0 "${exec_line//%F/}"
check_user_data
run_gui gui-sample 90 1 "${exec_line//%F/$sample}"
[[ -f "$root/usr/share/mime/packages/$id.xml" && -f "$root/usr/share/icons/hicolor/256x256/apps/$id.png" \
  && -f "$root/usr/share/metainfo/$id.metainfo.xml" ]] || fail "desktop integration files missing"

step "remove and purge the package: the user's history stays"
as_root apt-get remove -y -q clausewright >>"$out/apt.log" 2>&1
[[ ! -e "$root/usr/bin/clausewright" && ! -e "$root/usr/lib/clausewright" ]] || fail "program files left after remove"
as_root dpkg --purge clausewright >>"$out/apt.log" 2>&1
check_user_data
echo "kept: $(ls "$root/home/reviewer/.local/share/Clausewright/Clausewright")"

# ---- the portable archive, in a root with what a desktop has but no Qt, Poppler or ICU
step "fresh root for the portable archive"
for m in "$root/tmp/.X11-unix" "$root/dev" "$root/proc"; do umount -l "$m"; done
mounted=()
fresh_root portable
as_root apt-get update -qq >"$out/apt-portable.log" 2>&1
as_root apt-get install -y -q --no-install-recommends libgl1 libegl1 libopengl0 libfontconfig1 \
  libfreetype6 libx11-6 libxcb1 libexpat1 fonts-dejavu-core >>"$out/apt-portable.log" 2>&1 \
  || { tail -30 "$out/apt-portable.log"; fail "apt-get install (desktop basics)"; }
cp "$portable" "$root/home/reviewer/"
as_user tar -C /home/reviewer -xzf "/home/reviewer/$(basename "$portable")"
dir=/home/reviewer/$(basename "$portable" .tar.gz)
cli=$dir/clausewright-cli
as_user "$dir/clausewright-cli" --version
as_user env QT_QPA_PLATFORM=offscreen "$dir/clausewright" --version
as_user "$dir/clausewright-cli" review "$dir/share/clausewright/samples/sample-contract.pdf" \
  --heads fast --format md >"$out/review-portable.md"
grep -q 'Governing Law' "$out/review-portable.md" || fail "portable: no Governing Law finding"
run_gui gui-portable 90 1 "$dir/clausewright $dir/share/clausewright/samples/sample-contract.pdf"
check_user_data

step "passed; results in $out"
