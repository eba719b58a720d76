"""lockscope.toast against PostgreSQL: pglz's and lz4's compressed size of a value (``pg_column_size`` of the
stored, compressed value less its 8-byte header) and which values of a row go out of line
(``pg_column_toast_chunk_id``, PG 17+; lz4 on PG 19, whose default it is), on rows of repeated, random-hex, mixed
and short texts, one to three large columns, NULLs, fixed-width columns, and the four storages."""

from __future__ import annotations

import hashlib
import random

import psycopg
import pytest

from lockscope.server import ScratchServer
from lockscope.toast import ToastColumn, lz4_compressed_size, out_of_line, pglz_compressed_size


def _hex(seed: int, n: int) -> str:
    out = ""
    i = 0
    while len(out) < n:
        out += hashlib.md5(f"{seed}:{i}".encode()).hexdigest()
        i += 1
    return out[:n]


def _values() -> list[str]:
    rng = random.Random(7)
    vals = ["ab" * 2000, "abc" * 700, _hex(1, 3200), _hex(2, 1200), _hex(3, 2100), "x" * 40, "hello world " * 200,
            "".join(rng.choice("abcdefghijklmnopqrstuvwxyz ") for _ in range(3000)),
            "".join(rng.choice("ab") for _ in range(5000)), _hex(4, 900) + "z" * 900, "q" * 31, "q" * 32]
    vals += [_hex(10 + k, n) for k, n in enumerate((1500, 1900, 2000, 2100, 2500, 4000, 8000))]
    vals += ["word " * n for n in (100, 400, 1000)]
    vals += ["".join(rng.choice("abcdef0123456789") for _ in range(n)) for n in (2200, 3000, 6000)]
    vals += [_hex(30, 1000) * 3, ("x" * 300 + _hex(31, 300)) * 8]
    return vals


def test_pglz_size_is_the_servers(pg18: ScratchServer) -> None:
    """Compressed values: the server stores pglz's output plus an 8-byte header; incompressible ones are stored
    as they are (pg_column_compression NULL), and lockscope says None for exactly those."""
    with psycopg.connect(pg18.conninfo(), autocommit=True) as conn:
        conn.execute("create temp table v (s text storage main)")
        conn.execute("set default_toast_compression = pglz")
        for value in (v for v in _values() if len(v) > 2100):  # smaller rows are never compressed
            conn.execute("truncate v")
            conn.execute("insert into v values (%s)", [value])
            size, method = conn.execute("select pg_column_size(s), pg_column_compression(s) from v").fetchone()
            mine = pglz_compressed_size(value.encode())
            if method is None:
                assert mine is None, (value[:40], len(value), mine)
            else:
                assert mine is not None and mine + 8 == size, (value[:40], len(value), mine, size)


@pytest.mark.parametrize("every_pg", [19], indirect=True)
def test_lz4_size_is_the_servers(every_pg: ScratchServer) -> None:
    """lz4 (PG 19's default_toast_compression): the server keeps the compressed value only when it saves more than
    2 bytes with its 8-byte header; lockscope's size plus 8 is what the server stores."""
    with psycopg.connect(every_pg.conninfo(), autocommit=True) as conn:
        conn.execute("create temp table v (s text storage main)")
        conn.execute("set default_toast_compression = lz4")
        for value in (v for v in _values() if len(v) > 2100):
            conn.execute("truncate v")
            conn.execute("insert into v values (%s)", [value])
            size, method = conn.execute("select pg_column_size(s), pg_column_compression(s) from v").fetchone()
            mine = lz4_compressed_size(value.encode())
            if method is None:
                assert mine is None or mine + 8 >= len(value) - 2, (value[:40], len(value), mine)
            else:
                assert method == "lz4" and mine is not None and mine + 8 == size, (value[:40], len(value), mine, size)


_ROWS = [  # (columns as (name, type, storage), values)
    ((("a", "text", "x"),), ("ab" * 2000,)),
    ((("a", "text", "x"),), (_hex(1, 3200),)),
    ((("a", "text", "x"),), (_hex(2, 1900),)),
    ((("a", "text", "x"),), (_hex(3, 2100),)),
    ((("a", "text", "x"), ("b", "text", "x")), (_hex(4, 1200), _hex(5, 1200))),
    ((("a", "text", "x"), ("b", "text", "x"), ("c", "text", "x")), (_hex(6, 900), _hex(7, 800), _hex(8, 700))),
    ((("i", "int", "p"), ("a", "text", "x"), ("b", "text", "x")), ("1", "word " * 400, _hex(9, 1800))),
    ((("a", "text", "e"),), ("ab" * 2000,)),
    ((("a", "text", "m"),), (_hex(10, 9000),)),
    ((("a", "text", "m"), ("b", "text", "x")), (_hex(11, 3000), _hex(12, 3000))),
    ((("a", "text", "x"), ("n", "text", "x")), (_hex(13, 2500), None)),
    ((("i", "bigint", "p"), ("a", "varchar(5000)", "x")), ("7", _hex(14, 2010))),
]


@pytest.mark.parametrize("method", ["pglz", "lz4"])
@pytest.mark.parametrize("n", range(len(_ROWS)))
def test_out_of_line_is_the_servers(every_pg: ScratchServer, n: int, method: str) -> None:
    """Which values the server stores out of line, row by row (PG 17+ tells it: pg_column_toast_chunk_id), with
    pglz and (on PG 19) lz4 compression."""
    if every_pg.major < 17 or (method == "lz4" and every_pg.major < 19):
        return  # no function before 17 tells an out-of-line value (lockscope's reads go by its stored size there)
    cols, values = _ROWS[n]
    with psycopg.connect(every_pg.conninfo(), autocommit=True) as conn:
        conn.execute(f"set default_toast_compression = {method}")
        conn.execute(f"drop table if exists toast_t{n}")
        conn.execute(f"create table toast_t{n} (" + ", ".join(f"{c} {t}" for c, t, _ in cols) + ")")
        for c, _, storage in cols:
            kind = {"x": "extended", "e": "external", "m": "main", "p": "plain"}[storage]
            conn.execute(f"alter table toast_t{n} alter column {c} set storage {kind}")
        conn.execute(f"insert into toast_t{n} values (" + ", ".join(["%s"] * len(cols)) + ")", list(values))
        ext = conn.execute("select " + ", ".join(f"pg_column_toast_chunk_id({c}) is not null" for c, _, _ in cols)
                           + f" from toast_t{n}").fetchone()
        facts = conn.execute("select attname, attlen, attalign::text, attstorage::text, attcompression::text, "
                             "format_type(atttypid, atttypmod) from pg_attribute where attrelid = %s::regclass "
                             "and attnum > 0 order by attnum", [f"toast_t{n}"]).fetchall()
        conn.execute(f"drop table toast_t{n}")
    columns = [ToastColumn(*f) for f in facts]
    row = {c: (None if v is None else (0 if t in ("int", "bigint") else v.encode()))
           for (c, t, _), v in zip(cols, values, strict=True)}
    external, unknown = out_of_line(columns, row, has_toast=True, default_compression=method)
    assert not unknown
    assert external == {c for (c, _, _), e in zip(cols, ext, strict=True) if e}, (n, external, ext)
