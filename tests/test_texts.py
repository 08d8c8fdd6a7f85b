"""The words a learner reads, straight from outcomes and comparisons: no pytest run needed.

End-to-end wording through real runs is in test_grading.py and test_isolation.py.
"""

from __future__ import annotations

import json
import ntpath
import os
from pathlib import Path
from typing import Any

import pytest

from pytest_lessons.core import frontend, texts, words
from pytest_lessons.core.compare import compare, compare_outputs
from pytest_lessons.core.detectors import Diagnosis
from pytest_lessons.isolation.outcome import Frame, Outcome

SOLUTION = Path("/course/double/solution.py")


def context(**changes: Any) -> texts.Context:
    fields: dict[str, Any] = {
        "slug": "double",
        "entry": "solve",
        "solution": SOLUTION,
        "inputs": {"x": [1, 2]},
        "timeout": 10.0,
        "memory_mb": 2048.0,
        "show": lambda path: str(path).replace("/course/", ""),
    }
    fields.update(changes)
    return texts.Context(**fields)


def headline(outcome: Outcome, **changes: Any) -> str:
    return texts.describe_error(outcome, context(**changes)).headline


FRAME = Frame("/course/double/solution.py", 3, "solve", "  return x[5]  ")


def test_a_failure_renders_its_headline_wrapped_then_its_lines() -> None:
    failure = texts.Failure("word " * 30, ["", "  evidence"])
    assert failure.headline == ("word " * 30).strip()
    assert failure.render() == (
        " ".join(["word"] * 17) + "\n  " + " ".join(["word"] * 13) + "\n\n  evidence\n"
    )
    assert texts.Failure("Multi-line\n   author   text.").headline == "Multi-line author text."
    assert texts.Failure("").render() == "\n"


def test_wrap_keeps_lines_within_the_width() -> None:
    assert words.wrap("aa bb cc", 5) == ["aa bb", "cc"]
    assert words.wrap("aa bb", 5) == ["aa bb"]
    assert words.wrap("toolongword x", 5) == ["toolongword", "x"]
    assert words.wrap("") == []
    assert texts._indent(["a", "", "b"], "> ") == ["> a", "", "> b"]


@pytest.mark.parametrize(
    ("outcome", "words"),
    [
        (
            Outcome("setup", error_type="missing_file"),
            "Create double/solution.py and write solve(x) in it: the exercise looks for your "
            "code in that file.",
        ),
        (
            Outcome("setup", error_type="no_entry", names=("helper", "main")),
            "Define a function named solve in double/solution.py: the grader calls solve(x), "
            "and the file defines helper, main.",
        ),
        (
            Outcome("setup", error_type="no_entry"),
            "Define a function named solve in double/solution.py: the grader calls solve(x), "
            "and the file defines no functions.",
        ),
        (
            Outcome("setup", error_type="not_callable", message="int"),
            "Make solve a function (def solve(x):) in double/solution.py: there it is a int.",
        ),
        (
            Outcome("setup", error_type="signature", message="a, b"),
            "Give solve 1 parameter, in this order: def solve(x). Yours takes (a, b).",
        ),
        (
            Outcome("setup", error_type="signature"),
            "Give solve 1 parameter, in this order: def solve(x). Yours takes (no parameters).",
        ),
        (
            # The limit (the context's 10 s), not how long the case ran until it was stopped.
            Outcome("timeout", seconds=10.4),
            "Make solve finish sooner: it ran longer than 10 s and was stopped. Look for a "
            "loop whose condition never changes, or work that grows much faster than the input.",
        ),
        (
            Outcome("setup", error_type="link", message="double"),
            "Hand in double/solution.py itself, not a link: double is a symbolic link, and the "
            "grader reads only the files you hand in, never what a link points to.",
        ),
        (
            Outcome("setup", error_type="not_file"),
            "Make double/solution.py a plain file with solve(x) in it: there it is a folder or "
            "a device.",
        ),
        (
            Outcome("internal", message="worker lost"),
            "Run the lesson again: the grader itself failed here, not your code (worker lost). "
            "If it happens again, tell your instructor.",
        ),
    ],
)
def test_each_setup_timeout_and_internal_outcome_has_its_words(
    outcome: Outcome, words: str
) -> None:
    assert headline(outcome) == words


def test_the_signature_advice_counts_the_parameters() -> None:
    outcome = Outcome("setup", error_type="signature", message="a")
    assert headline(outcome, inputs={"Q": 1, "K": 2}) == (
        "Give solve 2 parameters, in this order: def solve(Q, K). Yours takes (a)."
    )


@pytest.mark.parametrize(
    ("outcome", "memory", "words"),
    [
        (
            Outcome("died", signal="SIGSEGV"),
            2048.0,
            "Find what crashes Python in your code: the process running solve ended by a "
            "segmentation fault (a crash in native code) before it returned.",
        ),
        (
            Outcome("died", signal="SIGKILL"),
            256.0,
            "Find what crashes Python in your code: the process running solve ended by being "
            "killed (SIGKILL), most often because the system ran out of memory before it "
            "returned. A case may use about 256 MiB.",
        ),
        (
            Outcome("died", signal="SIGKILL"),
            0.0,
            "Find what crashes Python in your code: the process running solve ended by being "
            "killed (SIGKILL), most often because the system ran out of memory before it "
            "returned.",
        ),
        (
            Outcome("died", signal="SIGUSR1"),
            2048.0,
            "Find what crashes Python in your code: the process running solve ended by the "
            "signal SIGUSR1 before it returned.",
        ),
        (
            Outcome("died", message="the worker was stopped"),
            2048.0,
            "Leave the grader's machinery alone: your code broke the process that runs it (the "
            "worker was stopped).",
        ),
        (
            Outcome("died", exit_code=0),
            2048.0,
            "Remove the call that ends the process (os._exit or similar): it stopped with exit "
            "code 0 before solve returned an answer.",
        ),
        (
            Outcome("died"),
            2048.0,
            "Remove the call that ends the process (os._exit or similar): it stopped with exit "
            "code unknown before solve returned an answer.",
        ),
    ],
)
def test_a_process_that_died_says_how(outcome: Outcome, memory: float, words: str) -> None:
    assert headline(outcome, memory_mb=memory) == words


def raised(error_type: str, message: str = "", **changes: Any) -> texts.Failure:
    fields: dict[str, Any] = {"error_type": error_type, "message": message, "phase": "call"}
    fields.setdefault("frames", (FRAME,))
    fields.update(changes)
    return texts.describe_error(Outcome("raised", **fields), context())


def test_not_implemented_points_at_the_line_to_replace() -> None:
    assert raised("NotImplementedError").headline == (
        "Write your solution: double is not implemented yet. Open double/solution.py and "
        "replace `raise NotImplementedError` (line 3) in solve with your code."
    )
    assert raised("NotImplementedError", frames=()).headline == (
        "Write your solution: double is not implemented yet. Open double/solution.py and "
        "replace `raise NotImplementedError` in solve with your code."
    )


@pytest.mark.parametrize("name", ["ValueError", "SyntaxError", "RuntimeError"])
def test_an_exceptions_message_over_lines_never_starts_a_line_of_its_own(name: str) -> None:
    """With --lesson-show-failures a class's failures share the instructor's terminal: a
    message's lines that look like the grader's (a summary, a verdict) stay indented under it."""
    fake = "bad\n==== lessons ====\nlessons: 1/1 passed [##########]\n\nbob   8 of 8 cases"
    text = raised(name, fake).render()
    lines = text.splitlines()
    assert "==== lessons ====" in text and "bob   8 of 8 cases" in text
    assert all(line[:1] in ("", " ") for line in lines[1:]), text
    evidence = lines[lines.index("") :]  # the headline folds the message into its sentence
    said = [line for line in evidence if "lessons: 1/1" in line or "==== lessons" in line]
    assert said
    quoted = next(line for line in lines if line.lstrip().startswith(f"{name}: bad"))
    indent = len(quoted) - len(quoted.lstrip())
    assert all(len(line) - len(line.lstrip()) > indent for line in said), text


@pytest.mark.parametrize("name", ["SyntaxError", "IndentationError", "TabError"])
def test_a_syntax_error_raised_by_a_call_is_told_as_any_exception(name: str) -> None:
    """A red team's `raise SyntaxError(msg, (file, -186, ...))` in solve was told as a file
    Python cannot read, at the line it chose: the file loaded, so it is a call's exception."""
    failure = raised(name, "bad")
    assert failure.headline.startswith(f"solve raised {name} at line 3 of solution.py")
    assert "Fix the syntax error" not in failure.render()


@pytest.mark.parametrize("name", ["SyntaxError", "IndentationError", "TabError"])
def test_a_syntax_error_shows_the_file_line_and_code(name: str) -> None:
    failure = raised(name, "invalid \x1b[31msyntax", phase="import")
    assert failure.headline == (
        f"Fix the syntax error in double/solution.py: Python cannot read line 3 ({name}: "
        "invalid [31msyntax)."
    ).replace("[31m", "")
    assert failure.lines == [
        "",
        "  double/solution.py, line 3",
        "      return x[5]",
        f"  {name}: invalid [31msyntax".replace("[31m", ""),
    ]
    assert raised(name, "bad", frames=(), phase="import").lines == ["", f"  {name}: bad"]
    no_code = raised(
        name, "bad", frames=(Frame("/course/double/solution.py", 2, "", ""),), phase="import"
    )
    assert no_code.lines == ["", "  double/solution.py, line 2", f"  {name}: bad"]


@pytest.mark.parametrize(
    ("name", "call"),
    [
        ("Skipped", "pytest.skip()"),
        ("XFailed", "pytest.xfail()"),
        ("Exit", "pytest.exit()"),
        ("Failed", "pytest.fail()"),
        ("Other", "pytest (Other)"),
    ],
)
def test_pytest_outcomes_in_learner_code_count_as_failed(name: str, call: str) -> None:
    assert raised(name, details={"pytest": True}).headline == (
        f"Remove the call to {call} from your code: graded code cannot skip, fail or stop the "
        "grader, so this case counts as failed."
    )


def test_exits_interrupts_memory_and_recursion_have_their_own_words() -> None:
    assert raised("SystemExit", details={"code": 3}).headline == (
        "Remove the call to sys.exit(), exit() or quit() from your code: it ended the case "
        "(exit code 3) before solve returned an answer."
    )
    assert raised("KeyboardInterrupt").headline == (
        "Remove the code that raises KeyboardInterrupt: it stopped solve before it returned an "
        "answer."
    )
    memory = raised("MemoryError")
    assert memory.headline == (
        "Use less memory: your code asked for more than the 2048 MiB a case may use. Look for "
        "a tensor or list that grows far beyond the size of the inputs."
    )
    assert memory.lines == [
        "",
        "  double/solution.py, line 3, in solve",
        "      return x[5]",
        "  MemoryError",
    ]
    torch_memory = raised("RuntimeError", "DefaultCPUAllocator: can't allocate memory: 8 GB")
    assert torch_memory.headline.startswith("Use less memory: your code asked for more than")
    no_cap = texts.describe_error(Outcome("raised", error_type="MemoryError"), context(memory_mb=0))
    assert no_cap.headline.startswith("Use less memory: your code asked for more than the memory.")
    recursion = raised("RecursionError", "maximum recursion depth exceeded")
    assert recursion.headline == (
        "Stop the recursion: solve called a function that calls itself without end."
    )
    assert recursion.lines[-1] == "  RecursionError: maximum recursion depth exceeded"


def test_an_exceptions_headline_is_whole_up_to_the_limit_every_report_carries() -> None:
    from pytest_lessons.core.results import CaseResult
    from pytest_lessons.reports import formats

    shape = "Expected size for first two dimensions of batch2 tensor to be: [2, 3] but got: [2, 4]"
    assert raised("RuntimeError", shape + "\n  (more)").headline == (
        f"solve raised RuntimeError at line 3 of solution.py: {shape} (more)."
    )
    loading = raised("ValueError", "bad", phase="import")
    assert loading.headline == "solution.py raised ValueError at line 3 while it was loading: bad."
    long = raised("ValueError", "word " * 200).headline
    assert len(long) <= texts.HEADLINE_LIMIT and long.endswith("word…")
    assert long.startswith("solve raised ValueError at line 3 of solution.py: word word")
    # GitHub Classroom's message keeps the whole of it, as every other report does.
    result = CaseResult("double", "Double", "/c/double/exercise.toml", "error", headline=long)
    assert formats.classroom([result])["tests"][0]["message"] == long
    # The lesson's own code is named as the author's, never "your code".
    author = texts.Context(**{**context().__dict__, "solution": Path("/course/double/ref.py")})
    author = texts.Context(**{**author.__dict__, "author": True})
    crash = Outcome(
        "raised",
        error_type="KeyError",
        message="'x'",
        phase="call",
        frames=(Frame("/course/double/ref.py", 4, "solve", "return {}['x']"),),
        output="hi",
    )
    text = texts.describe(crash, None, author).render()
    assert text.startswith("solve raised KeyError at line 4 of ref.py: 'x'.")
    assert "your code" not in text and "the lesson's ref.py printed" in text
    died = Outcome("died", signal="SIGSEGV")
    assert "your code" not in texts.describe(died, None, author).render()


def test_a_debugger_that_quit_says_how_to_debug() -> None:
    # Issue 22: breakpoint() in graded code gave a bare BdbQuit.
    quit_ = Outcome(
        "raised", error_type="BdbQuit", phase="call", frames=(FRAME,), details={"module": "bdb"}
    )
    assert texts.describe_error(quit_, context()).headline == (
        "Remove breakpoint() or pdb.set_trace() from double/solution.py (the debugger stopped "
        "at line 3), or debug with `pytest double --lesson-isolation=off -s`: graded code runs "
        "isolated, where a debugger has no terminal to read from, so it quit."
    )
    cell = context(show=lambda path: "your cell" if str(path) == str(SOLUTION) else str(path))
    in_a_cell = texts.describe_error(quit_, cell).headline
    assert in_a_cell.startswith("Remove breakpoint() or pdb.set_trace() from your cell")
    assert "pytest" not in in_a_cell


def test_an_exception_shows_the_learners_frames_and_known_advice() -> None:
    frames = (Frame("/course/double/helper.py", 7, "<module>", ""), FRAME)
    failure = raised("IndexError", "list index out of range", frames=frames)
    # One whole sentence: the exception, its message and the learner's last line (issue 22).
    assert failure.headline == (
        "solve raised IndexError at line 3 of solution.py: list index out of range."
    )
    assert failure.lines == [
        "",
        "  double/helper.py, line 7",
        "  double/solution.py, line 3, in solve",
        "      return x[5]",
        "  IndexError: list index out of range",
    ]
    view = raised("RuntimeError", "view size is not compatible with input tensor's size and stride")
    assert view.lines[-3:] == [
        "",
        "  After a transpose the tensor's values are no longer stored in row order, so .view cannot",
        "  regroup them. Use .reshape, which copies when it must.",
    ]
    importing = raised("ModuleNotFoundError", "No module named 'numpyy'", phase="import")
    assert importing.headline == (
        "solution.py raised ModuleNotFoundError at line 3 while it was loading: No module named "
        "'numpyy'."
    )
    assert importing.lines[-3:-1] == [
        "",
        "  Check the module's name, then install it in the Python that runs pytest or do without",
    ]
    blank = raised("ValueError", "   ")
    assert blank.lines[-1] == "  ValueError"


@pytest.mark.parametrize(
    ("message", "start"),
    [
        ("expected scalar type Double but found Float", "Two tensors in one operation have"),
        ("mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3)", "Two tensors' shapes do not"),
        ("shape '[2, -1, 3]' is invalid for input of size 7", "The sizes you reshape to must"),
    ],
)
def test_known_torch_errors_are_explained(message: str, start: str) -> None:
    lines = raised("RuntimeError", message).lines
    advice = lines[lines.index("") if lines.count("") == 1 else len(lines) - 1 :]
    assert any(line.startswith("  " + start) for line in lines), advice


def test_a_wrong_answer_shows_shapes_counts_the_worst_gap_and_a_table() -> None:
    comparison = compare(
        [[1.0, 2.0, 3.0]] * 7, [[1.0, 2.0, 3.5]] * 6 + [[1.0, 9.0, 3.0]], 1e-4, 1e-4
    )
    failure = texts.describe_mismatch(comparison, context())
    assert failure.headline == comparison.headline
    assert failure.lines == [
        "",
        "  shape         expected [7, 3]   got [7, 3]",
        "  mismatched    7 of 21 values (33%)",
        "  largest gap   at [6, 1]: got 9, expected 2 (allowed ±0.0003)",
        "",
        "    at       got   expected",
        "    [0, 2]   3.5   3",
        "    [1, 2]   3.5   3",
        "    [2, 2]   3.5   3",
        "    [3, 2]   3.5   3",
        "    [4, 2]   3.5   3",
        "    ... and 2 more",
        "",
        "  where it differs: x is outside tolerance",
        "       0 1 2",
        "    0  . . x",
        "    1  . . x",
        "    2  . . x",
        "    3  . . x",
        "    4  . . x",
        "    5  . . x",
        "    6  . x .",
    ]


def test_a_shape_mismatch_shows_only_the_shapes() -> None:
    comparison = compare([1.0, 2.0], [[1.0, 2.0]], 1e-4, 1e-4)
    # An extra size-1 dimension gets its own headline; the notes say only that the values hold.
    assert texts.describe_mismatch(comparison, context()).lines == [
        "  Your values are right, in the right order; only the shape is not.",
        "",
        "  shape   expected [2]   got [1, 2]",
    ]
    cut = compare([1.0, 2.0], None, 1e-4, 1e-4)
    assert texts.describe_mismatch(cut, context()).lines == ["", "  shape   expected [2]   got -"]
    # One number is told as one number (issue 37, item 13): no shape, no "at []".
    number = compare(1.0, 2.0, 1e-4, 1e-4)
    assert number.headline == "Check your calculation: your number is 2, the expected one 1."
    assert texts.describe_mismatch(number, context()).lines == [
        "",
        "  got        2",
        "  expected   1 (allowed ±0.0002)",
    ]


def test_numbers_that_print_alike_are_shown_in_full() -> None:
    comparison = compare([1.0000001, 5.0], [1.0000002, 5.0], 0, 0)
    assert "got 1.0000002, expected 1.0000001 (allowed ±0)" in "\n".join(
        texts.describe_mismatch(comparison, context()).lines
    )


def test_a_nan_gap_has_no_tolerance_to_show() -> None:
    comparison = compare([1.0, 2.0], [1.0, float("nan")], 1e-4, 1e-4)
    if comparison.worst is not None:
        text = "\n".join(texts.describe_mismatch(comparison, context()).lines)
        assert "(allowed" not in text.split("largest gap")[1].splitlines()[0]


def test_a_diagnosis_speaks_first_and_a_repeat_points_back() -> None:
    comparison = compare([[1.0, 2.0], [3.0, 4.0]], [[1.0, 3.0], [2.0, 4.0]], 1e-4, 1e-4)
    found = Diagnosis("layout", "Swap rows and columns. Why it matters.", details=("Detail one.",))
    failure = texts.describe_mismatch(comparison, context(), found)
    assert failure.headline == "Swap rows and columns. Why it matters."
    assert failure.lines[:2] == ["  Detail one.", ""]
    again = texts.describe_mismatch(comparison, context(), found, repeat_of="case 1")
    assert again.headline == "Swap rows and columns."
    assert again.lines[:2] == ["  (the same mistake as case 1; its explanation is there)", ""]


def test_a_diagnosis_keeps_the_comparisons_own_advice_for_other_problems() -> None:
    tensor = {"$": "tensor", "type": "torch.Tensor", "shape": [2], "values": [1.0, 2.0]}
    comparison = compare([1.0, 2.0], tensor, 1e-4, 1e-4)
    found = Diagnosis("x", "Watch out: this.")
    lines = texts.describe_mismatch(comparison, context(), found).lines
    assert lines[0].startswith("  Return plain Python numbers: add .tolist()")


def test_the_map_marks_wrong_values_with_x() -> None:
    comparison = compare([1.0, 2.0], [1.0, 3.0], 1e-4, 1e-4)
    plain = texts.mismatch_map(comparison)
    assert plain == ["", "  where it differs: x is outside tolerance", "       0 1", "    0  . x"]


def test_the_map_covers_the_last_two_dimensions_and_only_small_grids() -> None:
    expected = [[[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0], [7.0, 8.0]]]
    got = [[[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0], [7.0, 0.0]]]
    lines = texts.mismatch_map(compare(expected, got, 1e-4, 1e-4))
    assert lines[1] == (
        "  where it differs (last two dimensions; x if wrong in any slice): x is outside tolerance"
    )
    assert lines[-3:] == ["       0 1", "    0  . .", "    1  . x"]
    wide = [[0.0] * 25, [0.0] * 25]
    assert texts.mismatch_map(compare(wide, [[1.0] * 25, [0.0] * 25], 0, 0)) == []
    tall = [[0.0]] * 13
    assert texts.mismatch_map(compare(tall, [[1.0]] + [[0.0]] * 12, 0, 0)) == []
    assert texts.mismatch_map(compare([[0.0]] * 12, [[1.0]] + [[0.0]] * 11, 0, 0)) != []
    assert texts.mismatch_map(compare([0.0] * 24, [1.0] + [0.0] * 23, 0, 0)) != []
    assert texts.mismatch_map(compare([0.0], [1.0], 0, 0)) == []
    assert texts.mismatch_map(compare(0.0, 1.0, 0, 0)) == []
    assert texts.mismatch_map(compare([0.0, 1.0], [0.0, 1.0], 0, 0)) == []
    ten = texts.mismatch_map(compare([[0.0] * 11] * 11, [[1.0] * 11] + [[0.0] * 11] * 10, 0, 0))
    assert ten[2] == "         0  1  2  3  4  5  6  7  8  9 10"
    assert ten[3] == "     0   x  x  x  x  x  x  x  x  x  x  x"
    assert ten[-1] == "    10   .  .  .  .  .  .  .  .  .  .  ."


def test_abbreviate_cuts_long_inputs_with_their_shape() -> None:
    assert words.abbreviate([1, 2]) == "[1, 2]"
    long = [[1.5] * 40] * 3
    text = words.abbreviate(long)
    assert len(text) == words.INPUT_WIDTH and text.endswith(" ... (shape [3, 40])")
    assert words.abbreviate("x" * 200, 20) == "'xxxxxxxxxxxxxxx ..."
    assert words.abbreviate([[]] * 60, 30).endswith(" ... (shape [60, 0])")


def test_an_input_read_from_a_file_is_named_by_its_file_and_key() -> None:
    table = {"file": "../fixtures/tiny.safetensors", "key": "wte"}
    assert words.abbreviate(table) == '<"wte" in ../fixtures/tiny.safetensors>'
    assert words.abbreviate({"file": "corpus.txt"}) == "<corpus.txt>"
    # Any other table is shown as it is.
    assert words.abbreviate({"file": "a.txt", "other": 1}) == "{'file': 'a.txt', 'other': 1}"
    assert words.abbreviate({"file": 3}) == "{'file': 3}"
    exact = "x" * 158
    assert words.abbreviate(exact) == repr(exact)


def test_context_lines_show_inputs_file_and_printed_output() -> None:
    outcome = Outcome("returned", output="hello\nworld\n", output_cut=12)
    assert texts.context_lines(outcome, context(inputs={"Q": [1], "Kv": 2})) == [
        "",
        "  inputs     Q  = [1]",
        "             Kv = 2",
        "  your code  double/solution.py",
        "",
        "  what your code printed:",
        "  | hello",
        "  | world",
        "  [… 12 bytes cut]",
    ]
    quiet = texts.context_lines(Outcome("returned"), context(), show_inputs=False)
    assert quiet == ["", "  your code  double/solution.py"]
    assert texts.context_lines(Outcome("returned"), context(inputs={})) == quiet
    only_cut = texts.context_lines(Outcome("returned", output_cut=3), context(inputs={}))
    assert only_cut[2:] == ["", "  what your code printed:", "  | ", "  [… 3 bytes cut]"]


def test_describe_adds_the_context_except_for_internal_failures() -> None:
    comparison = compare([1.0, 2.0], [1.0, 3.0], 1e-4, 1e-4)
    failure = texts.describe(Outcome("returned"), comparison, context())
    assert failure.lines[-2:] == ["  inputs     x = [1, 2]", "  your code  double/solution.py"]
    internal = texts.describe(Outcome("internal", message="lost"), None, context())
    assert internal.lines == []
    timeout = texts.describe(Outcome("timeout", seconds=1), None, context())
    assert timeout.lines[-1] == "  your code  double/solution.py"
    found = Diagnosis("d", "Do this. Because.")
    again = texts.describe(Outcome("returned"), comparison, context(), found, "case 1")
    assert again.headline == "Do this."


def hidden(outcome: Outcome, comparison: Any = None, diagnosis: Any = None) -> str:
    return texts.describe_hidden(
        outcome, comparison, context(), "hidden case 3", diagnosis
    ).render()


NOTICE = "  Its inputs and expected answer are not shown: it is a hidden case.\n"


def test_a_hidden_case_says_what_kind_of_failure_and_nothing_more() -> None:
    values = compare([1.0, 2.0], [1.0, 3.0], 1e-4, 1e-4)
    assert hidden(Outcome("returned"), values) == (
        "Hidden case 3 failed: your answer is wrong.\n\n" + NOTICE
    )
    nan = compare([1.0, 2.0], [1.0, float("nan")], 1e-4, 1e-4)
    assert hidden(Outcome("returned"), nan).startswith(
        "Hidden case 3 failed: your answer is wrong."
    )
    shape = compare([1.0, 2.0], [1.0], 1e-4, 1e-4)
    assert hidden(Outcome("returned"), shape).startswith(
        "Hidden case 3 failed: your answer does not have the expected type or shape.\n"
    )
    assert hidden(Outcome("returned")).startswith("Hidden case 3 failed: your answer is wrong.")
    error = Outcome("raised", error_type="ValueError", message="[7777]", frames=(FRAME,))
    assert hidden(error) == (
        "Hidden case 3 failed: your code raised ValueError in double/solution.py.\n\n" + NOTICE
    )
    assert hidden(Outcome("raised", error_type="ValueError")).startswith(
        "Hidden case 3 failed: your code raised ValueError.\n"
    )
    assert hidden(Outcome("timeout", seconds=10.2)).startswith(
        "Hidden case 3 failed: solve ran longer than 10 s and was stopped.\n"
    )
    assert hidden(Outcome("died", exit_code=1)).startswith(
        "Hidden case 3 failed: the process running solve ended before it returned.\n"
    )
    assert hidden(Outcome("internal")).startswith(
        "Hidden case 3 failed: the grader itself failed on it, not your code.\n"
    )
    assert hidden(Outcome("setup", error_type="missing_file")).startswith(
        "Create double/solution.py"
    )
    assert NOTICE not in hidden(Outcome("setup", error_type="missing_file"))


def test_a_hidden_case_shows_a_watch_out_only_when_it_carries_no_values() -> None:
    values = compare([1.0, 2.0], [1.0, 3.0], 1e-4, 1e-4)
    watch = Diagnosis("w", "Watch out: multiply by two, " + "not by three " * 8, kind="watch_out")
    text = hidden(Outcome("returned"), values, watch)
    assert text.startswith(
        "Hidden case 3 failed: your answer is wrong.\n\nWatch out: multiply by two, not by three"
    )
    assert "not by\n  three not by three" in text and text.endswith("three\n\n" + NOTICE)
    telling = Diagnosis("w", "Watch out: 7777.", kind="watch_out", shows_values=True)
    assert "7777" not in hidden(Outcome("returned"), values, telling)
    detector = Diagnosis("rows", "Look at row 1.", kind="detector")
    assert "row 1" not in hidden(Outcome("returned"), values, detector)


def test_describe_keeps_the_evidence_then_adds_the_context() -> None:
    comparison = compare([1.0, 2.0], [1.0, 3.0], 1e-4, 1e-4)
    found = Diagnosis("d", "Do this. Then that. Because.")
    evidence = texts.describe_mismatch(comparison, context(), found).lines
    failure = texts.describe(Outcome("returned"), comparison, context(), found)
    assert failure.headline == "Do this. Then that. Because."
    assert failure.lines == evidence + texts.context_lines(Outcome("returned"), context())
    assert texts.describe(Outcome("returned"), comparison, context(), found, "case 2").headline == (
        "Do this."
    )
    odd = Diagnosis("d", ". Odd.")
    assert texts.describe(Outcome("returned"), comparison, context(), odd, "case 2").headline == "."
    whole = Diagnosis("d", "No full stop")
    assert texts.describe(Outcome("returned"), comparison, context(), whole, "case 2").headline == (
        "No full stop"
    )


def test_printed_output_keeps_its_spaces_and_letters() -> None:
    outcome = Outcome("returned", output="fooX  \n\n")
    assert texts.context_lines(outcome, context(inputs={}))[2:] == [
        "",
        "  what your code printed:",
        "  | fooX  ",
    ]


def test_an_abbreviated_input_gives_the_shape_of_its_first_row() -> None:
    text = words.abbreviate([[0] * 100, [0] * 2])
    assert text.endswith(" ... (shape [2, 100])")
    assert words.abbreviate([[0] * 100]).endswith(" ... (shape [1, 100])")


def denied(details: dict[str, Any], error_type: str = "PermissionError") -> texts.Failure:
    outcome = Outcome(
        "raised",
        error_type=error_type,
        message="[Errno 13] Permission denied",
        phase="call",
        frames=(FRAME,),
        details={"denied": details},
    )
    return texts.describe_error(outcome, context())


ALLOWED = (
    "while grading, your code may read only its own file (double/solution.py) and write only in "
    "its temporary folder (TMPDIR)."
)


def test_what_the_sandbox_refused_is_named_with_what_is_allowed() -> None:
    reading = denied({"path": "/course/double/exercise.toml"})
    assert reading.headline == (
        "Remove the code that uses double/exercise.toml: that is not allowed while grading; "
        + ALLOWED
    )
    assert reading.lines == [
        "",
        "  double/solution.py, line 3, in solve",
        "      return x[5]",
        "  PermissionError: [Errno 13] Permission denied",
    ]
    helper = denied({"path": "/course/double/helper.py"}, "ModuleNotFoundError")
    assert helper.headline == (
        "Remove `import helper` and put the code you need in double/solution.py: reading "
        "double/helper.py is not allowed while grading; " + ALLOWED
    )
    assert denied({"action": "signal"}).headline == (
        "Remove the code that signals or controls another process: that is not allowed while "
        "grading. Your code may compute and print, nothing more."
    )
    assert denied({"action": "network"}).headline == (
        "Remove the code that uses the network: connections are not allowed while grading. "
        "Your code may compute and print, nothing more."
    )
    assert denied({}).headline == (
        "Remove the call that the system refused (below): that is not allowed while grading. "
        "Your code may compute and print, nothing more."
    )
    assert denied({"path": None, "action": "other"}).headline == denied({}).headline
    not_a_table = Outcome("raised", error_type="OSError", details={"denied": "yes"}, phase="call")
    assert texts.describe_error(not_a_table, context()).headline == "solve raised OSError."


def test_a_limit_the_case_ran_into_names_the_limit_and_its_setting() -> None:
    from pytest_lessons.isolation.outcome import from_untrusted, over_disk

    limits = {"disk_mb": 8.0, "open_files": 256.0, "processes": 32.0}

    def said(limit: str, **changes: Any) -> str:
        data = {"kind": "raised", "phase": "call", "error_type": "OSError", "frames": []}
        data["details"] = {"limit": limit}
        # Through the untrusted reading a child's result gets: the mark survives it.
        outcome = from_untrusted(json.dumps(data).encode(), 1 << 20)
        return headline(outcome, **{"sandbox_limits": limits, **changes})

    assert said("open_files") == (
        "Close the files you no longer need (a with block closes each one): a case may hold "
        "256 files open at once (--lesson-open-files), and your code opened more."
    )
    assert said("raise:processes") == (
        "Remove the call that raises the process limit: a case may run 32 processes and "
        "threads (--lesson-processes), and cannot raise it."
    )
    assert said("raise:other").startswith("Remove the call that raises a limit: the run sets")
    # Without the sandbox's limits there is no number to name.
    assert said("processes", sandbox_limits={}) == (
        "Start fewer processes or threads: the system refused your code another one."
    )
    # A mark the child never writes is not believed.
    assert said("everything") == "solve raised OSError."
    # The runner's count, on a hidden case too.
    over = over_disk(9 << 20, 8 << 20)
    assert headline(over, sandbox_limits=limits) == (
        "Write less to disk: a case's files may take 8 MiB in all (--lesson-disk), and your "
        "code left 9.0 MiB."
    )
    hidden = texts.describe_hidden(over, None, context(sandbox_limits=limits), "case 3")
    assert hidden.headline == (
        "Case 3 failed: its files took more than the 8 MiB a case may write (--lesson-disk)."
    )


# --- the map's colours, fault keys, printed output and several outputs --------------------------


def paint(text: str, colour: str) -> str:
    return f"<{colour}>{text}</>"


def test_only_the_cells_of_a_mismatch_map_are_painted() -> None:
    comparison = compare([[1.0, 2.0], [3.0, 4.0]], [[1.0, 9.0], [3.0, 4.0]], 1e-4, 1e-4)
    failure = texts.describe_mismatch(comparison, context())
    printed = texts.printed_lines("    0  . x\nbye", 0)  # learner output that looks like a row
    lines = ["    1  x .", *failure.lines, *printed]
    assert (
        texts.colour_map(lines, paint)
        == [
            "    1  x .",  # before any map: as it is
            *failure.lines[:-4],
            "  where it differs: x is outside tolerance",
            "       0 1",  # the column header: as it is
            "    0  <green>.</> <red>x</>",
            "    1  <green>.</> <green>.</>",
            "",
            "  what your code printed:",
            "  |     0  . x",
            "  | bye",
        ]
    )


def test_a_map_ends_at_a_line_that_is_not_one_of_its_rows() -> None:
    title = texts.MAP_TITLE + " (last two dimensions; x if wrong in any slice): x is outside"
    lines = [title, "       0 1", "    0  x .", "    z  x .", "    1  x ."]
    assert texts.colour_map(lines, paint) == [
        title,
        "       0 1",
        "    0  <red>x</> <green>.</>",
        "    z  x .",
        "    1  x .",
    ]
    other = [texts.MAP_TITLE, "       0", "    0  x?", "    1  x"]
    assert texts.colour_map(other, paint) == other
    blank = [texts.MAP_TITLE, "       0", "", "    0  x"]
    assert texts.colour_map(blank, paint) == blank


@pytest.mark.parametrize(
    ("outcome", "key"),
    [
        (Outcome("setup", error_type="missing_file"), "setup missing_file"),
        (Outcome("timeout", seconds=10.0), "timeout"),
        (Outcome("died", signal="SIGKILL"), "died SIGKILL"),
        (Outcome("died", exit_code=3, message="worker lost"), "died 3 worker lost"),
        (
            Outcome("raised", error_type="KeyError", frames=(FRAME,)),
            "raised KeyError at solution.py:3",
        ),
        (Outcome("raised", error_type="KeyError"), "raised KeyError"),
        (Outcome("internal", message="x"), ""),
        (Outcome("returned", answer=[1.0]), ""),
    ],
)
def test_a_fault_key_names_a_cause_no_input_changes(outcome: Outcome, key: str) -> None:
    assert texts.fault_key(outcome, None) == key


def test_a_returned_answers_fault_key_names_its_problem_not_its_values() -> None:
    returned = Outcome("returned", answer=None)
    tensor = {"$": "tensor", "type": "torch.Tensor", "shape": [2], "values": [1.0, 2.0]}
    assert texts.fault_key(returned, compare([1.0, 2.0], tensor, 1e-4, 1e-4)) == "returned tensor"
    assert texts.fault_key(returned, compare([1.0, 2.0], [[1.0, 2.0]], 1e-4, 1e-4)) == (
        "returned an extra size-1 dimension"
    )
    missing = texts.fault_key(returned, compare([[1.0, 2.0]], [1.0, 2.0], 1e-4, 1e-4))
    assert missing == "returned a missing size-1 dimension"
    for right_kind in ([1.0, 3.0], [1.0, 2.0, 3.0], [1.0, float("nan")], [1.0, 2.0]):
        assert texts.fault_key(returned, compare([1.0, 2.0], right_kind, 1e-4, 1e-4)) == ""
    several = compare_outputs({"a": 1.0, "b": [1.0]}, [1.0, tensor], ["a", "b"], 1e-4, 1e-4)
    assert texts.fault_key(returned, several) == "returned tensor in b"
    squeezed = compare_outputs({"a": 1.0, "b": [1.0]}, [1.0, [[1.0]]], ["a", "b"], 1e-4, 1e-4)
    assert texts.fault_key(returned, squeezed) == "returned an extra size-1 dimension in b"


def test_a_repeated_failure_keeps_its_first_sentence_and_points_back() -> None:
    again = texts.repeated(texts.Failure("Do this. Because of that.", ["  evidence"]), "case 1")
    assert again.headline == "Do this."
    assert again.lines == ["  (the same problem as case 1; its explanation is there)"]


def test_long_printed_output_shows_its_first_and_last_lines() -> None:
    output = "\n".join(f"line {i}" for i in range(1, 9)) + "\n\n"
    assert texts.printed_lines(output, 0, limit=5) == [
        "",
        "  what your code printed:",
        "  | line 1",
        "  | line 2",
        "  [… 3 lines not shown here]",
        "  | line 6",
        "  | line 7",
        "  | line 8",
    ]
    assert texts.printed_lines(output, 12, limit=8)[2:] == [
        *(f"  | line {i}" for i in range(1, 9)),
        "  [… 12 bytes cut]",
    ]
    assert texts.printed_lines("", 7) == [
        "",
        "  what your code printed:",
        "  | ",
        "  [… 7 bytes cut]",
    ]
    assert texts.printed_lines("", 0) == []
    assert texts.printed_lines("MAX\n\n", 0)[2:] == ["  | MAX"]
    assert len(texts.printed_lines("x\n" * 21, 0)) == 2 + 20 + 1
    assert len(texts.printed_lines("x\n" * 20, 0)) == 2 + 20


def test_once_enough_output_was_shown_a_notice_replaces_it() -> None:
    printed = Outcome("raised", error_type="E", output="hello\n")
    notice = [
        "",
        "  what your code printed: not shown, because this exercise's earlier cases already "
        "showed as much output as one run shows.",
    ]
    lines = texts.context_lines(printed, context(), output_limit=0)
    assert lines == ["", "  inputs     x = [1, 2]", "  your code  double/solution.py", *notice]
    cut = Outcome("raised", error_type="E", output="", output_cut=9)
    assert texts.context_lines(cut, context(), output_limit=0)[-2:] == notice
    silent = Outcome("raised", error_type="E")
    assert texts.context_lines(silent, context(), output_limit=0)[-1] == (
        "  your code  double/solution.py"
    )
    one_line = texts.context_lines(printed, context(), output_limit=1)
    assert one_line[-3:] == ["", "  what your code printed:", "  | hello"]
    many = Outcome("raised", error_type="E", output="a\nb\nc\n")
    assert texts.context_lines(many, context(), output_limit=2)[-3:] == [
        "  | a",
        "  [… 1 lines not shown here]",
        "  | c",
    ]
    failure = texts.describe(many, None, context(), output_limit=2)
    assert failure.lines[-3:] == ["  | a", "  [… 1 lines not shown here]", "  | c"]


def test_inputs_are_aligned_under_one_label() -> None:
    lines = texts.context_lines(Outcome("raised"), context(inputs={"x": 1, "longer": [2]}))
    assert lines[:3] == ["", "  inputs     x      = 1", "             longer = [2]"]
    hidden = texts.context_lines(Outcome("raised"), context(), show_inputs=False)
    assert hidden == ["", "  your code  double/solution.py"]


def test_a_wrong_output_of_several_is_named_in_the_diagnosis() -> None:
    several = compare_outputs(
        {"a": 1.0, "b": [1.0, 2.0]}, [1.0, [2.0, 1.0]], ["a", "b"], 1e-4, 1e-4
    )
    watch = Diagnosis("swap", "Watch out: swap them. Because.", kind="watch_out")
    generic = Diagnosis("shuffled", "Put your values in place. Because.")
    assert texts.describe_mismatch(several, context(), watch).headline == (
        "Watch out, in b (value 2 of 2): swap them. Because."
    )
    assert texts.describe_mismatch(several, context(), generic).headline == (
        "In b (value 2 of 2): Put your values in place. Because."
    )
    again = texts.describe_mismatch(several, context(), watch, repeat_of="case 1")
    assert again.headline == "Watch out, in b (value 2 of 2): swap them."
    assert texts.describe_mismatch(several, context()).headline == several.headline


def test_every_detail_of_a_diagnosis_is_shown_then_the_comparisons_advice() -> None:
    tensor = {"$": "tensor", "type": "torch.Tensor", "shape": [2], "values": [1.0, 2.0]}
    comparison = compare([1.0, 2.0], tensor, 1e-4, 1e-4)
    found = Diagnosis("x", "Watch out: this.", details=("One.", "Two."))
    lines = texts.describe_mismatch(comparison, context(), found).lines
    assert lines[:3] == ["  One.", "  Two.", "  " + words.wrap(comparison.headline)[0]]
    shape = compare([1.0, 2.0], [[1.0], [2.0]], 1e-4, 1e-4)
    assert comparison.problem == "tensor" and shape.problem == "shape"
    lines = texts.describe_mismatch(shape, context(), Diagnosis("x", "Watch out: this.")).lines
    assert not any(shape.headline[:20] in line for line in lines)


def test_the_table_says_how_many_more_rows_are_not_listed() -> None:
    five = compare([1.0] * 5, [2.0] * 5, 1e-4, 1e-4)
    assert not any("more" in line for line in texts.describe_mismatch(five, context()).lines)
    six = compare([1.0] * 6, [2.0] * 6, 1e-4, 1e-4)
    assert "    ... and 1 more" in texts.describe_mismatch(six, context()).lines


def test_numbers_that_print_alike_are_shown_in_full_in_the_table_too() -> None:
    comparison = compare([1.0000001, 5.0], [1.0000002, 5.0], 0, 0)
    lines = texts.describe_mismatch(comparison, context()).lines
    assert "    [0]   1.0000002   1.0000001" in lines


def test_a_nan_gap_line_in_full() -> None:
    comparison = compare([1.0, 2.0], [1.0, float("nan")], 1e-4, 1e-4)
    lines = texts.describe_mismatch(comparison, context()).lines
    assert "  largest gap   at [1]: got nan, expected 2" in lines


def test_wrap_defaults_to_88_columns_and_render_drops_trailing_blank_lines() -> None:
    assert words.wrap("x" * 85 + " yy") == ["x" * 85 + " yy"]
    assert words.wrap("x" * 86 + " yy") == ["x" * 86, "yy"]
    assert words.wrap("aa bb", 2) == ["aa", "bb"]
    assert texts.Failure("Do it.", ["", "  a", "", ""]).render() == "Do it.\n\n  a\n"


def test_a_known_error_shows_the_traceback_then_the_advice() -> None:
    message = "view size is not compatible with input tensor's size and stride"
    outcome = Outcome("raised", error_type="RuntimeError", message=message, frames=(FRAME,))
    lines = texts.describe_error(outcome, context()).lines
    assert lines[:5] == [
        "",
        "  double/solution.py, line 3, in solve",
        "      return x[5]",
        f"  RuntimeError: {message}",
        "",
    ]
    assert lines[5].startswith("  After a transpose")
    recursion = Outcome("raised", error_type="RecursionError", frames=(FRAME,))
    assert texts.describe_error(recursion, context()).lines[:2] == [
        "",
        "  double/solution.py, line 3, in solve",
    ]


def test_a_hidden_failure_in_one_output_of_several_says_which() -> None:
    several = compare_outputs({"a": 1.0, "b": [1.0]}, [1.0, [2.0]], ["a", "b"], 1e-4, 1e-4)
    failure = texts.describe_hidden(Outcome("returned"), several, context(), "hidden case 3")
    assert failure.headline == "Hidden case 3 failed: your answer is wrong (in b)."


def test_a_wide_map_is_painted_too() -> None:
    want = [float(i) for i in range(11)]
    comparison = compare(want, [*want[:10], 99.0], 1e-4, 1e-4)
    lines = texts.mismatch_map(comparison)
    assert lines[-1] == "    0   .  .  .  .  .  .  .  .  .  .  x"
    painted = texts.colour_map(lines, paint)[-1]
    assert painted.startswith("    0   <green>.</>  <green>.</>") and painted.endswith("<red>x</>")


def test_a_path_is_shown_relative_to_where_pytest_runs_as_the_system_writes_it() -> None:
    start = r"C:\Users\José\José's course"
    shown = frontend.shown_path(start + r"\split_heads\solution.py", start, ntpath)
    assert shown == r"split_heads\solution.py"
    assert (
        frontend.shown_path(r"D:\split_heads\solution.py", start, ntpath)
        == r"D:\split_heads\solution.py"
    )
    assert frontend.shown_path(Path("/c/a/solution.py"), Path("/c")) == os.path.join(
        "a", "solution.py"
    )


# --- every branch of the refusal words, exactly (the mutation floor of texts) --------------------


def test_a_file_too_large_or_a_link_names_the_file_and_the_size() -> None:
    large = Outcome("setup", error_type="too_large", details={"size": 5 << 20, "limit": 1 << 20})
    assert headline(large) == (
        "Hand in a smaller double/solution.py: the grader reads files of up to 1024 KiB, and "
        "this one is larger."
    )
    assert headline(Outcome("setup", error_type="too_large")).startswith(
        "Hand in a smaller double/solution.py: the grader reads files of up to 0 KiB,"
    )
    # The link is shown as the learner sees paths; without one, the learner's file is named.
    link = Outcome("setup", error_type="link", message="/course/double/elsewhere.py")
    assert headline(link) == (
        "Hand in double/solution.py itself, not a link: double/elsewhere.py is a symbolic link, "
        "and the grader reads only the files you hand in, never what a link points to."
    )
    assert headline(Outcome("setup", error_type="link")).startswith(
        "Hand in double/solution.py itself, not a link: double/solution.py is a symbolic link,"
    )
    # A file with other names in a classmate's folder: the class's unpacking, not theirs.
    shared = Outcome("setup", error_type="link", details={"links": 2, "classmate": True})
    assert headline(shared) == (
        "Ask your instructor to unpack the class's files again: double/solution.py is one file "
        "with a file in another learner's folder (a hard link that an archive made), and the "
        "grader reads neither. Nothing in your own files needs to change."
    )
    own = Outcome("setup", error_type="link", details={"links": 3})
    assert headline(own) == (
        "Hand in double/solution.py itself, not a link: it is a hard link (one file under 3 "
        "names), and the grader reads only the files you hand in, never a file that is also "
        "somewhere else."
    )


def test_a_limit_the_case_ran_into_has_its_words_for_every_limit() -> None:
    limits = {"disk_mb": 8.0, "open_files": 256.0, "processes": 32.0}
    full = context(sandbox_limits=limits)
    none = context(sandbox_limits={}, memory_mb=0.0)
    author = context(sandbox_limits=limits, solution=Path("/course/double/ref.py"), author=True)
    raising = {
        "memory": (
            "the memory limit: a case may use 2048 MiB (--lesson-memory)",
            "the memory limit: the run sets it (--lesson-memory)",
        ),
        "processes": (
            "the process limit: a case may run 32 processes and threads (--lesson-processes)",
            "the process limit: the run sets it (--lesson-processes)",
        ),
        "disk": (
            "the file size limit: a case may write 8 MiB in all (--lesson-disk)",
            "the file size limit: the run sets it (--lesson-disk)",
        ),
        "open_files": (
            "the open file limit: a case may hold 256 files open (--lesson-open-files)",
            "the open file limit: the run sets it (--lesson-open-files)",
        ),
    }
    for name, (set_, unset) in raising.items():
        said = texts.limit_words(f"raise:{name}", full)
        assert said == f"Remove the call that raises {set_}, and cannot raise it", name
        said = texts.limit_words(f"raise:{name}", none)
        assert said == f"Remove the call that raises {unset}, and cannot raise it", name
    for odd in ("raise:other", "raise:", "raise:disk_mb", "raise:other:memory"):
        assert texts.limit_words(odd, full) == (
            "Remove the call that raises a limit: the run sets each limit of a case "
            "(--lesson-memory, --lesson-disk, --lesson-open-files, --lesson-processes), and a "
            "case cannot raise them"
        )
    assert texts.limit_words("processes", full) == (
        "Start fewer processes or threads: a case may run at most 32 at once, itself included "
        "(--lesson-processes), and your code asked for more"
    )
    assert texts.limit_words("processes", author).endswith("and the lesson's ref.py asked for more")
    assert texts.limit_words("processes", author, 5 << 20).endswith("ref.py asked for more")
    assert texts.limit_words("processes", none) == (
        "Start fewer processes or threads: the system refused your code another one"
    )
    assert texts.limit_words("processes", context(sandbox_limits={"open_files": 9.0})) == (
        "Start fewer processes or threads: the system refused your code another one"
    )
    assert texts.limit_words("open_files", author) == (
        "Close the files you no longer need (a with block closes each one): a case may hold 256 "
        "files open at once (--lesson-open-files), and the lesson's ref.py opened more"
    )
    assert texts.limit_words("open_files", none) == (
        "Close the files you no longer need: the system refused your code another one"
    )
    assert texts.limit_words("open_files", context(sandbox_limits={"processes": 9.0})) == (
        "Close the files you no longer need: the system refused your code another one"
    )
    assert texts.limit_words("disk", full) == (
        "Write less to disk: a case's files may take 8 MiB in all (--lesson-disk), and your "
        "code wrote more"
    )
    assert texts.limit_words("disk", author, 3 << 19) == (
        "Write less to disk: a case's files may take 8 MiB in all (--lesson-disk), and the "
        "lesson's ref.py left 1.5 MiB"
    )
    assert texts.limit_words("disk", none, 3 << 19) == (
        "Write less to disk: the system refused to store more of what your code wrote"
    )
    assert texts.limit_words("disk", context(sandbox_limits={"processes": 9.0})) == (
        "Write less to disk: the system refused to store more of what your code wrote"
    )
    # Fractions of a limit are shown as the run set them.
    half = context(sandbox_limits={"disk_mb": 0.5, "open_files": 1.0, "processes": 2.0})
    assert texts.limit_words("raise:disk", half) == (
        "Remove the call that raises the file size limit: a case may write 0.5 MiB in all "
        "(--lesson-disk), and cannot raise it"
    )
    assert "a case may use 1.5 MiB" in texts.limit_words("raise:memory", context(memory_mb=1.5))


def test_a_limit_in_a_raised_exception_or_a_dead_process_is_its_own_failure() -> None:
    limits = {"disk_mb": 8.0, "open_files": 256.0, "processes": 32.0}
    ctx = context(sandbox_limits=limits)
    outcome = Outcome(
        "raised",
        error_type="OSError",
        message="[Errno 24] Too many open files",
        phase="call",
        frames=(FRAME,),
        details={"limit": "open_files"},
    )
    failure = texts.describe_error(outcome, ctx)
    assert failure.headline == texts.limit_words("open_files", ctx) + "."
    assert failure.lines == [
        "",
        "  double/solution.py, line 3, in solve",
        "      return x[5]",
        "  OSError: [Errno 24] Too many open files",
    ]
    # The runner's count of the bytes a case's files took; without it, no count is shown.
    for details, took in [
        ({"limit": "disk", "used": 3 << 19}, "left 1.5 MiB"),
        ({"limit": "disk", "used": 0}, "wrote more"),
        ({"limit": "disk", "used": None}, "wrote more"),
        ({"limit": "disk"}, "wrote more"),
    ]:
        died = Outcome("died", message="its files took more than the disk budget", details=details)
        assert texts.describe_error(died, ctx).headline == (
            f"Write less to disk: a case's files may take 8 MiB in all (--lesson-disk), and your "
            f"code {took}."
        )
        assert texts.describe_error(died, ctx).lines == []
    other = Outcome("died", message="worker lost", details={"limit": "memory"})
    assert texts.describe_error(other, ctx).headline.startswith("Leave the grader's machinery")


def test_a_debugger_that_quit_is_recognised_by_its_name_or_its_module() -> None:
    by_name = Outcome("raised", error_type="BdbQuit", phase="call", frames=(FRAME,))
    by_module = Outcome(
        "raised", error_type="Quit", phase="call", frames=(FRAME,), details={"module": "bdb"}
    )
    words = (
        "Remove breakpoint() or pdb.set_trace() from double/solution.py (the debugger stopped "
        "at line 3), or debug with `pytest double --lesson-isolation=off -s`: graded code runs "
        "isolated, where a debugger has no terminal to read from, so it quit."
    )
    assert headline(by_name) == words
    assert headline(by_module) == words
    assert texts.describe_error(by_name, context()).lines == []
    nowhere = Outcome("raised", error_type="BdbQuit", phase="call")
    assert headline(nowhere) == (
        "Remove breakpoint() or pdb.set_trace() from double/solution.py, or debug with "
        "`pytest double --lesson-isolation=off -s`: graded code runs isolated, where a debugger "
        "has no terminal to read from, so it quit."
    )
    cell = context(show=lambda path: "your cell" if str(path) == str(SOLUTION) else str(path))
    assert texts.describe_error(by_name, cell).headline == (
        "Remove breakpoint() or pdb.set_trace() from your cell (the debugger stopped at line 3), "
        "and debug the function in a cell of its own, without %%lesson: graded code runs "
        "isolated, where a debugger has no terminal to read from, so it quit."
    )
    assert texts.describe_error(nowhere, cell).headline.startswith(
        "Remove breakpoint() or pdb.set_trace() from your cell, and debug the function"
    )
    # Another module's exception of that name is the learner's own: told as any exception.
    other = Outcome("raised", error_type="Quit", phase="call", details={"module": "game"})
    assert headline(other) == "solve raised Quit."


def test_shorten_cuts_at_a_word_past_half_the_limit_and_marks_the_cut() -> None:
    assert texts.shorten("abcdefghij", 10) == "abcdefghij"
    assert texts.shorten("abcdefghijk", 10) == "abcdefghi…"
    assert texts.shorten("abcdef ghijk", 10) == "abcdef…"
    # A space at half the limit or before it would leave too little: cut inside the word.
    assert texts.shorten("abcde fghijk", 10) == "abcde fgh…"
    assert texts.shorten("abcdef ghij", 11) == "abcdef ghij"
    assert texts.shorten("abcdef ghijklm", 11) == "abcdef…"
    assert texts.shorten("abcde fghijklm", 11) == "abcde fghi…"
    # Punctuation and spaces before the cut are dropped, letters are not.
    assert texts.shorten("abcd, ;:. ghijk", 12) == "abcd…"
    assert texts.shorten("abcdX, ghijk", 10) == "abcdX…"
    assert texts.shorten("abcdefgh, hijk", 11) == "abcdefgh…"
    assert texts.shorten("abcdefgh.ijk", 10) == "abcdefgh…"
    assert texts.shorten("abcdefg XXXXX", 10) == "abcdefg…"
    # The default limit is the one every report carries.
    assert texts.shorten("x" * texts.HEADLINE_LIMIT) == "x" * texts.HEADLINE_LIMIT
    assert texts.shorten("x" * (texts.HEADLINE_LIMIT + 1)) == "x" * (texts.HEADLINE_LIMIT - 1) + "…"
    assert texts.Failure("x" * (texts.HEADLINE_LIMIT + 1)).headline.endswith("x…")


def test_an_exceptions_headline_ends_as_a_sentence_and_names_the_file_while_loading() -> None:
    assert raised("ValueError", "Stop!").headline == (
        "solve raised ValueError at line 3 of solution.py: Stop!"
    )
    assert raised("ValueError", "Why?").headline.endswith(": Why?")
    assert raised("ValueError", "cut…").headline.endswith(": cut…")
    assert raised("ValueError", "done.").headline.endswith(": done.")
    assert raised("ValueError", "got X").headline.endswith(": got X.")
    assert raised("ValueError", "a  \n b\t").headline.endswith(": a b.")
    assert raised("ValueError", "x", frames=()).headline == "solve raised ValueError: x."
    helper = (Frame("/course/double/helper.py", 7, "<module>", "x = 1 / 0"),)
    loading = raised("ZeroDivisionError", "division by zero", phase="import", frames=helper)
    assert loading.headline == (
        "solution.py raised ZeroDivisionError at line 7 of helper.py while it was loading: "
        "division by zero."
    )
    none = raised("ValueError", "", phase="import", frames=())
    assert none.headline == "solution.py raised ValueError while it was loading."
    long = raised("ValueError", "x" * 600, frames=()).headline
    assert long == "solve raised ValueError: " + "x" * (texts.HEADLINE_LIMIT - 26) + "…"


def test_a_diagnosis_keeps_the_comparisons_notes_except_on_a_wrong_shape() -> None:
    found = Diagnosis("x", "Watch out: this.")
    tensor = {"$": "tensor", "type": "torch.Tensor", "shape": [2], "values": [1.0, 2.0]}
    typed = texts.describe_mismatch(compare([1.0, 2.0], tensor, 1e-4, 1e-4), context(), found)
    assert "  The tensor's values are right; only the type is not." in typed.lines
    extra = compare([1.0, 2.0], [[1.0, 2.0]], 1e-4, 1e-4)
    note = "  Your values are right, in the right order; only the shape is not."
    assert note in texts.describe_mismatch(extra, context()).lines
    assert note not in texts.describe_mismatch(extra, context(), found).lines


def test_the_lessons_own_code_is_labelled_as_the_lessons() -> None:
    author = context(solution=Path("/course/double/ref.py"), author=True, inputs={})
    assert texts.context_lines(Outcome("returned", output="hi\n"), author) == [
        "",
        "  lesson     double/ref.py",
        "",
        "  what the lesson's ref.py printed:",
        "  | hi",
    ]


def test_a_behaviour_lessons_outcomes_have_their_words_keys_and_hidden_words() -> None:
    harness = "/course/double/harness.py"

    def outcome(kind: str, **details: Any) -> Outcome:
        frames = (Frame(harness, 4, "drive", "x = seen[9]"),) if kind == "bug" else ()
        return Outcome(
            "raised",
            error_type={"bug": "IndexError", "call": "TypeError"}.get(kind, "LessonFailure"),
            message={"call": "f() takes 2 arguments", "bug": "list index out of range"}.get(
                kind, "Give your module a weight."
            ),
            phase="call",
            frames=frames,
            details={"harness": kind, "file": harness, **details},
        )

    changed = outcome("changed", changed={"input": "ids", "at": [2], "was": "6", "now": "99"})
    assert headline(changed) == (
        "Leave the input ids as it was: your code changed it in place (at [2]: it was 6, now "
        "99). Build a new value, or work on a copy of ids: the caller still needs its own."
    )
    assert headline(outcome("failure")) == "Give your module a weight."
    assert headline(outcome("call", line="  tok = learner.T(1)  ")) == (
        "Make solve work the way the lesson uses it: the lesson calls `tok = learner.T(1)`, "
        "and Python says TypeError: f() takes 2 arguments."
    )
    bug = texts.describe_error(outcome("bug"), context())
    assert bug.headline.startswith("Tell your instructor: the lesson's harness.py failed")
    assert bug.lines[1:] == [
        "  double/harness.py, line 4, in drive",
        "      x = seen[9]",
        "  IndexError: list index out of range",
    ]
    author = texts.describe_error(outcome("bug"), context(author=True)).headline
    assert (
        author
        == "Fix the lesson's harness.py: it raised IndexError while running the lesson's solution.py."
    )
    keys = [texts.fault_key(outcome(k), None) for k in ("failure", "call", "bug")]
    assert keys == [
        "check give-your-module-a-weight",
        "raised TypeError f() takes 2 arguments",
        "raised IndexError at harness.py:4 in the harness",
    ]
    assert texts.fault_key(changed, None) == "raised InputChanged ids"
    hidden = [
        texts.describe_hidden(o, None, context(inputs={"ids": [1]}), "hidden case 2").headline
        for o in (changed, outcome("failure"), outcome("bug"), changed)
    ]
    # An input the lesson does not have is named by no one: the name is the result's text.
    hidden[-1] = texts.describe_hidden(changed, None, context(), "hidden case 2").headline
    assert hidden == [
        "Hidden case 2 failed: your code changed its input ids in place.",
        "Hidden case 2 failed: your code did not pass the lesson's check of it.",
        "Hidden case 2 failed: the lesson's harness failed on it, not your code.",
        "Hidden case 2 failed: your code changed one of its inputs in place.",
    ]
    missing = Outcome("setup", error_type="no_entry", names=("Tok",))
    assert headline(missing, entry="Tokenizer").startswith(
        "Define a class named Tokenizer in double/solution.py: the grader calls Tokenizer(x), "
    )
    plain = Outcome("raised", error_type="KeyError", message="'x'", phase="call", frames=(FRAME,))
    assert texts.fault_key(plain, None) == "raised KeyError at solution.py:3"


LIBRARY = (
    Frame("/course/course_lib/gpt.py", 10, "attention", "q @ k", library=True),
    Frame("/course/course_lib/gpt.py", 20, "_scores", "x.bmm(y)", library=True),
)


def test_an_error_inside_the_course_library_points_at_the_learners_call_and_its_docstring() -> None:
    failure = raised("RuntimeError", "bad shapes", frames=(FRAME, *LIBRARY))
    assert failure.headline == (
        "solve raised RuntimeError in the course library's attention, called at line 3 of "
        "solution.py: bad shapes."
    )
    assert failure.lines == [
        "",
        "  double/solution.py, line 3, in solve",
        "      return x[5]",
        "  course_lib/gpt.py, line 10, in attention",
        "      q @ k",
        "  course_lib/gpt.py, line 20, in _scores",
        "      x.bmm(y)",
        "  RuntimeError: bad shapes",
        "",
        "  The course library's attention is the lesson's own code: check what line 3 passes to it",
        "  (each argument's type and shape) against what it takes, as its docstring in",
        "  course_lib/gpt.py says.",
    ]
    # No line of the learner's in the traceback (a result that names none): "your code".
    assert raised("RuntimeError", "bad shapes", frames=LIBRARY).lines[-3:] == [
        "  The course library's attention is the lesson's own code: check what your code passes to",
        "  it (each argument's type and shape) against what it takes, as its docstring in",
        "  course_lib/gpt.py says.",
    ]


def test_a_broken_rule_says_which_and_shows_where_without_the_exceptions_own_line() -> None:
    failure = raised("RuntimeError", "solve calls torch.cumsum", details={"rule": "no-cumsum"})
    assert failure.headline == "Follow the lesson's rule no-cumsum."
    assert failure.lines == ["", "  double/solution.py, line 3, in solve", "      return x[5]"]


def test_a_file_python_cannot_read_with_no_line_or_words_says_the_file() -> None:
    failure = raised("SyntaxError", "", frames=(), phase="import")
    assert failure.headline == (
        "Fix the syntax error in double/solution.py: Python cannot read the file."
    )


RULE = Outcome(
    "raised",
    error_type="RuntimeError",
    message="solve has a Python loop",
    phase="call",
    frames=(FRAME,),
    details={"rule": "no-loop"},
)


def test_a_rules_own_words_come_first_then_its_details_then_where() -> None:
    said = Diagnosis(
        "no-loop",
        "Compute it without a Python loop: the lesson grades the vectorised form.",
        details=("first detail", "second"),
        kind="rule",
    )
    failure = texts.describe(RULE, None, context(), said)
    assert failure.headline == said.headline
    assert failure.lines[:6] == [
        "",
        "  first detail",
        "  second",
        "",
        "  double/solution.py, line 3, in solve",
        "      return x[5]",
    ]
    # A generic finding's details are not the rule's: the error's own words stay.
    finding = Diagnosis("rows", "Detector words.", details=("x",), kind="detector")
    failure = texts.describe(RULE, None, context(), finding)
    assert failure.headline == "Follow the lesson's rule no-loop."
    assert failure.lines[:3] == ["", "  double/solution.py, line 3, in solve", "      return x[5]"]


def test_a_hidden_case_names_the_broken_rule_only_for_an_exception() -> None:
    failure = texts.describe_hidden(RULE, None, context(), "hidden case 5")
    assert failure.headline == "Hidden case 5 failed: your code breaks the lesson's rule no-loop."
    timed_out = Outcome("timeout", details={"rule": "no-loop"})
    assert texts.describe_hidden(timed_out, None, context(), "hidden case 5").headline == (
        "Hidden case 5 failed: solve ran longer than 10 s and was stopped."
    )
