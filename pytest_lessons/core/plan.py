"""A class's plan of shards: written once (``python -m pytest_lessons plan``), read by every
shard and by the merge. This module imports neither pytest nor torch.

A class graded by a scheduler (a Kubernetes Indexed Job, an AWS Batch array job, a Slurm or
HTCondor array) runs hundreds of shards. Without a plan each shard lists the whole submissions
folder to find its learners and writes the whole class's list into its report, so a class of
100,000 costs every shard a listing of 100,000 folders and the merge 100,000 names a shard.
With a plan, the submissions folder is listed once: the plan holds each shard's learners and a
fingerprint of the class, a shard reads only its own learners' folders and its report carries
the plan's fingerprint instead of the list, and the merge checks every shard against the plan.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from pytest_lessons.core.submissions import Roll, plain, shown_name, stem_group, utf8

#: The ``format`` field of a plan file.
FORMAT = "pytest-lessons-plan"
#: The plan file's version: a reader refuses a newer one instead of guessing.
VERSION = 1


class PlanError(ValueError):
    """A plan file that cannot be used, or a shard index outside it; the message says what to
    do."""


@dataclass(frozen=True)
class Plan:
    """Who grades whom: shard K's learners at ``shards[K - 1]``, each learner in one shard."""

    shards: tuple[tuple[str, ...], ...]
    folder: str = "submissions"
    """The submissions folder as the plan's run named it (shards may mount it elsewhere)."""
    skipped: tuple[tuple[str, str], ...] = ()
    """(name, why) of each entry of the folder taken for no learner."""

    @classmethod
    def split(cls, roll: Roll, shards: int) -> Plan:
        """*roll*'s learners in *shards* shards as even as can be (sizes differ by one), each
        shard a run of names in name order, and none empty. Learners whose own files' names
        could clash (``a b`` and ``a_b``: :func:`stem_group`) share a shard, so a shard's
        feedback files are named as one run's are."""
        groups: dict[str, list[str]] = {}
        for learner in sorted(roll.learners):
            groups.setdefault(stem_group(learner), []).append(learner)
        if shards < 1:
            raise PlanError(f"--shards={shards}: give at least 1")
        if shards > len(groups):
            raise PlanError(
                f"--shards={shards} is more than the {len(roll.learners)} learners of "
                f"{roll.folder}: give at most {max(len(groups), 1)}, so that no shard is empty"
            )
        parts: list[list[str]] = [[] for _ in range(shards)]
        for n, group in enumerate(groups.values()):
            parts[n * shards // len(groups)] += group
        return cls(tuple(tuple(part) for part in parts), roll.folder, roll.skipped)

    @property
    def total(self) -> int:
        """The number of shards."""
        return len(self.shards)

    # Computed once a plan: a merge checks each of its hundreds of shards against them, and
    # each is a sort (and a hash) of the whole class.
    @cached_property
    def learners(self) -> tuple[str, ...]:
        """Every learner of the class, in name order."""
        return tuple(sorted(who for part in self.shards for who in part))

    @cached_property
    def roster(self) -> str:
        """The class's fingerprint: :attr:`Roll.id` of the whole class, as one run records it."""
        return Roll(self.learners).id

    @cached_property
    def id(self) -> str:
        """The plan's fingerprint: the class and its split. Shards of one plan share it."""
        digest = hashlib.sha256(f"{FORMAT} {VERSION}\n".encode())
        for part in self.shards:
            digest.update(("\t".join(part) + "\n").encode("utf-8"))
        return digest.hexdigest()[:16]

    def index(self, text: str) -> int:
        """The shard number (from 1) of the scheduler's index *text*, which counts from 0."""
        digits = text.strip()
        if not (digits.isascii() and digits.isdigit()) or not 0 <= int(digits) < self.total:
            raise PlanError(
                f"--lesson-shard-index={text}: give the scheduler's index, a whole number from "
                f"0 to {self.total - 1} (the plan has {self.total} shards; the index counts "
                "from 0, as JOB_COMPLETION_INDEX, AWS_BATCH_JOB_ARRAY_INDEX, "
                "SLURM_ARRAY_TASK_ID and HTCondor's $(Process) do)"
            )
        return int(digits) + 1

    def members(self, k: int) -> tuple[str, ...]:
        """The learners of shard *k* (from 1), in name order."""
        return self.shards[k - 1]

    def roll(self, k: int, shown: str = "") -> Roll:
        """Shard *k*'s (from 1) roll: its own learners, with the class's fingerprint."""
        return Roll(
            self.shards[k - 1],
            (k, self.total),
            folder=shown or self.folder,
            plan=self.id,
            roster=self.roster,
            size=sum(len(part) for part in self.shards),
        )

    def whole(self) -> Roll:
        """The whole class, as one run would have graded it (shard 1/1)."""
        return Roll(self.learners, folder=self.folder)

    def to_dict(self) -> dict[str, Any]:
        """The plan file's data."""
        return {
            "format": FORMAT,
            "version": VERSION,
            "id": self.id,
            "roster": self.roster,
            "folder": self.folder,
            "learners": sum(len(part) for part in self.shards),
            "skipped": [list(entry) for entry in self.skipped],
            "shards": [list(part) for part in self.shards],
        }

    def text(self) -> str:
        """The plan file's text: one shard's learners a line, so a diff of two plans reads."""
        data = self.to_dict()
        shards = data.pop("shards")
        head = json.dumps(data, ensure_ascii=False)[:-1]
        lines = ",\n  ".join(json.dumps(part, ensure_ascii=False) for part in shards)
        return f'{head}, "shards": [\n  {lines}\n]}}\n'

    @classmethod
    def from_dict(cls, data: object, where: str = "the plan") -> Plan:
        """A plan back from its file's data, checked: refused (:class:`PlanError`) when it is
        not a plan, is of a newer version, names a learner twice or was changed by hand
        (its recorded fingerprint no longer matches)."""
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise PlanError(
                f"{where} is not a plan of pytest-lessons: write one with python -m "
                "pytest_lessons plan SUBMISSIONS --shards=N --output=plan.json"
            )
        if data.get("version") != VERSION:
            raise PlanError(
                f"{where} is a plan of version {data.get('version')!r}, and this "
                f"pytest-lessons reads version {VERSION}: write it again with this version"
            )
        shards = data.get("shards")
        if (
            not isinstance(shards, list)
            or not shards
            or not all(
                isinstance(part, list) and all(isinstance(w, str) for w in part) for part in shards
            )
        ):
            raise PlanError(f"{where}: its shards are not lists of learner folder names")
        skipped_raw = data.get("skipped", [])
        skipped = tuple(
            (str(entry[0]), str(entry[1]))
            for entry in (skipped_raw if isinstance(skipped_raw, list) else [])
            if isinstance(entry, list) and len(entry) == 2
        )
        plan = cls(tuple(tuple(part) for part in shards), str(data.get("folder") or ""), skipped)
        seen: dict[str, int] = {}
        for k, part in enumerate(plan.shards, 1):
            for who in part:
                if who in ("", ".", "..") or any(c in who for c in "/\\\0"):
                    raise PlanError(
                        f"{where} names {who!r} in shard {k}, which is no folder name: write "
                        "the plan again with python -m pytest_lessons plan"
                    )
                if not (utf8(who) and plain(who)):
                    # A plan of an older version, which took such a folder for a learner: a
                    # class run sets it aside (Roll.of), and so must its shards.
                    raise PlanError(
                        f"{where} names {shown_name(who)} in shard {k}, a folder whose name "
                        "holds control or invisible characters or is not UTF-8, which is no "
                        "learner: write the plan again with python -m pytest_lessons plan"
                    )
                if who in seen:
                    raise PlanError(
                        f"{where} puts {who} in shards {seen[who]} and {k}: write the plan "
                        "again with python -m pytest_lessons plan"
                    )
                seen[who] = k
        if data.get("id") != plan.id:
            raise PlanError(
                f"{where} was changed after it was written (its fingerprint "
                f"{data.get('id')!r} is not its content's, {plan.id}): write it again with "
                "python -m pytest_lessons plan"
            )
        return plan

    @classmethod
    def read(cls, path: Path) -> Plan:
        """The plan in the file *path* (:meth:`from_dict`)."""
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except OSError as error:
            raise PlanError(f"{path}: {error.strerror or error}") from None
        except ValueError:
            raise PlanError(
                f"{path} is not JSON: write it again with python -m pytest_lessons plan"
            ) from None
        return cls.from_dict(data, str(path))
