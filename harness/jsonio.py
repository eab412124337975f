"""JSON in and out, fast where a fast codec is installed.

orjson is used when present because matrix.json holds one result per test and column
(250,000 for 5 columns x 50,000 tests) and the stdlib encoder is several times slower,
and its pure-Python path (any `indent`) much slower still. Without orjson everything
works the same through the stdlib `json`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from itertools import islice
from pathlib import Path
from typing import IO, Any

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
