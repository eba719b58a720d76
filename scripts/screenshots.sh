#!/usr/bin/env bash
# Regenerate docs/screenshots/*.png: the audit, diagnose, watch, lab and demo HTML reports, each made on a scratch
# server lockscope starts itself (the contended demo load for diagnose and watch), opened in headless chromium at
# 1300 px wide. Needs Debian's chromium (scripts/test.sh installs it). Takes about 2 minutes; the load-generating
# steps hold /tmp/lockscope-load.lock like the load tests. Usage: scripts/screenshots.sh [WORK_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
LOCKSCOPE="$ROOT/.venv/bin/lockscope"
OUT="$ROOT/docs/screenshots"
WORK="${1:-$(mktemp -d /tmp/lockscope-screenshots.XXXXXX)}"
mkdir -p "$OUT" "$WORK"
command -v chromium >/dev/null || { echo "chromium is missing: apt-get install chromium" >&2; exit 2; }
load() { flock /tmp/lockscope-load.lock "$@"; }
shot() {  # shot NAME HTML HEIGHT
  chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run \
    --user-data-dir="$WORK/chromium-profile" --window-size="1300,$3" --screenshot="$OUT/$1.png" \
    "file://$2" >/dev/null 2>&1
  echo "wrote $OUT/$1.png"
}
cd "$WORK"
load "$LOCKSCOPE" diagnose --demo --duration 15s --html "$WORK/diagnose.html" >/dev/null
load "$LOCKSCOPE" audit --demo --interval 5 --html "$WORK/audit.html" >/dev/null
load "$LOCKSCOPE" watch --demo --duration 20s --no-live --locks-every 2 --record "$WORK/watch.db" >/dev/null
"$LOCKSCOPE" report "$WORK/watch.db" --html "$WORK/watch.html" >/dev/null
load "$LOCKSCOPE" lab indexes --quick --out "$WORK/lab" >/dev/null
"$LOCKSCOPE" demo --html "$WORK/demo.html" --rows-per-partition 10000 --max-extra-indexes 20 >/dev/null
shot diagnose "$WORK/diagnose.html" 1700
shot audit "$WORK/audit.html" 1700
shot watch "$WORK/watch.html" 1400
shot lab "$WORK/lab/report.html" 1500
shot demo "$WORK/demo.html" 1500
echo "reports kept in $WORK"
