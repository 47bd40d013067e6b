#!/usr/bin/env bash
# The desktop entry, AppStream metainfo and MIME type files pass their validators
# (desktop-file-validate, appstreamcli validate, xmllint); skipped (77) where a tool is missing.
# Hints are printed but pass: Categories=Office;Development; names two main categories on
# purpose, which desktop-file-validate mentions as a hint.
set -euo pipefail
dir=${1:?usage: validate_desktop_files.sh RESOURCES_DESKTOP_DIR}
id=io.github.clausewright.Clausewright
for tool in desktop-file-validate appstreamcli xmllint; do
  command -v "$tool" >/dev/null || { echo "skipped: $tool not installed"; exit 77; }
done
out=$(desktop-file-validate "$dir/$id.desktop" 2>&1) || { echo "$out"; exit 1; }
echo "$out"
if grep -v ': hint: ' <<<"$out" | grep -q .; then
  echo "desktop-file-validate reported more than hints" >&2
  exit 1
fi
# --no-net: the screenshot and homepage URLs are not fetched (the test runs offline).
appstreamcli validate --no-net "$dir/$id.metainfo.xml"
xmllint --noout "$dir/$id.mime.xml"
for size in 16 22 24 32 48 64 128 256 512; do
  png="$dir/icons/${size}x${size}/$id.png"
  [[ -f "$png" ]] || { echo "missing icon $png" >&2; exit 1; }
done
