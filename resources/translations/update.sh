#!/usr/bin/env bash
# Refreshes the .ts files from the ui/ sources (keeps existing translations). lupdate 6.4
# does not understand `namespace cw::ui {`, so the contexts it writes are fixed up to the
# class names tr() uses at run time (cw::ui::MainWindow, ...).
set -euo pipefail
cd "$(dirname "$0")/../.."
lupdate=${LUPDATE:-/usr/lib/qt6/bin/lupdate}
for ts in resources/translations/clausewright_*.ts; do
  sed -i -E 's#<name>cw::ui::([A-Za-z]+)</name>#<name>\1</name>#' "$ts"
  "$lupdate" -silent -locations none ui -ts "$ts"
  sed -i -E 's#<name>([A-Za-z]+)</name>#<name>cw::ui::\1</name>#' "$ts"
done
