"""torch.hub's other doors, against a local repository served by a local HTTP server on 127.0.0.1.

The repository has commits, a ``main`` branch, a working tree and GitHub's zipball of each commit (``Repository``);
the server answers
GitHub's URLs as torch.hub builds them (``/repos/<owner>/<repo>/branches``, ``/tags``, ``/<owner>/<repo>/zipball/
<ref>``) and serves checkpoints; ``torch.hub``'s ``urlopen`` is pointed at it (the host rewritten, the path and
query kept), and the suites' offline guard lets through connections to 127.0.0.1 only. Every request is counted,
so a test can say what was downloaded. Checked, with the documented behaviour:

* ``hub.list`` / ``hub.help`` prompt like ``hub.load`` (``trust_repo="check"``): "y" lists the entrypoints and shows
  the docstring, "n" raises "Untrusted repository." before anything is downloaded or run;
* ``trust_repo=None`` (the pre-2.11 default old callers still pass): no prompt, the repository is recorded as trusted;
* ``source="local"``: the directory's hubconf runs with no trust check and no download; an unknown source is refused;
* ``force_reload``: the cache is used until ``force_reload=True`` downloads the new commit;
* the fork check (``skip_validation=False``): a ref among the repository's branches (or a commit prefix of one) loads,
  a ref that is not there raises "Cannot find <ref> in https://github.com/<owner>/<repo>" before any download;
* ``load_state_dict_from_url``: ``check_hash`` accepts the file whose SHA-256 starts with the name's hash and refuses
  another ("invalid hash value"), leaving nothing in the cache; ``weights_only=True`` refuses a pickle that would run
  code (with ``weights_only=False`` the same file does run it).
"""

from __future__ import annotations

import _socket
import builtins
import hashlib
import http.server
import io
import json
import pickle
import socket
import textwrap
import threading
import zipfile
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit
from urllib.request import Request

import pytest
import torch
import torch.hub as hub
from _support.requires import requires, torch_at_least

pytestmark = requires(torch_at_least("2.11", 'torch.hub trust_repo="check" default'))

OWNER, NAME = "someowner", "somerepo"
PROMPT = "does not belong to the list of trusted repositories"
LOOPBACK = "127.0.0.1"


def _hubconf(marker: Path, out_features: int) -> str:
    return textwrap.dedent(
        f"""\
        dependencies = ["torch"]
        import pathlib
        import torch
        pathlib.Path({str(marker)!r}).write_text("hubconf ran")

        def tiny(n=3):
            "a tiny model"
            return torch.nn.Linear(n, {out_features})

        def _helper():
            return None
        """
    )


class Repository:
    """A repository as torch.hub sees one: commits (snapshots of its files under a 40-hex id), the branch ``main``, a
    working tree (what ``source="local"`` loads) and GitHub's zipball of a commit (one top folder
    ``<owner>-<repo>-<sha7>/``, as ``git archive --prefix`` writes it). torch.hub never runs git ("Use urlopen to avoid
    depending on local git"), and the suites' images carry none: the commits are modelled, the archives are real."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.mkdir()
        self.commits: dict[str, dict[str, str]] = {}
        self.heads: dict[str, str] = {}

    def commit(self, files: dict[str, str], message: str) -> str:
        parent = self.heads.get("main")
        snapshot = {**(self.commits[parent] if parent else {}), **files}
        sha = hashlib.sha1(json.dumps([parent, message, sorted(snapshot.items())]).encode()).hexdigest()
        self.commits[sha], self.heads["main"] = snapshot, sha
        for name, text in files.items():
            (self.path / name).write_text(text)
        return sha

    def rev_parse(self, ref: str) -> str:
        return self.heads.get(ref, ref)

    def archive(self, ref: str) -> bytes:
        sha = self.rev_parse(ref)
        top = f"{OWNER}-{NAME}-{sha[:7]}/"
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as z:
            z.writestr(top, "")
            for name, text in sorted(self.commits[sha].items()):
                z.writestr(top + name, text)
        return buffer.getvalue()


@dataclass
class Served:
    """What the local server answers, and every path it was asked for."""

    zipballs: dict[str, bytes] = field(default_factory=dict)  # ref -> zip bytes
    branches: list[dict] = field(default_factory=list)
    files: dict[str, bytes] = field(default_factory=dict)  # path -> bytes
    asked: Counter = field(default_factory=Counter)

    def zipball_requests(self) -> int:
        return sum(n for path, n in self.asked.items() if "/zipball/" in path)


def _handler(served: Served) -> type[http.server.BaseHTTPRequestHandler]:
    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:  # quiet
            pass

        def do_GET(self) -> None:  # http.server's name for a GET
            path, _, query = self.path.partition("?")
            served.asked[path] += 1
            body: bytes | None = None
            if path == f"/repos/{OWNER}/{NAME}/branches":
                body = json.dumps(served.branches if "page=1" in query.split("&") else []).encode()
            elif path == f"/repos/{OWNER}/{NAME}/tags":
                body = b"[]"
            elif path.startswith(f"/{OWNER}/{NAME}/zipball/"):
                body = served.zipballs.get(path.rsplit("/", 1)[-1])
            else:
                body = served.files.get(path)
            if body is None:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    return Handler


@pytest.fixture
def loopback(monkeypatch: pytest.MonkeyPatch) -> None:
    """The suites' offline guard, with connections to 127.0.0.1 let through (and nothing else)."""
    guarded_connect, guarded_create = socket.socket.connect, socket.create_connection

    def connect(self: socket.socket, address: object) -> None:
        if self.family == socket.AF_INET and isinstance(address, tuple) and address[0] == LOOPBACK:
            return _socket.socket.connect(self, address)
        return guarded_connect(self, address)

    default = socket._GLOBAL_DEFAULT_TIMEOUT

    def create_connection(address: tuple, timeout: object = default, *args: object, **kw: object) -> socket.socket:
        if address[0] != LOOPBACK:
            return guarded_create(address, timeout, *args, **kw)
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if timeout is not default:
            sock.settimeout(timeout)
        _socket.socket.connect(sock, address)
        return sock

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket, "create_connection", create_connection)


@dataclass
class LocalHub:
    repo: Repository
    served: Served
    base: str  # http://127.0.0.1:<port>
    hub_dir: Path
    marker: Path
    prompts: list[str] = field(default_factory=list)

    @property
    def trusted(self) -> list[str]:
        path = self.hub_dir / "trusted_list"
        return path.read_text().split() if path.exists() else []

    def answer(self, monkeypatch: pytest.MonkeyPatch, *answers: str) -> None:
        queue = list(answers)

        def fake_input(message: str = "") -> str:
            self.prompts.append(message)
            if not queue:
                raise AssertionError(f"unexpected prompt: {message[:120]!r}")
            return queue.pop(0)

        monkeypatch.setattr(builtins, "input", fake_input)

    def publish(self, ref: str) -> str:
        """Serve the zipball of ``ref`` under its name and its full sha; the branch list names it."""
        sha = self.repo.rev_parse(ref)
        data = self.repo.archive(sha)
        self.served.zipballs.update({ref: data, sha: data, sha[:10]: data})
        self.served.branches = [{"name": "main", "commit": {"sha": self.repo.rev_parse("main")}}]
        return sha


@pytest.fixture
def local_hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, loopback: None) -> Iterator[LocalHub]:
    marker = tmp_path / "hubconf-ran"
    repo = Repository(tmp_path / "repo")
    repo.commit({"hubconf.py": _hubconf(marker, 1), "README.md": "a test repository\n"}, "first")
    served = Served()
    server = http.server.ThreadingHTTPServer((LOOPBACK, 0), _handler(served))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    base = f"http://{LOOPBACK}:{server.server_address[1]}"
    real_urlopen = hub.urlopen

    def urlopen(url: str | Request, *args: object, **kwargs: object):
        """GitHub's hosts rewritten to the local server: torch.hub's own URL building and parsing run unchanged."""
        target = url.full_url if isinstance(url, Request) else url
        parts = urlsplit(target)
        if parts.netloc in ("github.com", "api.github.com"):
            target = urlunsplit(("http", f"{LOOPBACK}:{server.server_address[1]}", parts.path, parts.query, ""))
        url = Request(target, headers=dict(url.header_items())) if isinstance(url, Request) else target
        return real_urlopen(url, *args, **kwargs)

    hub_dir = tmp_path / "hub"
    hub_dir.mkdir()
    monkeypatch.setattr(hub, "urlopen", urlopen)
    monkeypatch.setattr(hub, "_hub_dir", str(hub_dir))
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "torch_home"))
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    local = LocalHub(repo, served, base, hub_dir, marker)
    local.publish("main")
    yield local
    server.shutdown()
    server.server_close()
    thread.join(timeout=10)


def _check_model(model: torch.nn.Module, out_features: int) -> None:
    x = torch.arange(3.0).reshape(1, 3)
    assert isinstance(model, torch.nn.Linear) and (model.in_features, model.out_features) == (3, out_features)
    with torch.no_grad():
        assert torch.equal(model(x), x @ model.weight.t() + model.bias), "the loaded model does not compute x W^T + b"


REPO = f"{OWNER}/{NAME}:main"


@pytest.mark.parametrize("answer", ["y", "n"])
def test_list_and_help_prompt(local_hub: LocalHub, monkeypatch: pytest.MonkeyPatch, answer: str) -> None:
    local_hub.answer(monkeypatch, answer)
    if answer == "n":
        with pytest.raises(Exception, match=r"^Untrusted repository\.$"):
            hub.list(REPO, skip_validation=True)
        assert local_hub.served.zipball_requests() == 0 and not local_hub.marker.exists(), "refused, yet fetched or ran"
        assert local_hub.trusted == []
        return
    assert hub.list(REPO, skip_validation=True) == ["tiny"], "entrypoints: callables without a leading underscore"
    shown = local_hub.prompts
    assert len(shown) == 1 and PROMPT in shown[0], f"hub.list prompted {len(shown)} time(s), want once: {shown}"
    assert local_hub.trusted == [f"{OWNER}_{NAME}"]
    local_hub.answer(monkeypatch)  # trusted now: help must not prompt again
    assert hub.help(REPO, "tiny", skip_validation=True) == "a tiny model"
    _check_model(hub.load(REPO, "tiny", skip_validation=True, verbose=False), 1)  # the listed entrypoint works
    assert local_hub.served.zipball_requests() == 1, "help or load downloaded the repository again"


def test_trust_repo_none_is_not_a_check(local_hub: LocalHub, monkeypatch: pytest.MonkeyPatch, record_property) -> None:
    """2.11 made "check" the default and documents only "check", True and False; None (the old default, still passed
    by old callers) prompts for nothing and records the repository as trusted, as True does."""
    local_hub.answer(monkeypatch)  # a prompt fails the test
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _check_model(hub.load(REPO, "tiny", trust_repo=None, skip_validation=True, verbose=False), 1)
    record_property("hub.trust_repo_none_warnings", "; ".join(str(w.message) for w in caught) or "none")
    assert local_hub.prompts == [] and local_hub.marker.exists()
    assert local_hub.trusted == [f"{OWNER}_{NAME}"], "trust_repo=None did not record the repository"


def test_source_local(local_hub: LocalHub, monkeypatch: pytest.MonkeyPatch) -> None:
    local_hub.answer(monkeypatch)  # source="local" checks no trust: a prompt fails the test
    _check_model(hub.load(str(local_hub.repo.path), "tiny", source="local"), 1)
    assert local_hub.marker.exists(), "the directory's hubconf did not run"
    assert sum(local_hub.served.asked.values()) == 0, f"source='local' went to the network: {local_hub.served.asked}"
    assert local_hub.trusted == [], "source='local' wrote the trusted list"
    with pytest.raises(ValueError, match=r'^Unknown source: "nowhere". Allowed values: "github" \| "local".$'):
        hub.load(str(local_hub.repo.path), "tiny", source="nowhere")


def test_force_reload_fetches_the_new_commit(local_hub: LocalHub, monkeypatch: pytest.MonkeyPatch) -> None:
    local_hub.answer(monkeypatch)
    _check_model(hub.load(REPO, "tiny", trust_repo=True, skip_validation=True, verbose=False), 1)
    local_hub.repo.commit({"hubconf.py": _hubconf(local_hub.marker, 2)}, "second: two outputs")
    local_hub.publish("main")
    _check_model(hub.load(REPO, "tiny", trust_repo=True, skip_validation=True, verbose=False), 1)
    assert local_hub.served.zipball_requests() == 1, "without force_reload the cached repository must be used"
    reloaded = hub.load(REPO, "tiny", trust_repo=True, skip_validation=True, force_reload=True, verbose=False)
    assert local_hub.served.zipball_requests() == 2, "force_reload did not download the repository again"
    _check_model(reloaded, 2)


def test_fork_check(local_hub: LocalHub, monkeypatch: pytest.MonkeyPatch) -> None:
    local_hub.answer(monkeypatch)
    _check_model(hub.load(REPO, "tiny", trust_repo=True, skip_validation=False, verbose=False), 1)
    assert local_hub.served.asked[f"/repos/{OWNER}/{NAME}/branches"] >= 1, "skip_validation=False asked GitHub nothing"
    sha = local_hub.repo.rev_parse("main")
    prefix = f"{OWNER}/{NAME}:{sha[:10]}"  # a commit prefix of a branch head is the repository's own
    _check_model(hub.load(prefix, "tiny", trust_repo=True, skip_validation=False, verbose=False), 1)
    before = local_hub.served.zipball_requests()
    fork = "0123456789abcdef"  # a commit no branch or tag of the repository has: a fork's
    local_hub.served.zipballs[fork] = local_hub.served.zipballs["main"]
    expected = rf"^Cannot find {fork} in https://github.com/{OWNER}/{NAME}\. If it's a commit from a forked repo"
    with pytest.raises(ValueError, match=expected):
        hub.load(f"{OWNER}/{NAME}:{fork}", "tiny", trust_repo=True, skip_validation=False, verbose=False)
    assert local_hub.served.zipball_requests() == before, "the fork's commit was downloaded before the check refused"
    assert local_hub.served.asked[f"/repos/{OWNER}/{NAME}/tags"] >= 1, "the tags were not consulted before refusing"


def test_load_state_dict_from_url(local_hub: LocalHub, tmp_path: Path) -> None:
    state = {"weight": torch.arange(12.0).reshape(3, 4), "bias": torch.tensor([1.0, -2.0, 3.0])}
    good = tmp_path / "good.pth"
    torch.save(state, good)
    digest = hashlib.sha256(good.read_bytes()).hexdigest()
    local_hub.served.files[f"/ckpt/tiny-{digest[:8]}.pth"] = good.read_bytes()
    local_hub.served.files["/ckpt/tiny-00000000.pth"] = good.read_bytes()
    cache = tmp_path / "cache"
    got = hub.load_state_dict_from_url(
        f"{local_hub.base}/ckpt/tiny-{digest[:8]}.pth", model_dir=str(cache), check_hash=True, weights_only=True,
        progress=False,
    )  # fmt: skip
    assert set(got) == set(state) and all(torch.equal(got[k], state[k]) for k in state), "the weights changed"
    assert (cache / f"tiny-{digest[:8]}.pth").is_file(), "the checkpoint was not cached"
    expected = rf'^invalid hash value \(expected "00000000", got "{digest}"\)$'
    with pytest.raises(RuntimeError, match=expected):
        hub.load_state_dict_from_url(f"{local_hub.base}/ckpt/tiny-00000000.pth", model_dir=str(cache), check_hash=True)
    assert not (cache / "tiny-00000000.pth").exists(), "a file that failed its hash was left in the cache"

    # a pickle that runs code when loaded: open(<marker>, "w") creates a file
    ran = tmp_path / "payload-ran"

    class Payload:
        def __reduce__(self) -> tuple:
            return (open, (str(ran), "w"))

    evil = tmp_path / "evil.pth"
    torch.save({"weight": Payload()}, evil)
    local_hub.served.files["/ckpt/evil.pth"] = evil.read_bytes()
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
        hub.load_state_dict_from_url(f"{local_hub.base}/ckpt/evil.pth", model_dir=str(cache), weights_only=True)
    assert not ran.exists(), "weights_only=True ran the pickle's code"
    loaded = hub.load_state_dict_from_url(f"{local_hub.base}/ckpt/evil.pth", model_dir=str(cache), weights_only=False)
    loaded["weight"].close()
    assert ran.exists(), "the contrast: with weights_only=False the same file runs its code"
