"""The walls around the process that runs learner code besides Landlock and seccomp (issue 21):
limits it cannot raise, no capabilities, and namespaces of its own where the system offers them.

Everything here runs in the child before learner code loads (see
:func:`pytest_lessons.isolation.sandbox.confine`), except :func:`probe`, which the pytest
process calls once. Linux only; elsewhere each step is a no-op that :func:`probe` reports as
missing. This module imports neither pytest nor torch.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

try:
    import resource
except ImportError:  # Windows
    resource = None  # type: ignore[assignment]

#: clone(2)/unshare(2) flags: a user namespace and, owned by it, IPC, network and mounts.
_NEWUSER, _NEWIPC, _NEWNET, _NEWNS = 0x10000000, 0x08000000, 0x40000000, 0x00020000
NAMESPACES = _NEWUSER | _NEWIPC | _NEWNET | _NEWNS
#: Folders where the host keeps unix sockets and shared memory (docker.sock, D-Bus, systemd,
#: /dev/shm): in a case's own mount view each is an empty, read-only folder.
HIDDEN = ("/run", "/var/run", "/dev/shm", "/run/user")
#: Where the pids controller of cgroup v1 lives, and the folder of ours inside it.
CGROUP_PIDS = "/sys/fs/cgroup/pids"
CGROUP_FOLDER = "pytest-lessons"
#: Where cgroup v1's memory controller lives, and where a unified (v2) hierarchy may be.
CGROUP_MEMORY = "/sys/fs/cgroup/memory"
CGROUP_UNIFIED = ("/sys/fs/cgroup", "/sys/fs/cgroup/unified")
#: Where cgroup v1's cpu controller lives (often mounted with cpuacct, and linked here).
CGROUP_CPU = "/sys/fs/cgroup/cpu"
#: The weight of each case's cgroup: the same for every case (the kernel's default, written
#: so that nothing else's setting of the parent's default changes it), so that all of a
#: case's processes together get one case's share of the CPU, however many they are.
CPU_WEIGHT = {"v1": ("cpu.shares", "1024"), "v2": ("cpu.weight", "100")}
#: Bytes of a case's memory cgroup beyond the case's own budget: the pages of the grader's
#: own that the child copies from the fork server as it runs (reference counts written
#: into shared objects) and the waiting child's.
MEMORY_SLACK = 64 << 20

_PR_SET_PDEATHSIG, _PR_CAPBSET_READ, _PR_CAPBSET_DROP, _PR_SET_SECUREBITS = 1, 23, 24, 28
_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL = 47, 4
#: Every securebit and its lock but KEEP_CAPS: uid 0 gains nothing on exec or setuid.
_SECUREBITS = 0xEF
_CAP_SETPCAP = 8
_LINUX_CAPABILITY_VERSION_3 = 0x20080522
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 1, 2, 4, 8
_MS_REC, _MS_PRIVATE = 0x4000, 1 << 18


class WallError(RuntimeError):
    """A wall could not be put up, so no learner code runs."""


@dataclass(frozen=True)
class Walls:
    """What this system offers besides Landlock and seccomp, found once by :func:`probe`."""

    namespaces: bool = False
    """Whether a case can have its own user, IPC, network and mount namespaces."""
    namespaces_reason: str = ""
    """Why not, for the header."""
    processes: str = ""
    """How the process cap is kept: ``cgroup``, ``namespace`` (RLIMIT_NPROC counted in the
    case's own user namespace), ``user`` (RLIMIT_NPROC of the dedicated user, shared by that
    user's processes) or "" (none can be kept here)."""
    memory: str = ""
    """How the memory cap holds for the case as a whole: ``v1`` or ``v2`` (a memory cgroup
    of that version) or "" (none here: ``RLIMIT_AS`` caps each process alone)."""
    cpu: str = ""
    """How a case's processes share the CPU as one: ``v1`` or ``v2`` (a cpu cgroup of that
    version, the case's memory cgroup itself on v2, each case the same weight) or "" (none:
    each process is scheduled on its own). Either way the runner tries a case once more
    that timed out starved of the CPU (see :func:`case_cpu`)."""
    cpu_reason: str = ""
    """Why not, for the header."""


@functools.cache
def _libc() -> Any:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc


def _fail(what: str) -> WallError:
    return WallError(f"{what}: {os.strerror(ctypes.get_errno())}")


def probe(uid: int | None, gid: int | None = None) -> Walls:
    """What this system offers for a case that runs as user *uid* and group *gid* (None: as
    the grader).

    Namespaces are tried for real, in a forked process that makes them and ends: a kernel
    setting, an AppArmor rule or a container's seccomp profile (Docker's refuses them) can each
    say no, and only the attempt tells."""
    if not sys.platform.startswith("linux") or not hasattr(os, "fork"):
        return Walls(namespaces_reason="namespaces are a Linux feature")
    namespaces, reason = _try_namespaces(uid, uid if gid is None else gid)
    root = os.geteuid() == 0
    if root and os.access(CGROUP_PIDS, os.W_OK):
        processes = "cgroup"
    elif namespaces and (uid if uid is not None else os.geteuid()) != 0:
        processes = "namespace"
    elif uid is not None:
        processes = "user"
    else:
        processes = ""
    memory = memory_hierarchy()[0] if root else ""
    cpu, why = cpu_hierarchy() if memory else ("", "")
    if not memory:
        why = "the grader is not root" if not root else "no memory cgroup to hold it"
    return Walls(namespaces, reason, processes, memory, cpu, why if not cpu else "")


@functools.cache
def memory_hierarchy() -> tuple[str, str]:
    """The memory cgroup hierarchy this system lets root write: (``v1``, its folder), (``v2``,
    the unified hierarchy's folder, where its memory controller is available) or ("", "")."""
    if os.access(os.path.join(CGROUP_MEMORY, "memory.limit_in_bytes"), os.W_OK):
        return "v1", CGROUP_MEMORY
    for base in CGROUP_UNIFIED:
        with contextlib.suppress(OSError), open(os.path.join(base, "cgroup.controllers")) as f:
            if "memory" in f.read().split() and os.access(base, os.W_OK) and _hand_down(base):
                return "v2", base
    return "", ""


@functools.cache
def cpu_hierarchy() -> tuple[str, str]:
    """The cpu controller that goes with :func:`memory_hierarchy`: (``v2``, the unified
    hierarchy, where memory's folder hands cpu down too: one cgroup per case holds both),
    (``v1``, cgroup v1's cpu folder, a cgroup there per case named as its memory cgroup),
    or ("", why not)."""
    version, root = memory_hierarchy()
    if version == "v2":
        with contextlib.suppress(OSError), open(os.path.join(root, "cgroup.controllers")) as f:
            if "cpu" not in f.read().split():
                return "", "the cgroup v2 hierarchy has no cpu controller"
        if _hand_down(root, "cpu"):
            _weigh_parent("v2", os.path.join(root, CGROUP_FOLDER))
            return "v2", root
        # A real-time thread outside the root cgroup, for one, keeps cpu from being enabled.
        return "", "the cgroup v2 hierarchy does not hand its cpu controller down"
    if version == "v1":
        if os.access(os.path.join(CGROUP_CPU, "cpu.shares"), os.W_OK):
            with contextlib.suppress(FileExistsError, OSError):
                os.mkdir(os.path.join(CGROUP_CPU, CGROUP_FOLDER), 0o755)
            if os.access(os.path.join(CGROUP_CPU, CGROUP_FOLDER), os.W_OK):
                _weigh_parent("v1", os.path.join(CGROUP_CPU, CGROUP_FOLDER))
                return "v1", CGROUP_CPU
        return "", "no writable cgroup v1 cpu controller"
    return "", "no memory cgroup to hold it"


def _weigh_parent(version: str, base: str) -> None:
    """Give the folder of every case's cgroup the weight of one process a core: beside the
    machine's other busy processes, the cases together get the CPU that as many processes
    of their own would (a case had one at least before it had a cgroup), not one's."""
    name, weight = CPU_WEIGHT[version]
    most = 10_000 if version == "v2" else 262_144
    with contextlib.suppress(OSError):  # the kernel's default then: fair among the cases still
        _write(os.path.join(base, name), str(min(int(weight) * (os.cpu_count() or 1), most)))


def _cpu_folder(name: str) -> str:
    """The folder of case cgroup *name* in cgroup v1's cpu hierarchy ("" where cpu is not
    v1's: on v2 the memory cgroup holds it)."""
    version, root = cpu_hierarchy()
    return os.path.join(root, CGROUP_FOLDER, name) if version == "v1" else ""


def _hand_down(root: str, controller: str = "memory") -> bool:
    """Whether the unified hierarchy at *root* hands *controller* down to our folder (tried,
    as the cases need it: a container's cgroup that holds processes itself cannot hand it
    down, and its cases would then all fail)."""
    try:
        with contextlib.suppress(FileExistsError):
            os.mkdir(os.path.join(root, CGROUP_FOLDER), 0o755)
        for folder in (root, os.path.join(root, CGROUP_FOLDER)):
            _write(os.path.join(folder, "cgroup.subtree_control"), f"+{controller}")
    except OSError:
        return False
    return True


def _try_namespaces(uid: int | None, gid: int | None) -> tuple[bool, str]:
    """Make the namespaces as a case would (as user *uid*, mount view included), in a forked
    process that then ends."""
    import warnings

    # Loaded before the fork: a process with threads (a notebook's kernel) may hold the
    # dynamic loader's lock in another thread, which the child would wait on for ever.
    _libc()
    with warnings.catch_warnings():  # a fork in a process with threads: the child only exits
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:  # pragma: no cover - reports through its exit status
        code = 0
        try:
            if uid is not None:
                os.setgroups([])
                os.setgid(gid if gid is not None else uid)
                os.setuid(uid)
                _libc().prctl(4, 1, 0, 0, 0)  # PR_SET_DUMPABLE, as the case does
            unshare(os.getuid(), os.getgid())
        except OSError as exc:
            code = min(exc.errno or 1, 120)
        except BaseException:
            code = min(ctypes.get_errno(), 120) or 1
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1
    if code == 0:
        return True, ""
    return False, f"the system refuses new namespaces ({os.strerror(code)})"


def set_limits(limits: Mapping[str, Any]) -> None:
    """The limits that need no namespace, soft = hard so learner code cannot raise them: the
    largest file (*disk_mb*), open files (*open_files*), no core dumps, no real-time priority,
    no POSIX message queues."""
    if not sys.platform.startswith("linux"):
        return
    fixed = [(resource.RLIMIT_CORE, 0)]
    for name in ("RLIMIT_RTPRIO", "RLIMIT_MSGQUEUE"):
        if hasattr(resource, name):
            fixed.append((getattr(resource, name), 0))
    disk = limits.get("disk_mb")
    if disk:
        fixed.append((resource.RLIMIT_FSIZE, int(float(disk) * 1024 * 1024)))
    files = limits.get("open_files")
    if files:
        fixed.append((resource.RLIMIT_NOFILE, int(files)))
    for which, value in fixed:
        try:
            resource.setrlimit(which, (value, value))
        except (OSError, ValueError) as exc:
            raise WallError(f"setrlimit({which}, {value}): {exc}") from None


def cap_processes(count: int) -> None:
    """At most *count* processes and threads, soft = hard, counted per user: the case's own
    user namespace's count where it has one (:func:`unshare` came first)."""
    if resource is None or not hasattr(resource, "RLIMIT_NPROC"):
        return
    try:
        resource.setrlimit(resource.RLIMIT_NPROC, (count, count))
    except (OSError, ValueError) as exc:
        raise WallError(f"setrlimit(RLIMIT_NPROC, {count}): {exc}") from None


#: The processes besides the case's own that live in its worker's cgroup: the worker, the
#: child waiting for the next job, and a fork server's helper.
WORKER_TASKS = 3


def join_cgroup(count: int, server: int | None) -> None:
    """Put this process into a pids cgroup that holds at most *count* processes and threads
    of the case, as root, where cgroup v1's pids controller is mounted. *server*: the pid of
    the fork server whose child this is, and the cgroup is the server's, with room for the
    server's own (:data:`WORKER_TASKS`); None: the cgroup is this process's alone (a spawned
    child, whose parent is pytest).

    One cgroup a fork server, not one a case: a case's child is born in it, and moving a
    process into a cgroup waits for the kernel's RCU grace period (14 ms measured here, each
    time), whereas its cases run one after another. The first case moves the server; empty
    cgroups of processes that have ended are removed on the way.

    Only the named server is ever moved, and only while it is this process's parent: an
    orphan's parent is the machine's init (or a subreaper), and moving that would cap every
    process the machine starts afterwards."""
    if server is not None and (server <= 1 or os.getppid() != server):
        raise WallError(f"the fork server {server} is no longer this process's parent")
    owner = os.getpid() if server is None else server
    name = f"{'case' if server is None else 'worker'}-{owner}"
    base = os.path.join(CGROUP_PIDS, CGROUP_FOLDER)
    if _current_cgroup() == f"/{CGROUP_FOLDER}/{name}":
        return
    with contextlib.suppress(FileExistsError):
        os.mkdir(base, 0o755)
    with contextlib.suppress(OSError):
        for entry in os.listdir(base):
            if entry.startswith(("worker-", "case-")) and not _alive(entry):
                with contextlib.suppress(OSError):  # busy: its last processes end now
                    os.rmdir(os.path.join(base, entry))
    own = os.path.join(base, name)
    try:
        with contextlib.suppress(FileExistsError):
            os.mkdir(own, 0o755)
        _write(os.path.join(own, "pids.max"), str(count + (0 if server is None else WORKER_TASKS)))
        if server is not None:
            _write(os.path.join(own, "cgroup.procs"), str(server))
        _write(os.path.join(own, "cgroup.procs"), "0")
    except OSError as exc:
        raise WallError(f"the process cgroup {own}: {exc.strerror}") from None


def join_memory(ahead: bool) -> None:
    """Put this process into a memory cgroup of its own (:func:`memory_cgroup`, named by its
    parent, the fork server or pytest, and itself), as root, where a memory controller can
    be written. Its limit is the job's (:func:`limit_memory_cgroup`), which the parent side
    (the worker or runner) writes before it sends the job: learner code runs only once this
    process has read it. *ahead*: the job has not come yet (:func:`prepare_rules`), so the
    cgroup may not be there and is made without a limit, which the job's then sets; once
    the job has come, the cgroup must be there with its limit, and none is made.

    The case's cgroup, not its fork server's as for the pids cgroup: an OOM kill in a cgroup
    picks the process with the most resident memory, counting pages it shares, and the fork
    server, which holds torch, would be that; nothing can shield it where the grader lacks
    CAP_SYS_RESOURCE (Docker's default) to set its oom_score_adj to -1000. In the case's own
    cgroup, only the case's processes can be picked. The pages this process shares with the
    fork server stay charged where they were, so the limit counts what the case takes."""
    version, root = memory_hierarchy()
    if not version:
        raise WallError("no memory cgroup can be written here")
    name = memory_cgroup(os.getpid(), os.getppid())
    own = os.path.join(root, CGROUP_FOLDER, name)
    try:
        if _current_cgroup("memory" if version == "v1" else "") != f"/{CGROUP_FOLDER}/{name}":
            if ahead:
                _make_memory_cgroup(name)
            elif not os.path.isdir(own):
                raise WallError(f"the memory cgroup {own} was not made for this case")
            _write(os.path.join(own, "cgroup.procs"), "0")
    except OSError as exc:
        raise WallError(f"the memory cgroup {exc.filename or own}: {exc.strerror}") from None
    cpu = _cpu_folder(name)
    if cpu and _current_cgroup("cpu") != f"/{CGROUP_FOLDER}/{name}":
        # A share of the CPU is fairness, not a wall: without it the case still runs, and
        # the runner's second try for a starved case still holds.
        with contextlib.suppress(OSError):
            _write(os.path.join(cpu, "cgroup.procs"), "0")
    first_to_kill()


def first_to_kill() -> None:
    """Ask to be the first process the kernel's OOM killer picks (oom_score_adj 1000, which
    every process this one starts inherits): where the machine runs out of memory, a case's
    process goes before pytest, its worker or anything else of the machine's. Raising it
    needs no privilege, and lowering it back needs CAP_SYS_RESOURCE, which learner code
    never has."""
    try:
        _write("/proc/self/oom_score_adj", "1000")
    except OSError as exc:
        raise WallError(f"/proc/self/oom_score_adj: {exc.strerror}") from None


def case_memory(memory_mb: float | None, request: Mapping[str, Any] | None) -> int | None:
    """The bytes a case's memory cgroup holds for sandbox *request* and ``--lesson-memory``
    *memory_mb*, or None where the case has no memory cgroup. Its files count too where a
    tmpfs holds them (the kernel charges a tmpfs's pages to the process that writes them),
    so their budget is added; and :data:`MEMORY_SLACK` for the grader's own pages."""
    if not memory_mb or not request or not request.get("memory_cap"):
        return None
    limit = int(float(memory_mb) * (1 << 20)) + MEMORY_SLACK
    if request.get("namespaces"):
        limit += int(float((request.get("limits") or {}).get("disk_mb") or 0) * (1 << 20))
    return limit


def limit_memory_cgroup(name: str, limit: int) -> None:
    """Make memory cgroup *name* (if it is not there) and let it hold *limit* bytes, swap
    included: none. Written by the worker or runner, as root, before each job."""
    version, root = memory_hierarchy()
    own = os.path.join(root, CGROUP_FOLDER, name)
    try:
        _make_memory_cgroup(name)
        if version == "v1":
            # memsw (memory and swap) may never be below the memory limit: raised first
            # when the limit grows, lowered after when it shrinks.
            memsw = os.path.join(own, "memory.memsw.limit_in_bytes")
            with contextlib.suppress(OSError):
                _write(memsw, str(limit))
            _write(os.path.join(own, "memory.limit_in_bytes"), str(limit))
            with contextlib.suppress(FileNotFoundError):
                _write(memsw, str(limit))
        else:
            _write(os.path.join(own, "memory.max"), str(limit))
            with contextlib.suppress(FileNotFoundError):
                _write(os.path.join(own, "memory.swap.max"), "0")
    except OSError as exc:
        raise WallError(f"the memory cgroup {exc.filename or own}: {exc.strerror}") from None


def _make_memory_cgroup(name: str) -> None:
    version, root = memory_hierarchy()
    base = os.path.join(root, CGROUP_FOLDER)
    with contextlib.suppress(FileExistsError):
        os.mkdir(base, 0o755)
    cpu, _ = cpu_hierarchy()
    if version == "v2":  # a child's controllers are those its parent hands down
        for folder in (root, base):
            _write(os.path.join(folder, "cgroup.subtree_control"), "+memory")
        with contextlib.suppress(OSError):  # fairness, not a wall (see join_memory)
            for folder in (root, base) if cpu else ():
                _write(os.path.join(folder, "cgroup.subtree_control"), "+cpu")
    cpu_base = os.path.join(cpu_hierarchy()[1], CGROUP_FOLDER) if cpu == "v1" else ""
    # Cgroups a crashed run left: those whose parent (fork server or pytest) is gone, so no
    # one reads their count or removes them; a live parent removes its own.
    for folder in (base, cpu_base) if cpu_base else (base,):
        with contextlib.suppress(OSError):
            for entry in os.listdir(folder):
                parts = entry.split("-")
                if len(parts) == 3 and parts[0] == "case" and not _alive(f"-{parts[1]}"):
                    with contextlib.suppress(OSError):  # busy: its last processes end now
                        os.rmdir(os.path.join(folder, entry))
    with contextlib.suppress(FileExistsError):
        os.mkdir(os.path.join(base, name), 0o755)
    if version == "v1":
        with contextlib.suppress(OSError):  # no swap for the case where the kernel allows
            _write(os.path.join(base, name, "memory.swappiness"), "0")
    if cpu:
        own = os.path.join(cpu_base, name) if cpu_base else os.path.join(base, name)
        with contextlib.suppress(OSError):  # fairness, not a wall (see join_memory)
            with contextlib.suppress(FileExistsError):
                os.mkdir(own, 0o755)
            # No cpu.max or quota: a case alone on the machine keeps every core.
            _write(os.path.join(own, CPU_WEIGHT[cpu][0]), CPU_WEIGHT[cpu][1])


def memory_cgroup(pid: int, parent: int) -> str:
    """The name of the memory cgroup of the case whose first process is *pid*, a child of
    *parent* (its fork server, or pytest for a spawned child)."""
    return f"case-{parent}-{pid}"


def memory_cgroups(server: int) -> list[str]:
    """The memory cgroups of *server*'s children that are still there."""
    version, root = memory_hierarchy()
    if not version:
        return []
    names: set[str] = set()
    cpu, cpu_root = cpu_hierarchy()
    for base in (root, cpu_root) if cpu == "v1" else (root,):
        with contextlib.suppress(OSError):
            names.update(os.listdir(os.path.join(base, CGROUP_FOLDER)))
    return sorted(name for name in names if name.startswith(f"case-{server}-"))


def oom_kills(name: str) -> int:
    """How many processes the kernel killed in memory cgroup *name* for its limit (0 where
    it does not exist)."""
    version, root = memory_hierarchy()
    if not version:
        return 0
    events = "memory.oom_control" if version == "v1" else "memory.events"
    path = os.path.join(root, CGROUP_FOLDER, name, events)
    with contextlib.suppress(OSError, ValueError), open(path) as handle:
        for line in handle:
            key, _, value = line.partition(" ")
            if key == "oom_kill":
                return int(value)
    return 0


#: Seconds a closing runner or worker waits for the memory cgroups of its killed cases to
#: empty (on a loaded machine a killed case's last processes can take seconds to leave)
#: before it leaves them to the next run's sweep of cgroups whose parent is gone.
CGROUP_GRACE = 10.0


def remove_memory_cgroup(name: str, wait: float = 0.0) -> bool:
    """Remove memory cgroup *name* (a case's, once it ended), if it is there; for up to
    *wait* seconds while processes killed a moment ago still leave it. Returns whether it
    is gone."""
    version, root = memory_hierarchy()
    if not version:
        return True
    deadline = time.monotonic() + wait
    cpu = _cpu_folder(name)
    left = [os.path.join(root, CGROUP_FOLDER, name), *([cpu] if cpu else [])]
    while True:
        for folder in list(left):
            try:
                os.rmdir(folder)
                left.remove(folder)
            except FileNotFoundError:
                left.remove(folder)
            except OSError:
                pass
        if not left:
            return True
        if time.monotonic() >= deadline:
            return False  # busy: removed later, its processes being gone
        time.sleep(0.01)


def case_cpu(group: int) -> tuple[float, float] | None:
    """Seconds the live processes of process group *group* (a case's: its first process
    leads it) have run on a CPU and waited for one while runnable, summed over their threads
    (Linux's ``/proc/PID/task/TID/schedstat``), or None where the system does not say. Read
    by the runner side, never by learner code, at the moment the case runs out of time."""
    if not os.path.isfile("/proc/self/schedstat"):
        return None
    ran = waited = 0
    try:
        entries = os.listdir("/proc")
    except OSError:
        return None
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                # The name in parentheses may hold spaces and parentheses: fields follow the last.
                fields = handle.read().rpartition(b")")[2].split()
            if int(fields[2]) != group:
                continue
            for task in os.listdir(f"/proc/{entry}/task"):
                with open(f"/proc/{entry}/task/{task}/schedstat", "rb") as handle:
                    numbers = handle.read().split()
                ran += int(numbers[0])
                waited += int(numbers[1])
        except (OSError, ValueError, IndexError):
            continue  # it ended meanwhile
    return ran / 1e9, waited / 1e9


def die_with_parent(parent: int) -> bool:
    """Be killed when *parent* ends (Linux: the parent-death signal), and say whether
    *parent* is still this process's parent: False, the parent ended before the signal was
    armed, and this process is an orphan that must not go on."""
    if sys.platform.startswith("linux"):
        import signal

        _libc().prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    return os.getppid() == parent


def _write(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def _current_cgroup(controller: str = "pids") -> str:
    """This process's cgroup in the hierarchy of *controller* (cgroup v1; "": the unified
    hierarchy), or ""."""
    with contextlib.suppress(OSError), open("/proc/self/cgroup") as handle:
        for line in handle:
            _, controllers, path = line.rstrip("\n").split(":", 2)
            if (controller in controllers.split(",")) if controller else not controllers:
                return path
    return ""


def _alive(name: str) -> bool:
    """Whether the process a cgroup ``worker-PID`` was made for still exists."""
    try:
        os.kill(int(name.rpartition("-")[2]), 0)
    except ProcessLookupError:
        return False
    except (OSError, ValueError):
        return True
    return True


#: Bytes of a case's files per inode its tmpfs allows (:func:`cover_folder`): each file with
#: data takes a page already, so this only keeps empty files and folders, which cost the
#: kernel memory, to as many as the budget's pages.
_BYTES_PER_INODE = 4096


def cover_folder(folder: str, size: int) -> int:
    """Cover *folder* with an empty tmpfs of *size* bytes in this process's own mount
    namespace (:func:`unshare` came first): what the case writes there takes at most *size*
    in all, and the host's disk nothing. Returns a descriptor (``O_PATH``) of the folder as
    it was, beneath the tmpfs, through which the grader's own file (the case's result) is
    still reached; the caller closes it before learner code loads."""
    flags = os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        below = os.open(folder, flags)
    except OSError as exc:
        raise WallError(f"{folder}: {exc.strerror}") from None
    inodes = max(size // _BYTES_PER_INODE, 64)
    options = f"size={size},nr_inodes={inodes},mode=0700".encode()
    if _libc().mount(b"lessons", folder.encode(), b"tmpfs", _MS_NOSUID | _MS_NODEV, options):
        error = _fail(f"mount tmpfs on {folder}")
        os.close(below)
        raise error
    return below


class _MountAttr(ctypes.Structure):
    _fields_ = [
        ("attr_set", ctypes.c_uint64),
        ("attr_clr", ctypes.c_uint64),
        ("propagation", ctypes.c_uint64),
        ("userns_fd", ctypes.c_uint64),
    ]


#: mount_setattr(2): its number (the same on every architecture Linux added it to at once),
#: and the flags used here.
_MOUNT_SETATTR, _AT_FDCWD, _AT_RECURSIVE = 442, -100, 0x8000
_MOUNT_ATTR_NOATIME, _MOUNT_ATTR_ATIME_MASK = 0x10, 0x70


def no_access_times() -> bool:
    """Give this process a mount view of its own in which no file's access time changes,
    where it can (as root, before any user namespace: a view made inside one keeps the
    host's access-time flags locked). A read of a runtime file sets its access time on the
    host's disk, which a case of a later run reads back with ``stat``: a red team stored a
    hidden case's inputs that way (round K). The user namespace :func:`unshare` makes next
    copies this view, its flags locked as they are here. False where the kernel refused."""
    if os.geteuid() != 0:
        return False
    libc = _libc()
    if libc.unshare(_NEWNS) != 0:
        return False
    attr = _MountAttr(_MOUNT_ATTR_NOATIME, _MOUNT_ATTR_ATIME_MASK, _MS_PRIVATE, 0)
    done = libc.syscall(
        _MOUNT_SETATTR,
        ctypes.c_int(_AT_FDCWD),
        b"/",
        ctypes.c_uint(_AT_RECURSIVE),
        ctypes.byref(attr),
        ctypes.c_size_t(ctypes.sizeof(attr)),
    )
    return bool(done == 0)


def unshare(uid: int, gid: int) -> None:
    """Give this process its own user, IPC, network and mount namespaces, as user *uid* and
    group *gid* inside as outside; in the mount view, the host's socket and shared-memory
    folders (:data:`HIDDEN`) are empty and read-only."""
    libc = _libc()
    if libc.unshare(NAMESPACES) != 0:
        raise _fail("unshare")
    for name, text in (
        ("setgroups", "deny"),
        ("uid_map", f"{uid} {uid} 1"),
        ("gid_map", f"{gid} {gid} 1"),
    ):
        try:
            fd = os.open(f"/proc/self/{name}", os.O_WRONLY)
            try:
                os.write(fd, text.encode())
            finally:
                os.close(fd)
        except OSError as exc:
            raise WallError(f"/proc/self/{name}: {exc.strerror}") from None
    if libc.mount(None, b"/", None, _MS_REC | _MS_PRIVATE, None) != 0:
        raise _fail("mount --make-rprivate /")
    flags = _MS_RDONLY | _MS_NOSUID | _MS_NODEV | _MS_NOEXEC
    for folder in HIDDEN:
        hide = os.path.isdir(folder) and not os.path.islink(folder)
        if hide and libc.mount(b"none", folder.encode(), b"tmpfs", flags, b"size=4k,mode=0555"):
            raise _fail(f"mount tmpfs on {folder}")


@functools.cache
def last_capability() -> int | None:
    """The highest capability number this kernel knows, or None where it does not say (read
    once, in the process that forks the children: see
    :func:`pytest_lessons.isolation.sandbox.warm`)."""
    try:
        with open("/proc/sys/kernel/cap_last_cap") as handle:
            return int(handle.read())
    except (OSError, ValueError):
        return None


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    ]


def drop_capabilities(bounding_only: bool = False) -> None:
    """No capability left in any set (effective, permitted, inheritable, ambient, bounding),
    and root's exceptions locked off (securebits), where the process may still change them.
    *bounding_only*: the bounding set and securebits only (root, about to switch user, still
    needs the capability to)."""
    libc = _libc()
    if libc.prctl(_PR_CAPBSET_READ, _CAP_SETPCAP, 0, 0, 0) == 1:
        # Before the bounding set goes: setting securebits needs CAP_SETPCAP. A process that
        # holds no capabilities may be refused; it then has nothing they would lock. Root about
        # to switch user must keep the switch's fix-up of its capabilities.
        bits = _SECUREBITS & ~(0x4 if bounding_only else 0)
        libc.prctl(_PR_SET_SECUREBITS, bits, 0, 0, 0)
    # Dropped without asking first whether each is held (one system call a capability, not
    # two); only a drop that fails is asked about: refused while held is an error.
    prctl, last, cap = libc.prctl, last_capability(), 0
    while last is None or cap <= last:
        if prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            held = prctl(_PR_CAPBSET_READ, cap, 0, 0, 0)
            if held < 0:
                break  # past the last capability this kernel knows
            if held == 1:
                raise _fail(f"dropping capability {cap} from the bounding set")
        cap += 1
    if bounding_only:
        return
    libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    header = _CapHeader(_LINUX_CAPABILITY_VERSION_3, 0)
    empty = (_CapData * 2)()
    if libc.capset(ctypes.byref(header), empty) != 0:
        raise _fail("capset")
