"""matrix.json's rows: one object per line, whatever the objects hold."""

from __future__ import annotations

import io
import json

import pytest

from harness import jsonio


def _write(items: list, monkeypatch: pytest.MonkeyPatch, *, stdlib: bool) -> bytes:
    if stdlib:
        monkeypatch.setattr(jsonio, "orjson", None)
    handle = io.BytesIO()
    jsonio.write_json_lines_object(handle, {"head": 1}, "tests", items)
    return handle.getvalue()


@pytest.mark.parametrize("stdlib", [False, True], ids=["orjson", "stdlib"])
def test_one_object_per_line_even_when_an_object_nests_lookalikes(monkeypatch, stdlib):
    items = [
        {"id": "a", "results": {"x": {"outcome": "passed"}}},
        # a nested list of objects that start with the same key: the text `},{"id":` inside a row
        {"id": "b", "properties": {"perf": [{"id": 1}, {"id": 2}]}, "note": '},{"id": in a string'},
        {"id": "c\n", "results": {}},
    ]
    text = _write(items, monkeypatch, stdlib=stdlib)
    assert json.loads(text) == {"head": 1, "tests": items}
    lines = text.decode().splitlines()
    rows = [line.strip().rstrip(",") for line in lines if line.startswith("    {")]
    assert [json.loads(row) for row in rows] == items


@pytest.mark.parametrize("stdlib", [False, True], ids=["orjson", "stdlib"])
def test_objects_with_different_first_keys_and_none_at_all(monkeypatch, stdlib):
    items = [{"id": 1}, {"other": 2}, {}, {"id": 3}]
    text = _write(items, monkeypatch, stdlib=stdlib)
    assert json.loads(text)["tests"] == items
    assert len([line for line in text.decode().splitlines() if line.startswith("    {")]) == 4
    assert json.loads(_write([], monkeypatch, stdlib=stdlib)) == {"head": 1, "tests": []}


@pytest.mark.parametrize("count", [1, 2, 4096, 4097, 8193])
@pytest.mark.parametrize("stdlib", [False, True], ids=["orjson", "stdlib"])
def test_every_block_size_keeps_its_brackets_out(monkeypatch, stdlib, count):
    """Rows go to the encoder 4096 at a time: a block of one, and the last block of a file."""
    items = [{"id": f"t{i}", "results": {"c": {"outcome": "passed", "duration": i / 7}}} for i in range(count)]
    text = _write(items, monkeypatch, stdlib=stdlib)
    assert json.loads(text) == {"head": 1, "tests": items}
    assert sum(line.startswith("    {") for line in text.decode().splitlines()) == count


@pytest.mark.parametrize("stdlib", [False, True], ids=["orjson", "stdlib"])
def test_page_data_cannot_end_its_script_element(monkeypatch, stdlib):
    """The page embeds its data in a <script>: no `<`, `>` or `&` is left raw, ints as keys
    are written as strings, and both codecs write the same text."""
    from harness.publish.render.html import json_for_script

    data = {"t": ["</script><script>alert(1)</script>", "a & b", "é ✓"], "figures": {0: [1.5, 0.0025]}}
    fast = json_for_script(data)
    if stdlib:
        monkeypatch.setattr(jsonio, "orjson", None)
    text = json_for_script(data)
    assert not {"<", ">", "&"} & set(text)
    assert json.loads(text) == {"t": data["t"], "figures": {"0": [1.5, 0.0025]}}
    assert "é ✓" in text  # kept as is, not \\u-escaped
    assert text == fast
