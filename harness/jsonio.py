"""JSON in and out, fast where a fast codec is installed.

orjson is used when present because matrix.json holds one result per test and column
(250,000 for 5 columns x 50,000 tests) and the stdlib encoder is several times slower,
and its pure-Python path (any `indent`) much slower still. Without orjson everything
works the same through the stdlib `json`.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import tempfile
import threading
from collections.abc import Callable, Collection, Iterable, Iterator
from itertools import islice
from pathlib import Path
from typing import IO, Any, Final

from harness import outputs

try:  # optional speed-up; see the module docstring
    import orjson
except ImportError:  # pragma: no cover - exercised where orjson is absent
    orjson = None  # type: ignore[assignment]


def _default(value: Any) -> Any:
    return str(value)


def dumps(data: Any, *, int_keys: bool = False) -> bytes:
    """Compact JSON as UTF-8 bytes (non-ASCII kept as is). `int_keys`: dict keys may be ints
    (written as strings, as the stdlib does; orjson refuses them unless told)."""
    if orjson is not None:
        return orjson.dumps(data, default=_default, option=orjson.OPT_NON_STR_KEYS if int_keys else None)
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=_default).encode("utf-8")


def encoder(convert: Callable[[Any], Any]) -> Callable[[Any], bytes]:
    """`dumps` where every object the codec does not know (dataclasses included) is first
    replaced by `convert(obj)`: a model object becomes its JSON form inside the encoder's own
    walk, without building a copy of each containing dict in Python first."""
    if orjson is not None:
        option = orjson.OPT_PASSTHROUGH_DATACLASS  # dataclasses go through `convert`, not orjson's own form
        return lambda data: orjson.dumps(data, default=convert, option=option)
    return lambda data: json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=convert).encode("utf-8")


def dumps_pretty(data: Any) -> bytes:
    if orjson is not None:
        return orjson.dumps(data, default=_default, option=orjson.OPT_INDENT_2)
    return json.dumps(data, ensure_ascii=False, indent=2, default=_default).encode("utf-8")


# JSON text (bytes or str) -> Python objects. The codec's own function, not a wrapper: the
# merge calls it once per line of every events.jsonl.
loads: Callable[[bytes | str], Any] = orjson.loads if orjson is not None else json.loads


def write_atomic(path: Path, write: Callable[[IO[bytes]], None]) -> None:
    """Write through a temp file and rename, so readers never see half a file (harness/outputs.py)."""
    outputs.write_file(Path(path), write)


def write_json_lines_object(
    handle: IO[bytes],
    head: dict[str, Any],
    key: str,
    items: Iterable[dict[str, Any]],
    *,
    convert: Callable[[Any], Any] = _default,
) -> None:
    """`{...head, "<key>": [item, item, ...]}` with one item (an object) per line: streamed,
    never built whole. Objects the codec does not know inside the items go through `convert`
    (as with `encoder`)."""
    opening, closing = lines_object_ends(head, key)
    handle.write(opening)
    empty = True
    for block in item_lines(items, convert):
        handle.write(b"\n    " if empty else b",\n    ")
        handle.write(block)
        empty = False
    handle.write(b"]\n}\n" if empty else closing)


def lines_object_ends(head: dict[str, Any], key: str) -> tuple[bytes, bytes]:
    """The text before the first item of `write_json_lines_object`'s layout and after the last
    (of a list that is not empty)."""
    body = dumps_pretty(head)
    opening = body[:-1].rstrip() + b",\n" if head else b"{\n"
    return opening + b'  "' + key.encode() + b'": [', b"\n  ]\n}\n"


def item_lines(
    items: Iterable[dict[str, Any]], convert: Callable[[Any], Any] = _default, block: int = 4096
) -> Iterator[bytes]:
    """The items' compact JSON, a block of them at a time, joined by `,\\n    ` (one encoder call
    and one write call per block); blocks are joined the same way."""
    dumps = encoder(convert)
    items = iter(items)
    while chunk := list(islice(items, block)):
        yield _one_per_line(chunk, dumps)


def _one_per_line(objects: list[dict[str, Any]], dumps: Callable[[Any], bytes]) -> bytes:
    """The objects' compact JSON, joined by `,\\n    `, from one encoder call: the array's text
    is cut where one object ends and the next begins, `},{"<first key>":` (outside any string:
    its quote would end the string, and no JSON value goes on with `id":`). If the text holds
    that sequence more often than there are boundaries (a nested object in a list starting
    with the same key), each object is encoded on its own."""
    first = next(iter(objects[0]), None)
    if first is not None:
        key = dumps(first)
        parts = dumps(objects).split(b"},{" + key + b":")
        if len(parts) == len(objects):
            parts[0] = parts[0][1:]  # the array's brackets, cut from its ends (not a copy of it all)
            parts[-1] = parts[-1][:-1]
            return (b"},\n    {" + key + b":").join(parts)
    return b",\n    ".join(dumps(o) for o in objects)


# -- a large object's items in two processes ---------------------------------------------------
# The speed trick of matrix.json's writer (matrix_json.write_to), behind `plain=`.
#
# Writing a merged matrix's rows (read back from the merge's spill store, then encoded as JSON) is
# the last step of a merge, and it ran on one core while the others had nothing to do: about a
# quarter of a 5 x 50,000 merge. Here a forked child encodes the second half of the rows (split
# between features, or in the middle of a tuple of rows) into a temp file while this process
# encodes the first half; the child's text is then copied in after it. What it buys, measured on
# a 2-core machine: the write of 5 x 50,000 lean rows 0.33-0.47 s against 0.40-0.63 s, the whole
# merge 1.8-2.1 s against 2.1-2.6 s.
#
# Nothing is left behind and nothing is lost: the temp file has no name (tempfile.TemporaryFile:
# O_TMPFILE on Linux, gone with its last descriptor); a child that fails or is killed costs time
# only, as this process then encodes the second half itself; a child this process stops waiting
# for (an error, Ctrl-C) is killed and reaped. The child ends with os._exit: it runs none of this
# process's exit handlers (the spill folder's removal among them).
#
# `plain=True`, fewer than MIN_ROWS rows, rows that cannot be split, other threads running or no
# fork (not Linux): one process. tests/core/test_jsonio_split.py holds both paths to the same
# bytes, a failed or killed child included.
MIN_ROWS: Final = 20_000  # below this, forking costs more than the second core gives back
_COPY_BLOCK: Final = 1 << 20
_SEPARATOR: Final = b",\n    "


def halves(rows: Collection[Any]) -> tuple[Collection[Any], Collection[Any]] | None:
    """The rows as two parts that, one after the other, are the rows (None: not worth it, or no
    way to split them without reading them)."""
    if len(rows) < MIN_ROWS:
        return None
    if isinstance(rows, tuple | list):
        middle = len(rows) // 2
        return rows[:middle], rows[middle:]
    split = getattr(rows, "halves", None)  # store.SpilledRows: between features
    parts = split() if split is not None else None
    return parts if parts is not None and all(map(len, parts)) else None


def can_fork() -> bool:
    """Linux, and no other thread in this process: a thread holding a lock at the fork would
    leave it held forever in the child (Python 3.12 warns of it), so then one process it is."""
    return sys.platform == "linux" and hasattr(os, "fork") and threading.active_count() == 1


def write_json_lines_object_split(
    handle: IO[bytes],
    head: dict[str, Any],
    key: str,
    rows: Collection[Any],
    convert: Callable[[], Callable[[Any], Any]],
    *,
    plain: bool = False,
) -> None:
    """write_json_lines_object's text (the same bytes), the rows' second half encoded by a child
    process where that pays. `convert` makes the encoder's fallback (one per process: it
    may keep what it converted)."""
    parts = None if plain or not can_fork() else halves(rows)
    if parts is None:
        write_json_lines_object(handle, head, key, rows, convert=convert())
        return
    first, second = parts
    opening, closing = lines_object_ends(head, key)
    with _encoded_by_child(second, convert) as later:
        handle.write(opening)
        empty = True
        for block in item_lines(first, convert()):
            handle.write(b"\n    " if empty else _SEPARATOR)
            handle.write(block)
            empty = False
        starting = True
        for piece in later():  # the second half's text, separators inside it already there
            if starting:
                handle.write(b"\n    " if empty else _SEPARATOR)
                starting = empty = False
            handle.write(piece)
    handle.write(b"]\n}\n" if empty else closing)


def _joined(blocks: Iterable[bytes]) -> Iterator[bytes]:
    """Blocks of items as one text: the separator between blocks, none before the first."""
    for number, block in enumerate(blocks):
        if number:
            yield _SEPARATOR
        yield block


@contextlib.contextmanager
def _encoded_by_child(
    rows: Iterable[Any], convert: Callable[[], Callable[[Any], Any]]
) -> Iterator[Callable[[], Iterator[bytes]]]:
    """Start a child encoding `rows`; yields a function that waits for it and gives its text in
    pieces (nothing for no rows), or the rows encoded here if the child did not succeed."""
    with tempfile.TemporaryFile() as spool:
        pid = os.fork()
        if pid == 0:  # the child: encode, write, leave without running anything of the parent's
            code = 1
            try:
                signal.signal(signal.SIGINT, signal.SIG_DFL)  # Ctrl-C ends it where it stands
                with os.fdopen(os.dup(spool.fileno()), "wb") as out:
                    for piece in _joined(item_lines(rows, convert())):
                        out.write(piece)
                code = 0
            finally:
                os._exit(code)
        reaped = False

        def later() -> Iterator[bytes]:
            nonlocal reaped
            _, status = os.waitpid(pid, 0)
            reaped = True
            if os.waitstatus_to_exitcode(status) != 0:
                yield from _joined(item_lines(rows, convert()))  # the child failed: here, then
                return
            spool.seek(0)
            yield from iter(lambda: spool.read(_COPY_BLOCK), b"")

        try:
            yield later
        finally:
            if not reaped:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
