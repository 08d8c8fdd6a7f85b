"""A class's submissions folder: who is in the class (:class:`Roll`) and which shard grades
whom (:func:`shard_of`), as collection, the class's outputs and the merge of shards all read
it. This module imports neither pytest nor torch.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any


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
                skipped.append((entry.name, "a file"))
            elif entry.name in NOT_LEARNERS:
                skipped.append((entry.name, NOT_LEARNERS[entry.name]))
            else:
                learners.append(entry.name)
        return cls(tuple(learners), shard or (1, 1), tuple(skipped), shown or str(submissions))

    @property
    def id(self) -> str:
        """A short fingerprint of the class's learners: shards of one class share it."""
        if self.plan:
            return self.roster
        return hashlib.sha256("\n".join(sorted(self.learners)).encode("utf-8")).hexdigest()[:16]

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
    digest = hashlib.sha256(learner.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % shards + 1


def file_stem(learner: str) -> str:
    """The learner's own files' name (their feedback file, their report), before any ``-2``
    that tells two such names apart: the folder name made a plain file name."""
    return re.sub(r"[^\w.@+=-]", "_", learner).lstrip(".") or "_"


def stem_group(learner: str) -> str:
    """What learners whose own files' names may clash share (:func:`file_stem` without a
    ``-N`` ending, without case): a plan keeps each such group in one shard, so the ``-2``,
    ``-3`` that tell them apart are the same as in one run."""
    return re.sub(r"-[0-9]+$", "", file_stem(learner)).lower()
