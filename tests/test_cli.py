"""The ``lockscope`` command as a user runs it: output, JSON, exit codes, one-line errors, the demo."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from lockscope import __version__
from lockscope.cli import main
from lockscope.server import ScratchServer


def clean_env(**extra: str) -> dict[str, str]:
    """The environment without libpq's PG* variables (which would name a server), plus ``extra``."""
    return {**{k: v for k, v in os.environ.items() if not k.startswith("PG")}, **extra}


def run(*args: str, stdin: str | None = None, timeout: float = 300,
        env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lockscope", *args], capture_output=True, text=True,
                          input=stdin, timeout=timeout, env=env or clean_env())


def one_line_error(proc: subprocess.CompletedProcess[str]) -> str:
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert lines[0].startswith("lockscope: error: ")
    return lines[0]


def test_version_and_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.strip() == f"lockscope {__version__}"
    with pytest.raises(SystemExit):
        main(["footprint", "--help"])
    out = capsys.readouterr().out
    for word in ("--plan-cache-mode", "--fail-on-spill", "--assume-version", "exit codes:",
                 "6   the --fail-on-spill", "--json FILE|-", "--pg-bin DIR|MAJOR", "simple,extended,prepared"):
        assert word in out
    # each command lists only the exit codes it can return
    with pytest.raises(SystemExit):
        main(["report", "--help"])
    codes = capsys.readouterr().out.split("exit codes:")[1]
    assert [line.split()[0] for line in codes.strip().splitlines()] == ["0", "1", "2", "130", "143"]


def test_options_are_never_abbreviated(capsys: pytest.CaptureFixture[str]) -> None:
    """``footprint --statement`` is no ``--statement-timeout``: an unknown option, named with the sub-command."""
    with pytest.raises(SystemExit) as exit_:
        main(["footprint", "--statement", "select 1"])
    assert exit_.value.code == 2
    assert capsys.readouterr().err == ("lockscope: error: unrecognized arguments: --statement "
                                       "(see 'lockscope footprint --help')\n")
    with pytest.raises(SystemExit):
        main(["watch", "--hz", "5", "--dur", "1"])
    assert "unrecognized arguments: --dur" in capsys.readouterr().err


def test_json_output(pg18: ScratchServer) -> None:
    proc = run("footprint", "--dsn", pg18.conninfo(), "--json", "-", "--protocol", "prepared",
               "--plan-cache-mode", "all", "--param", "2024-06-06 00:00:00+00", "--assume-version", "17",
               "select event_id, event_data from events where event_time = $1")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["schema"] == "lockscope/footprint/v1"
    assert doc["capacity"] == {"server_version_num": doc["server"]["server_version_num"],
                               "max_locks_per_transaction": 64, "fast_path_groups": 4, "fast_path_slots": 64,
                               "hashed_groups": True}
    assert doc["assumed"]["fast_path_slots"] == 16
    assert [r["plan_cache_mode"] for r in doc["runs"]] == ["auto", "force_custom_plan", "force_generic_plan"]
    assert [e["locks"] for e in doc["runs"][0]["executions"]] == [8, 8, 8, 8, 8, 52, 13]
    assert [e["assumed_main_table"] for e in doc["runs"][2]["executions"]][:2] == [36, 0]
    rel = doc["runs"][0]["executions"][0]["relations"][0]
    assert set(rel) == {"oid", "relation", "role", "mode", "fastpath", "predicted_fastpath", "assumed_fastpath",
                        "fast_path_group", "order", "order_rule", "lock_partition"}
    assert doc["mismatch_count"] == 0 and doc["spilled"] is False


def test_terminal_output_and_fail_on_spill(pg18: ScratchServer) -> None:
    proc = run("footprint", "--dsn", pg18.conninfo(), "--verbose", "--fail-on-spill",
               "select * from p40 where k = (select 150)")
    assert proc.returncode == 6, proc.stderr
    # 82 relations, 64 fast-path slots: 18 in the main lock table (the relation list marks each)
    assert "64=4x16" in proc.stdout and proc.stdout.count("no (main table)") == 18 and "p40_39_k_idx" in proc.stdout
    ok = run("footprint", "--dsn", pg18.conninfo(), "--fail-on-spill", "select * from p40 where k = 150")
    assert ok.returncode == 0, ok.stderr


def test_statement_from_stdin_and_file(pg18: ScratchServer, tmp_path: Path) -> None:
    assert run("footprint", "--dsn", pg18.conninfo(), "-", stdin="select * from acct;\n").returncode == 0
    f = tmp_path / "q.sql"
    f.write_text("select * from acct where id = 1")
    assert run("footprint", "--dsn", pg18.conninfo(), "--file", str(f)).returncode == 0


@pytest.mark.parametrize("args, code, text", [
    (["create index on acct (balance)"], 2, "utility statement"),
    (["select 1; select 2"], 2, "2 statements given"),
    ([""], 2, "empty statement"),
    ([], 2, "no statement given"),
    (["select * fro acct"], 3, "syntax error"),
    (["select * from missing_table"], 3, 'relation "missing_table" does not exist'),
    (["--setup", "/nonexistent.sql", "select 1"], 2, "cannot read"),
    (["--assume-version", "12", "select 1"], 2, "--assume-version"),
])
def test_bad_input_one_line(pg18: ScratchServer, args: list[str], code: int, text: str) -> None:
    if "--setup" in args:
        proc = run("footprint", *args)
    else:
        proc = run("footprint", "--dsn", pg18.conninfo(), *args)
    assert proc.returncode == code, proc.stderr
    assert text in one_line_error(proc)


def test_setup_refused_with_dsn(pg18: ScratchServer, tmp_path: Path) -> None:
    f = tmp_path / "s.sql"
    f.write_text("create table x ()")
    proc = run("footprint", "--dsn", pg18.conninfo(), "--setup", str(f), "select 1")
    assert proc.returncode == 2
    assert "scratch server only" in one_line_error(proc)


def test_unreachable_server_one_line() -> None:
    proc = run("footprint", "--dsn", "postgresql://bob:pw-never-shown@127.0.0.1:1/db?connect_timeout=2", "select 1")
    assert proc.returncode == 3
    line = one_line_error(proc)
    assert "cannot connect" in line and "pw-never-shown" not in proc.stdout + proc.stderr


def test_embedded_default_with_setup_and_mlpt(tmp_path: Path) -> None:
    f = tmp_path / "schema.sql"
    f.write_text("create table w (id int primary key);\n" +
                 "".join(f"create index on w ((id + {i}));\n" for i in range(15)))
    proc = run("footprint", "--setup", str(f), "--mlpt", "16", "--json", "-", "select * from w where id = 1")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    e = doc["runs"][0]["executions"][0]
    assert doc["server"]["server_version_num"] >= 180000
    assert (e["locks"], e["fastpath"], e["main_table"], e["predicted_main_table"]) == (17, 16, 1, 1)


def test_demo(tmp_path: Path) -> None:
    html, js = tmp_path / "demo.html", tmp_path / "demo.json"
    proc = run("demo", "--rows-per-partition", "20000", "--max-extra-indexes", "16", "--html", str(html),
               "--json", str(js), timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert "measured = predicted for every lock" in proc.stdout
    doc = json.loads(js.read_text())
    assert doc["schema"] == "lockscope/demo/v1" and doc["mismatch_count"] == 0

    def locks(part: dict, run_index: int = 0) -> list[int]:
        return [e["locks"] for e in part["runs"][run_index]["executions"]]

    assert locks(doc["events_empty"], 0) == [8, 8, 8, 8, 8, 52, 13, 13]
    assert locks(doc["events_empty"], 1) == [8] * 8
    assert locks(doc["events_empty"], 2) == [52] + [13] * 7
    assert locks(doc["events_with_data"]) == [8, 8, 8, 8, 8, 52, 8, 8]
    assert locks(doc["unpartitioned"]) == [6, 6, 6, 6, 6, 6, 1, 1]
    assert locks(doc["pruned"]) == [4]
    unpruned = doc["unpruned"]["runs"][0]["executions"][0]
    assert (unpruned["locks"], unpruned["fastpath"]) == (82, 64)
    assert doc["first_spill"]["16"] == 15
    spill16 = [p["main_table"] for p in doc["cliff"] if p["max_locks_per_transaction"] == 16]
    assert spill16 == [0] * 15 + [1, 2]
    page = html.read_text()
    assert page.count("<svg") >= 3 and "<script" not in page and "<link" not in page
    assert "First spill: <b>15 extra indexes</b> at mlpt 16" in page
