"""The previous published matrix (harness/publish/baseline.py): from a path, the site folder or its URL,
gzip, whole or split (an index and its parts, fetched beside it); a baseline that does not exist yet is
None when optional, an error when required."""

from __future__ import annotations

import gzip
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from harness.errors import InputError
from harness.matrix_json import write_matrix, write_matrix_gzip, write_matrix_split
from harness.publish.baseline import load_baseline, site_matrix
from tests.committed import releases_matrix


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("site")
    write_matrix_gzip(releases_matrix(), root / "matrix.json.gz")
    write_matrix(releases_matrix(), root / "matrix.json")
    write_matrix_split(releases_matrix(), root / "split" / "matrix.json", part_bytes=20_000)
    (root / "broken.json.gz").write_bytes(gzip.compress(b"{")[:-4])
    return root


@pytest.fixture(scope="module")
def served(site: Path):
    class Handler(SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=str(site), **kwargs)

        def do_GET(self):
            if self.path.startswith("/down/"):
                self.send_error(503, "Service Unavailable")
                return
            super().do_GET()

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()


def test_a_baseline_from_a_file_gzip_or_not(site: Path) -> None:
    ids = [c.id for c in releases_matrix().columns]
    for name in ("matrix.json", "matrix.json.gz"):
        assert [c.id for c in load_baseline(site / name).columns] == ids
    assert load_baseline(site / "absent.json") is None
    with pytest.raises(InputError, match="no such matrix file"):
        load_baseline(site / "absent.json", required=True)
    with pytest.raises(InputError, match="a damaged gzip file"):
        load_baseline(site / "broken.json.gz")


def test_a_baseline_from_the_site_url(site: Path, served: str) -> None:
    assert load_baseline(f"{served}/matrix.json.gz").generated_at == releases_matrix().generated_at
    assert load_baseline(f"{served}/none/matrix.json.gz") is None, "the first publication has none yet"
    with pytest.raises(InputError, match="HTTP 404"):
        load_baseline(f"{served}/none/matrix.json.gz", required=True)
    with pytest.raises(InputError, match="HTTP 503"):
        load_baseline(f"{served}/down/matrix.json.gz")
    with pytest.raises(InputError, match="cannot fetch"):
        load_baseline("http://127.0.0.1:9/matrix.json.gz")
    assert load_baseline((site / "matrix.json.gz").as_uri()) is not None


def test_a_split_baseline_from_a_file_and_from_the_site_url_reads_its_parts(site: Path, served: str) -> None:
    whole = releases_matrix().to_json()["tests"]
    assert len(list((site / "split" / "matrix-parts").iterdir())) > 1, "the fixture has several parts"
    assert load_baseline(site / "split" / "matrix.json").to_json()["tests"] == whole
    assert load_baseline(f"{served}/split/matrix.json").to_json()["tests"] == whole
    outcomes = load_baseline(f"{served}/split/matrix.json", results="outcomes")
    assert [r.outcome for t in outcomes.tests for r in t.results.values()] == [
        r.outcome for t in releases_matrix().tests for r in t.results.values()
    ]


def test_a_site_folders_own_matrix_is_its_matrix_json_else_an_older_sites_gzip(site: Path, tmp_path: Path) -> None:
    assert site_matrix(site) == site / "matrix.json"
    assert site_matrix(tmp_path) is None
    (tmp_path / "matrix.json.gz").write_bytes(b"")
    assert site_matrix(tmp_path) == tmp_path / "matrix.json.gz", "an older site published matrix.json.gz only"
