"""Which values of a row PostgreSQL stores out of line (TOAST), from the row's values, as ``heaptoast.c
heap_toast_insert_or_update`` decides it: pure functions, no server.

A row whose tuple exceeds ``TOAST_TUPLE_THRESHOLD`` (2,032 bytes on 8 kB pages) is made smaller step by step until
its data fits ``TOAST_TUPLE_TARGET`` less the tuple header: the largest EXTENDED value is compressed (pglz by
default: :func:`pglz_compressed_size`, ``pg_lzcompress.c pglz_compress`` with its default strategy, which gives up
unless it saves 25 %) and moved out of line at once when it alone is still larger than that; then the largest
EXTENDED or EXTERNAL values are moved out of line; then MAIN values compressed, then moved out (against
``TOAST_TUPLE_TARGET_MAIN``). A value moved out of line is written to the table's TOAST relation, whose locks are
what lockscope cares about (``toast_internals.c toast_save_datum``).

lockscope re-implements pglz's compressor to know the compressed size exactly: the decision turns on it for large
values that compress (a repeated text stays in the row, a random one goes out of line); lz4 (PG 19's default
``default_toast_compression``) is the system's LZ4 library itself, as the server links it. Values whose
stored size lockscope cannot compute (a value computed when the row is written, a type whose binary form it does
not know) make the answer unknown when they could change it.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

__all__ = ["TOAST_TUPLE_THRESHOLD", "ToastColumn", "lz4_available", "lz4_compressed_size", "out_of_line",
           "pglz_compressed_size"]

#: ``heaptoast.h TOAST_TUPLE_THRESHOLD`` / ``TOAST_TUPLE_TARGET`` on 8 kB pages (bytes).
TOAST_TUPLE_THRESHOLD = 2032
#: ``heaptoast.h TOAST_TUPLE_TARGET_MAIN`` on 8 kB pages (bytes): MAIN values are moved out only beyond this.
TOAST_TUPLE_TARGET_MAIN = 8160
#: ``htup_details.h SizeofHeapTupleHeader`` (bytes).
_TUPLE_HEADER = 23
#: ``varatt.h TOAST_POINTER_SIZE``: an out-of-line value's pointer in the row (bytes).
_TOAST_POINTER = 18
#: ``varatt.h VARHDRSZ_COMPRESSED``: a compressed inline value's header (bytes).
_COMPRESSED_HEADER = 8
#: Types whose stored varlena is the text's bytes (the input as written, server encoding UTF-8).
TEXT_TYPES = ("text", "character varying", "varchar", "json", "name", "xml", "citext")

# pg_lzcompress.c's default strategy and limits
_MIN_INPUT = 32
_MIN_RATE = 25
_FIRST_SUCCESS_BY = 1024
_MATCH_SIZE_GOOD = 128
_MATCH_SIZE_DROP = 10
_MAX_MATCH = 273
_HISTORY_SIZE = 4096


@dataclass(frozen=True)
class ToastColumn:
    """A column as the TOAST decision sees it (``pg_attribute``).

    :ivar name: the column's name.
    :ivar attlen: bytes of a fixed-width type, -1 for a varlena.
    :ivar attalign: ``c``, ``s``, ``i`` or ``d`` (1, 2, 4, 8 bytes).
    :ivar storage: ``p`` plain, ``e`` external, ``m`` main, ``x`` extended.
    :ivar compression: ``p`` pglz, ``l`` lz4, ``''`` the server's ``default_toast_compression``.
    :ivar type_name: ``format_type``.
    """

    name: str
    attlen: int
    attalign: str
    storage: str
    compression: str
    type_name: str


@functools.cache
def _liblz4() -> ctypes.CDLL | None:
    """The system's LZ4 library, as a server built ``--with-lz4`` links it (None when this machine has none)."""
    name = ctypes.util.find_library("lz4")
    try:
        return ctypes.CDLL(name or "liblz4.so.1")
    except OSError:
        return None


def lz4_available() -> bool:
    """This machine has the LZ4 library :func:`lz4_compressed_size` calls."""
    return _liblz4() is not None


def lz4_compressed_size(data: bytes) -> int | None:
    """The size LZ4 compresses ``data`` to (bytes), or None when that is larger than the input:
    ``toast_compression.c lz4_compress_datum`` calls ``LZ4_compress_default``, run here from the system's LZ4
    library in its default build (``LZ4_MEMORY_USAGE`` 14, as distributions ship it and servers link it; the
    ``lz4`` Python package's bundled build compresses differently).

    :raises RuntimeError: this machine has no LZ4 library (:func:`lz4_available`).
    """
    lib = _liblz4()
    if lib is None:
        raise RuntimeError("no LZ4 library on this machine (liblz4)")
    bound = len(data) + len(data) // 255 + 16  # LZ4_COMPRESSBOUND
    out = ctypes.create_string_buffer(bound)
    n = int(lib.LZ4_compress_default(data, out, ctypes.c_int(len(data)), ctypes.c_int(bound)))
    if n <= 0:
        raise RuntimeError("LZ4_compress_default failed")
    return None if n > len(data) else n


def pglz_compressed_size(data: bytes) -> int | None:
    """The size pglz compresses ``data`` to with the default strategy (bytes), or None when it gives up (input under
    32 bytes, no match in the first 1 kB of output, or less than 25 % saved): ``pg_lzcompress.c pglz_compress``,
    its history table of 4,096 entries hashed on the next 4 bytes, matches of 3 to 273 bytes within 4,095 bytes back,
    the good-match length lowered by 10 % per entry visited, one control byte per 8 items."""
    slen = len(data)
    if slen < _MIN_INPUT:
        return None
    result_max = (slen * (100 - _MIN_RATE)) // 100
    hashsz = 512 if slen < 128 else 1024 if slen < 256 else 2048 if slen < 512 else 4096 if slen < 1024 else 8192
    mask = hashsz - 1
    sb = [b - 256 if b > 127 else b for b in data]  # C's (signed) char on x86-64
    start = [0] * hashsz  # hash -> entry (0: none)
    nxt = [0] * (_HISTORY_SIZE + 1)
    prv = [0] * (_HISTORY_SIZE + 1)  # -1: head of its list
    hidx = [0] * (_HISTORY_SIZE + 1)
    pos = [0] * (_HISTORY_SIZE + 1)
    hist_next = 1
    recycle = False
    out = 0  # bytes written so far (control bytes included)
    items = 0  # items since the last control byte
    found = False

    def hash_at(i: int) -> int:
        if slen - i < 4:
            return sb[i] & mask
        return ((sb[i] << 6) ^ (sb[i + 1] << 4) ^ (sb[i + 2] << 2) ^ sb[i + 3]) & mask

    def add(i: int) -> None:
        nonlocal hist_next, recycle
        h = hash_at(i)
        e = hist_next
        if recycle:  # unlink the entry being reused
            if prv[e] == -1:
                start[hidx[e]] = nxt[e]
            else:
                nxt[prv[e]] = nxt[e]
            if nxt[e]:
                prv[nxt[e]] = prv[e]
        nxt[e] = start[h]
        prv[e] = -1
        hidx[e] = h
        pos[e] = i
        if start[h]:
            prv[start[h]] = e
        start[h] = e
        hist_next += 1
        if hist_next >= _HISTORY_SIZE + 1:
            hist_next = 1
            recycle = True

    def find(i: int) -> tuple[int, int]:
        good = _MATCH_SIZE_GOOD
        best_len = best_off = 0
        e = start[hash_at(i)]
        while e:
            off = i - pos[e]
            if off >= 0x0FFF:
                break
            n = 0
            j, k = i, pos[e]
            while j < slen and data[j] == data[k] and n < _MAX_MATCH:
                n += 1
                j += 1
                k += 1
            if n > best_len:
                best_len, best_off = n, off
            e = nxt[e]
            if e:
                if best_len >= good:
                    break
                good -= (good * _MATCH_SIZE_DROP) // 100
        return (best_len, best_off) if best_len > 2 else (0, 0)

    i = 0
    while i < slen:
        if out >= result_max or (not found and out >= _FIRST_SUCCESS_BY):
            return None
        if items % 8 == 0:
            out += 1  # a new control byte
        items += 1
        length, _ = find(i)
        if length:
            out += 3 if length > 17 else 2
            for _ in range(length):
                add(i)
                i += 1
            found = True
        else:
            out += 1
            add(i)
            i += 1
    return None if out >= result_max else out


def _align(n: int, how: str) -> int:
    a = {"c": 1, "s": 2, "i": 4, "d": 8}.get(how, 1)
    return (n + a - 1) // a * a


def _data_size(columns: Sequence[ToastColumn], sizes: Mapping[str, tuple[int, bool]]) -> int:
    """``heaptuple.c heap_compute_data_size``: each present value aligned as its type wants (a varlena short enough
    for a 1-byte header, 126 bytes of data or less, is not aligned), ``sizes`` giving each varlena's stored size
    (header included) and whether it is stored as is (not compressed, not a pointer)."""
    n = 0
    for col in columns:
        if col.name not in sizes:
            continue
        size, plain = sizes[col.name]
        if col.attlen > 0:
            n = _align(n, col.attalign) + col.attlen
        elif plain and size - 4 <= 126:
            n += size - 4 + 1
        elif size == _TOAST_POINTER:
            n += size
        else:
            n = _align(n, col.attalign) + size
    return n


def out_of_line(columns: Sequence[ToastColumn], values: Mapping[str, bytes | int | None], *, has_toast: bool,
                default_compression: str = "pglz", kept: Iterable[str] = ()) -> tuple[frozenset[str], bool]:
    """The columns a row stores out of line, and whether that is unknown.

    :param columns: the table's columns in attnum order.
    :param values: each column's value: the stored bytes of a varlena's data, None for NULL, an int for a fixed-width
        value (its value does not matter), and a missing column for a value lockscope does not know.
    :param has_toast: the table has a TOAST relation (else nothing goes out of line).
    :param default_compression: the server's ``default_toast_compression`` (``pglz`` or ``lz4``).
    :param kept: columns an UPDATE leaves out of line as they were (``toast_tuple_init``: a pointer in the row,
        never moved again).
    :return: (columns stored out of line, unknown); with ``unknown`` the first part is what the known values
        give.
    """
    if not has_toast:
        return frozenset(), False
    kept = set(kept)
    unknown_cols = [c for c in columns if c.name not in values and c.attlen == -1 and c.name not in kept]
    has_nulls = any(v is None for v in values.values())
    hoff = _align(_TUPLE_HEADER + ((len(columns) + 7) // 8 if has_nulls else 0), "d")
    target = TOAST_TUPLE_THRESHOLD - hoff
    sizes: dict[str, tuple[int, bool]] = {}
    raw: dict[str, bytes] = {}
    for col in columns:
        v = values.get(col.name, b"")
        if col.name in kept:
            sizes[col.name] = (_TOAST_POINTER, False)
            continue
        if col.name not in values or v is None:
            continue
        if col.attlen > 0 or isinstance(v, int):
            sizes[col.name] = (max(col.attlen, 0), True)
        else:
            raw[col.name] = v
            sizes[col.name] = (len(v) + 4, True)
    if unknown_cols:
        return frozenset(), True
    if _data_size(columns, sizes) + hoff <= TOAST_TUPLE_THRESHOLD:
        return frozenset(), False  # heapam.c heap_prepare_insert: no toasting below the threshold
    external: set[str] = set()
    done: set[str] = set()  # compressed or incompressible
    compression = {c.name: ({"p": "pglz", "l": "lz4"}.get(c.compression) or default_compression) for c in columns}

    def biggest(storages: str, for_compression: bool) -> str | None:
        best, best_size = None, _align(_TOAST_POINTER, "d")
        for col in columns:
            if col.name not in raw or col.name in external or col.storage not in storages:
                continue
            if for_compression and col.name in done:
                continue
            size = sizes[col.name][0]
            if size > best_size:
                best, best_size = col.name, size
        return best

    def compress(name: str) -> bool:
        """Compress one value as ``toast_internals.c toast_compress_datum`` does: kept compressed only when that
        saves more than 2 bytes with the compressed header (``VARSIZE(tmp) < valsize - 2``). False when the
        method is neither pglz nor lz4, or lz4 without an LZ4 library here."""
        done.add(name)
        if compression[name] == "pglz":
            n = pglz_compressed_size(raw[name])
        elif compression[name] == "lz4" and lz4_available():
            n = lz4_compressed_size(raw[name])
        else:
            return False
        if n is not None and n + _COMPRESSED_HEADER < len(raw[name]) - 2:
            sizes[name] = (n + _COMPRESSED_HEADER, False)
        return True

    while _data_size(columns, sizes) > target:  # 1: compress EXTENDED values, push one out if still too big
        name = biggest("x", True)
        if name is None:
            break
        if not compress(name):
            return frozenset(external), True
        if sizes[name][0] > target:
            external.add(name)
            sizes[name] = (_TOAST_POINTER, False)
    while _data_size(columns, sizes) > target:  # 2: push EXTENDED and EXTERNAL values out
        name = biggest("xe", False)
        if name is None:
            break
        external.add(name)
        sizes[name] = (_TOAST_POINTER, False)
    while _data_size(columns, sizes) > target:  # 3: compress MAIN values
        name = biggest("m", True)
        if name is None:
            break
        if not compress(name):
            return frozenset(external), True
    target_main = TOAST_TUPLE_TARGET_MAIN - hoff
    while _data_size(columns, sizes) > target_main:  # 4: push MAIN values out
        name = biggest("m", False)
        if name is None:
            break
        external.add(name)
        sizes[name] = (_TOAST_POINTER, False)
    return frozenset(external), False
