# Sourced by the accelerator-machine scripts (tests/gpu/run_on_device.sh, tests/golden/device_run.sh):
# unpacks the Debian packages the engine build needs, carried as .deb files in
# .device-carry/debs, into /tmp/deps and points the tools at them. Fetch them on the
# developer's machine with
#   apt-get download nlohmann-json3-dev libcli11-dev libgtest-dev libgmock-dev googletest \
#     libpcre2-dev libpcre2-8-0 libpcre2-16-0 libpcre2-32-0 libpcre2-posix3 pkgconf pkgconf-bin \
#     libpkgconf3 pkg-config libicu72 liblzma-dev liblzma5
mkdir -p /tmp/deps
for f in .device-carry/debs/*.deb; do dpkg -x "$f" /tmp/deps; done
# Development links point at the absolute path of the library (liblzma.so ->
# /lib/x86_64-linux-gnu/liblzma.so.5.4.1), which this machine may not have: point them inside.
while IFS= read -r link; do
  target=$(readlink "$link")
  [[ $target == /* && -e /tmp/deps$target ]] && ln -sfn "/tmp/deps$target" "$link"
done < <(find /tmp/deps -type l)
export PATH=/tmp/deps/usr/bin:$PATH
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu:/tmp/deps/lib/x86_64-linux-gnu:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
export PKG_CONFIG_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu/pkgconfig:/tmp/deps/usr/share/pkgconfig
export PKG_CONFIG_SYSROOT_DIR=/tmp/deps
export PKG_CONFIG_LIBDIR=$PKG_CONFIG_PATH
