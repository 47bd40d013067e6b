#!/usr/bin/env bash
# Makes the portable archive: a relocatable folder for users without root, with a launcher.
#   installer/make-portable.sh BUILD_DIR [OUT_DIR]
# writes OUT_DIR/clausewright-<version>-portable-x86_64.tar.gz (OUT_DIR defaults to BUILD_DIR).
#
# The folder holds the program as `cmake --install` lays it out plus every shared library it
# needs that is not part of the base system a Linux desktop already has (glibc, the OpenGL/EGL
# driver libraries, X11/xcb, fontconfig, freetype): Qt 6, Poppler, ICU, SQLite, ... and the
# Qt platform, image-format and icon plugins. The launchers set LD_LIBRARY_PATH and
# QT_PLUGIN_PATH to the folder, so it runs wherever it is unpacked. Built on Debian 12, it needs
# glibc 2.36 or newer.
set -euo pipefail
build=$(cd "${1:?usage: make-portable.sh BUILD_DIR [OUT_DIR]}" && pwd)
out=$(mkdir -p "${2:-$build}" && cd "${2:-$build}" && pwd)
version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$build/CMakeCache.txt")
name=clausewright-$version-portable-x86_64
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
root=$stage/$name

cmake --install "$build" --prefix "$root" --strip >/dev/null
# Desktop files are for the package; the portable folder carries them for the user to copy.
mkdir -p "$root/share/clausewright/desktop"
mv "$root/share/applications/"*.desktop "$root/share/clausewright/desktop/"
rmdir "$root/share/applications"

# Libraries a desktop has and that must match its drivers or X server: never bundled.
keep_system='^(ld-linux|libc|libm|libdl|libpthread|librt|libresolv|libutil|libGL|libEGL|libGLX|libGLdispatch|libOpenGL|libX11\.so|libxcb\.so|libXau|libXdmcp|libfontconfig|libfreetype|libexpat|libz|libdrm|libgbm|libcuda|libnvidia)[.-]'
libs=$root/lib/clausewright/system
mkdir -p "$libs"
qt_plugins=$(/usr/lib/qt6/bin/qtpaths6 --query QT_INSTALL_PLUGINS 2>/dev/null || echo /usr/lib/x86_64-linux-gnu/qt6/plugins)
mkdir -p "$root/lib/clausewright/qt6"
for dir in platforms imageformats iconengines xcbglintegrations platforminputcontexts; do
  [[ -d "$qt_plugins/$dir" ]] && cp -a "$qt_plugins/$dir" "$root/lib/clausewright/qt6/"
done
# Every ELF file in the folder, and what it needs, transitively (ldd resolves the closure).
mapfile -t elves < <(find "$root" -type f \( -name '*.so*' -o -perm -u+x \) -exec sh -c \
  'head -c4 "$1" | grep -q ELF && echo "$1"' _ {} \;)
for elf in "${elves[@]}"; do
  LD_LIBRARY_PATH=$root/lib/clausewright ldd "$elf" 2>/dev/null | awk '/=> \// {print $1, $3}'
done | sort -u | while read -r soname path; do
  [[ "$soname" =~ $keep_system ]] && continue
  [[ -e "$root/lib/clausewright/$soname" ]] && continue # bundled CUDA libraries
  cp -L "$path" "$libs/$soname"
done

# Qt finds its plugins beside the program, not where the build machine had them.
printf '[Paths]\nPrefix = ..\nPlugins = lib/clausewright/qt6\n' >"$root/bin/qt.conf"

for tool in clausewright clausewright-cli; do
  cat >"$root/$tool" <<LAUNCHER
#!/bin/sh
# Portable launcher: runs $tool from the folder this script is in.
here=\$(dirname "\$(readlink -f "\$0")")
export LD_LIBRARY_PATH="\$here/lib/clausewright:\$here/lib/clausewright/system\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
export QT_PLUGIN_PATH="\$here/lib/clausewright/qt6"
exec "\$here/bin/$tool" "\$@"
LAUNCHER
  chmod +x "$root/$tool"
done
tar -C "$stage" -czf "$out/$name.tar.gz" "$name"
echo "$out/$name.tar.gz"
