"""The output options are one table: pytest's ``--lesson-NAME`` and the merge's ``--NAME``
options are the same set, with the same help, as each command's ``--help`` shows them."""

from __future__ import annotations

import re

import pytest

from pytest_lessons import __main__ as merging
from pytest_lessons.reports.options import MERGE, OUTPUT_OPTIONS, PYTEST
from pytest_lessons.reports.outputs import Outputs


def described(shown: str, prefix: str) -> dict[str, str]:
    """Each option of a ``--help`` text whose name starts with *prefix*, and its help with
    every space and line break taken out (each command wraps at its own width)."""
    found: dict[str, str] = {}
    current = None
    for line in shown.splitlines():
        start = re.match(r"^  (-[-a-z]+)(?:[= ]\S+)?(?:\s{2,}(\S.*))?$", line)
        if start:
            current = start[1] if start[1].startswith(prefix) else None
            if current:
                found[current] = start[2] or ""
        elif current and line.startswith("    ") and line.strip():
            found[current] += line
        else:
            current = None
    return {name: "".join(text.split()) for name, text in found.items()}


def test_pytest_and_the_merge_offer_the_same_output_options_with_the_same_help(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest_help = pytester.runpytest("--help").stdout.str()
    capsys.readouterr()
    with pytest.raises(SystemExit):
        merging.parser().parse_args(["merge", "--help"])
    merge_help = described(capsys.readouterr().out, "--")
    ours = described(pytest_help, PYTEST)
    names = [option.name for option in OUTPUT_OPTIONS]
    assert set(merge_help) == {MERGE + name for name in names} | {"--allow-missing", "--plan"}
    assert {PYTEST + name for name in names} <= set(ours)
    for option in OUTPUT_OPTIONS:
        in_pytest = ours[option.flag(PYTEST)]
        in_merge = merge_help[option.flag(MERGE)]
        assert in_pytest == "".join(option.help_in(PYTEST).split())
        # The same words, each command naming its own options (merge: always a class).
        same = in_pytest.replace(PYTEST, MERGE).removeprefix("With--submissions:")
        assert same.lower() == in_merge.lower(), option.name
    # The visibility of hidden cases had drifted: another help and metavar in the merge.
    assert "Gradescope'svisibilityofhiddencases" in merge_help["--hidden-visibility"]


def test_what_a_run_writes_by_default_is_what_the_option_table_says() -> None:
    defaults = {option.field: option.default for option in OUTPUT_OPTIONS}
    assert Outputs.from_values(defaults.__getitem__) == Outputs()
