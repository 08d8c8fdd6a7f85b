"""The sandbox that learner code runs in: what it may read, write, reach and signal.

Two halves, split by trust::

    pytest process (trusted)                      process that runs learner code
    ------------------------                      ------------------------------
    probe()      what this kernel offers          confine(request["sandbox"])
    Policy       built once per session:            drop to an unprivileged user (when root)
                   readable runtime paths,          environment := the allow-list
                   the environment allow-list,      HOME, TMPDIR, cwd := its private folder
                   the user to run as               Landlock: read the runtime and its own
    Policy.request(private folder, file)              file, write its private folder, no TCP,
                   -> plain data in the job  ---->    no signals or abstract sockets outside
                                                    then, and only then, load learner code

The policy is computed where the course's paths are known, and sent as plain data; the child
only applies it, so what it enforces can be read and tested without running anything.
Landlock (Linux 5.13 and later, unprivileged, per process) does the enforcing; each ABI
version adds protections (see :data:`PROTECTIONS`). Where Landlock is missing, :func:`probe`
says why and the rest (the clean environment, the private folder, the dropped user) still
applies. This module imports neither pytest nor torch.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import stat
import sys
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

#: Environment variables learner code gets from the grader's environment: what programs need
#: to run and to read and write text, and the thread settings. Nothing else: CI tokens and
#: secrets live in the environment.
ENV_ALLOWED = (
    "PATH",
    "LANG",
    "LANGUAGE",
    "TZ",
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "OPENBLAS_CORETYPE",
    "OPENBLAS_L2_SIZE",
    "VECLIB_MAXIMUM_THREADS",
    "NUMEXPR_NUM_THREADS",
    "PYTHONIOENCODING",
    "PYTHONUTF8",
    # Where the user's Python finds packages installed outside site-packages.
    "PYTHONPATH",
    # Where the interpreter finds its own shared libraries on some installations.
    "LD_LIBRARY_PATH",
    # Windows cannot start Python without these.
    "SYSTEMROOT",
    "WINDIR",
    "COMSPEC",
    "PATHEXT",
)
#: Prefixes of allowed names (the locale's categories).
ENV_ALLOWED_PREFIXES = ("LC_",)

#: Readable system folders and files (those that exist): shared libraries, time zones, locale
#: data, the name service's files. Never a home folder, /tmp or the rest of /proc.
SYSTEM_READ = (
    "/usr",
    "/lib",
    "/lib32",
    "/lib64",
    "/bin",
    "/sbin",
    "/etc/alternatives",
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/localtime",
    "/etc/timezone",
    "/etc/nsswitch.conf",
    "/etc/passwd",
    "/etc/group",
    "/etc/os-release",
    "/etc/mime.types",
    "/etc/ssl",
    "/proc/self",
    "/proc/cpuinfo",
    "/proc/meminfo",
    "/proc/stat",
    "/sys/devices/system/cpu",
    "/sys/fs/cgroup",
    "/dev/zero",
    "/dev/random",
    "/dev/urandom",
)
#: Device files learner code may also write.
DEVICES_WRITE = ("/dev/null",)

#: What each Landlock ABI version adds, as the header names it.
PROTECTIONS = {1: "files", 4: "TCP", 6: "signals, abstract sockets"}

# Landlock's system calls have the same numbers on every architecture Linux added them to at once.
_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_DUMPABLE = 4

# Filesystem access rights (linux/landlock.h).
_EXECUTE, _WRITE_FILE, _READ_FILE, _READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
_REFER, _TRUNCATE, _IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
_FILE_ONLY = _EXECUTE | _WRITE_FILE | _READ_FILE | _TRUNCATE | _IOCTL_DEV
_MAKE_CHAR, _MAKE_FIFO, _MAKE_BLOCK = 1 << 6, 1 << 10, 1 << 11
_SPECIAL_FILES = _MAKE_CHAR | _MAKE_FIFO | _MAKE_BLOCK


def _fs_rights(abi: int) -> int:
    """Every filesystem right the kernel's ABI *abi* knows: all of them are then denied unless a
    rule allows them."""
    rights = (1 << 13) - 1
    if abi >= 2:
        rights |= _REFER
    if abi >= 3:
        rights |= _TRUNCATE
    if abi >= 5:
        rights |= _IOCTL_DEV
    return rights


@dataclass(frozen=True)
class Support:
    """What this system offers to confine learner code."""

    abi: int
    """Landlock's ABI version; 0 where there is none."""
    reason: str = ""
    """Why there is none, for the run's header."""
    seccomp: bool = False
    """Whether a seccomp filter closes what Landlock leaves open (file modes and owners, UDP
    and raw sockets, io_uring)."""

    @property
    def protections(self) -> list[str]:
        """The kinds of access the sandbox denies here, as the header names them."""
        kinds = [words for version, words in PROTECTIONS.items() if self.abi >= version]
        if self.seccomp:
            kinds.append("file modes, UDP")
        return kinds


def probe() -> Support:
    """Ask the kernel which Landlock ABI it offers (a system call; no process is started)."""
    if not sys.platform.startswith("linux"):
        name = {"darwin": "macOS", "win32": "Windows"}.get(sys.platform, sys.platform)
        return Support(0, f"Landlock is a Linux feature and this is {name}")
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.syscall.restype = ctypes.c_long
        abi = int(libc.syscall(_CREATE_RULESET, None, ctypes.c_size_t(0), _CREATE_RULESET_VERSION))
    except (OSError, AttributeError) as exc:  # pragma: no cover - no libc to call
        return Support(0, f"the system call could not be made ({exc})")
    errno = ctypes.get_errno()
    seccomp = os.uname().machine in _SECCOMP_ARCH
    if abi > 0:
        return Support(abi, seccomp=seccomp)
    if errno == 95:  # EOPNOTSUPP
        reason = "Landlock is turned off in this Linux kernel's boot settings"
    else:
        release = os.uname().release
        reason = f"this Linux kernel ({release}) has no Landlock; it needs 5.13 or later"
    return Support(0, reason, seccomp=seccomp)


@dataclass(frozen=True)
class Policy:
    """What every case of a session may do: plain data, computed once in the pytest process."""

    abi: int
    """The Landlock ABI to apply; 0 for none (the other measures still apply)."""
    seccomp: bool = False
    """Whether to install the seccomp filter (see :func:`seccomp_filter`)."""
    read: tuple[str, ...] = ()
    """Folders and files learner code may read (and run programs from)."""
    env: Mapping[str, str] = field(default_factory=dict)
    """The whole environment learner code sees, besides HOME and TMPDIR."""
    uid: int | None = None
    """Run as this user (set when the grader runs as root), else as the grader."""
    gid: int | None = None
    user: str = ""
    """The user's name, for the header."""
    user_note: str = ""
    """Why the grader, though root, does not switch user (for the header)."""

    def request(self, private: Path, own_file: Path) -> dict[str, Any]:
        """The plain data a child applies with :func:`confine`: this policy, the case's private
        folder (its only writable place) and the one course file it may read."""
        return {
            "abi": self.abi,
            "seccomp": self.seccomp,
            "read": list(self.read),
            "file": str(own_file),
            "private": str(private),
            "env": dict(self.env),
            "uid": self.uid,
            "gid": self.gid,
        }

    def for_course(self, course: Iterable[Path], checkout: Path | None) -> Policy:
        """This policy with its readable paths, now that the course's folders are known."""
        if not self.abi:
            return self
        prefixes, runtime = runtime_paths()
        read = read_paths(SYSTEM_READ, runtime, prefixes, course, checkout)
        return replace(self, read=tuple(read))

    def prepare_private(self, private: Path) -> None:
        """Hand the case's private folder to the user the case runs as."""
        if self.uid is not None and hasattr(os, "chown"):
            os.chown(private, self.uid, self.gid if self.gid is not None else -1)


def learner_env(environ: Mapping[str, str], passed: Iterable[str] = ()) -> dict[str, str]:
    """The allow-listed part of *environ*, plus the names in *passed* (``--lesson-pass-env``)."""
    names = set(ENV_ALLOWED) | set(passed)
    return {
        name: value
        for name, value in environ.items()
        if name in names or name.startswith(ENV_ALLOWED_PREFIXES)
    }


def _within(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def read_paths(
    system: Iterable[str],
    runtime: Iterable[str],
    prefixes: Iterable[str],
    course: Iterable[Path],
    checkout: Path | None,
) -> list[str]:
    """The paths learner code may read, with nothing of the course in reach.

    *system* are the OS's folders (:data:`SYSTEM_READ`); *runtime* the interpreter's (its
    prefixes, ``sys.path``); *prefixes* the interpreter's installation folders. *course* are the
    exercise folders and the class's submissions folder: nothing inside them is readable. The
    *checkout* (pytest's root folder) holds the course's other files, its tests and ``.git``:
    only interpreter installations inside it (a ``.venv``) stay readable.

    A system folder that holds the course is opened up child by child around it; a runtime
    folder that holds it is left out (it is not what the interpreter needs).
    """
    course = [Path(p) for p in course]
    fenced = course + ([checkout] if checkout is not None else [])
    installs = [Path(p) for p in prefixes]
    allowed: list[str] = []

    def carve(path: Path) -> None:
        if any(_within(path, f) for f in fenced):
            return
        if not any(_within(f, path) for f in fenced):
            allowed.append(str(path))
            return
        with contextlib.suppress(OSError):
            for entry in sorted(path.iterdir()):
                if not entry.is_symlink():
                    carve(entry)

    for name in system:
        path = Path(name)
        if path.exists():
            carve(path)
    for name in runtime:
        if not name:
            continue
        path = Path(name).absolute()
        if not path.exists() or str(path) in allowed:
            continue
        if any(_within(path, c) or _within(c, path) for c in course):
            continue
        if checkout is not None and _within(checkout, path):
            continue
        if (
            checkout is not None
            and _within(path, checkout)
            and not any(_within(path, p) for p in installs)
        ):
            continue
        allowed.append(str(path))
    return allowed


def runtime_paths() -> tuple[list[str], list[str]]:
    """The interpreter's installation folders (with the site-packages folders), and what it
    imports from: the ``sys.path`` entries inside them, and archives (zips, eggs). Other
    entries (the working folder, folders pytest inserted for conftest files) are left out:
    they are the user's files, not the runtime; the folders on ``PYTHONPATH`` are kept."""
    import site

    installs = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    # This package, also when it runs from a checkout rather than site-packages: it holds no
    # course, and learner code may import it like any installed package.
    installs.add(str(Path(__file__).resolve().parent))
    with contextlib.suppress(AttributeError):  # virtualenv's old site module lacks them
        installs.update(site.getsitepackages())
        installs.add(site.getusersitepackages())
    prefixes = sorted(p for p in installs if p and os.path.isdir(p))
    inside = [
        entry
        for entry in sys.path
        if entry
        and (
            os.path.isfile(entry) or any(_within(Path(entry).absolute(), Path(p)) for p in prefixes)
        )
    ]
    # Folders the user put on PYTHONPATH hold packages too (read_paths still leaves out any
    # that holds the course).
    extra = [entry for entry in os.environ.get("PYTHONPATH", "").split(os.pathsep) if entry]
    return prefixes, [*prefixes, *inside, *extra]


def make_policy(
    support: Support,
    environ: Mapping[str, str],
    passed: Iterable[str] = (),
    user: str | None = "nobody",
) -> Policy:
    """The session's policy, before the course is known (see :meth:`Policy.for_course`):
    Landlock where *support* has it, the clean environment, and the unprivileged *user* when
    the grader runs as root (None: stay as the grader)."""
    prefixes, _ = runtime_paths()
    uid = gid = None
    name = note = ""
    if user and hasattr(os, "geteuid") and os.geteuid() == 0:
        import pwd

        try:
            entry = pwd.getpwnam(user)
        except KeyError:
            raise ValueError(f"there is no user {user!r} on this system") from None
        hidden = [p for p in prefixes if not readable_by(Path(p), entry.pw_uid, entry.pw_gid)]
        if hidden:
            note = f"{user} cannot read the Python installation in {hidden[0]}"
        else:
            uid, gid, name = entry.pw_uid, entry.pw_gid, user
    return Policy(
        abi=support.abi,
        seccomp=support.seccomp,
        env=learner_env(environ, passed),
        uid=uid,
        gid=gid,
        user=name,
        user_note=note,
    )


class Unavailable(RuntimeError):
    """A sandbox was required and this system cannot give one; the message is the reason."""


class NoSuchUser(ValueError):
    """The user learner code should run as does not exist here; the message says so."""


def choose(
    mode: str,
    environ: Mapping[str, str],
    passed: Iterable[str] = (),
    user: str = "nobody",
    off_reason: str = "the sandbox was turned off",
) -> tuple[Support, Policy]:
    """The sandbox the settings ask for, which both front ends (pytest and the notebook) use.

    *mode* ``on`` (best effort), ``require`` or ``off`` (then *off_reason* is what the
    header says); *user* is who learner code runs as when the grader is root (``none``: stay
    root). Raises :class:`Unavailable` or :class:`NoSuchUser`, which each front end words in
    its own terms (an option or an environment variable)."""
    if mode == "off":
        support = Support(0, off_reason, seccomp=False)
    else:
        support = probe()
        if mode == "require" and not support.abi:
            raise Unavailable(support.reason)
    try:
        policy = make_policy(
            support, environ, passed=passed, user=None if user == "none" or mode == "off" else user
        )
    except ValueError as error:
        raise NoSuchUser(str(error)) from None
    return support, policy


def readable_by(path: Path, uid: int, gid: int) -> bool:
    """Whether user *uid* (group *gid*) can read *path*: each folder above it searchable, and
    *path* itself readable, by the file modes alone."""

    def allows(where: Path, bits: int) -> bool:
        try:
            info = where.stat()
        except OSError:
            return False
        if info.st_uid == uid:
            return bool(info.st_mode & (bits << 6))
        if info.st_gid == gid:
            return bool(info.st_mode & (bits << 3))
        return bool(info.st_mode & bits)

    path = path.absolute()
    return all(allows(folder, 1) for folder in path.parents) and allows(path, 4)


class SandboxError(RuntimeError):
    """The sandbox could not be set up, so no learner code runs."""


def confine(request: Mapping[str, Any]) -> None:
    """Confine this process as *request* (from :meth:`Policy.request`) says, for good.

    Runs in the child before it loads learner code: after this, the process and everything it
    starts can read only the runtime and its own file, write only its private folder, and
    cannot reach TCP or signal anything outside. Raises :class:`SandboxError` when a step
    fails: a case must never run with less protection than the header announced.
    """
    private = str(request["private"])
    os.chdir(private)
    env = dict(request.get("env") or {})
    env.update(HOME=private, TMPDIR=private, TEMP=private, TMP=private)
    # Item by item: os.environ.update() checks its argument against the Mapping ABC, which in
    # a process holding torch's classes can cost milliseconds.
    for name in list(os.environ):
        if name not in env:
            del os.environ[name]
    for name, value in env.items():
        os.environ[name] = value
    tempfile.tempdir = private
    sys.dont_write_bytecode = True  # the learner's folder is not writable
    uid, gid = request.get("uid"), request.get("gid")
    if uid is not None:
        try:
            os.setgroups([])
            os.setgid(int(gid) if gid is not None else int(uid))
            os.setuid(int(uid))
        except OSError as exc:
            raise SandboxError(f"cannot switch to user {uid}: {exc}") from None
        # A process whose user changed is no longer "dumpable", which makes its own /proc
        # files unreadable to it; they hold nothing of the grader's.
        _prctl(_PR_SET_DUMPABLE, 1)
    abi = int(request.get("abi") or 0)
    if abi:
        _landlock(abi, request)
    if request.get("seccomp"):
        _prctl(_PR_SET_NO_NEW_PRIVS, 1)
        _seccomp()


#: What Landlock leaves open, closed by a seccomp filter instead, per architecture: file
#: metadata (modes, owners, times, extended attributes) that Landlock does not cover, UDP and
#: raw sockets (Landlock's network rules are for TCP), and io_uring (which can open sockets
#: without the socket system call). The system call numbers are each architecture's own.
_SECCOMP_ARCH = {
    "x86_64": 0xC000003E,
    "aarch64": 0xC00000B7,
}
_METADATA_CALLS: dict[str, dict[str, int]] = {
    "x86_64": {
        "chmod": 90,
        "fchmod": 91,
        "fchmodat": 268,
        "fchmodat2": 452,
        "chown": 92,
        "fchown": 93,
        "lchown": 94,
        "fchownat": 260,
        "utime": 132,
        "utimes": 235,
        "futimesat": 261,
        "utimensat": 280,
        "setxattr": 188,
        "lsetxattr": 189,
        "fsetxattr": 190,
        "removexattr": 197,
        "lremovexattr": 198,
        "fremovexattr": 199,
        "io_uring_setup": 425,
    },
    "aarch64": {
        "fchmod": 52,
        "fchmodat": 53,
        "fchmodat2": 452,
        "fchownat": 54,
        "fchown": 55,
        "utimensat": 88,
        "setxattr": 5,
        "lsetxattr": 6,
        "fsetxattr": 7,
        "removexattr": 14,
        "lremovexattr": 15,
        "fremovexattr": 16,
        "io_uring_setup": 425,
    },
}
_SOCKET_CALL = {"x86_64": 41, "aarch64": 198}
#: Address families refused: IPv4, IPv6 and raw packets (AF_UNIX stays: Python uses it).
_NETWORK_FAMILIES = (2, 10, 17)
_EPERM, _EACCES = 1, 13


def seccomp_filter(machine: str) -> list[tuple[int, int, int, int]] | None:
    """The seccomp program (BPF, as (code, jt, jf, k) tuples) for *machine*, or None where
    the system call numbers are not known here."""
    arch = _SECCOMP_ARCH.get(machine)
    if arch is None:
        return None
    load, jeq, jge, ret = 0x20, 0x15, 0x35, 0x06
    allow, errno = 0x7FFF0000, 0x00050000
    program = [
        (load, 0, 0, 4),  # seccomp_data.arch
        (jeq, 1, 0, arch),
        (ret, 0, 0, allow),  # another ABI than the numbers below: not ours to judge
        (load, 0, 0, 0),  # seccomp_data.nr
    ]
    if machine == "x86_64":  # x32 system calls carry this bit and other numbers
        program += [(jge, 0, 1, 0x40000000), (ret, 0, 0, errno | _EPERM)]
    for number in _METADATA_CALLS[machine].values():
        program += [(jeq, 0, 1, number), (ret, 0, 0, errno | _EPERM)]
    families = [(load, 0, 0, 16)]  # the low half of seccomp_data.args[0]
    for family in _NETWORK_FAMILIES:
        families += [(jeq, 0, 1, family), (ret, 0, 0, errno | _EACCES)]
    families.append((ret, 0, 0, allow))
    program += [(jeq, 0, len(families), _SOCKET_CALL[machine]), *families]
    program.append((ret, 0, 0, allow))
    return program


class _SockFilter(ctypes.Structure):
    _fields_ = [
        ("code", ctypes.c_uint16),
        ("jt", ctypes.c_uint8),
        ("jf", ctypes.c_uint8),
        ("k", ctypes.c_uint32),
    ]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_SockFilter))]


def _seccomp() -> bool:
    """Install :func:`seccomp_filter` for this machine; False where there is none."""
    fprog = _seccomp_program(os.uname().machine)
    if fprog is None:
        return False
    # prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program); no_new_privs is already set.
    if _libc().prctl(22, 2, ctypes.byref(fprog), 0, 0) != 0:
        raise SandboxError(f"seccomp: {os.strerror(ctypes.get_errno())}")
    return True


@functools.cache
def _libc() -> Any:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc


@functools.cache
def _seccomp_program(machine: str) -> _SockFprog | None:
    program = seccomp_filter(machine)
    if program is None:
        return None
    filters = (_SockFilter * len(program))(*(_SockFilter(*step) for step in program))
    fprog = _SockFprog(len(program), filters)
    # The array must outlive the struct that points into it.
    setattr(fprog, "_keep", filters)  # noqa: B010
    return fprog


def warm() -> None:
    """Do the sandbox's one-off set-up (load libc, build the seccomp program) in a process
    that forks children, so that no case pays for it."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            _libc()
            _seccomp_program(os.uname().machine)


def _prctl(option: int, value: int) -> None:
    libc = _libc()
    if libc.prctl(option, value, 0, 0, 0) != 0:
        raise SandboxError(f"prctl({option}) failed: {os.strerror(ctypes.get_errno())}")


class _RulesetAttr(ctypes.Structure):
    _fields_ = [
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    ]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


#: A ruleset with the session's fixed rules, built by :func:`prepare_rules` in a child that
#: waits for its job: (ABI, readable paths) -> its file descriptor.
_PREPARED: dict[tuple[int, tuple[str, ...]], int] = {}


def prepare_rules(request: Mapping[str, Any] | None) -> None:
    """Build the fixed part of the sandbox ahead, in a forked child that waits for its job
    (*request*: the previous job's sandbox, which every job of a session shares), so that the
    case's clock pays only for its own folder and file."""
    if not request or not request.get("abi"):
        return
    with contextlib.suppress(SandboxError, OSError):
        abi = int(request["abi"])
        read = tuple(str(p) for p in request.get("read", ()))
        _PREPARED[(abi, read)] = _fixed_ruleset(abi, read)
        _prctl(_PR_SET_NO_NEW_PRIVS, 1)


def _fixed_ruleset(abi: int, read: Iterable[str]) -> int:
    """A new ruleset handling every right this ABI knows, allowing *read* and the devices."""
    libc = _libc()
    everything = _fs_rights(abi)
    attr = _RulesetAttr(everything, 3 if abi >= 4 else 0, 3 if abi >= 6 else 0)
    size = 8 if abi < 4 else 16 if abi < 6 else 24
    ruleset = int(libc.syscall(_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), 0))
    if ruleset < 0:
        raise SandboxError(f"landlock_create_ruleset: {os.strerror(ctypes.get_errno())}")
    device = _READ_FILE | _WRITE_FILE | (everything & (_TRUNCATE | _IOCTL_DEV))
    try:
        for path in read:
            _allow(libc, ruleset, path, _EXECUTE | _READ_FILE | _READ_DIR)
        for path in DEVICES_WRITE:
            _allow(libc, ruleset, path, device)
    except BaseException:
        os.close(ruleset)
        raise
    return ruleset


def _landlock(abi: int, request: Mapping[str, Any]) -> None:
    # Only the calling thread is confined; another thread would keep the grader's rights.
    # (A /proc/self/task link count is 2 + the number of threads: one stat, no listing.)
    with contextlib.suppress(OSError):
        if os.stat("/proc/self/task").st_nlink > 3:
            raise SandboxError("the process that runs learner code has more than one thread")
    libc = _libc()
    read = tuple(str(p) for p in request.get("read", ()))
    ruleset = _PREPARED.pop((abi, read), None)
    for stale in _PREPARED.values():  # another session's: not for this case
        os.close(stale)
    _PREPARED.clear()
    if ruleset is None:
        ruleset = _fixed_ruleset(abi, read)
    try:
        _allow(libc, ruleset, str(request["file"]), _READ_FILE)
        # Everything in its own folder but FIFOs and device nodes, which no computation needs
        # and which could stall whoever reads the folder next.
        _allow(libc, ruleset, str(request["private"]), _fs_rights(abi) & ~_SPECIAL_FILES)
        _prctl(_PR_SET_NO_NEW_PRIVS, 1)
        if libc.syscall(_RESTRICT_SELF, ruleset, 0) != 0:
            raise SandboxError(f"landlock_restrict_self: {os.strerror(ctypes.get_errno())}")
    finally:
        os.close(ruleset)


def _allow(libc: Any, ruleset: int, path: str, access: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return  # not there (or not ours to open): nothing to allow
    try:
        if not stat.S_ISDIR(os.fstat(fd).st_mode):
            access &= _FILE_ONLY
        rule = _PathBeneathAttr(access, fd)
        if libc.syscall(_ADD_RULE, ruleset, _RULE_PATH_BENEATH, ctypes.byref(rule), 0) != 0:
            raise SandboxError(f"landlock_add_rule({path}): {os.strerror(ctypes.get_errno())}")
    finally:
        os.close(fd)
