"""A class's submissions folder: who is in the class (:class:`Roll`) and which shard grades
whom (:func:`shard_of`), as collection, the class's outputs and the merge of shards all read
it. This module imports neither pytest nor torch.
"""

from __future__ import annotations

import hashlib
import os
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_lessons.isolation.text import BLANK, visible


class ShardError(ValueError):
    """A shard that is not ``K/N``; the message gives an example that works."""


#: Folders of a submissions folder that are never a learner, and why: version control, the
#: caches of Python and of its tools, and what macOS adds to a zip. Every other folder is a
#: learner, whatever its name (``_jane``, ``.x``); a file is never a learner.
NOT_LEARNERS = {
    ".git": "version control",
    ".hg": "version control",
    ".svn": "version control",
    ".bzr": "version control",
    "__pycache__": "Python's cache",
    ".pytest_cache": "pytest's cache",
    ".mypy_cache": "mypy's cache",
    ".ruff_cache": "ruff's cache",
    ".ipynb_checkpoints": "Jupyter's checkpoints",
    "__MACOSX": "macOS's zip metadata",
}

#: Why a folder whose name is not UTF-8 is no learner: no report, gradebook or LMS can hold
#: its name. (Linux lets a folder's name be any bytes; a zip made on another system can give
#: one.)
NOT_UTF8 = "its name is not UTF-8 text: rename the folder (its files are kept), then grade again"

#: Why a folder whose name holds a character a terminal acts on or that no reader sees is no
#: learner: the folder's name is the learner's to choose (a repository's, a zip's folder),
#: and printed in the instructor's terminal an escape or a carriage return rewrites another
#: learner's line, a right-to-left override or a zero-width character makes one name read
#: as another.
NOT_PLAIN = (
    "rename the folder (its files are kept), then grade again: its name holds control or "
    "invisible characters, shown here as escapes, that would rewrite or hide lines of the "
    "terminal and the reports, or makes another learner's name read as its own"
)

#: The Unicode categories of :data:`NOT_PLAIN`'s characters: controls (C0 with tab and
#: newline, DEL, C1), format characters (bidirectional overrides and marks, zero-width
#: spaces and joiners, the byte order mark, tags), and the line and paragraph separators.
#: Also no learner: a space other than the plain one (a no-break space reads as one), a
#: printable character that shows as a blank (:data:`~pytest_lessons.isolation.text.BLANK`:
#: a Hangul filler, the blank Braille pattern), and a space at either end (``alice `` reads
#: as ``alice``; a red team's round H).
_NOT_PLAIN = frozenset({"Cc", "Cf", "Zl", "Zp"})


def utf8(name: str) -> bool:
    """Whether the folder name *name* (as Python's file system encoding read it) is UTF-8."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def plain(name: str) -> bool:
    """Whether the folder name *name* holds none of :data:`NOT_PLAIN`'s characters, and no
    space at either end."""
    if name != name.strip(" "):
        return False
    if name.isascii() and name.isprintable():  # most names are decided in C
        return True
    return not any(
        unicodedata.category(c) in _NOT_PLAIN
        or (c != " " and unicodedata.category(c) == "Zs")
        or c in BLANK
        for c in name
    )


def shown_name(name: str) -> str:
    """A folder name as the terminal may show it: each byte that is not UTF-8 as ``\\xff``,
    each character a terminal would act on or hide as its escape (``\\x1b``, ``\\u202e``),
    a space at either end as ``\\x20``."""
    shown = visible(name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace"))
    core = shown.strip(" ")
    start = len(shown) - len(shown.lstrip(" ")) if core else len(shown)
    end = len(shown) - len(shown.rstrip(" ")) if core else 0
    return "\\x20" * start + core + "\\x20" * end


@dataclass(frozen=True)
class Roll:
    """A class: every learner folder of its submissions folder (of every shard), the shard a
    run grades, and what the folder held that is not a learner."""

    learners: tuple[str, ...]
    shard: tuple[int, int] = (1, 1)
    skipped: tuple[tuple[str, str], ...] = ()
    """(name, why) of each entry of the submissions folder taken for no learner."""
    folder: str = "submissions"
    """The submissions folder as the terminal names it."""
    plan: str = ""
    """A shard of a plan (``python -m pytest_lessons plan``): the plan's fingerprint. Such a
    roll holds this shard's own learners only; the class is :attr:`roster` and :attr:`size`."""
    roster: str = ""
    """A planned shard's fingerprint of the whole class (:attr:`id` of the class's roll)."""
    size: int = 0
    """A planned shard's number of learners in the whole class."""

    @classmethod
    def of(cls, submissions: Path, shard: tuple[int, int] | None = None, shown: str = "") -> Roll:
        """The class in *submissions*: each folder a learner except :data:`NOT_LEARNERS`."""
        learners: list[str] = []
        skipped: list[tuple[str, str]] = []
        for entry in sorted(submissions.iterdir(), key=lambda e: e.name):
            if not entry.is_dir():
                skipped.append((shown_name(entry.name), "a file"))
            elif entry.name in NOT_LEARNERS:
                skipped.append((entry.name, NOT_LEARNERS[entry.name]))
            elif not utf8(entry.name):
                skipped.append((shown_name(entry.name), NOT_UTF8))
            elif not plain(entry.name):
                skipped.append((shown_name(entry.name), NOT_PLAIN))
            else:
                learners.append(entry.name)
        return cls(tuple(learners), shard or (1, 1), tuple(skipped), shown or str(submissions))

    @property
    def id(self) -> str:
        """A short fingerprint of the class's learners: shards of one class share it."""
        if self.plan:
            return self.roster
        names = "\n".join(sorted(self.learners))
        return hashlib.sha256(names.encode("utf-8", "surrogateescape")).hexdigest()[:16]

    def members(self, k: int | None = None) -> list[str]:
        """The learners of shard *k* (default: this roll's shard), in name order."""
        number, total = self.shard
        k = number if k is None else k
        if self.plan:
            # A planned shard knows its own learners only, and each of them is its own.
            return list(self.learners) if k == number else []
        return [who for who in self.learners if total == 1 or shard_of(who, total) == k]

    def table(self) -> dict[str, Any]:
        """The ``class`` table of the json report: a planned shard's names the plan and the
        class's fingerprint and size instead of listing every learner of the class."""
        k, n = self.shard
        if self.plan:
            return {
                "id": self.id,
                "shard": f"{k}/{n}",
                "plan": self.plan,
                "size": self.size,
                "folder": self.folder,
            }
        return {
            "id": self.id,
            "shard": f"{k}/{n}",
            "learners": list(self.learners),
            "folder": self.folder,
        }

    def skipped_line(self) -> str:
        shown = ", ".join(f"{name} ({why})" for name, why in self.skipped)
        return f"skipped in {self.folder}, not learners: {shown}"


def handed_in(folder: Path, relative: Path) -> Path:
    """The learner's file *relative* (``split_heads/solution.py``) in their *folder*, found as
    a grader on macOS or Windows finds it: where a part of the path is missing but the folder
    holds exactly one entry whose name differs from it only in case (``Solution.py``,
    ``Split_Heads``), that entry. So a class is graded the same on every system, and the
    learner's messages name the file they handed in. Names are compared only: nothing is
    opened or followed here (the file is still read beneath *folder*, through no link)."""
    found = folder
    for part in relative.parts:
        step = found / part
        if not os.path.lexists(step):
            try:
                with os.scandir(found) as entries:
                    same = [e.name for e in entries if e.name.casefold() == part.casefold()]
            except OSError:
                same = []
            if len(same) == 1:
                step = found / same[0]
        found = step
    return found


def parse_shard(text: str) -> tuple[int, int]:
    """``K/N`` -> (K, N), 1 <= K <= N."""
    try:
        k, n = (int(part) for part in text.split("/"))
    except ValueError:
        raise ShardError(f"--lesson-shard={text}: give K/N, such as 1/3") from None
    if not 1 <= k <= n:
        raise ShardError(f"--lesson-shard={text}: K must be from 1 to N, such as 1/{max(n, 1)}")
    return k, n


def shard_of(learner: str, shards: int) -> int:
    """The shard (from 1) that grades *learner*: a hash of the name alone, so a learner always
    lands in the same shard and a new learner moves no one else."""
    hashed = hashlib.sha256(name_bytes(learner)).digest()
    return int.from_bytes(hashed[:8], "big") % shards + 1


#: The longest stem of a learner's own files, in UTF-8 bytes: with any suffix a report's path
#: adds (``.md``, ``.junit.xml``) well inside the 255 bytes a file name may take on Linux,
#: macOS and Windows.
STEM_BYTES = 96
#: The hex digits of the digest that tells a folder name apart when its stem is not the name.
DIGEST = 12
_DIGESTED = re.compile(f"-[0-9a-f]{{{DIGEST}}}$")
#: Names Windows keeps for its devices, whatever the suffix (``con.md`` is no file there).
_DEVICES = {
    "con",
    "prn",
    "aux",
    "nul",
    *(f"com{n}" for n in range(10)),
    *(f"lpt{n}" for n in range(10)),
}


def name_bytes(learner: str) -> bytes:
    """The folder name as the file system holds it (a name that is not UTF-8 included)."""
    return learner.encode("utf-8", "surrogateescape")


def digest(learner: str) -> str:
    """:data:`DIGEST` hex digits of the folder name: the same for the same name, everywhere."""
    return hashlib.sha256(name_bytes(learner)).hexdigest()[:DIGEST]


def _cut(text: str, most: int) -> str:
    """*text*'s start, at most *most* bytes of UTF-8 (never half a character)."""
    return text.encode("utf-8")[:most].decode("utf-8", "ignore")


def file_stem(learner: str) -> str:
    """The learner's own files' name (their feedback file, their report): the folder name
    itself when it is a plain file name (word characters and ``.@+=-``, no leading dot, at
    most :data:`STEM_BYTES` bytes, no device name of Windows, not ending as a digest does);
    else its plain characters, cut to fit, then ``-`` and :func:`digest` of the whole name.
    It depends on the name alone, so two folder names never share a stem (but for case:
    :func:`stem_group`)."""
    plain = re.sub(r"[^\w.@+=-]", "_", learner).lstrip(".") or "_"
    if (
        plain == learner
        and len(name_bytes(plain)) <= STEM_BYTES
        and not _DIGESTED.search(plain)
        and plain.split(".")[0].lower() not in _DEVICES
    ):
        return plain
    return digested(plain, learner)


def digested(stem: str, learner: str) -> str:
    """*stem* cut to fit, then ``-`` and :func:`digest` of *learner*: at most
    :data:`STEM_BYTES` bytes, and never another learner's."""
    return f"{_cut(stem, STEM_BYTES - DIGEST - 1)}-{digest(learner)}"


def stem_group(learner: str) -> str:
    """What learners whose own files' names would be the same on a file system that ignores
    case (macOS's, Windows') share: :func:`file_stem` without case or Unicode's different
    spellings of one letter. Only such learners' names depend on each other
    (:func:`~pytest_lessons.reports.feedback_files.stems`); a plan keeps each group in one
    shard."""
    return unicodedata.normalize("NFKC", file_stem(learner)).casefold()
