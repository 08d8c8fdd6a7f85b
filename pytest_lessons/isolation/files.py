"""Files learner code can reach, handled by the grader as data: reading a learner's file
without following a link, and removing a case's private folder whatever was left in it.

A learner's ``solution.py`` comes from a folder the learner made (a git repository, an upload),
and links travel in both: a ``solution.py`` that is a symbolic link to the lesson's
``reference.py``, to ``/proc/self/cwd/...``, or a learner folder that is a link would make the
grader read, with its own rights, a file that is not the learner's. :func:`read_beneath`
opens the file beneath the learner's folder and follows no link on the way: with Linux's
``openat2`` (5.6 and later) where the kernel has it, else one component at a time with
``O_NOFOLLOW``. Only a regular file of bounded size is read; its bytes travel in the job, so the
process that runs learner code never opens a course or submission path. In a class's folder a
hard link is refused too (``single_link``): it is the same file as another one, which may be
the lesson's reference or a file only the grader may read. A git clone or an upload never makes
one; someone who could write the grader's file system did (or Python's ``tarfile`` unpacking
an archive without a filter, which links to any path it names).

:func:`remove_tree` removes a case's private folder: learner code may have left folders
without permissions, read-only files, trees deeper than Python's recursion limit, FIFOs and
links there. It never raises; :func:`remove_counting` also says how much the files took (the
disk budget where no tmpfs keeps it).
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import functools
import os
import stat
import sys
from pathlib import Path, PurePath
from typing import Any

#: The largest learner file the grader reads: a solution is a page or two of code.
MAX_SOURCE_BYTES = 1 << 20

# openat2(2): its number is the same on every architecture (a system call added after the
# numbering was unified), and its resolve flags (linux/openat2.h).
_OPENAT2 = 437
_RESOLVE_NO_MAGICLINKS, _RESOLVE_NO_SYMLINKS, _RESOLVE_BENEATH = 0x02, 0x04, 0x08
_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_NONBLOCK", 0)  # a FIFO in a learner's folder must not block the grader
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_CLOEXEC", 0)
)
_DIRECTORY = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY |= getattr(os, "O_CLOEXEC", 0)


class Unreadable(Exception):
    """The learner's file cannot be taken as it is; *problem* says why: ``link`` (the file or
    a folder on its way is a link), ``hard_link`` (the file has other names: *size* says how
    many names in all), ``missing``, ``not_file`` (a folder, a FIFO, a device) or
    ``too_large``. *path* is the path that has the problem."""

    def __init__(self, problem: str, path: Path, size: int = 0, what: str = "") -> None:
        super().__init__(f"{problem}: {path}")
        self.problem = problem
        self.path = path
        self.size = size
        self.what = what
        """For ``not_file``, what is there when it is known: ``a folder``, ``a FIFO``,
        ``a device``, ``a socket``."""


def what_is(mode: int) -> str:
    """What a file of *mode* (``st_mode``) that is no regular file is, as a message names it
    ("" for a type of no other name: the message then says "not a plain file")."""
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return ""


class _OpenHow(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]


_openat2_works: bool | None = None if sys.platform.startswith("linux") else False


@functools.lru_cache(maxsize=1)
def _libc() -> Any:
    """The C library, loaded once (each load costs the grader time on every case)."""
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


def _openat2(folder: int, relative: str) -> int | None:
    """*relative* opened beneath *folder* without any link; None where the kernel has no
    openat2 (then the caller walks). Raises OSError as open(2) would (ELOOP for a link,
    EXDEV for a path leaving the folder)."""
    global _openat2_works
    if _openat2_works is False:
        return None
    libc = _libc()
    if libc is None:
        _openat2_works = False
        return None
    how = _OpenHow(_OPEN_FLAGS, 0, _RESOLVE_BENEATH | _RESOLVE_NO_SYMLINKS | _RESOLVE_NO_MAGICLINKS)
    path = os.fsencode(relative)
    fd = int(
        libc.syscall(
            ctypes.c_long(_OPENAT2),
            ctypes.c_int(folder),
            ctypes.c_char_p(path),
            ctypes.byref(how),
            ctypes.c_size_t(ctypes.sizeof(how)),
        )
    )
    if fd >= 0:
        _openat2_works = True
        return fd
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EPERM) and _openat2_works is None:
        # No openat2 here (an old kernel, or a seccomp profile that refuses it).
        _openat2_works = False
        return None
    raise OSError(code, os.strerror(code), relative)


def _walk(folder: int, parts: list[str]) -> int:
    """The same without openat2: each folder on the way, then the file, opened with
    O_NOFOLLOW relative to the one before."""
    current = os.dup(folder)
    try:
        for part in parts[:-1]:
            following = os.open(part, _DIRECTORY, dir_fd=current)
            os.close(current)
            current = following
        return os.open(parts[-1], _OPEN_FLAGS, dir_fd=current)
    finally:
        os.close(current)


def _is_link(path: Path) -> bool:
    with contextlib.suppress(OSError):
        return stat.S_ISLNK(os.lstat(path).st_mode)
    return False


def _first_link(folder: Path, parts: list[str]) -> Path:
    """The first link on the way from *folder* to the file, to name in the learner's feedback."""
    at = folder
    for part in parts:
        at = at / part
        if _is_link(at):
            return at
    return folder.joinpath(*parts)


def read_beneath(
    folder: Path, relative: PurePath, limit: int = MAX_SOURCE_BYTES, single_link: bool = False
) -> bytes:
    """The bytes of *folder* / *relative*, opened beneath *folder* with no link followed,
    neither the folder itself nor any component after it; only a regular file of at most
    *limit* bytes, and with *single_link* only one that has no other name (no hard link).
    Raises :class:`Unreadable`."""
    parts = [p for p in PurePath(relative).parts if p not in ("", ".")]
    target = folder.joinpath(*parts)
    if not parts or ".." in parts or PurePath(relative).is_absolute():
        raise Unreadable("not_file", target)
    try:
        base = os.open(folder, _DIRECTORY)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR) and _is_link(folder):
            raise Unreadable("link", folder) from None
        raise Unreadable("missing", target) from None
    try:
        fd = _openat2(base, os.path.join(*parts))
        if fd is None:
            fd = _walk(base, parts)
    except OSError as exc:
        # ELOOP: a link (openat2's RESOLVE_NO_SYMLINKS, or O_NOFOLLOW on the last part);
        # ENOTDIR: O_DIRECTORY|O_NOFOLLOW on a link to a folder; EXDEV: leaving the folder.
        if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EXDEV, errno.EMLINK):
            link = _first_link(folder, parts)
            if _is_link(link):
                raise Unreadable("link", link) from None
            raise Unreadable("not_file", target) from None
        if exc.errno == errno.EISDIR:
            raise Unreadable("not_file", target, what="a folder") from None
        raise Unreadable("missing", target) from None
    finally:
        os.close(base)
    # The descriptor's own type, before Python wraps it: a folder opens for reading (the
    # wrapper then raises IsADirectoryError, and leaves the descriptor open), a FIFO opens
    # without blocking (O_NONBLOCK) and a read of it would wait for a writer.
    try:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode):
            raise Unreadable("not_file", target, what=what_is(status.st_mode))
        if single_link and status.st_nlink > 1:
            raise Unreadable("hard_link", target, status.st_nlink)
        if status.st_size > limit:
            raise Unreadable("too_large", target, status.st_size)
        handle = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    with handle:
        data = handle.read(limit + 1)
    if len(data) > limit:  # it grew since fstat
        raise Unreadable("too_large", target, len(data))
    return data


#: Per class folder: (device, inode) -> the names under it of each file that has several.
_NAMES: dict[str, dict[tuple[int, int], list[str]]] = {}


def names_within(root: Path, path: Path) -> list[str]:
    """The names under *root* of the file at *path* (a hard link's other names among them),
    found without following a link, relative to *root*; [] when it cannot be looked at.

    Made once per *root* and only when a class has a hard link at all: a learner's archive
    unpacked without a filter can make a classmate's file one of its own names, and then
    the two learners are told so, not that they linked a file themselves."""
    try:
        status = os.lstat(path)
    except OSError:
        return []
    index = _NAMES.get(str(root))
    if index is None:
        index = {}
        for folder, _, files in os.walk(root):  # os.walk follows no link by default
            for name in files:
                full = os.path.join(folder, name)
                with contextlib.suppress(OSError):
                    found = os.lstat(full)
                    if stat.S_ISREG(found.st_mode) and found.st_nlink > 1:
                        key = (found.st_dev, found.st_ino)
                        index.setdefault(key, []).append(os.path.relpath(full, root))
        _NAMES[str(root)] = index
    return sorted(index.get((status.st_dev, status.st_ino), []))


def read_file(path: Path, limit: int) -> bytes | None:
    """The bytes of a file in a folder learner code could write (a case's result): only a
    regular file, never through a link at its last component, read up to *limit* + 1 bytes so
    the caller sees that it is too large; None when there is none."""
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError:
        return None
    # Asked before a file object is made of it: Python refuses to make one of a folder
    # (IsADirectoryError), which learner code can leave at the result's name.
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        return None
    with os.fdopen(fd, "rb") as handle:
        return handle.read(limit + 1)


def _unlock(folder: int, name: str) -> None:
    """Give the grader back the rights to list and empty the folder *name* in *folder*,
    never following a link: through a descriptor of the folder itself, where the system
    allows it."""
    with contextlib.suppress(OSError):
        if not hasattr(os, "O_PATH"):  # pragma: no cover - macOS
            os.chmod(name, 0o700, dir_fd=folder)
            return
        fd = os.open(name, os.O_PATH | _DIRECTORY, dir_fd=folder)
        try:
            os.chmod(f"/proc/self/fd/{fd}", 0o700)
        finally:
            os.close(fd)


def remove_tree(folder: Path, passes: int = 3) -> bool:
    """Remove *folder* and everything in it, giving folders back their permissions on the
    way and never following a link. Never raises; True when nothing is left.

    It holds one descriptor at a time and climbs back with ``..``, checking that it is where
    it came from, so a tree deeper than the path length or the descriptor limit goes too.
    Processes that still write into it (learner code that escaped the kill) get *passes*
    tries before the folder is left for the session's own removal."""
    return _remove(folder, passes, None)


def remove_counting(folder: Path, passes: int = 3) -> tuple[bool, int]:
    """Remove *folder* as :func:`remove_tree` does, and say how many bytes its files took on
    the disk: each file once however many hard links it has, what a symbolic link points to
    never. Never raises."""
    sizes: dict[tuple[int, int], int] = {}
    removed = _remove(folder, passes, sizes)
    return removed, sum(sizes.values())


def _remove(folder: Path, passes: int, sizes: dict[tuple[int, int], int] | None) -> bool:
    for _ in range(passes):
        with contextlib.suppress(Exception):
            _remove_once(folder, sizes)
        if not os.path.lexists(folder):
            return True
    return False


def _identity(fd: int) -> tuple[int, int]:
    status = os.fstat(fd)
    return status.st_dev, status.st_ino


def _empty_files(fd: int, sizes: dict[tuple[int, int], int] | None = None) -> list[str]:
    """Remove every entry of the folder *fd* that is not a folder; the folders' names. With
    *sizes*, each removed file's disk use goes in it by the file's identity."""
    folders: list[str] = []
    try:
        entries = list(os.scandir(fd))
    except OSError:
        return folders
    for entry in entries:
        try:
            is_folder = entry.is_dir(follow_symlinks=False)
        except OSError:
            is_folder = False
        if is_folder:
            folders.append(entry.name)
        else:
            if sizes is not None:
                with contextlib.suppress(OSError):
                    info = entry.stat(follow_symlinks=False)
                    used = getattr(info, "st_blocks", None)
                    used = info.st_size if used is None else used * 512
                    sizes[(info.st_dev, info.st_ino)] = used
            with contextlib.suppress(OSError):
                os.unlink(entry.name, dir_fd=fd)
    return folders


def _remove_once(top: Path, sizes: dict[tuple[int, int], int] | None = None) -> None:
    try:
        mode = os.lstat(top).st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(mode):
        os.unlink(top)
        return
    parent = os.open(top.parent, _DIRECTORY)
    try:
        _unlock(parent, top.name)
        fd = os.open(top.name, _DIRECTORY, dir_fd=parent)
    finally:
        os.close(parent)
    # Per level: its name in the folder above, its identity, the folders it still holds.
    levels: list[tuple[str, tuple[int, int], list[str]]] = [
        (top.name, _identity(fd), _empty_files(fd, sizes))
    ]
    try:
        while levels:
            pending = levels[-1][2]
            if pending:
                name = pending.pop()
                _unlock(fd, name)
                try:
                    child = os.open(name, _DIRECTORY, dir_fd=fd)
                except OSError:
                    continue
                os.close(fd)
                fd = child
                levels.append((name, _identity(fd), _empty_files(fd, sizes)))
                continue
            name, _, _ = levels.pop()
            if not levels:
                break
            above = os.open("..", _DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = above
            if _identity(fd) != levels[-1][1]:
                return  # moved while being removed: stop rather than remove elsewhere
            with contextlib.suppress(OSError):
                os.rmdir(name, dir_fd=fd)
    finally:
        os.close(fd)
    os.rmdir(top)
