#!/usr/bin/env bash
# The lint and type gate: ruff (rules in pyproject.toml [tool.ruff]) over src, tests and benchmarks, then mypy
# --strict (pyproject.toml [tool.mypy], files = src). Runs from the venv that scripts/test.sh installs (the `test`
# extra pins ruff and mypy); exits non-zero on any finding. scripts/test.sh runs it before pytest.
set -euo pipefail
cd "$(dirname "$0")/.."

for tool in ruff mypy; do
  if [ ! -x ".venv/bin/$tool" ]; then
    echo "check.sh: .venv/bin/$tool missing: run scripts/test.sh (it installs the 'test' extra) first" >&2
    exit 2
  fi
done

status=0
echo "== ruff check src tests benchmarks"
.venv/bin/ruff check src tests benchmarks || status=1
echo "== mypy (strict)"
.venv/bin/mypy || status=1
if [ "$status" -ne 0 ]; then
  echo "check.sh: lint/type findings above: fix them (no blanket ignores)" >&2
fi
exit "$status"
