"""The conventions every command follows (issue 8): the target chosen as libpq/psql choose it, the first line naming
the server, full-width output outside a terminal, options that mean the same everywhere, clear refusals."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from psycopg.conninfo import conninfo_to_dict

from lockscope.errors import BadInputError
from lockscope.server import ScratchServer
from lockscope.statement import check_param_count, check_statement
from lockscope.target import choose_target


def clean_env(**extra: str) -> dict[str, str]:
    return {**{k: v for k, v in os.environ.items() if not k.startswith("PG") and k != "COLUMNS"}, **extra}


def run(*args: str, env: dict[str, str] | None = None, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lockscope", *args], capture_output=True, text=True,
                          timeout=timeout, env=env or clean_env())


def one_line_error(proc: subprocess.CompletedProcess[str]) -> str:
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert lines[0].startswith("lockscope: error: ")
    return lines[0]


def pg_env(server: ScratchServer) -> dict[str, str]:
    """PGHOST/PGPORT/PGUSER/PGDATABASE naming ``server``, as a DBA's shell would have them."""
    params = conninfo_to_dict(server.conninfo())
    return clean_env(PGHOST=str(params["host"]), PGPORT=str(params["port"]), PGUSER=str(params["user"]),
                     PGDATABASE="postgres")


# -- which server: --dsn, else PG* environment, else scratch -----------------------------------------------------------
def test_choose_target_follows_libpq() -> None:
    assert choose_target("host=db1", environ={"PGHOST": "db2"}).dsn == "host=db1"
    env = choose_target(None, environ={"PGHOST": "db2", "PGPORT": "5433", "PGPASSWORD": "x"})
    assert (env.dsn, env.source) == ("", "the environment: PGHOST, PGPORT")
    assert choose_target(None, environ={"PGSERVICE": "prod"}).source == "the environment: PGSERVICE"
    # PGPASSWORD, PGSSLMODE and friends say how to connect, not where: still the scratch server
    assert choose_target(None, environ={"PGPASSWORD": "x", "PGSSLMODE": "require"}).scratch
    assert choose_target(None, scratch=True, environ={"PGHOST": "db2"}).scratch
    with pytest.raises(BadInputError, match="--dsn or --scratch"):
        choose_target("host=db1", scratch=True, environ={})
    with pytest.raises(BadInputError, match=r"--setup applies to a scratch server only.*add --scratch"):
        choose_target(None, environ={"PGHOST": "db2"}, scratch_only={"--setup": Path("s.sql"), "--mlpt": None})
    with pytest.raises(BadInputError, match=r"^--mlpt applies to a scratch server only, not to the server named by "
                                            r"--dsn$"):
        choose_target("host=db1", environ={}, scratch_only={"--mlpt": 16})


def test_pg_environment_names_the_server(pg18: ScratchServer) -> None:
    # acct exists on pg18 only: an empty scratch server would fail with 'relation "acct" does not exist'
    proc = run("footprint", "select * from acct where id = 1", env=pg_env(pg18))
    assert proc.returncode == 0, proc.stderr
    first = proc.stdout.splitlines()[0]
    params = conninfo_to_dict(pg18.conninfo())
    assert re.fullmatch(re.escape("lockscope footprint: PostgreSQL ") + r"18\.\d+"
                        + re.escape(f" at socket {params['host']} port {pg18.port}, database postgres, user "
                                    f"{params['user']} (from the environment: PGHOST, PGPORT, PGDATABASE, PGUSER)"),
                        first), first


def test_scratch_flag_overrides_the_environment(pg18: ScratchServer) -> None:
    proc = run("footprint", "--scratch", "--mlpt", "16", "select 1", env=pg_env(pg18))
    assert proc.returncode == 0, proc.stderr
    first = proc.stdout.splitlines()[0]
    assert first.endswith("(scratch server started by lockscope, max_locks_per_transaction 16)"), first
    assert f"socket {conninfo_to_dict(pg18.conninfo())['host']} " not in first


def test_scratch_only_option_with_environment_is_refused(pg18: ScratchServer, tmp_path: Path) -> None:
    setup = tmp_path / "s.sql"
    setup.write_text("create table x ()")
    proc = run("footprint", "--setup", str(setup), "select 1", env=pg_env(pg18))
    assert proc.returncode == 2
    assert one_line_error(proc) == ("lockscope: error: --setup applies to a scratch server only, not to the server "
                                    "named by the PG* environment; add --scratch to use a scratch server instead")


def test_json_to_stdout_is_json_alone_and_names_the_server(pg18: ScratchServer) -> None:
    proc = run("footprint", "--dsn", pg18.conninfo(), "--json", "-", "select * from acct where id = 1")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["server"]["port"] == pg18.port and doc["server"]["database"] == "postgres"
    assert doc["server"]["chosen_by"] == "--dsn"
    assert re.match(r"lockscope footprint: PostgreSQL 18\.\d+ at socket ", proc.stderr), proc.stderr
    assert [e["locks"] for e in doc["runs"][0]["executions"]] == [3]  # acct, acct_pkey, acct_owner_idx


# -- output outside a terminal ---------------------------------------------------------------------------------------
def test_piped_output_is_never_cut(tmp_path: Path) -> None:
    long_name = "relation_name_longer_than_a_cut_80_column_table_allows"  # 55 characters (NAMEDATALEN 64)
    setup = tmp_path / "s.sql"
    setup.write_text(f"create table {long_name} (id int primary key);")
    proc = run("footprint", "--setup", str(setup), "--verbose", f"select * from {long_name} where id = 1")
    assert proc.returncode == 0, proc.stderr
    assert f"public.{long_name}_pkey" in proc.stdout
    assert "…" not in proc.stdout
    assert max(len(line) for line in proc.stdout.splitlines()) > 80


def test_long_statement_is_shown_shortened(tmp_path: Path) -> None:
    f = tmp_path / "big.sql"
    f.write_text("select * from pg_class where relname in (\n"
                 + ",\n".join(f"  'name_{i:06d}'" for i in range(16_000)) + "\n)")
    proc = run("footprint", "-f", str(f))
    assert proc.returncode == 0, proc.stderr
    assert len(proc.stdout.splitlines()) < 30
    assert "... (16,002 lines, " in proc.stdout and "--json has the whole text" in proc.stdout


# -- options mean the same thing everywhere; refusals before any server -----------------------------------------------
@pytest.mark.parametrize("args, message", [
    (["--executions", "3", "--protocol", "simple", "select 1"],
     "--executions applies to --protocol prepared: with simple, every execution is planned afresh and one probe "
     "shows the footprint"),
    (["--protocol", "extended", "--plan-cache-mode", "auto", "select 1"],
     "--plan-cache-mode applies to --protocol prepared, not extended: with extended, every execution is planned "
     "with its values"),
    (["--protocol", "prepared", "select * from pg_class where oid = $1"],
     "the statement uses 1 parameter(s) ($1..$1) but 0 --param value(s) were given"),
    (["--protocol", "prepared", "--param-type", "int", "--param-type", "int", "--param", "1", "select 1"],
     "2 --param-type(s) declare 2 parameter(s) but 1 --param value(s) were given"),
    (["--json", "/nonexistent-dir/x.json", "select 1"], "cannot write /nonexistent-dir/x.json: no such directory"),
    (["--pg-bin", "/nonexistent/bin", "select 1"], "--pg-bin /nonexistent/bin: no postgres binary in that directory"),
    (["--mlpt", "5", "select 1"], "--mlpt: max_locks_per_transaction is at least 10"),
    (["--protocol", "bogus", "select 1"], "argument --protocol: invalid choice: 'bogus' (choose from *"),
    (["--executions", "x", "select 1"], "argument --executions: not a whole number: 'x' "
                                        "(see 'lockscope footprint --help')"),
])
def test_refused_before_any_server(args: list[str], message: str) -> None:
    proc = run("footprint", *args, timeout=30)
    assert proc.returncode == 2, proc.stderr
    line = one_line_error(proc)
    if message.endswith("*"):  # argparse's own wording of the choices differs between Python versions
        assert line.startswith(f"lockscope: error: {message[:-1]}") and line.endswith("(see 'lockscope footprint "
                                                                                        "--help')"), line
    else:
        assert line == f"lockscope: error: {message}"
    assert proc.stdout == ""


def test_plan_cache_mode_alone_implies_prepared(pg18: ScratchServer) -> None:
    proc = run("footprint", "--dsn", pg18.conninfo(), "--json", "-", "--plan-cache-mode", "force_generic_plan",
               "--executions", "2", "--param", "1", "select * from acct where id = $1")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["protocol"] == "prepared"
    assert [(e["phase"], e["locks"]) for e in doc["runs"][0]["executions"]] == [("generic-build", 3),
                                                                              ("generic-reuse", 1)]


def test_extended_protocol_is_measured_as_simple(pg18: ScratchServer) -> None:
    simple = run("footprint", "--dsn", pg18.conninfo(), "--json", "-", "select * from acct where id = 1")
    extended = run("footprint", "--dsn", pg18.conninfo(), "--json", "-", "--protocol", "extended",
                   "select * from acct where id = 1")
    assert simple.returncode == extended.returncode == 0, extended.stderr
    locks = [json.loads(p.stdout)["runs"][0]["executions"][0]["locks"] for p in (simple, extended)]
    assert locks == [3, 3]


def test_checking_a_statement_parses_it_once() -> None:
    text = "select * from pg_class c join pg_index i on i.indexrelid = c.oid, pg_am a where c.oid = $2 and $1"
    first = check_statement(text)
    assert check_statement(text) is first  # cached: the CLI and the probe share one parse
    assert first.relation_names == ("pg_class", "pg_index", "pg_am") and first.param_count == 2
    check_param_count(first, ["1", "2"])
    with pytest.raises(BadInputError):
        check_param_count(first, ["1"])


@pytest.mark.parametrize("command", [["footprint"], ["audit"], ["watch"], ["demo"], ["lab", "indexes"],
                                     ["lab", "partitions"], ["lab", "prepared"], ["lab", "replay"]])
def test_shared_options_are_declared_alike(command: list[str]) -> None:
    from lockscope.cli import build_parser

    parser = build_parser()
    sub = parser._subparsers._group_actions[0].choices[command[0]]  # type: ignore[union-attr]
    if len(command) > 1:
        sub = sub._subparsers._group_actions[0].choices[command[1]]  # type: ignore[union-attr]
    opts = {o: a for a in sub._actions for o in a.option_strings}
    assert opts["--pg-bin"].metavar == "DIR|MAJOR"
    if "--json" in opts:
        assert opts["--json"].metavar == "FILE|-"
    if "--hz" in opts:
        assert opts["--sample-hz"] is opts["--hz"]
    if "--mlpt" in opts:
        assert opts["--mlpt"].default is None  # "not given" is never confused with an explicit default
    if "--protocol" in opts:
        assert tuple(opts["--protocol"].choices) == ("simple", "extended", "prepared")
