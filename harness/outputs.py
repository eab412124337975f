"""Every file the harness writes goes through here, so outputs survive what CI does to them.

- A file is written to a temp file in its own folder (`TEMP_PREFIX`, then the writer's pid), flushed,
  fsynced and renamed over the old one: a reader, or a run killed at any instant, sees the old file
  or the new one, never half of one. A file of the history is written once (linked into place,
  never replaced).
- A folder is published whole: built beside the old one, then swapped with it in one rename
  (`switch_dir`, Linux's renameat2 RENAME_EXCHANGE), so the served folder is always wholly one
  publication.
- A write that fails (a full disk, a read-only mount, a forbidden folder) is a `WriteError`: one line
  naming the path and the cause, its own exit code, and the temp file removed (the old output stays).
- One writer at a time: `locked` holds an flock on `<folder>/.harness-lock`, waits a bounded time,
  then refuses, naming the process that holds it.
- Temp files of killed runs carry `TEMP_PREFIX` and are swept by the next run (`sweep`): only those
  whose writer is gone, or that are a day old; never a live run's.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import os
import secrets
import shutil
import stat
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Final

from harness.errors import OutputLockedError, WriteError

TEMP_PREFIX: Final = ".harness-tmp-"
LOCK_NAME: Final = ".harness-lock"
DEFAULT_LOCK_TIMEOUT: Final = 600.0  # seconds a second writer waits for the first
STALE_AFTER: Final = 24 * 3600.0  # a temp file this old is a leftover whoever wrote it
_NAME_MAX: Final = 255
_held: dict[Path, int] = {}  # locks this process holds: folder -> depth (re-entrant)


def cannot_write(path: Path | str, err: OSError) -> WriteError:
    reason = err.strerror or str(err)
    return WriteError(f"cannot write {path}: {reason}", path=str(path), reason=reason)


@contextlib.contextmanager
def writing(path: Path | str) -> Iterator[None]:
    """Any OSError inside is a WriteError naming `path`."""
    try:
        yield
    except OSError as err:
        raise cannot_write(path, err) from None


def temp_path(path: Path) -> Path:
    """A temp name beside `path`: `.harness-tmp-<pid>-<random>-<name>`, within the name limit."""
    head = f"{TEMP_PREFIX}{os.getpid()}-{secrets.token_hex(4)}-"
    tail = path.name.encode("utf-8")[: _NAME_MAX - len(head) - 8].decode("utf-8", "ignore")
    return path.with_name(head + tail)


def make_dirs(folder: Path) -> None:
    if folder.is_dir():
        return
    with writing(folder):
        folder.mkdir(parents=True, exist_ok=True)


def _write_temp(tmp: Path, content: bytes | str | Callable[[IO[bytes]], None], sync: bool) -> None:
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
    os.fchmod(fd, 0o644)  # whatever the umask: these files are shared (artifacts, Pages, other users)
    with os.fdopen(fd, "wb") as handle:
        if callable(content):
            content(handle)
        else:
            handle.write(content.encode("utf-8") if isinstance(content, str) else content)
        handle.flush()
        if sync:
            os.fsync(handle.fileno())


def write_file(path: Path, content: bytes | str | Callable[[IO[bytes]], None], *, sync: bool = True) -> None:
    """Write `path` atomically: temp file beside it, flush, fsync (`sync`), rename over it."""
    path = Path(path)
    make_dirs(path.parent)
    tmp = temp_path(path)
    try:
        _write_temp(tmp, content, sync)
        os.replace(tmp, path)
    except OSError as err:
        _discard(tmp)
        raise cannot_write(path, err) from None
    except BaseException:
        _discard(tmp)
        raise


def copy_file(source: Path, dest: Path) -> None:
    """Copy `source` to `dest` atomically (a wheel cut short by a kill would poison a wheelhouse)."""

    def copy(handle: IO[bytes]) -> None:
        with open(source, "rb") as data:
            shutil.copyfileobj(data, handle, 1 << 20)

    write_file(dest, copy)


def write_once(path: Path, content: bytes | str) -> bool:
    """Create `path` whole; False (nothing written) when it exists. link() never replaces a name."""
    path = Path(path)
    make_dirs(path.parent)
    tmp = temp_path(path)
    try:
        _write_temp(tmp, content, True)
        os.link(tmp, path)
    except FileExistsError:
        return False
    except OSError as err:
        raise cannot_write(path, err) from None
    finally:
        _discard(tmp)
    return True


def remove(path: Path) -> None:
    """Remove a file if it is there (a WriteError if it cannot be)."""
    with writing(path):
        Path(path).unlink(missing_ok=True)


def _discard(path: Path) -> None:
    with contextlib.suppress(OSError):
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()


def sync_dir(folder: Path) -> None:
    """fsync a folder, so the names just made in it survive a power cut (not only a kill)."""
    with contextlib.suppress(OSError):  # some file systems cannot fsync a folder; a kill is still safe
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


# -- a folder published whole ----------------------------------------------------------------------
_RENAME_EXCHANGE: Final = 2
_AT_FDCWD: Final = -100


def _exchange(a: Path, b: Path) -> bool:
    """Swap two names in one step (renameat2 RENAME_EXCHANGE); False where the system cannot."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    renameat2.argtypes = (ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint)
    sys.audit("harness.outputs.exchange", str(a), str(b))  # as os.rename is audited (the fault tests count both)
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP):  # this file system or kernel cannot swap
        return False
    raise OSError(code, os.strerror(code), str(b))


def staging_dir(target: Path) -> Path:
    """A new, empty folder beside `target` to build its next version in."""
    folder = temp_path(target)
    with writing(target):  # named by what it becomes: the user knows no temp folder
        folder.mkdir(parents=True)
    return folder


def switch_dir(staging: Path, target: Path) -> Path | None:
    """Make the complete folder `staging` the folder at `target` in one rename. Returns where the
    previous version now is (the caller removes it), or None when there was none."""
    with writing(target):
        if not os.path.lexists(target):
            os.rename(staging, target)
            sync_dir(target.parent)
            return None
        if _exchange(staging, target):
            sync_dir(target.parent)
            return staging
        # No renameat2 here: two renames, with an instant between them without `target`.
        old = temp_path(target.with_name(target.name + ".old"))
        os.rename(target, old)
        os.rename(staging, target)
        sync_dir(target.parent)
        return old


def restore_switched(target: Path) -> Path | None:
    """After a kill between the two renames of a switch without renameat2, `target` is missing and
    its last version waits under a temp name: put it back (call with the folder's lock held)."""
    if os.path.lexists(target):
        return None
    waiting = sorted(
        (p for p in target.parent.glob(f"{TEMP_PREFIX}*-{target.name}.old") if p.is_dir()),
        key=lambda p: p.stat().st_mtime,
    )
    if not waiting:
        return None
    with writing(target):
        os.rename(waiting[-1], target)
    return target


def link_tree(source: Path, dest: Path, *, skip: Callable[[Path], bool], _rel: Path = Path()) -> None:
    """Fill `dest` with `source`'s files as hard links (copies where links are refused) and its
    symbolic links as links, leaving out what `skip` says (given the path relative to the top).
    Safe because no file is ever written in place: a new version is a new file renamed over the
    name, so the old version keeps its own."""
    with writing(dest):
        os.chmod(dest, stat.S_IMODE(os.stat(source).st_mode))
    for entry in sorted(source.iterdir()):
        rel = _rel / entry.name
        if skip(rel):
            continue
        target = dest / entry.name
        with writing(target):
            mode = entry.lstat().st_mode
            if stat.S_ISLNK(mode):
                os.symlink(os.readlink(entry), target)
            elif stat.S_ISDIR(mode):
                target.mkdir()
                link_tree(entry, target, skip=skip, _rel=rel)
            elif stat.S_ISREG(mode):
                try:
                    os.link(entry, target)
                except OSError as err:
                    if err.errno in (errno.ENOSPC, errno.EDQUOT, errno.EROFS):
                        raise
                    shutil.copy2(entry, target)  # a file system without hard links


def clear_temp_files(folder: Path) -> None:
    """Remove every temp file below a folder this process is building alone (a temp file a failed
    clean-up left must never be served): a WriteError when one cannot be removed."""
    for here, dirs, files in os.walk(folder):
        for name in [*files, *dirs]:
            if name.startswith(TEMP_PREFIX):
                path = Path(here) / name
                with writing(path):
                    if name in dirs and not path.is_symlink():
                        shutil.rmtree(path)
                    else:
                        path.unlink()
        dirs[:] = [d for d in dirs if not d.startswith(TEMP_PREFIX)]


def sync_tree(folder: Path) -> None:
    for here, _dirs, _files in os.walk(folder):
        sync_dir(Path(here))


def remove_tree(folder: Path) -> None:
    """Remove a folder that is no longer served (best effort: a leftover is swept by the next run)."""
    shutil.rmtree(folder, ignore_errors=True)


# -- leftovers -------------------------------------------------------------------------------------
def _writer_pid(name: str) -> int | None:
    head = name[len(TEMP_PREFIX) :].split("-", 1)[0]
    return int(head) if head.isdigit() else None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's live process
        return True
    return True


def is_leftover(path: Path, *, now: float | None = None) -> bool:
    """A temp file of a run that is gone (its pid is not alive) or that is a day old."""
    if not path.name.startswith(TEMP_PREFIX):
        return False
    pid = _writer_pid(path.name)
    try:
        age = (time.time() if now is None else now) - path.lstat().st_mtime
    except OSError:
        return False
    if pid == os.getpid():
        return False
    return age > STALE_AFTER or pid is None or not _alive(pid)


def sweep(folder: Path, *, recursive: bool = False, also: Callable[[Path], bool] | None = None) -> list[Path]:
    """Remove the leftovers of killed runs in `folder` (and below it with `recursive`); `also` names
    more leftovers the caller knows to be dead (what it finds while holding the folder's lock)."""
    removed: list[Path] = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for entry in entries:
        path = Path(entry.path)
        if is_leftover(path) or (also is not None and entry.name.startswith(TEMP_PREFIX) and also(path)):
            _discard(path)
            removed.append(path)
        elif recursive and entry.is_dir(follow_symlinks=False) and entry.name != ".git":
            removed += sweep(path, recursive=True, also=also)
    return removed


# -- one writer at a time -------------------------------------------------------------------------
@contextlib.contextmanager
def locked(folder: Path, *, timeout: float = DEFAULT_LOCK_TIMEOUT, what: str = "") -> Iterator[None]:
    """Hold `<folder>/.harness-lock` (flock) for the block; wait up to `timeout` seconds for another
    writer, then refuse with an OutputLockedError naming it. Re-entrant within one process."""
    folder = Path(os.path.abspath(folder))
    if folder in _held:
        _held[folder] += 1
        try:
            yield
        finally:
            _held[folder] -= 1
        return
    make_dirs(folder)
    path = folder / LOCK_NAME
    with writing(path):
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        _acquire(fd, path, timeout, what or str(folder))
        with contextlib.suppress(OSError):  # who holds it, for the message of the one who waits
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        _held[folder] = 1
        try:
            yield
        finally:
            del _held[folder]
    finally:
        os.close(fd)  # closing releases the flock


def _acquire(fd: int, path: Path, timeout: float, what: str) -> None:
    deadline = time.monotonic() + max(timeout, 0.0)
    delay = 0.05
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            pass
        except OSError as err:
            raise cannot_write(path, err) from None
        if time.monotonic() >= deadline:
            holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
            by = f"process {holder}" if holder.isdigit() else "another process"
            raise OutputLockedError(
                f"{what} is being written by {by} (it holds {path}); gave up after {timeout:g} s",
                hint="one publisher at a time: wait for it, or give --lock-timeout more seconds",
            )
        time.sleep(delay)
        delay = min(delay * 2, 1.0)
