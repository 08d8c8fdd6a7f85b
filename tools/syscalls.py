"""Find the system calls learner code needs, for the sandbox's seccomp allow-list (issue 21).

    python tools/syscalls.py            # both isolation modes; needs strace
    python tools/syscalls.py --mode fork

Runs the whole course with each lesson's reference as the learner's answer, and combine_heads
with tools/wide_ops.py (linear algebra, FFT, distributions, nn layers, autograd, NumPy, two
threads), under ``strace -f``. Of every process that runs learner code it keeps the calls
made after the sandbox closed (the ``prctl(PR_SET_SECCOMP, ...)`` line) and those of the
processes it started, then prints them against
:data:`pytest_lessons.isolation.sandbox.ALLOWED`: calls observed but not allowed (add them) and
allowed but never observed (kept on purpose: the equivalents other C libraries and kernels use,
see the table's comments).

The numbers of each architecture's calls come from the kernel headers
(``/usr/include/x86_64-linux-gnu/asm/unistd_64.h``, ``/usr/include/asm-generic/unistd.h``);
``--numbers`` prints the table for both.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HEADERS = {
    "x86_64": Path("/usr/include/x86_64-linux-gnu/asm/unistd_64.h"),
    "aarch64": Path("/usr/include/asm-generic/unistd.h"),
}
_LINE = re.compile(r"^(\d+)\s+(?:<\.\.\. (\w+) resumed>|(\w+)\()")
_RETURN = re.compile(r"=\s+(\d+)\s*$")


def course_copy(where: Path) -> Path:
    """The course with right answers: the references, and the wide operator set."""
    course = where / "exercises"
    shutil.copytree(ROOT / "exercises", course)
    for lesson in course.iterdir():
        if (lesson / "reference.py").exists():
            shutil.copy(lesson / "reference.py", lesson / "solution.py")
    shutil.copy(ROOT / "tools" / "wide_ops.py", course / "combine_heads" / "solution.py")
    return course


def traced_calls(log: Path) -> set[str]:
    """The calls made by confined processes (and what they started) in strace's *log*."""
    confined: set[str] = set()
    found: set[str] = set()
    for line in log.read_text(errors="replace").splitlines():
        match = _LINE.match(line)
        if match is None:
            continue
        pid, name = match.group(1), match.group(2) or match.group(3)
        if pid in confined:
            found.add(name)
            if name in ("clone", "clone3", "fork", "vfork"):
                child = _RETURN.search(line)
                if child:
                    confined.add(child.group(1))
        elif "PR_SET_SECCOMP" in line or (name == "seccomp" and "SET_MODE_FILTER" in line):
            confined.add(pid)
    return found


def run(mode: str, where: Path) -> set[str]:
    course = course_copy(where / mode)
    log = where / f"{mode}.strace"
    command = [
        "strace", "-f", "-qq", "-o", str(log),
        sys.executable, "-m", "pytest", str(course), "-p", "no:cacheprovider", "-q",
        f"--lesson-isolation={mode}", "--lesson-timeout=300", "--lesson-sandbox=require",
    ]  # fmt: skip
    done = subprocess.run(command, cwd=where, capture_output=True, text=True)
    tail = done.stdout.strip().splitlines()[-1:] or ["(no output)"]
    print(f"{mode}: pytest said {tail[0]!r}")
    return traced_calls(log)


def numbers(machine: str) -> dict[str, int]:
    """Every system call's number on *machine*, from the kernel headers."""
    text = HEADERS[machine].read_text()
    pattern = r"#define __NR(?:3264)?_(\w+)\s+(\d+)"
    found = {name: int(number) for name, number in re.findall(pattern, text)}
    if machine == "aarch64":  # asm-generic spells some of them for 64-bit ABIs only
        found.update({"fstat": 80, "newfstatat": 79, "fcntl": 25, "statfs": 43, "fstatfs": 44})
        found.update({"lseek": 62, "mmap": 222, "fadvise64": 223, "truncate": 45})
        found.update({"ftruncate": 46, "sendfile": 71})
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=["fork", "spawn"], action="append")
    parser.add_argument("--numbers", action="store_true", help="print the number tables")
    options = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from pytest_lessons.isolation import sandbox

    if options.numbers:
        for machine in HEADERS:
            table = numbers(machine)
            print(machine, {n: table[n] for n in sandbox.ALLOWED if n in table})
        return
    if shutil.which("strace") is None:
        sys.exit("strace is needed: apt-get install strace")
    seen: set[str] = set()
    with tempfile.TemporaryDirectory(prefix="lessons-syscalls-") as where:
        for mode in options.mode or ["fork", "spawn"]:
            seen |= run(mode, Path(where))
    allowed = set(sandbox.ALLOWED) | set(sandbox.CHECKED)
    print("observed:", " ".join(sorted(seen)))
    print("observed, NOT allowed:", " ".join(sorted(seen - allowed)) or "none")
    print("allowed, not observed:", " ".join(sorted(allowed - seen)) or "none")


if __name__ == "__main__":
    main()
