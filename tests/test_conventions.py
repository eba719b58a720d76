"""The conventions every command follows (issues 8 and 17): the target chosen as psql chooses it (a scratch server
only when asked), the first line naming the server, full-width output outside a terminal, options that mean the same
everywhere, clear refusals before any server is contacted or started."""

from __future__ import annotations

import getpass
import json
import re
import subprocess
import time
from pathlib import Path

import pytest
from psycopg.conninfo import conninfo_to_dict

from lockscope.errors import BadInputError
from lockscope.executed import execute_scripts
from lockscope.script import Script, ScriptStatement, Transaction
from lockscope.server import ScratchServer
from lockscope.statement import check_param_count, check_statement
from lockscope.target import choose_target
from lockscope.vocab import PlanCacheMode

from .helpers import LOCKSCOPE, clean_env, one_line_error, run, run_process


def pg_env(server: ScratchServer) -> dict[str, str]:
    """PGHOST/PGPORT/PGUSER/PGDATABASE naming ``server``, as a DBA's shell would have them."""
    params = conninfo_to_dict(server.conninfo())
    return clean_env(PGHOST=str(params["host"]), PGPORT=str(params["port"]), PGUSER=str(params["user"]),
                     PGDATABASE="postgres")


# -- which server: --dsn, else PG* environment, else libpq's defaults; scratch only when asked ------------------------
def test_choose_target_follows_psql() -> None:
    assert choose_target("host=db1", environ={"PGHOST": "db2"}).dsn == "host=db1"
    env = choose_target(None, environ={"PGHOST": "db2", "PGPORT": "5433", "PGPASSWORD": "x"})
    assert (env.dsn, env.source) == ("", "the environment: PGHOST, PGPORT")
    assert env.describe(64) == "from the environment: PGHOST, PGPORT"
    assert choose_target(None, environ={"PGSERVICE": "prod"}).source == "the environment: PGSERVICE"
    # no --dsn and no variable naming a server (PGPASSWORD, PGSSLMODE say how, not where): libpq's defaults, as
    # psql with no arguments -- never a scratch server
    for environ in ({}, {"PGPASSWORD": "x", "PGSSLMODE": "require"}):
        default = choose_target(None, environ=environ)
        assert (default.dsn, default.scratch) == ("", False)
        assert default.describe(64) == "from libpq defaults: no --dsn, no PG* variables"
    scratch = choose_target(None, scratch=True, environ={"PGHOST": "db2"})
    assert scratch.scratch and scratch.describe(16) == ("scratch server started by lockscope, "
                                                        "max_locks_per_transaction 16")
    # pg_locks pacing: 2 reads/s on a server the user named, unpaced on a scratch server, --probe-rate wins
    assert (default.pg_locks_rate_hz(None), env.pg_locks_rate_hz(None), scratch.pg_locks_rate_hz(None)) == (2, 2, 0)
    assert (default.pg_locks_rate_hz(0.0), scratch.pg_locks_rate_hz(5.0)) == (0.0, 5.0)
    with pytest.raises(BadInputError, match=r"^give --dsn or --scratch, not both$"):
        choose_target("host=db1", scratch=True, environ={})
    with pytest.raises(BadInputError, match=r"^give --dsn or --demo, not both$"):
        choose_target("host=db1", scratch=True, environ={}, scratch_flag="--demo")
    with pytest.raises(BadInputError, match=r"--setup applies to a scratch server only.*add --scratch"):
        choose_target(None, environ={"PGHOST": "db2"}, scratch_only={"--setup": Path("s.sql"), "--mlpt": None})
    with pytest.raises(BadInputError, match=r"^--mlpt applies to a scratch server only, not to the server named by "
                                            r"--dsn$"):
        choose_target("host=db1", environ={}, scratch_only={"--mlpt": 16})
    with pytest.raises(BadInputError, match=re.escape(
            "--demo-clients applies to a scratch server only, not to the server named by libpq's defaults (as for "
            "psql); add --demo to use a scratch server with the demo load instead")):
        choose_target(None, environ={}, scratch_only={"--demo-clients": 4}, scratch_flag="--demo")
    assert choose_target(None, scratch=True, environ={}, scratch_only={"--mlpt": 16}).scratch
    with pytest.raises(BadInputError, match=r'^--dsn is not a libpq connection string or URI: missing "=" after '
                                            r'"this" in connection info string$'):
        choose_target("this is not = a dsn", environ={})


def test_pg_environment_names_the_server(pg18: ScratchServer) -> None:
    # acct exists on pg18 only: an empty scratch server would fail with 'relation "acct" does not exist'
    proc = run_process("footprint", "select * from acct where id = 1", env=pg_env(pg18))
    assert proc.returncode == 0, proc.stderr
    first = proc.stdout.splitlines()[0]
    params = conninfo_to_dict(pg18.conninfo())
    assert re.fullmatch(re.escape("lockscope footprint: PostgreSQL ") + r"18\.\d+"
                        + re.escape(f" at socket {params['host']} port {pg18.port}, database postgres, user "
                                    f"{params['user']} (from the environment: PGHOST, PGPORT, PGDATABASE, PGUSER)"),
                        first), first


def test_scratch_flag_overrides_the_environment(pg18: ScratchServer) -> None:
    proc = run_process("footprint", "--scratch", "--mlpt", "16", "select 1", env=pg_env(pg18))
    assert proc.returncode == 0, proc.stderr
    first = proc.stdout.splitlines()[0]
    assert first.endswith("(scratch server started by lockscope, max_locks_per_transaction 16)"), first
    assert f"socket {conninfo_to_dict(pg18.conninfo())['host']} " not in first


def test_scratch_only_option_with_environment_is_refused(pg18: ScratchServer, tmp_path: Path) -> None:
    setup = tmp_path / "s.sql"
    setup.write_text("create table x ()")
    proc = run_process("footprint", "--setup", str(setup), "select 1", env=pg_env(pg18))
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
    proc = run("footprint", "--scratch", "--setup", str(setup), "--verbose", f"select * from {long_name} where id = 1")
    assert proc.returncode == 0, proc.stderr
    assert f"public.{long_name}_pkey" in proc.stdout
    assert "…" not in proc.stdout
    assert max(len(line) for line in proc.stdout.splitlines()) > 80


def test_long_statement_is_shown_shortened(tmp_path: Path) -> None:
    f = tmp_path / "big.sql"
    f.write_text("select * from pg_class where relname in (\n"
                 + ",\n".join(f"  'name_{i:06d}'" for i in range(16_000)) + "\n)")
    proc = run("footprint", "--scratch", "-f", str(f))
    assert proc.returncode == 0, proc.stderr
    assert len(proc.stdout.splitlines()) < 30
    assert "... (16,002 lines, " in proc.stdout and "--json has the whole text" in proc.stdout


# -- options mean the same thing everywhere; refusals before any server -----------------------------------------------
@pytest.mark.parametrize("args, message", [
    (["--executions", "3", "--protocol", "simple", "select 1"],
     "--executions applies to --protocol prepared, to transactions and to statements that write: with simple, every "
     "execution of a SELECT is planned afresh and one probe shows the footprint"),
    (["--protocol", "extended", "--plan-cache-mode", "auto", "select 1"],
     "--plan-cache-mode applies to --protocol prepared, not extended: with extended, every execution is planned "
     "with its values"),
    (["--protocol", "prepared", "select * from pg_class where oid = $1"],
     "the statement uses 1 parameter(s) ($1..$1) but 0 --param value(s) were given"),
    (["--protocol", "prepared", "--param-type", "int", "--param-type", "int", "--param", "1", "select 1"],
     "2 --param-type(s) declare 2 parameter(s) but 1 --param value(s) were given"),
    (["--json", "/nonexistent-dir/x.json", "select 1"], "cannot write /nonexistent-dir/x.json: no such directory"),
    (["--scratch", "--pg-bin", "/nonexistent/bin", "select 1"],
     "--pg-bin /nonexistent/bin: no postgres binary in that directory"),
    (["--pg-bin", "/nonexistent/bin", "select 1"],
     "--pg-bin applies to a scratch server only, not to the server named by libpq's defaults (as for psql); add "
     "--scratch to use a scratch server instead"),
    (["--mlpt", "5", "select 1"], "--mlpt: max_locks_per_transaction is at least 10"),
    (["--protocol", "bogus", "select 1"], "argument --protocol: invalid choice: 'bogus' (choose from *"),
    (["--executions", "x", "select 1"], "argument --executions: not a whole number: 'x' "
                                        "(see 'lockscope footprint --help')"),
])
def test_refused_before_any_server(args: list[str], message: str) -> None:
    proc = run("footprint", *args)
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
    executions = doc["runs"][0]["executions"]
    assert [(e["phase"], e["explain"]["locks"]) for e in executions] == [("generic-build", 3),
                                                                         ("generic-reuse", 1)]
    # what the reused plan holds turns on its scan (an index scan opens acct_pkey at executor start, a sequential
    # scan after autovacuum analyzed acct does not): the server, executing it, is the oracle
    sql = "select * from acct where id = $1"
    script = Script((Transaction((ScriptStatement(sql, ("1",), sql, 1, "SelectStmt"),), False, 1),), False)
    (truth,) = execute_scripts(pg18.conninfo(), [script] * 2, protocol="prepared",
                               plan_cache_mode=PlanCacheMode.FORCE_GENERIC_PLAN, executions=2)
    assert [e["locks"] for e in executions] == [len(e.locks) for e in truth.executions]


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


# -- issue 17: nothing started unasked; refusals before any server ----------------------------------------------------
#: Programs that would mean lockscope started a server or a load.
SERVER_PROGRAMS = frozenset({"postgres", "pgbench", "initdb", "pg_ctl"})


def _descendants(root: int) -> dict[int, str]:
    """pid -> program name (``/proc/PID/comm``) of every live descendant of ``root``."""
    parent: dict[int, int] = {}
    name: dict[int, str] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        comm_end = stat.rindex(")")
        name[int(entry.name)] = stat[stat.index("(") + 1 : comm_end]
        parent[int(entry.name)] = int(stat[comm_end + 2 :].split()[1])
    found: dict[int, str] = {}
    frontier = [root]
    while frontier:
        pid = frontier.pop()
        for child, ppid in parent.items():
            if ppid == pid and child not in found:
                found[child] = name[child]
                frontier.append(child)
    return found


def run_watched(args: list[str], tmp: Path, *, env: dict[str, str] | None = None,
                timeout: float = 30) -> tuple[subprocess.CompletedProcess[str], float, set[str]]:
    """Run ``python -m lockscope ARGS`` with ``TMPDIR`` = ``tmp`` (traversable by the scratch server's user, so a
    scratch server would be made there), looking at its process tree every 20 ms.

    :return: the finished process, its run time (s), and the names of every program seen below it.
    """
    env = dict(env or clean_env())
    env["TMPDIR"] = str(tmp)
    seen: set[str] = set()
    start = time.monotonic()
    child = subprocess.Popen([*LOCKSCOPE, *args], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=env)
    while child.poll() is None:
        seen.update(_descendants(child.pid).values())
        if time.monotonic() - start > timeout:
            child.kill()
            pytest.fail(f"lockscope {' '.join(args)} still running after {timeout:g} s")
        time.sleep(0.02)
    elapsed = time.monotonic() - start
    out, err = child.communicate()
    return subprocess.CompletedProcess(child.args, child.returncode, out, err), elapsed, seen


def _libpq_default_socket_dirs() -> tuple[str, ...]:
    return ("/var/run/postgresql", "/tmp")  # Debian's and upstream libpq's DEFAULT_PGSOCKET_DIR


@pytest.mark.parametrize("args", [["diagnose", "--duration", "2s"], ["watch", "--duration", "2s", "--no-live"],
                                  ["audit"]], ids=["diagnose", "watch", "audit"])
def test_no_server_named_uses_libpq_defaults_and_starts_nothing(args: list[str], scratch_base: Path) -> None:
    """No --dsn, no PG* variable, no server on libpq's default socket: the command tries the default socket as psql
    does and fails in one line naming it (exit 3, within 10 s); no postgres, initdb, pg_ctl or pgbench ran, no
    scratch directory was made, no demo load."""
    busy = [d for d in _libpq_default_socket_dirs() if Path(d, ".s.PGSQL.5432").exists()]
    if busy:
        pytest.fail(f"a server listens on libpq's default socket {busy[0]}/.s.PGSQL.5432: this test needs none")
    env = clean_env()
    assert not [k for k in env if k.startswith("PG")]
    proc, elapsed, programs = run_watched(args, scratch_base, env=env)
    assert proc.returncode == 3, proc.stderr
    assert elapsed < 10, elapsed
    line = one_line_error(proc)
    user = getpass.getuser()
    match = re.fullmatch(r'lockscope: error: cannot connect to socket (?P<dir>/\S+) port 5432, database (?P<db>\S+), '
                         r'user (?P<user>\S+): connection to server on socket "(?P<dir2>/\S+)/\.s\.PGSQL\.5432" '
                         r"failed: No such file or directory; Is the server running locally and accepting "
                         r"connections on that socket\?", line)
    assert match, line
    assert match["dir"] == match["dir2"] and match["dir"] in _libpq_default_socket_dirs(), line
    assert (match["db"], match["user"]) == (user, user)
    assert proc.stdout == ""
    assert not programs & SERVER_PROGRAMS, programs
    assert list(scratch_base.iterdir()) == []


@pytest.mark.parametrize("command, options, flag", [
    (["footprint", "select 1"], ["--setup", "s.sql"], "--scratch"),
    (["footprint", "select 1"], ["--mlpt", "16"], "--scratch"),
    (["forecast", "--statement", "select 1"], ["--setup", "s.sql"], "--scratch"),
    (["forecast", "--statement", "select 1"], ["--pg-bin", "17"], "--scratch"),
    (["audit"], ["--mlpt", "16"], "--demo"),
    (["audit"], ["--pg-bin", "17"], "--demo"),
    (["watch"], ["--demo-indexes", "5"], "--demo"),
    (["watch"], ["--mlpt", "16"], "--demo"),
    (["diagnose"], ["--demo-clients", "4"], "--demo"),
    (["diagnose"], ["--pg-bin", "17"], "--demo"),
])
def test_scratch_only_options_need_scratch_or_demo(command: list[str], options: list[str], flag: str,
                                                   scratch_base: Path) -> None:
    proc, _, programs = run_watched([*command, *options], scratch_base)
    assert proc.returncode == 2, proc.stderr
    instead = "a scratch server" if flag == "--scratch" else "a scratch server with the demo load"
    assert one_line_error(proc) == (
        f"lockscope: error: {options[0]} applies to a scratch server only, not to the server named by libpq's "
        f"defaults (as for psql); add {flag} to use {instead} instead")
    assert not programs & SERVER_PROGRAMS and list(scratch_base.iterdir()) == []


@pytest.mark.parametrize("command", ["audit", "watch", "diagnose"])
def test_demo_commands_point_scratch_to_demo(command: str) -> None:
    """watch and diagnose have no empty scratch server: --scratch is refused with a pointer to --demo; audit's
    --scratch (issue 21) needs your schema and says so, pointing to --demo for the demo database."""
    proc = run(command, "--scratch")
    assert proc.returncode == 2
    line = one_line_error(proc)
    if command == "audit":
        assert line == ("lockscope: error: --scratch needs --setup FILE (your schema); for the demo database use "
                        "--demo")
        return
    assert line.startswith("lockscope: error: --scratch: use --demo (") and line.endswith(
        f"(see 'lockscope {command} --help')"), line


def test_pg_locks_queries_are_declared() -> None:
    """Every lockscope SQL file that reads pg_locks, pg_lock_status() or pg_blocking_pids() outside lockscope watch
    (watch_*: its own at-most-once-a-second rule), the exporters' definitions (export_*: run by postgres_exporter
    or pgwatch, never by lockscope) and the observer-effect benchmark's loop is in db.PG_LOCKS_QUERIES, which only
    Session.query_rows paces and counts (the one way lockscope runs a SQL file on a user's server), or
    db.ScratchExecutor reads on lockscope's own scratch servers (executed_locks, migration_locks,
    migration_lock_count); budget_held_entries is footprint --budget-from's one read of a live server."""
    from lockscope.db import PG_LOCKS_QUERIES

    sql_dir = Path(__import__("lockscope.sql", fromlist=["_"]).__file__).parent
    readers = set()
    for path in sql_dir.glob("*.sql"):
        code = "\n".join(line.split("--")[0] for line in path.read_text().splitlines())  # no comments
        code = re.sub(r"'[^']*'", "''", code)  # no literals ('pg_catalog.pg_locks'::regclass reads no lock)
        if re.search(r"\b(pg_locks|pg_lock_status|pg_blocking_pids)\b", code):
            readers.add(path.stem.split("-")[0])
    outside_watch = {n for n in readers if not n.startswith(("watch_", "export_"))}
    assert outside_watch == set(PG_LOCKS_QUERIES) == {"relation_locks", "blocking_locks", "audit_held_locks",
                                                      "executed_locks", "migration_locks", "migration_lock_count",
                                                      "budget_held_entries"}, readers
