"""What a learner was already shown, per exercise: :class:`Ledger`.

A fault is explained in full under the first case that has it and named in short under the
others (one fault, one message); printed output is shown up to a cap per exercise, and kept
for the reports up to another. Keys are ``Attempt.mine``: (exercise file, learner).

The record is of this front-end session only. The reports' texts do not depend on it (they are
the same under pytest-xdist); what a terminal or a notebook shows does.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pytest_lessons.core.texts import OUTPUT_LINES

#: Lines of printed output the failures of one exercise show in all (per learner).
EXERCISE_OUTPUT_LINES = 60

Mine = tuple[str, str]
"""(exercise file, learner): whose work on which exercise."""


@dataclass
class Ledger:
    """What each learner was shown of each exercise so far."""

    first_seen: dict[tuple[str, ...], str] = field(default_factory=dict)
    """(exercise file, learner, diagnosis or fault key) -> the label of the first case
    that had it."""
    output_shown: dict[Mine, int] = field(default_factory=dict)
    """(exercise file, learner) -> lines of printed output its failures showed so far."""
    output_kept: dict[Mine, int] = field(default_factory=dict)
    """(exercise file, learner) -> characters of printed output kept for the reports."""

    def first_case(self, mine: Mine, said: str, label: str) -> str:
        """The label of the first case of *mine* that had *said* (a fault key or a
        diagnosis), or "" when it is this case, *label*, which is then recorded as the first."""
        first = self.first_seen.setdefault((*mine, said), label)
        return "" if first == label else first

    def explained_before(self, mine: Mine, said: str, label: str) -> bool:
        """Whether a case other than *label* already had *said* (nothing is recorded)."""
        return self.first_seen.get((*mine, said)) not in (None, label)

    def room(self, mine: Mine, output: str) -> int:
        """Lines of printed output this case's text may show, and *output*'s share of them
        counted as shown."""
        shown = self.output_shown.get(mine, 0)
        room = max(0, min(OUTPUT_LINES, EXERCISE_OUTPUT_LINES - shown))
        if output:
            self.output_shown[mine] = shown + min(room, output.count("\n") + 1)
        return room

    def kept_output(self, mine: Mine, output: str, cap: int) -> str:
        """What of *output* the reports keep: capped per exercise at *cap* characters as well
        as per case, so a print flood in every case cannot make a report of megabytes."""
        kept = self.output_kept.get(mine, 0)
        if kept >= cap:
            return f"[not kept: this exercise's earlier cases already kept {cap} bytes of output]"
        if kept + len(output) > cap:
            output = output[: cap - kept] + "\n[… cut: the exercise's output cap is reached]"
        self.output_kept[mine] = kept + len(output)
        return output
