"""torch.hub.load trust confirmation (2.11), fully offline against a locally built repository archive.

Technique: the hub dir is a tmp dir (torch.hub.set_dir), ``download_url_to_file`` copies a zip built
here, ``skip_validation=True`` avoids the GitHub API, an explicit ``:ref`` avoids the branch probe,
and ``builtins.input`` answers the prompt. The repo's hubconf writes a marker file when it runs, so
every test can tell whether code from the repository was executed.
"""

from __future__ import annotations

import builtins
import io
import shutil
import subprocess
import sys
import textwrap
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import torch
import torch.hub as hub
from _support.requires import requires, torch_at_least

pytestmark = requires(torch_at_least("2.11", 'torch.hub trust_repo="check" default'))

REPO = "someowner/somerepo"
REF = "main"
PROMPT = "does not belong to the list of trusted repositories"


def _hubconf(marker: Path) -> str:
    return textwrap.dedent(
        f"""\
        dependencies = ["torch"]
        import pathlib
        import torch
        pathlib.Path({str(marker)!r}).write_text("hubconf ran")

        def tiny(n=3):
            "a tiny model"
            return torch.nn.Linear(n, 1)
        """
    )


def build_archive(path: Path, hubconf: str, top: str = "someowner-somerepo-abc123", extra: dict | None = None) -> Path:
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(f"{top}/", "")
        z.writestr(f"{top}/hubconf.py", hubconf)
        for name, content in (extra or {}).items():
            z.writestr(name, content)
    return path


@dataclass
class OfflineHub:
    hub_dir: Path
    archive: Path
    marker: Path
    prompts: list[str] = field(default_factory=list)
    downloads: list[str] = field(default_factory=list)

    @property
    def trusted(self) -> list[str] | None:
        p = self.hub_dir / "trusted_list"
        return p.read_text().split() if p.exists() else None

    @property
    def code_ran(self) -> bool:
        return self.marker.exists()

    def answer(self, monkeypatch: pytest.MonkeyPatch, *answers: str) -> None:
        queue = list(answers)

        def fake_input(msg: str = "") -> str:
            self.prompts.append(msg)
            if not queue:
                raise AssertionError(f"unexpected extra prompt: {msg[:120]!r}")
            return queue.pop(0)

        monkeypatch.setattr(builtins, "input", fake_input)

    def load(self, repo: str = f"{REPO}:{REF}", **kw: object) -> torch.nn.Module:
        model = hub.load(repo, "tiny", skip_validation=True, verbose=False, **kw)
        x = torch.arange(3.0).reshape(1, 3)
        with torch.no_grad():  # the entrypoint's model, working: its output is what its own weights say
            want = x @ model.weight.t() + model.bias
            assert torch.equal(model(x), want), "the model torch.hub.load returned does not compute x @ W.T + b"
        return model


@pytest.fixture
def offline_hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> OfflineHub:
    hub_dir = tmp_path / "hub"
    hub_dir.mkdir()
    marker = tmp_path / "hubconf-ran"
    archive = build_archive(tmp_path / "repo.zip", _hubconf(marker))
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "torch_home"))
    monkeypatch.setattr(hub, "_hub_dir", str(hub_dir))  # == torch.hub.set_dir, restored after the test
    state = OfflineHub(hub_dir, archive, marker)

    def fake_download(url: str, dst: str, *args: object, **kwargs: object) -> None:
        state.downloads.append(url)
        shutil.copy(state.archive, dst)

    monkeypatch.setattr(hub, "download_url_to_file", fake_download)
    return state


def test_default_is_check() -> None:
    import inspect

    for fn in (hub.load, hub.list, hub.help):
        assert inspect.signature(fn).parameters["trust_repo"].default == "check", fn.__name__


@pytest.mark.parametrize("answer", ["y", "yes"])
def test_check_prompts_and_yes_loads_and_records(offline_hub: OfflineHub, monkeypatch, answer: str) -> None:
    offline_hub.answer(monkeypatch, answer)
    model = offline_hub.load()
    assert isinstance(model, torch.nn.Linear) and model.in_features == 3
    shown = len(offline_hub.prompts)
    assert shown == 1 and PROMPT in offline_hub.prompts[0], f"the trust prompt was shown {shown} time(s), want once"
    assert "someowner_somerepo" in offline_hub.prompts[0]
    assert offline_hub.trusted == ["someowner_somerepo"]
    assert offline_hub.code_ran
    # now trusted: a second load neither prompts nor downloads again
    offline_hub.answer(monkeypatch)
    offline_hub.load()
    assert len(offline_hub.prompts) == 1


@pytest.mark.parametrize("answer", ["n", "no", ""], ids=["n", "no", "enter"])
def test_check_refusal_raises_and_runs_nothing(offline_hub: OfflineHub, monkeypatch, answer: str) -> None:
    offline_hub.answer(monkeypatch, answer)
    with pytest.raises(Exception, match="Untrusted repository"):
        offline_hub.load()
    assert len(offline_hub.prompts) == 1
    assert not offline_hub.code_ran, "hubconf ran although the user refused"
    assert not offline_hub.trusted
    assert offline_hub.downloads == [], "the archive was downloaded although the user refused"


def test_check_unknown_answer_errors(offline_hub: OfflineHub, monkeypatch) -> None:
    offline_hub.answer(monkeypatch, "maybe")
    with pytest.raises(ValueError, match="Unrecognized response"):
        offline_hub.load()
    assert not offline_hub.code_ran and not offline_hub.trusted


def test_trust_repo_true_loads_without_prompt(offline_hub: OfflineHub, monkeypatch) -> None:
    offline_hub.answer(monkeypatch)  # any prompt fails the test
    assert isinstance(offline_hub.load(trust_repo=True), torch.nn.Linear)
    assert offline_hub.prompts == [] and offline_hub.trusted == ["someowner_somerepo"]


def test_trusted_owner_loads_without_prompt(offline_hub: OfflineHub, monkeypatch) -> None:
    assert "pytorch" in hub._TRUSTED_REPO_OWNERS
    offline_hub.answer(monkeypatch)
    assert isinstance(offline_hub.load("pytorch/notarealrepo:main"), torch.nn.Linear)
    assert offline_hub.prompts == []


def test_trusted_list_entry_loads_without_prompt(offline_hub: OfflineHub, monkeypatch) -> None:
    (offline_hub.hub_dir / "trusted_list").write_text("someowner_somerepo\n")
    offline_hub.answer(monkeypatch)
    offline_hub.load()
    assert offline_hub.prompts == []


def test_trust_repo_false_always_prompts(offline_hub: OfflineHub, monkeypatch) -> None:
    (offline_hub.hub_dir / "trusted_list").write_text("someowner_somerepo\n")
    offline_hub.answer(monkeypatch, "n")
    with pytest.raises(Exception, match="Untrusted repository"):
        offline_hub.load(trust_repo=False)
    assert len(offline_hub.prompts) == 1, "trust_repo=False must prompt even for a trusted repo"
    offline_hub.answer(monkeypatch, "y")
    offline_hub.load(trust_repo=False)
    assert len(offline_hub.prompts) == 2


def test_no_stdin_fails_clearly_without_running_code(offline_hub: OfflineHub, monkeypatch) -> None:
    """As in CI: stdin at EOF. The load must fail instead of running the repository's code."""
    monkeypatch.setattr(builtins, "input", _REAL_INPUT)
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    with pytest.raises(EOFError):
        offline_hub.load()
    assert not offline_hub.code_ran and not offline_hub.trusted


@pytest.mark.timeout(120)
def test_no_stdin_subprocess(tmp_path: Path) -> None:
    """The same in a fresh interpreter whose stdin is /dev/null, as a CI job runs."""
    marker = tmp_path / "hubconf-ran"
    archive = build_archive(tmp_path / "repo.zip", _hubconf(marker))
    script = textwrap.dedent(
        f"""\
        import shutil, socket, sys
        def _no_net(*a, **k):
            raise RuntimeError("network access is disabled in the suites")
        socket.socket.connect = _no_net
        socket.getaddrinfo = _no_net
        import torch.hub as hub
        hub.set_dir({str(tmp_path / "hub")!r})
        hub.download_url_to_file = lambda url, dst, *a, **k: shutil.copy({str(archive)!r}, dst)
        try:
            hub.load("{REPO}:{REF}", "tiny", skip_validation=True)
        except EOFError as e:
            print("REFUSED-EOF", e)
            sys.exit(3)
        print("LOADED")
        """
    )
    r = subprocess.run(
        [sys.executable, "-c", script], stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=110
    )
    assert r.returncode == 3 and "REFUSED-EOF" in r.stdout, f"rc={r.returncode}\n{r.stdout}\n{r.stderr[-2000:]}"
    assert PROMPT in r.stdout + r.stderr, "the user was not told why"
    assert not marker.exists(), "hubconf ran with no one to confirm"


def test_archive_with_parent_entries_is_rejected(offline_hub: OfflineHub, monkeypatch, tmp_path: Path) -> None:
    """Zip-slip: an archive entry with ../ must not be extracted outside the hub dir."""
    evil_target = offline_hub.hub_dir.parent / "evil.txt"
    offline_hub.archive = build_archive(
        tmp_path / "evil.zip",
        _hubconf(offline_hub.marker),
        extra={"someowner-somerepo-abc123/../../evil.txt": "pwned"},
    )
    offline_hub.answer(monkeypatch)
    with pytest.raises(ValueError, match=r"directory traversal|escapes target directory"):
        offline_hub.load(trust_repo=True)
    assert not evil_target.exists(), "archive entry escaped the hub dir"
    assert not offline_hub.code_ran


_REAL_INPUT = builtins.input
