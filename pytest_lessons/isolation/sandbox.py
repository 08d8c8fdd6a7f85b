"""The sandbox that learner code runs in: what it may read, write, call, reach and signal.

Two halves, split by trust::

    pytest process (trusted)                      process that runs learner code
    ------------------------                      ------------------------------
    probe()      what this kernel offers          confine(request["sandbox"])
    Policy       built once per session:            limits, soft = hard; the process cap
                   readable runtime paths,          drop to an unprivileged user (when root)
                   the environment allow-list,      its own user, IPC, network and mount
                   the user to run as, the            namespaces (where the system allows)
                   limits, the namespaces and       environment := the allow-list
                   how the process cap is kept      HOME, TMPDIR, cwd := its private folder
    Policy.request(private folder, file)            Landlock: read the runtime and its own
                   -> plain data in the job  ---->    file, write its private folder, no TCP,
                                                      no signals or abstract sockets outside
                                                    no capabilities, no_new_privs
                                                    seccomp: only the allowed system calls
                                                    then, and only then, load learner code

Where the case has its own mount namespace, a tmpfs the size of the disk budget covers the
folder of the private folders (:func:`_cover_cases`), and the child opens its result file
beneath it before learner code loads (:func:`result_channel`).

The policy is computed where the course's paths are known, and sent as plain data; the child
only applies it, so what it enforces can be read and tested without running anything. The
child that waits for its job (a fork server's, or a Python spawned ahead) puts up every wall
but Landlock's own folder and file ahead (:func:`prepare_rules`), off the case's clock; only a
fork server's first case builds them all on its clock. Landlock (Linux 5.13 and later,
unprivileged, per process) confines files, TCP and signals; each ABI version adds protections
(see :data:`PROTECTIONS`). The seccomp filter is an allow-list (:data:`ALLOWED`,
:data:`CHECKED`); the limits, capabilities and namespaces are in
:mod:`pytest_lessons.isolation.walls`.
Where Landlock is missing, :func:`probe` says why and the rest (the clean environment, the
private folder, the dropped user) still applies. This module imports neither pytest nor torch.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import json
import os
import stat
import sys
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pytest_lessons.isolation import jobs, walls

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
    "/sys/devices/system/cpu",
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
            kinds.append("file modes, sockets, IPC, other processes' limits")
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
    limits: Mapping[str, float] = field(default_factory=dict)
    """The limits of :data:`LIMITS` (``disk_mb``, ``open_files``, ``processes``); 0: none."""
    namespaces: bool = False
    """Whether each case gets its own user, IPC, network and mount namespaces."""
    namespaces_reason: str = ""
    """Why not, for the header."""
    process_cap: str = ""
    """How the process cap is kept (see :attr:`pytest_lessons.isolation.walls.Walls.processes`)."""
    memory_cap: str = ""
    """How the memory cap holds for the case as a whole (see
    :attr:`pytest_lessons.isolation.walls.Walls.memory`)."""
    cpu_share: str = ""
    """How a case's processes share the CPU as one (see
    :attr:`pytest_lessons.isolation.walls.Walls.cpu`); not part of a case's request: the
    case's memory cgroup holds it."""
    cpu_reason: str = ""
    """Why they do not, for the header."""
    job_object: str = ""
    """Windows only: ``held`` where each case's processes are held in a Job Object (the
    memory cap, and every process ended with its case: :mod:`pytest_lessons.isolation.jobs`),
    else why not; "" on other systems. Not part of a case's request: the runner keeps it."""

    def request(self, private: Path, own_file: Path) -> dict[str, Any]:
        """The plain data a child applies with :func:`confine`: this policy, the case's private
        folder (its only writable place) and the one course file it may read. The folder that
        holds the private folders (``cases``) is the same for every case of a runner: where
        the case has a mount namespace, a tmpfs the size of the disk budget covers it."""
        return {
            "abi": self.abi,
            "seccomp": self.seccomp,
            "read": list(self.read),
            "file": str(own_file),
            "private": str(private),
            "cases": str(private.parent),
            "env": dict(self.env),
            "uid": self.uid,
            "gid": self.gid,
            "limits": dict(self.limits),
            "namespaces": self.namespaces,
            "process_cap": self.process_cap,
            "memory_cap": self.memory_cap,
        }

    def layers(self, abi: int) -> list[str]:
        """Every layer in force, as the header names them (*abi*: Landlock's, 0 for none)."""
        found = [f"Landlock ABI {abi}"] if abi else []
        if self.seccomp:
            found.append("seccomp allow-list")
        if self.namespaces:
            found.append("own user, IPC, network and mount namespaces")
        if self.uid is not None:
            found.append(f"user {self.user}")
        elif self.seccomp:
            found.append("no capabilities")
        return found

    def limit_words(self) -> str:
        """The limits a case cannot raise, for the header."""
        words = []
        if self.limits.get("disk_mb"):
            kept = "its own tmpfs" if self.namespaces else "counted when it ends"
            words.append(f"a case's files up to {self.limits['disk_mb']:g} MiB in all ({kept})")
        if self.limits.get("open_files"):
            words.append(f"{self.limits['open_files']:g} open files")
        processes = self.limits.get("processes")
        how = {
            "cgroup": "a pids cgroup",
            "namespace": "its own user namespace's count",
            "user": f"shared by user {self.user}",
        }
        if processes and self.process_cap:
            words.append(f"{processes:g} processes and threads ({how[self.process_cap]})")
        elif processes:
            words.append("no process cap (no cgroup, user namespace or user of its own here)")
        if self.memory_cap:
            words.append(f"memory for the case as a whole (a memory cgroup, {self.memory_cap})")
        elif self.seccomp:
            words.append(
                "memory per process only (no memory cgroup here; when the machine runs out, "
                "the kernel kills a case's processes first)"
            )
        if self.cpu_share:
            words.append(
                f"CPU shared per case (a cpu cgroup, {self.cpu_share}: each case one equal "
                "share, however many processes it starts)"
            )
        elif self.seccomp:
            why = f" ({self.cpu_reason})" if self.cpu_reason else ""
            words.append(
                f"CPU not shared per case{why}: a case that timed out after waiting for a CPU "
                "half its time runs once more"
            )
        if self.seccomp:
            words.append("no core dumps")
        return ", ".join(words)

    def job_words(self) -> str:
        """What Windows' Job Object gives each case, or which walls are missing without one
        and why, for the header ("" on other systems)."""
        if self.job_object == "held":
            return (
                "memory for the case as a whole, and every process it starts ended with it "
                "(a Job Object)"
            )
        if self.job_object:
            return (
                "no memory cap, and processes a case starts outlive it (no Job Object: "
                f"{self.job_object})"
            )
        return ""

    def for_course(self, course: Iterable[Path], checkout: Path | None) -> Policy:
        """This policy with its readable paths, now that the course's folders are known."""
        if not self.abi:
            return self
        prefixes, runtime = runtime_paths()
        read = read_paths(SYSTEM_READ, runtime, prefixes, course, checkout)
        return replace(self, read=tuple(outermost(read)))

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


def outermost(paths: Iterable[str]) -> list[str]:
    """*paths* without those that another folder of them holds, links resolved (``/bin`` is
    ``/usr/bin`` on most systems now, site-packages is inside its installation): a rule on a
    folder allows the same beneath it, and each rule left out is one a case does not add.
    Paths under ``/proc`` are compared as written (``/proc/self`` is each process's own)."""
    paths = list(paths)
    resolved = [p if p.startswith("/proc/") else os.path.realpath(p) for p in paths]
    folders = {real for real in resolved if os.path.isdir(real)}
    kept: list[str] = []
    seen: set[str] = set()
    for path, real in zip(paths, resolved):
        if real in seen or any(str(above) in folders for above in Path(real).parents):
            continue
        seen.add(real)
        kept.append(path)
    return kept


def runtime_paths() -> tuple[list[str], list[str]]:
    """The interpreter's installation folders (with the site-packages folders), and what it
    imports from: the ``sys.path`` entries inside them, and archives (zips, eggs). Other
    entries (the working folder, folders pytest inserted for conftest files) are left out:
    they are the user's files, not the runtime; the folders on ``PYTHONPATH`` are kept."""
    import site

    installs = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    # This package, also when it runs from a checkout rather than site-packages: it holds no
    # course, and learner code may import it like any installed package.
    installs.add(str(Path(__file__).resolve().parents[1]))
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
    limits: Mapping[str, float] | None = None,
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
    found = walls.probe(uid, gid) if support.seccomp else walls.Walls()
    return Policy(
        abi=support.abi,
        seccomp=support.seccomp,
        env=learner_env(environ, passed),
        uid=uid,
        gid=gid,
        user=name,
        user_note=note,
        limits=dict(limits or {}) if support.seccomp else {},
        namespaces=found.namespaces,
        namespaces_reason=found.namespaces_reason,
        process_cap=found.processes,
        memory_cap=found.memory,
        cpu_share=found.cpu,
        cpu_reason=found.cpu_reason,
        # Whatever the sandbox: on Windows the job is the case's process group and memory cap.
        job_object=(jobs.probe() or "held") if sys.platform == "win32" else "",
    )


#: The run settings (see :mod:`pytest_lessons.core.settings`) a case's walls take their limits
#: from, and the name each has in :attr:`Policy.limits`.
LIMITS = {"disk": "disk_mb", "open_files": "open_files", "processes": "processes"}


def describe(support: Support, policy: Policy) -> str:
    """What protects the course from learner code in this run, in one line of the header."""
    if policy.uid is not None:
        who = f"runs as user {policy.user}"
    elif policy.user_note:
        who = f"runs as root with every capability dropped ({policy.user_note})"
    elif hasattr(os, "geteuid") and os.geteuid() == 0 and policy.seccomp:
        who = "runs as root with every capability dropped"
    else:
        who = "runs as you"
    if not support.abi:
        line = (
            f"sandbox OFF ({support.reason}): learner code can read and change what you can; "
            f"clean environment; {who}"
        )
        job = policy.job_words()
        return f"{line}; limits: {job}" if job else line
    kinds = ", ".join(support.protections)
    line = f"the sandbox denies {kinds} outside the case; clean environment; {who}"
    layers = policy.layers(support.abi)
    if layers:
        line += "; layers: " + ", ".join(layers)
    if policy.seccomp and not policy.namespaces and policy.namespaces_reason:
        line += f" (no namespaces: {policy.namespaces_reason})"
    limits = policy.limit_words()
    if limits:
        line += "; limits: " + limits
    return line


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
    limits: Mapping[str, float] | None = None,
) -> tuple[Support, Policy]:
    """The sandbox the settings ask for, which both front ends (pytest and the notebook) use.

    *mode* ``on`` (best effort), ``require`` or ``off`` (then *off_reason* is what the
    header says); *user* is who learner code runs as when the grader is root (``none``: stay
    root). Raises :class:`Unavailable` or :class:`NoSuchUser`, which each front end words in
    its own terms (an option or an environment variable). *limits* are the run settings of
    :data:`LIMITS`."""
    if mode == "off":
        support = Support(0, off_reason, seccomp=False)
    else:
        support = probe()
        if mode == "require" and not support.abi:
            raise Unavailable(support.reason)
    try:
        policy = make_policy(
            support,
            environ,
            passed=passed,
            user=None if user == "none" or mode == "off" else user,
            limits=limits,
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


def confine(request: Mapping[str, Any], result: str | None = None) -> None:
    """Confine this process as *request* (from :meth:`Policy.request`) says, for good.
    *result*: the file in the private folder the case's result goes to; where a tmpfs covers
    the folder, it is opened first (see :func:`result_channel`).

    Runs in the child before it loads learner code: after this, the process and everything it
    starts can read only the runtime and its own file, write only its private folder, and
    cannot reach TCP or signal anything outside. Raises :class:`SandboxError` when a step
    fails: a case must never run with less protection than the header announced.
    """
    private = str(request["private"])
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
    global _AHEAD
    key = _walls_key(request)
    ahead, _AHEAD = _AHEAD, None
    if ahead is not None and ahead != key:
        raise SandboxError(f"the sandbox built ahead is not this case's ({ahead})")
    try:
        if ahead is None:
            _first_walls(request)
        _enter_private(private, result)
        abi = int(request.get("abi") or 0)
        if abi:
            _landlock(abi, request)
        if ahead is None:
            _last_walls(request)
    except walls.WallError as error:
        raise SandboxError(str(error)) from None


#: What :func:`prepare_rules` put up ahead (the walls' part of the request, see
#: :func:`_walls_key`), or why it failed; None: nothing, the case puts up every wall.
_AHEAD: str | None = None


#: The parts of a sandbox request that every case of a session shares, and that a waiting
#: child may therefore be given ahead of its job (:func:`prepare_rules`): none of them names
#: a learner, a case's folder or file.
SHARED = (
    "abi",
    "read",
    "limits",
    "namespaces",
    "process_cap",
    "memory_cap",
    "uid",
    "gid",
    "seccomp",
    "cases",
)


def shared_part(request: Mapping[str, Any]) -> dict[str, Any]:
    """What of *request* every case shares (see :data:`SHARED`)."""
    return {name: request[name] for name in SHARED if name in request}


def _walls_key(request: Mapping[str, Any]) -> str:
    names = ("limits", "namespaces", "process_cap", "memory_cap", "uid", "gid", "seccomp", "cases")
    return json.dumps([request.get(name) for name in names], sort_keys=True)


def _first_walls(
    request: Mapping[str, Any], server: int | None = None, ahead: bool = False
) -> None:
    """The walls that come before Landlock: limits, the process cap, the user, namespaces.
    *server*: the fork server's pid, in its waiting child; *ahead*: in a child waiting for
    its job (see :func:`prepare_rules`)."""
    limits = dict(request.get("limits") or {})
    processes = int(limits.get("processes") or 0)
    if limits:
        walls.set_limits(limits)
    if processes and request.get("process_cap") == "cgroup":
        walls.join_cgroup(processes, server)
    if request.get("memory_cap"):
        walls.join_memory(ahead)
    elif sys.platform.startswith("linux"):
        # No cgroup holds the case's memory as a whole: should its processes together
        # exhaust the machine's, the kernel kills one of theirs, never the grader.
        walls.first_to_kill()
    if request.get("namespaces"):
        walls.no_access_times()  # before root goes, and before the user namespace
    uid, gid = request.get("uid"), request.get("gid")
    if uid is not None:
        # Root's bounding set goes before root does: afterwards nothing may change it.
        walls.drop_capabilities(bounding_only=True)
        try:
            os.setgroups([])
            os.setgid(int(gid) if gid is not None else int(uid))
            os.setuid(int(uid))
        except OSError as exc:
            raise SandboxError(f"cannot switch to user {uid}: {exc}") from None
        # A process whose user changed is no longer "dumpable", which makes its own /proc
        # files unreadable to it; they hold nothing of the grader's.
        _prctl(_PR_SET_DUMPABLE, 1)
    if request.get("namespaces"):
        walls.unshare(os.getuid(), os.getgid())
        _cover_cases(request)
    if processes and request.get("process_cap") in ("namespace", "user"):
        walls.cap_processes(processes)


#: The folder of the private folders that a tmpfs covers in this process's mount view, and a
#: descriptor of it as it was beneath (see :func:`_cover_cases`); None: no tmpfs.
_COVERED: tuple[str, int] | None = None
#: The case's result file, opened beneath the tmpfs before learner code loads.
_RESULT_FD: int | None = None


def _cover_cases(request: Mapping[str, Any]) -> None:
    """The disk budget where the case has its own mount namespace: a tmpfs of ``disk_mb``
    over the folder of the private folders, so the case's files take that much in all.

    Over that folder, not the case's own: a waiting child mounts it before its job names the
    case's folder (mount needs the capabilities and the system call that the last walls take
    away), and then makes the case's folder inside (:func:`_enter_private`). Each case has its
    own mount namespace, so its tmpfs holds its own files alone; the runner, outside, sees the
    real folder, where only the result file is written."""
    global _COVERED
    disk = float((request.get("limits") or {}).get("disk_mb") or 0)
    cases = request.get("cases")
    if disk <= 0 or not cases:
        return
    below = walls.cover_folder(str(cases), int(disk * 1024 * 1024))
    _COVERED = (str(cases), below)


def _enter_private(private: str, result: str | None) -> None:
    """Make the case's private folder its working folder; where a tmpfs covers the folder of
    the private folders, make it there first, and open *result* (the runner made it beside
    the private folder's name, in the real folder beneath) for the result: learner code can
    write that file as before, which decides its own answer only, and nothing else of the
    real folder."""
    global _COVERED, _RESULT_FD
    covered, _COVERED = _COVERED, None
    if covered is not None:
        folder, below = covered
        try:
            name = os.path.basename(private)
            if os.path.dirname(private) != folder or name in ("", ".", ".."):
                raise SandboxError(f"the private folder {private} is not in {folder}")
            os.mkdir(private, 0o700)
            if result is not None:
                if os.path.dirname(result) != folder:
                    raise SandboxError(f"the result file {result} is not in {folder}")
                flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
                _RESULT_FD = os.open(os.path.basename(result), flags, 0o600, dir_fd=below)
        finally:
            os.close(below)
    os.chdir(private)


def result_channel() -> int | None:
    """The descriptor of the case's result file where :func:`confine` opened it (a tmpfs
    covers the private folder, so the file's path there is not the runner's file), once;
    None: write the result at its path."""
    global _RESULT_FD
    fd, _RESULT_FD = _RESULT_FD, None
    return fd


def _last_walls(request: Mapping[str, Any]) -> None:
    """The walls that come last: no capabilities, no new privileges, the seccomp filter (all of
    them only with the sandbox on: ``--lesson-sandbox=off`` keeps the grader's rights)."""
    if request.get("seccomp"):
        walls.drop_capabilities()
        _prctl(_PR_SET_NO_NEW_PRIVS, 1)
        _seccomp(os.getpid())


#: The system calls learner code may make; every other one fails with EPERM (deny by
#: default). Found by running the whole course and tools/wide_ops.py (linear algebra, FFT,
#: distributions, nn layers, autograd, NumPy, two threads) under strace: ``python
#: tools/syscalls.py`` prints what was observed against this list. Beyond what was observed,
#: the list keeps what plain computation in its own folder needs with other C libraries and
#: kernels (the older and newer spellings of the same file, time, memory, thread and signal
#: calls, pipes and socketpairs between its own processes, running a program), and Landlock's
#: calls (the child closes Landlock after the filter when it built the walls ahead; learner
#: code may only confine itself further). Left out on
#: purpose: socket() of every family, System V and POSIX IPC, ptrace and reading other
#: processes' memory, mount and namespaces, modules, reboot, keys, BPF, io_uring, file modes,
#: owners and times, changing user. (A new session or process group is allowed: the worker
#: adopts and kills what leaves the case's group.)
ALLOWED = [
    "brk",
    "mmap",
    "munmap",
    "mprotect",
    "mremap",
    "mbind",
    "get_mempolicy",
    "set_mempolicy",
    "msync",
    "membarrier",
    "read",
    "write",
    "readv",
    "writev",
    "pread64",
    "pwrite64",
    "preadv",
    "pwritev",
    "lseek",
    "open",
    "openat",
    "close",
    "close_range",
    "dup",
    "dup2",
    "dup3",
    "fsync",
    "fdatasync",
    "ftruncate",
    "truncate",
    "fallocate",
    "stat",
    "fstat",
    "lstat",
    "newfstatat",
    "statx",
    "statfs",
    "fstatfs",
    "getdents64",
    "getcwd",
    "chdir",
    "fchdir",
    "readlink",
    "readlinkat",
    "access",
    "faccessat",
    "faccessat2",
    "mkdir",
    "mkdirat",
    "rmdir",
    "unlink",
    "unlinkat",
    "rename",
    "renameat",
    "renameat2",
    "link",
    "linkat",
    "symlink",
    "symlinkat",
    "umask",
    "copy_file_range",
    "sendfile",
    "memfd_create",
    "pipe",
    "pipe2",
    "poll",
    "ppoll",
    "select",
    "pselect6",
    "epoll_create",
    "epoll_create1",
    "epoll_ctl",
    "epoll_wait",
    "epoll_pwait",
    "epoll_pwait2",
    "eventfd",
    "eventfd2",
    "signalfd4",
    "timerfd_create",
    "timerfd_settime",
    "timerfd_gettime",
    "socketpair",
    "sendmsg",
    "recvmsg",
    "sendto",
    "recvfrom",
    "sendmmsg",
    "recvmmsg",
    "shutdown",
    "getsockopt",
    "setsockopt",
    "getsockname",
    "getpeername",
    "clock_gettime",
    "clock_getres",
    "clock_nanosleep",
    "nanosleep",
    "gettimeofday",
    "time",
    "times",
    "getrusage",
    "alarm",
    "setitimer",
    "getitimer",
    "timer_create",
    "timer_settime",
    "timer_gettime",
    "timer_getoverrun",
    "timer_delete",
    "fork",
    "vfork",
    "execve",
    "execveat",
    "exit",
    "exit_group",
    "wait4",
    "waitid",
    "set_tid_address",
    "set_robust_list",
    "get_robust_list",
    "rseq",
    "futex",
    "sched_yield",
    "sched_getaffinity",
    "sched_getparam",
    "sched_getscheduler",
    "sched_getattr",
    "sched_get_priority_max",
    "sched_get_priority_min",
    "sched_rr_get_interval",
    "getpid",
    "getppid",
    "gettid",
    "getpgid",
    "getpgrp",
    "getsid",
    "getuid",
    "geteuid",
    "getgid",
    "getegid",
    "getgroups",
    "getresuid",
    "getresgid",
    "capget",
    "uname",
    "getcpu",
    "prctl",
    "arch_prctl",
    "getpriority",
    "getrlimit",
    "setrlimit",
    "ioprio_get",
    "rt_sigaction",
    "rt_sigprocmask",
    "rt_sigreturn",
    "rt_sigsuspend",
    "rt_sigtimedwait",
    "rt_sigpending",
    "rt_sigqueueinfo",
    "rt_tgsigqueueinfo",
    "sigaltstack",
    "pause",
    "kill",
    "tgkill",
    "tkill",
    "getrandom",
    "setsid",
    "setpgid",
    "landlock_create_ruleset",
    "landlock_add_rule",
    "landlock_restrict_self",
]

_SELF = "self"
#: Calls allowed only with these arguments: {name: [(argument index, allowed values)]}, every
#: condition must hold; ``"self"`` is pid 0 or the confined process's own. They are safe on
#: the caller and harmful on anyone else (lowering the worker's or pytest's limits or
#: priority), or harmful with some values (real-time scheduling). ``clone`` is checked for
#: namespace flags instead, and ``clone3`` (whose flags seccomp cannot read) answers ENOSYS, so
#: that the C library falls back to ``clone``.
CHECKED: dict[str, list[tuple[int, tuple[int | str, ...]]]] = {
    "prlimit64": [(0, (_SELF,))],
    "setpriority": [(0, (0,)), (1, (_SELF,))],  # PRIO_PROCESS only: not a group or a user
    "sched_setscheduler": [(0, (_SELF,)), (1, (0, 3, 5))],  # OTHER, BATCH, IDLE: never RT
    "sched_setparam": [(0, (_SELF,))],
    "sched_setattr": [(0, (_SELF,))],
    "sched_setaffinity": [(0, (_SELF,))],
    "ioprio_set": [(0, (1,)), (1, (_SELF,))],  # IOPRIO_WHO_PROCESS only
    # A descriptor's own flags, duplicates, pipe sizes and seals: never a record lock
    # (F_GETLK, F_SETLK, F_OFD_*), a lease or a directory notice. Locks are per file,
    # machine wide, and a case may read the runtime's files: two cases, of two runs or two
    # shards on one machine, would pass a hidden input through a lock's range (a red team's
    # round H). flock(2) is refused for the same reason.
    "fcntl": [(1, (0, 1, 2, 3, 4, 9, 16, 1030, 1031, 1032, 1033, 1034))],
    # The page cache is the machine's too: a case that reads which pages of a runtime file
    # are cached (mincore, refused; a read with RWF_NOWAIT) and drops them (fadvise's
    # DONTNEED, refused; madvise's COLD and PAGEOUT) stored a hidden case's inputs for a
    # public case of the next run on the machine to read (a red team's round J).
    "madvise": [(2, (*range(20), 22, 23, 24, 25))],
    # A terminal's and a descriptor's own ioctls only: TCGETS, TIOCGPGRP, TIOCGWINSZ,
    # FIONREAD, FIONBIO, FIONCLEX, FIOCLEX, FIOASYNC. Never a file's attribute flags or its
    # inode generation (FS_IOC_SETFLAGS, FS_IOC_SETVERSION), which a case as the runtime's
    # owner could set on a read-only descriptor: a store on the host's disk that outlived the
    # run and carried a hidden input (a red team's round L).
    "ioctl": [(1, (0x5401, 0x540F, 0x5413, 0x541B, 0x5421, 0x5450, 0x5451, 0x5452))],
    "preadv2": [(5, (0, 1))],  # RWF_HIPRI only: never RWF_NOWAIT
    "pwritev2": [(5, (0, 1, 2, 4, 6, 16, 18, 20, 22))],  # HIPRI, DSYNC, SYNC, APPEND
    "clone": [],
}
#: clone(2) flags that make a namespace: refused, a case gets the namespaces it is given.
_NAMESPACE_FLAGS = 0x7E020080
#: Numbers from here on are newer than any call this table knows: ENOSYS, as an older kernel
#: would say, so that the C library uses the older call it falls back to.
_NEWER = 451

#: Each architecture's numbers for :data:`ALLOWED` and :data:`CHECKED` (from the kernel's
#: headers: ``python tools/syscalls.py --numbers``); calls an architecture lacks are absent.
_NUMBERS: dict[str, dict[str, int]] = {
    "x86_64": {
        "setsid": 112,
        "setpgid": 109,
        "landlock_create_ruleset": 444,
        "landlock_add_rule": 445,
        "landlock_restrict_self": 446,
        "brk": 12,
        "mmap": 9,
        "munmap": 11,
        "mprotect": 10,
        "mremap": 25,
        "madvise": 28,
        "mbind": 237,
        "get_mempolicy": 239,
        "set_mempolicy": 238,
        "msync": 26,
        "membarrier": 324,
        "read": 0,
        "write": 1,
        "readv": 19,
        "writev": 20,
        "pread64": 17,
        "pwrite64": 18,
        "preadv": 295,
        "pwritev": 296,
        "preadv2": 327,
        "pwritev2": 328,
        "lseek": 8,
        "open": 2,
        "openat": 257,
        "close": 3,
        "close_range": 436,
        "dup": 32,
        "dup2": 33,
        "dup3": 292,
        "fcntl": 72,
        "ioctl": 16,
        "fsync": 74,
        "fdatasync": 75,
        "ftruncate": 77,
        "truncate": 76,
        "fallocate": 285,
        "stat": 4,
        "fstat": 5,
        "lstat": 6,
        "newfstatat": 262,
        "statx": 332,
        "statfs": 137,
        "fstatfs": 138,
        "getdents64": 217,
        "getcwd": 79,
        "chdir": 80,
        "fchdir": 81,
        "readlink": 89,
        "readlinkat": 267,
        "access": 21,
        "faccessat": 269,
        "faccessat2": 439,
        "mkdir": 83,
        "mkdirat": 258,
        "rmdir": 84,
        "unlink": 87,
        "unlinkat": 263,
        "rename": 82,
        "renameat": 264,
        "renameat2": 316,
        "link": 86,
        "linkat": 265,
        "symlink": 88,
        "symlinkat": 266,
        "umask": 95,
        "copy_file_range": 326,
        "sendfile": 40,
        "memfd_create": 319,
        "pipe": 22,
        "pipe2": 293,
        "poll": 7,
        "ppoll": 271,
        "select": 23,
        "pselect6": 270,
        "epoll_create": 213,
        "epoll_create1": 291,
        "epoll_ctl": 233,
        "epoll_wait": 232,
        "epoll_pwait": 281,
        "epoll_pwait2": 441,
        "eventfd": 284,
        "eventfd2": 290,
        "signalfd4": 289,
        "timerfd_create": 283,
        "timerfd_settime": 286,
        "timerfd_gettime": 287,
        "socketpair": 53,
        "sendmsg": 46,
        "recvmsg": 47,
        "sendto": 44,
        "recvfrom": 45,
        "sendmmsg": 307,
        "recvmmsg": 299,
        "shutdown": 48,
        "getsockopt": 55,
        "setsockopt": 54,
        "getsockname": 51,
        "getpeername": 52,
        "clock_gettime": 228,
        "clock_getres": 229,
        "clock_nanosleep": 230,
        "nanosleep": 35,
        "gettimeofday": 96,
        "time": 201,
        "times": 100,
        "getrusage": 98,
        "alarm": 37,
        "setitimer": 38,
        "getitimer": 36,
        "timer_create": 222,
        "timer_settime": 223,
        "timer_gettime": 224,
        "timer_getoverrun": 225,
        "timer_delete": 226,
        "fork": 57,
        "vfork": 58,
        "execve": 59,
        "execveat": 322,
        "exit": 60,
        "exit_group": 231,
        "wait4": 61,
        "waitid": 247,
        "set_tid_address": 218,
        "set_robust_list": 273,
        "get_robust_list": 274,
        "rseq": 334,
        "futex": 202,
        "sched_yield": 24,
        "sched_getaffinity": 204,
        "sched_getparam": 143,
        "sched_getscheduler": 145,
        "sched_getattr": 315,
        "sched_get_priority_max": 146,
        "sched_get_priority_min": 147,
        "sched_rr_get_interval": 148,
        "getpid": 39,
        "getppid": 110,
        "gettid": 186,
        "getpgid": 121,
        "getpgrp": 111,
        "getsid": 124,
        "getuid": 102,
        "geteuid": 107,
        "getgid": 104,
        "getegid": 108,
        "getgroups": 115,
        "getresuid": 118,
        "getresgid": 120,
        "capget": 125,
        "uname": 63,
        "getcpu": 309,
        "prctl": 157,
        "arch_prctl": 158,
        "getpriority": 140,
        "getrlimit": 97,
        "setrlimit": 160,
        "ioprio_get": 252,
        "rt_sigaction": 13,
        "rt_sigprocmask": 14,
        "rt_sigreturn": 15,
        "rt_sigsuspend": 130,
        "rt_sigtimedwait": 128,
        "rt_sigpending": 127,
        "rt_sigqueueinfo": 129,
        "rt_tgsigqueueinfo": 297,
        "sigaltstack": 131,
        "pause": 34,
        "kill": 62,
        "tgkill": 234,
        "tkill": 200,
        "getrandom": 318,
        "clone": 56,
        "prlimit64": 302,
        "setpriority": 141,
        "sched_setscheduler": 144,
        "sched_setparam": 142,
        "sched_setattr": 314,
        "sched_setaffinity": 203,
        "ioprio_set": 251,
    },
    "aarch64": {
        "setsid": 157,
        "setpgid": 154,
        "landlock_create_ruleset": 444,
        "landlock_add_rule": 445,
        "landlock_restrict_self": 446,
        "brk": 214,
        "mmap": 222,
        "munmap": 215,
        "mprotect": 226,
        "mremap": 216,
        "madvise": 233,
        "mbind": 235,
        "get_mempolicy": 236,
        "set_mempolicy": 237,
        "msync": 227,
        "membarrier": 283,
        "read": 63,
        "write": 64,
        "readv": 65,
        "writev": 66,
        "pread64": 67,
        "pwrite64": 68,
        "preadv": 69,
        "pwritev": 70,
        "preadv2": 286,
        "pwritev2": 287,
        "lseek": 62,
        "openat": 56,
        "close": 57,
        "close_range": 436,
        "dup": 23,
        "dup3": 24,
        "fcntl": 25,
        "ioctl": 29,
        "fsync": 82,
        "fdatasync": 83,
        "ftruncate": 46,
        "truncate": 45,
        "fallocate": 47,
        "fstat": 80,
        "newfstatat": 79,
        "statx": 291,
        "statfs": 43,
        "fstatfs": 44,
        "getdents64": 61,
        "getcwd": 17,
        "chdir": 49,
        "fchdir": 50,
        "readlinkat": 78,
        "faccessat": 48,
        "faccessat2": 439,
        "mkdirat": 34,
        "unlinkat": 35,
        "renameat": 38,
        "renameat2": 276,
        "linkat": 37,
        "symlinkat": 36,
        "umask": 166,
        "copy_file_range": 285,
        "sendfile": 71,
        "memfd_create": 279,
        "pipe2": 59,
        "ppoll": 73,
        "pselect6": 72,
        "epoll_create1": 20,
        "epoll_ctl": 21,
        "epoll_pwait": 22,
        "epoll_pwait2": 441,
        "eventfd2": 19,
        "signalfd4": 74,
        "timerfd_create": 85,
        "timerfd_settime": 86,
        "timerfd_gettime": 87,
        "socketpair": 199,
        "sendmsg": 211,
        "recvmsg": 212,
        "sendto": 206,
        "recvfrom": 207,
        "sendmmsg": 269,
        "recvmmsg": 243,
        "shutdown": 210,
        "getsockopt": 209,
        "setsockopt": 208,
        "getsockname": 204,
        "getpeername": 205,
        "clock_gettime": 113,
        "clock_getres": 114,
        "clock_nanosleep": 115,
        "nanosleep": 101,
        "gettimeofday": 169,
        "times": 153,
        "getrusage": 165,
        "setitimer": 103,
        "getitimer": 102,
        "timer_create": 107,
        "timer_settime": 110,
        "timer_gettime": 108,
        "timer_getoverrun": 109,
        "timer_delete": 111,
        "execve": 221,
        "execveat": 281,
        "exit": 93,
        "exit_group": 94,
        "wait4": 260,
        "waitid": 95,
        "set_tid_address": 96,
        "set_robust_list": 99,
        "get_robust_list": 100,
        "rseq": 293,
        "futex": 98,
        "sched_yield": 124,
        "sched_getaffinity": 123,
        "sched_getparam": 121,
        "sched_getscheduler": 120,
        "sched_getattr": 275,
        "sched_get_priority_max": 125,
        "sched_get_priority_min": 126,
        "sched_rr_get_interval": 127,
        "getpid": 172,
        "getppid": 173,
        "gettid": 178,
        "getpgid": 155,
        "getsid": 156,
        "getuid": 174,
        "geteuid": 175,
        "getgid": 176,
        "getegid": 177,
        "getgroups": 158,
        "getresuid": 148,
        "getresgid": 150,
        "capget": 90,
        "uname": 160,
        "getcpu": 168,
        "prctl": 167,
        "getpriority": 141,
        "getrlimit": 163,
        "setrlimit": 164,
        "ioprio_get": 31,
        "rt_sigaction": 134,
        "rt_sigprocmask": 135,
        "rt_sigreturn": 139,
        "rt_sigsuspend": 133,
        "rt_sigtimedwait": 137,
        "rt_sigpending": 136,
        "rt_sigqueueinfo": 138,
        "rt_tgsigqueueinfo": 240,
        "sigaltstack": 132,
        "kill": 129,
        "tgkill": 131,
        "tkill": 130,
        "getrandom": 278,
        "clone": 220,
        "prlimit64": 261,
        "setpriority": 140,
        "sched_setscheduler": 119,
        "sched_setparam": 118,
        "sched_setattr": 274,
        "sched_setaffinity": 122,
        "ioprio_set": 30,
    },
}
_CLONE3 = 435
_SECCOMP_ARCH = {
    "x86_64": 0xC000003E,
    "aarch64": 0xC00000B7,
}
_EPERM, _ENOSYS = 1, 38


def seccomp_filter(machine: str, pid: int = 0) -> list[tuple[int, int, int, int]] | None:
    """The seccomp program (BPF, as (code, jt, jf, k) tuples) for *machine*, for the process
    *pid* (what "self" means in :data:`CHECKED`), or None where the numbers are not known."""
    arch = _SECCOMP_ARCH.get(machine)
    if arch is None:
        return None
    numbers = _NUMBERS[machine]
    load, jeq, jge, jset, ret = 0x20, 0x15, 0x35, 0x45, 0x06
    allow, errno = 0x7FFF0000, 0x00050000
    deny = (ret, 0, 0, errno | _EPERM)
    program = [
        (load, 0, 0, 4),  # seccomp_data.arch
        (jeq, 1, 0, arch),
        deny,  # another ABI (a 32-bit call on a 64-bit system): refused
        (load, 0, 0, 0),  # seccomp_data.nr
    ]
    if machine == "x86_64":  # x32 system calls carry this bit and other numbers
        program += [(jge, 0, 1, 0x40000000), deny]
    program += [(jge, 0, 1, _NEWER), (ret, 0, 0, errno | _ENOSYS)]
    program += [(jeq, 0, 1, _CLONE3), (ret, 0, 0, errno | _ENOSYS)]
    # What each number below _NEWER gets, as runs of equal verdicts: "allow", "deny" or the
    # name of a checked call. A binary search over the runs' first numbers finds a call's run
    # in ~7 comparisons instead of one per allowed call: the kernel loads a program of about
    # 40% of the instructions (it pays per instruction, ~0.3 ms less here), and every system
    # call learner code makes runs fewer of them.
    verdicts = {numbers[name]: name for name in CHECKED if name in numbers}
    verdicts.update({numbers[name]: "allow" for name in ALLOWED if name in numbers})
    runs: list[tuple[int, str]] = []
    for number in range(_NEWER):
        verdict = verdicts.get(number, "deny")
        if not runs or runs[-1][1] != verdict:
            runs.append((number, verdict))
    # Jumps are written as absolute targets (an index or a shared return) first, and made
    # relative at the end; BPF jumps only forwards, which a tree laid out node, left, right
    # does.
    body: list[list[Any]] = []

    def emit(part: list[tuple[int, str]]) -> int | str:
        if len(part) == 1:
            verdict = part[0][1]
            if verdict in ("allow", "deny"):
                return verdict
            conditions = CHECKED[verdict]
            if verdict == "clone":
                block = [(load, 0, 0, 16), (jset, 1, 0, _NAMESPACE_FLAGS), (ret, 0, 0, allow)]
                block.append(deny)
            else:
                block = _checks(conditions, pid)
            start = len(body)
            for index, (code, jt, jf, k) in enumerate(block, start):
                body.append([code, index + 1 + jt, index + 1 + jf, k])
            return start
        middle = len(part) // 2
        node = len(body)
        body.append([jge, None, None, part[middle][0]])
        body[node][2] = emit(part[:middle])
        body[node][1] = emit(part[middle:])
        return node

    root = emit(runs)
    if isinstance(root, str):  # a single verdict: nothing to search
        body.append([jeq, "", "", 0])
        body[-1][1] = body[-1][2] = root
    ends = {"allow": len(body), "deny": len(body) + 1}
    body += [[ret, 0, 0, allow], list(deny)]
    start = len(program)
    for index, (code, jt, jf, k) in enumerate(body):
        if code & 0x07 == 0x05:  # a jump: make its targets relative
            jt, jf = (ends[t] if isinstance(t, str) else t for t in (jt, jf))
            jt, jf = jt - index - 1, jf - index - 1
            if not (0 <= jt < 256 and 0 <= jf < 256):
                raise ValueError(f"the seccomp program's jump at {start + index} is out of reach")
        else:
            jt = jf = 0
        program.append((code, jt, jf, k))
    return program


def _checks(
    conditions: list[tuple[int, tuple[int | str, ...]]], pid: int
) -> list[tuple[int, int, int, int]]:
    """A block that allows the call when every condition on its arguments holds, refuses it
    otherwise; it ends in a return on every path."""
    load, jeq, ret = 0x20, 0x15, 0x06
    body: list[tuple[int, int, int, int]] = []
    # Each condition: load the low half of the argument, then one comparison per value; a
    # match goes on to the next condition, no match to the refusal at the end.
    pending: list[int] = []  # indexes whose "no match" jump targets the refusal
    for argument, values in conditions:
        wanted = sorted(
            {pid if v == _SELF else int(v) for v in values} | ({0} if _SELF in values else set())
        )
        body.append((load, 0, 0, 16 + 8 * argument))
        for position, value in enumerate(wanted):
            left = len(wanted) - position - 1
            if left:
                body.append((jeq, left, 0, value))  # match: past the other comparisons
            else:
                pending.append(len(body))
                body.append((jeq, 0, 0, value))  # no match: filled in below
    body.append((ret, 0, 0, 0x7FFF0000))
    refuse = len(body)
    body.append((ret, 0, 0, 0x00050000 | _EPERM))
    for index in pending:
        code, jt, _, k = body[index]
        body[index] = (code, jt, refuse - index - 1, k)
    return body


class _SockFilter(ctypes.Structure):
    _fields_ = [
        ("code", ctypes.c_uint16),
        ("jt", ctypes.c_uint8),
        ("jf", ctypes.c_uint8),
        ("k", ctypes.c_uint32),
    ]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_SockFilter))]


#: What "self" is in the program built ahead (:func:`_seccomp_program`): replaced by the
#: confined process's pid at each of the places it occurs.
_PLACEHOLDER = 0xFFFFFFFE


def _seccomp(pid: int) -> bool:
    """Install :func:`seccomp_filter` for this machine and process *pid*; False where there
    is none."""
    built = _seccomp_program(os.uname().machine)
    if built is None:
        return False
    fprog, places = built
    for index in places:
        fprog.filter[index].k = pid
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
def _seccomp_program(machine: str) -> tuple[_SockFprog, tuple[int, ...]] | None:
    program = seccomp_filter(machine, _PLACEHOLDER)
    if program is None:
        return None
    filters = (_SockFilter * len(program))(*(_SockFilter(*step) for step in program))
    fprog = _SockFprog(len(program), filters)
    # The array must outlive the struct that points into it.
    setattr(fprog, "_keep", filters)  # noqa: B010
    places = tuple(i for i, step in enumerate(program) if step[3] == _PLACEHOLDER)
    return fprog, places


def warm() -> None:
    """Do the sandbox's one-off set-up (load libc, build the seccomp program, read the last
    capability's number) in a process that forks children, so that no case pays for it."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            _libc()
            _seccomp_program(os.uname().machine)
            walls.last_capability()


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


def prepare_rules(request: Mapping[str, Any] | None, server: int | None) -> None:
    """Build the fixed part of the sandbox ahead, in a child that waits for its job
    (*request*: the previous job's sandbox, which every job of a session shares; *server*:
    the pid of the fork server that forked it, None for a spawned child), so that the case's
    clock pays only for its own folder and file."""
    if not request or not request.get("abi"):
        return
    with contextlib.suppress(SandboxError, OSError):
        abi = int(request["abi"])
        read = tuple(str(p) for p in request.get("read", ()))
        _PREPARED[(abi, read)] = _fixed_ruleset(abi, read)
        _prctl(_PR_SET_NO_NEW_PRIVS, 1)
    # Every wall but Landlock's own folder and file goes up now too, off the case's clock,
    # the switch to the sandbox user included: the child opens no learner's or course file
    # (the job carries the code), and its private folder, where it writes its result, is
    # the sandbox user's already.
    if not sys.platform.startswith("linux"):
        return
    global _AHEAD
    try:
        _first_walls(request, server, ahead=True)
        _last_walls(request)
        _AHEAD = _walls_key(request)
    except (SandboxError, walls.WallError, OSError) as error:
        _AHEAD = f"failed: {error}"


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
