"""A submission: one cell and its statement as one archive (`<cell dir>.cell.tar.gz`), what a vendor
hands over and what `harness collect --submissions` and `harness merge` take.

Packed deterministically (sorted names, no owners, no times: the same cell packs to the same bytes).
Unpacked safely: every member is checked before anything is written (a regular file or a folder, a
relative name inside the archive's one top folder, no two members of one name, within MAX_MEMBERS
and MAX_UNPACKED), then the cell is built in a temp folder beside its place and renamed into place
whole (harness/outputs.py). A symbolic or hard link, a device, a path that escapes, too much: one
InputError line, nothing written.
"""

from __future__ import annotations

import gzip
import re
import shutil
import tarfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO, Final

from harness import outputs
from harness.cell import MANIFEST, STATEMENT, canonical_files
from harness.errors import InputError

SUFFIX: Final = ".cell.tar.gz"
MAX_MEMBERS: Final = 100_000
MAX_UNPACKED: Final = 32 << 30  # a cell's files; the largest real ones are a few GB of JUnit
_TOP_RE: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,200}$")


def archive_name(cell: Path) -> str:
    return Path(cell).resolve().name + SUFFIX


def _info(name: str, size: int, directory: bool = False) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.size = 0 if directory else size
    info.type = tarfile.DIRTYPE if directory else tarfile.REGTYPE
    info.mode = 0o755 if directory else 0o644
    info.mtime = 0
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info


def pack(cell: Path, dest: Path) -> Path:
    """Write `cell` (its canonical files and its statement) as one archive at `dest`, whole."""
    cell = Path(cell)
    if not (cell / STATEMENT).is_file():
        raise InputError(
            f"{cell}: no statement ({STATEMENT}): a submission carries who vouches for it",
            hint=f"sign it first: harness attest {cell} --key KEY.pem",
        )
    top = cell.resolve().name
    if not _TOP_RE.match(top):
        raise InputError(f"{cell}: the folder name {top!r} is not one an archive can carry (letters, digits, . _ -)")
    names = [*canonical_files(cell), STATEMENT]
    folders = sorted({str(p) for n in names for p in PurePosixPath(n).parents if str(p) != "."})

    def write(handle: IO[bytes]) -> None:
        with (
            gzip.GzipFile(fileobj=handle, mode="wb", mtime=0, filename="") as packed,
            tarfile.open(fileobj=packed, mode="w", format=tarfile.PAX_FORMAT) as tar,
        ):
            tar.addfile(_info(top, 0, directory=True))
            for folder in folders:
                tar.addfile(_info(f"{top}/{folder}", 0, directory=True))
            for name in sorted(names):
                path = cell / name
                with path.open("rb") as data:
                    tar.addfile(_info(f"{top}/{name}", path.stat().st_size), data)

    outputs.sweep(Path(dest).parent)  # a killed submit's temp file
    outputs.write_file(dest, write)
    return dest


@dataclass(frozen=True)
class Member:
    name: str  # relative to the top folder
    size: int
    directory: bool


@dataclass(frozen=True)
class Checked:
    top: str  # the cell folder's name
    members: tuple[Member, ...]

    @property
    def size(self) -> int:
        return sum(m.size for m in self.members)


def _kind(info: tarfile.TarInfo) -> str:
    if info.issym():
        return f"a symbolic link (to {info.linkname!r})"
    if info.islnk():
        return f"a hard link (to {info.linkname!r})"
    if info.ischr() or info.isblk():
        return "a device"
    if info.isfifo():
        return "a FIFO"
    return "not a file or a folder"


def _members(source: Path) -> Iterator[tarfile.TarInfo]:
    try:
        with tarfile.open(source, mode="r:gz") as tar:
            yield from tar
    except (tarfile.TarError, EOFError, OSError, zlib.error) as err:
        if isinstance(err, FileNotFoundError):
            raise InputError(f"{source}: no such archive") from None
        reason = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise InputError(f"{source}: not a readable .tar.gz archive ({reason})") from None


def check(source: Path) -> Checked:
    """Every member checked, nothing written: the archive's one top folder and its members."""
    top: str | None = None
    seen: set[str] = set()
    members: list[Member] = []
    total = 0
    for info in _members(source):
        name = info.name
        parts = PurePosixPath(name).parts
        if name.startswith("/") or "\\" in name or ".." in parts or not parts:
            raise InputError(f"{source}: member {name!r} escapes the archive's folder; refused")
        if not (info.isreg() or info.isdir()):
            raise InputError(f"{source}: member {name!r} is {_kind(info)}; a submission holds files only")
        if top is None:
            top = parts[0]
        if parts[0] != top:
            raise InputError(f"{source}: members in two folders ({top!r}, {parts[0]!r}): a submission holds one cell")
        rel = "/".join(parts[1:])
        if rel in seen:
            raise InputError(f"{source}: member {name!r} is there twice; refused")
        seen.add(rel)
        if rel and any(p.startswith(".") for p in parts[1:]):
            raise InputError(f"{source}: member {name!r} is a hidden file; a cell has none")
        total += info.size if info.isreg() else 0
        if total > MAX_UNPACKED:
            raise InputError(f"{source}: unpacks to more than {MAX_UNPACKED >> 30} GiB; refused")
        if len(members) >= MAX_MEMBERS:
            raise InputError(f"{source}: more than {MAX_MEMBERS} members; refused")
        if rel:
            members.append(Member(rel, info.size if info.isreg() else 0, info.isdir()))
    if top is None:
        raise InputError(f"{source}: an empty archive")
    if not _TOP_RE.match(top):
        raise InputError(f"{source}: its folder {top!r} is not a cell folder name (letters, digits, . _ -)")
    if MANIFEST not in seen:
        raise InputError(f"{source}: no {top}/{MANIFEST}: not a cell")
    return Checked(top, tuple(members))


def unpack(source: Path, dest: Path) -> Path:
    """Check `source`, then put its cell under `dest` whole (replacing an earlier copy of the same
    folder); the cell's path. Nothing is written when a member is refused."""
    checked = check(source)
    target = Path(dest) / checked.top
    outputs.make_dirs(Path(dest))
    staging = outputs.staging_dir(target)
    try:
        wanted = {m.name: m for m in checked.members}
        with tarfile.open(source, mode="r:gz") as tar:
            for info in tar:
                rel = "/".join(PurePosixPath(info.name).parts[1:])
                member = wanted.get(rel)
                if member is None:
                    continue
                path = staging / rel
                with outputs.writing(path):
                    if member.directory:
                        path.mkdir(parents=True, exist_ok=True)
                        continue
                    path.parent.mkdir(parents=True, exist_ok=True)
                    data = tar.extractfile(info)
                    if data is None or info.size != member.size:  # changed between the two reads
                        raise InputError(f"{source}: member {info.name!r} changed while it was read")
                    with open(path, "xb") as out:
                        _copy(data, out, member.size, source)
        old = outputs.switch_dir(staging, target)
    except (tarfile.TarError, EOFError, zlib.error) as err:
        shutil.rmtree(staging, ignore_errors=True)
        raise InputError(f"{source}: not a readable .tar.gz archive ({err})") from None
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    if old is not None:
        outputs.remove_tree(old)
    return target


def _copy(data: IO[bytes], out: IO[bytes], size: int, source: Path) -> None:
    left = size
    while left and (chunk := data.read(min(1 << 20, left))):
        out.write(chunk)
        left -= len(chunk)
    if left:
        raise InputError(f"{source}: a member is cut short")


def is_submission(path: Path) -> bool:
    return path.name.endswith(SUFFIX) and path.is_file()
