#!/usr/bin/env bash
# Renders the hicolor PNG icons from the SVG (rsvg-convert, Debian package librsvg2-bin).
# The PNGs are committed; run this after changing the SVG.
set -euo pipefail
cd "$(dirname "$0")"
svg=io.github.clausewright.Clausewright.svg
for size in 16 22 24 32 48 64 128 256 512; do
  mkdir -p "icons/${size}x${size}"
  rsvg-convert -w "$size" -h "$size" "$svg" -o "icons/${size}x${size}/io.github.clausewright.Clausewright.png"
done
