"""Issue 21: one option vocabulary. Every sub-command's parser is read: an option name means the same type, default
and metavar everywhere (docs/cli.md lists them); statement input, timeouts, durations, --json, -q, --help, psql's
-h -p -U -d are the same in every command that has them; the documented exceptions are few and named here."""

from __future__ import annotations

import argparse
from collections import defaultdict
from pathlib import Path

import pytest

from lockscope.cli import build_parser, sub_parsers
from lockscope.commands._common import LIBPQ_OPTIONS, parse_duration, timeout_ms

from .helpers import run

ROOT = Path(__file__).resolve().parent.parent
CLI_DOC = ROOT / "docs" / "cli.md"

#: Options whose accepted values are per command, by design (docs/cli.md "CI gates"): the conditions each judging
#: command can gate on. Their name, metavar-free meaning ("exit 6 when ...") and exit code are the same.
PER_COMMAND_VALUES = {"--fail-on"}
#: Options that accept more in one command: footprint's --plan-cache-mode also takes "all" (three side by side).
EXTENDED_CHOICES = {"--plan-cache-mode": {"all"}}


def _commands() -> dict[str, argparse.ArgumentParser]:
    return {p.prog.removeprefix("lockscope "): p for p in sub_parsers(build_parser())}


def _valued_options() -> dict[str, dict[str, argparse.Action]]:
    """option string -> {command: action} for every option that takes a value."""
    found: dict[str, dict[str, argparse.Action]] = defaultdict(dict)
    for name, parser in _commands().items():
        for action in parser._actions:
            if action.nargs == 0 or not action.option_strings:
                continue
            for option in action.option_strings:
                found[option][name] = action
    return found


def test_every_sub_command_is_read() -> None:
    names = set(_commands())
    assert {"footprint", "audit", "forecast", "watch", "diagnose", "report", "export-queries", "demo", "completion",
            "lab", "lab indexes", "lab partitions", "lab prepared", "lab observer", "lab replay", "lab ceiling",
            "lab install", "lab compare"} == names


def test_same_option_same_type_default_and_metavar() -> None:
    """The parser test: for every option that takes a value, every command declares it with the same type, default,
    metavar and (but for the documented extensions) choices."""
    problems = []
    for option, by_command in sorted(_valued_options().items()):
        if option in PER_COMMAND_VALUES:
            continue
        first_command, first = next(iter(by_command.items()))
        for command, action in by_command.items():
            for attr in ("type", "default", "metavar"):
                if getattr(action, attr) != getattr(first, attr):
                    problems.append(f"{option} {attr}: {command} {getattr(action, attr)!r} vs {first_command} "
                                    f"{getattr(first, attr)!r}")
            mine = set(action.choices or ()) - EXTENDED_CHOICES.get(option, set())
            theirs = set(first.choices or ()) - EXTENDED_CHOICES.get(option, set())
            if mine != theirs:
                problems.append(f"{option} choices: {command} {sorted(mine)} vs {first_command} {sorted(theirs)}")
    assert not problems, "\n".join(problems)


def test_shared_conventions() -> None:
    commands = _commands()
    for name, parser in commands.items():
        opts = {o: a for a in parser._actions for o in a.option_strings}
        # --help only: -h is psql's host where a server is named, else a one-line pointer (never help, exit 0)
        assert "--help" in opts and not isinstance(opts["-h"], argparse._HelpAction), name
        if name not in ("completion",):
            assert isinstance(opts.get("-q"), argparse._StoreTrueAction) and opts["-q"] is opts["--quiet"], name
        if "--dsn" in opts:
            for short, long, keyword, _ in LIBPQ_OPTIONS:
                assert opts[short] is opts[long] and opts[short].dest == f"libpq_{keyword}", (name, short)
        if "--json" in opts:
            assert opts["--json"].metavar == "FILE|-"
        for option in ("--lock-timeout", "--statement-timeout"):
            if option in opts:
                assert opts[option].type is timeout_ms and opts[option].metavar == "TIME", (name, option)
        for option in ("--duration", "--locks-every"):
            if option in opts:
                assert opts[option].type is parse_duration and opts[option].metavar == "TIME", (name, option)
        if "--mlpt" in opts:
            assert opts["--mlpt"].default is None and opts["--mlpt"].metavar == "N"
        if "--fail-on" in opts:
            assert name in ("footprint", "audit", "forecast", "diagnose")
        if "sql" in {a.dest for a in parser._actions if not a.option_strings}:
            assert opts["-f"] is opts["--file"] and opts["-f"].metavar == "FILE", name
    # every command that produces a result writes JSON; every command that judges gates CI
    results = {"footprint", "audit", "forecast", "watch", "diagnose", "report", "demo"}
    assert {n for n, p in commands.items() if "--json" in p._option_string_actions} == results
    assert {n for n, p in commands.items() if "--fail-on" in p._option_string_actions} == {
        "footprint", "audit", "forecast", "diagnose"}
    # the commands that talk to a server of yours take the same connection options
    assert {n for n, p in commands.items() if "--dsn" in p._option_string_actions} == {
        "footprint", "audit", "forecast", "watch", "diagnose"}


@pytest.mark.parametrize("text, seconds", [("500ms", 0.5), ("10s", 10.0), ("5m", 300.0), ("1.5m", 90.0),
                                           ("2h", 7200.0), ("90", 90.0)])
def test_one_duration_syntax(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text, ms", [("200", 200), ("200ms", 200), ("5s", 5000), ("1.5s", 1500)])
def test_timeouts_take_durations(text: str, ms: int) -> None:
    assert timeout_ms(text) == ms


def test_documented_vocabulary_matches_the_parsers() -> None:
    """docs/cli.md's option table names every option that takes a value in two or more commands."""
    doc = CLI_DOC.read_text()
    shared = [o for o, by in _valued_options().items() if len(by) >= 2 and o.startswith("--")]
    missing = [o for o in shared if f"`{o}" not in doc]
    assert not missing, missing


# -- bad input, as a new user types it (docs/cli.md's table, every row run) ------------------------------------------
def _bad_inputs() -> list[tuple[str, int, str]]:
    doc = CLI_DOC.read_text()
    table = doc.split("<!-- bad-inputs: command | exit | message -->", 1)[1].split("<!-- /bad-inputs -->", 1)[0]
    rows = []
    for line in table.splitlines():
        if line.startswith("| `lockscope"):
            command, code, message = (cell.strip() for cell in line.strip().strip("|").split(" | "))
            rows.append((command.strip("`"), int(code), message))
    return rows


def test_bad_input_table_is_large() -> None:
    assert len(_bad_inputs()) >= 45


def test_bad_inputs_one_line_and_documented_exit_code(tmp_path: Path) -> None:
    """Every row of docs/cli.md's bad-input table: exactly one line on stderr, ``lockscope: error: ...`` containing
    the documented text, nothing on stdout, the documented exit code (within 20 s: nothing was started)."""
    import shlex
    import time

    def one(row: tuple[str, int, str]) -> str | None:
        command, code, message = row
        argv = shlex.split(command)[1:]
        start = time.monotonic()
        proc = run(*argv, cwd=tmp_path)  # in this process, PG* variables removed, empty standard input
        took = time.monotonic() - start
        lines = proc.stderr.strip().splitlines()
        if proc.returncode != code or len(lines) != 1 or not lines[0].startswith("lockscope: error: ") \
                or message not in lines[0] or proc.stdout or took >= 20:
            return f"{command}: exit {proc.returncode} (documented {code}) in {took:.1f} s, stderr {proc.stderr!r}"
        return None

    failures = [f for f in map(one, _bad_inputs()) if f]
    assert not failures, "\n".join(failures)


def test_shell_completion_is_generated_from_the_parsers() -> None:
    """``lockscope completion bash|zsh`` (shtab over build_parser()): valid bash, every sub-command and the shared
    options completed; no hand-written list to drift."""
    import subprocess

    bash = run("completion", "bash")
    assert bash.returncode == 0, bash.stderr
    assert subprocess.run(["bash", "-n"], input=bash.stdout, text=True, timeout=30).returncode == 0
    for word in ("footprint", "diagnose", "export-queries", "--fail-on", "--assume-mlpt", "--dbname", "--quiet"):
        assert word in bash.stdout, word
    zsh = run("completion", "zsh")
    assert zsh.returncode == 0 and zsh.stdout.startswith("#compdef lockscope"), zsh.stdout[:200]
