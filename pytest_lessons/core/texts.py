"""Words for the learner: turn an outcome (and, for a returned answer, its comparison) into the
failure text pytest shows.

Order: one headline (what to do, then why), then the evidence: shapes, how many values are off,
the largest gap, a short table (these rows are the kind's ``facts`` and ``listing``, in
:mod:`~pytest_lessons.core.kinds`), the case's inputs, where the learner's code is, what it
printed.
Nothing of the grader's own code is shown.
"""

from __future__ import annotations

import builtins
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from pytest_lessons.core import behaviour
from pytest_lessons.core.compare import Comparison, Problem, size_one_positions
from pytest_lessons.core.detectors import Diagnosis
from pytest_lessons.core.kinds import named
from pytest_lessons.core.words import (
    HEADLINE_LIMIT,
    abbreviate,
    first_sentence,
    plural,
    wrap,
)
from pytest_lessons.isolation.outcome import (
    DIED,
    INTERNAL,
    RAISED,
    RETURNED,
    SETUP,
    TIMEOUT,
    Frame,
    Outcome,
    clean_text,
)

_SIGNALS = {
    "SIGSEGV": "a segmentation fault (a crash in native code)",
    "SIGBUS": "a bus error (a crash in native code)",
    "SIGFPE": "a floating-point exception in native code",
    "SIGABRT": "an abort (native code gave up)",
    "SIGILL": "an illegal instruction",
    "SIGKILL": "being killed (SIGKILL), most often because the system ran out of memory",
    "SIGTERM": "being terminated (SIGTERM)",
}

#: Known error messages and what to do about them: (pattern, advice).
EXPLANATIONS: tuple[tuple[str, str], ...] = (
    (
        r"view size is not compatible with input tensor's size and stride",
        "After a transpose the tensor's values are no longer stored in row order, so .view "
        "cannot regroup them. Use .reshape, which copies when it must.",
    ),
    (
        r"expected scalar type|expected .*dtype|found dtype",
        "Two tensors in one operation have different dtypes. Make them all the same, for "
        "example by building every tensor with dtype=torch.float64.",
    ),
    (
        r"must match the size of tensor|shapes cannot be multiplied|size mismatch"
        r"|Expected size for first two dimensions of batch2",
        "Two tensors' shapes do not fit this operation. Print each tensor's .shape just "
        "before the failing line to see which dimension is off. For A @ B, A's last "
        "dimension must equal B's second to last (for attention scores: "
        "Q @ K.transpose(-2, -1)).",
    ),
    (
        r"can't allocate memory|not enough memory",
        "Your code asked for more memory than a case may use.",
    ),
    (
        r"shape '\[[-\d, ]*\]' is invalid for input of size",
        "The sizes you reshape to must multiply to the number of values the tensor holds. "
        "Print the tensor's .shape before the reshape and compute the sizes from it "
        "(-1 lets one size be worked out).",
    ),
    (
        r"No module named",
        "Check the module's name, then install it in the Python that runs pytest or do "
        "without it. Where your work is graded, only the packages the course lists are "
        "installed.",
    ),
)


@dataclass
class Failure:
    """What a failing case tells the learner: one headline (what to do, then why), then the
    evidence."""

    headline: str
    """One line, unwrapped: pytest's short summary and the reports show it alone."""
    lines: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        # An author's multi-line TOML message is one paragraph: folded here as when wrapped.
        self.headline = shorten(" ".join(self.headline.split()))

    def render(self) -> str:
        """The whole text: the headline wrapped, its continuation indented, then the lines."""
        wrapped = wrap(self.headline) or [""]
        lines = [part for line in self.lines for part in _hang(line)]
        return "\n".join([wrapped[0], *_indent(wrapped[1:]), *lines]).rstrip() + "\n"


def _hang(line: str) -> list[str]:
    """A line of evidence that holds line breaks (an exception's message quoted, which the
    learner wrote) as lines indented under its first, one step further: its text never starts
    a line of the terminal or the report, where it could pass for the grader's own lines (a
    summary, a verdict, another learner's header)."""
    first, *rest = line.split("\n")
    if not rest:
        return [line]
    under = first[: len(first) - len(first.lstrip())] + "  "
    return [first, *(under + part if part.strip() else "" for part in rest)]


@dataclass(frozen=True)
class Context:
    """What the report needs to know about the case, besides the outcome."""

    slug: str
    entry: str
    solution: Path
    inputs: dict[str, Any]
    timeout: float
    memory_mb: float
    show: Callable[[Path | str], str] = str
    """Turns a path into what the learner should see (relative to where pytest runs)."""
    author: bool = False
    """The graded code is the lesson's own (its reference or its mistakes, in the lesson
    check): the words name the author's file, never "your code"."""
    sandbox_limits: Mapping[str, float] = field(default_factory=dict)
    """The sandbox's limits in this run (``disk_mb``, ``open_files``, ``processes``, as in
    :attr:`pytest_lessons.isolation.sandbox.Policy.limits`; 0 or absent: none)."""
    harness: bool = False
    """The lesson's harness drives the code (a class, or functions it calls its own way):
    the words name what to write, never a call of the case's inputs."""

    @property
    def code(self) -> str:
        """Whose code ran, as the words name it."""
        return f"the lesson's {self.solution.name}" if self.author else "your code"


def _indent(lines: list[str], by: str = "  ") -> list[str]:
    return [by + line if line else "" for line in lines]


def describe_error(outcome: Outcome, ctx: Context) -> Failure:
    """The failure for an outcome that is not a returned answer."""
    call = f"{ctx.entry}({', '.join(ctx.inputs)})"
    where = ctx.show(ctx.solution)
    if outcome.kind == SETUP:
        return _setup(outcome, ctx, call, where)
    if outcome.kind == TIMEOUT:
        return Failure(
            f"Make {ctx.entry} finish sooner: it ran longer than {ctx.timeout:g} s and was "
            "stopped. Look for a loop whose condition never changes, or work that grows much "
            "faster than the input."
        )
    if outcome.kind == DIED:
        return _died(outcome, ctx)
    if outcome.kind == RAISED:
        return _raised(outcome, ctx, where)
    return Failure(
        "Run the lesson again: the grader itself failed here, not your code "
        f"({outcome.message}). If it happens again, tell your instructor."
    )


def _wanted(ctx: Context, call: str) -> str:
    """What the learner's file must define, as the words name it: the call of the case's
    inputs (``solve(Q, K, V)``), or with a harness the class or function the task describes."""
    if not ctx.harness:
        return call
    what = "a class" if ctx.entry[:1].isupper() else "the function"
    return f"{what} {ctx.entry} (as the task describes)"


def _setup(outcome: Outcome, ctx: Context, call: str, where: str) -> Failure:
    problem = outcome.error_type
    wanted = _wanted(ctx, call)
    found = [str(n) for n in outcome.details.get("found", ()) if isinstance(n, str)]
    if problem == "missing_file":
        text = (
            f"Create {where} and write {wanted} in it: the exercise looks for your code in that "
            "file."
        )
    elif problem == "misnamed" and found:
        others = ", ".join(found)
        which = found[0] if len(found) == 1 else "the one that holds your solution"
        text = (
            f"Rename {which} to {ctx.solution.name}: the exercise reads your code from {where} "
            f"only, and that folder holds {others} instead."
        )
    elif problem == "link" and outcome.details.get("classmate"):
        text = (
            f"Ask your instructor to unpack the class's files again: {where} is one file with "
            "a file in another learner's folder (a hard link that an archive made), and the "
            "grader reads neither. Nothing in your own files needs to change."
        )
    elif problem == "link" and outcome.details.get("links"):
        text = (
            f"Hand in {where} itself, not a link: it is a hard link (one file under "
            f"{outcome.details['links']} names), and the grader reads only the files you hand "
            "in, never a file that is also somewhere else."
        )
    elif problem == "link":
        link = ctx.show(outcome.message) if outcome.message else where
        text = (
            f"Hand in {where} itself, not a link: {link} is a symbolic link, and the grader "
            "reads only the files you hand in, never what a link points to."
        )
    elif problem == "not_file":
        text = f"Make {where} a plain file with {wanted} in it: there it is a folder or a device."
    elif problem == "too_large":
        limit = int(outcome.details.get("limit", 0) or 0) >> 10
        text = (
            f"Hand in a smaller {where}: the grader reads files of up to {limit} KiB, "
            "and this one is larger."
        )
    elif problem == "no_entry":
        defined = ", ".join(outcome.names) if outcome.names else "no functions"
        # A harness lesson's entry may be a class (Tokenizer), which names are capitalised as.
        what = "a class" if ctx.entry[:1].isupper() else "a function"
        uses = "the lesson builds and drives it" if ctx.harness else f"the grader calls {call}"
        text = (
            f"Define {what} named {ctx.entry} in {where}: {uses}, and the file defines {defined}."
        )
    elif problem == "not_callable":
        text = (
            f"Make {ctx.entry} a function (def {call}:) in {where}: there it is a "
            f"{outcome.message}."
        )
    else:
        theirs = outcome.message or "no parameters"
        text = (
            f"Give {ctx.entry} {plural(len(ctx.inputs), 'parameter')}, "
            f"in this order: def {call}. Yours takes ({theirs})."
        )
    return Failure(text)


def _died(outcome: Outcome, ctx: Context) -> Failure:
    if outcome.details.get("limit") == "disk":
        used = int(outcome.details.get("used", 0) or 0)
        return Failure(limit_words("disk", ctx, used) + ".")
    if outcome.signal:
        what = _SIGNALS.get(outcome.signal, f"the signal {outcome.signal}")
        text = (
            f"Find what crashes Python in {ctx.code}: the process running {ctx.entry} ended by "
            f"{what} before it returned."
        )
        if outcome.signal == "SIGKILL" and ctx.memory_mb:
            text += f" A case may use about {ctx.memory_mb:g} MiB."
    elif outcome.message:
        text = (
            f"Leave the grader's machinery alone: {ctx.code} broke the process that runs it "
            f"({outcome.message})."
        )
    else:
        code = outcome.exit_code if outcome.exit_code is not None else "unknown"
        text = (
            f"Remove the call that ends the process (os._exit or similar): it stopped with exit "
            f"code {code} before {ctx.entry} returned an answer."
        )
    return Failure(text)


def _traceback(outcome: Outcome, ctx: Context) -> list[str]:
    lines = []
    for frame in outcome.frames:
        function = ""
        if frame.function and frame.function != "<module>":
            function = f", in {frame.function}"
        lines.append(f"{ctx.show(frame.file)}, line {frame.line}{function}")
        if frame.code:
            lines.append(f"    {clean_text(frame.code.strip())}")
    message = clean_text(outcome.message).strip()
    lines.append(f"{outcome.error_type}: {message}" if message else outcome.error_type)
    return lines


def _raised(outcome: Outcome, ctx: Context, where: str) -> Failure:
    harness = behaviour.words(
        outcome, ctx.entry, ctx.author, ctx.code, ctx.show, lambda: _traceback(outcome, ctx)
    )
    if harness is not None:  # a harness's words, an input changed in place
        return Failure(*harness)
    name = outcome.error_type
    rule = outcome.details.get("rule")
    if isinstance(rule, str):  # a rule of the lesson on how the answer is computed
        return Failure(
            f"Follow the lesson's rule {rule}.", ["", *_indent(_traceback(outcome, ctx)[:-1])]
        )
    if name == "NotImplementedError":
        line = outcome.frames[-1].line if outcome.frames else None
        at = f" (line {line})" if line else ""
        return Failure(
            f"Write your solution: {ctx.slug} is not implemented yet. Open {where} and replace "
            f"`raise NotImplementedError`{at} in {ctx.entry} with your code."
        )
    # Python could not read the file only when the error came as it was loaded: one raised
    # by a call (compile() or exec() in solve, or `raise SyntaxError(...)`) is as any other.
    if name in ("SyntaxError", "IndentationError", "TabError") and outcome.phase != "call":
        frame = outcome.frames[-1] if outcome.frames else None
        lines = []
        if frame:
            lines = [f"{ctx.show(frame.file)}, line {frame.line}"]
            if frame.code:
                lines.append(f"    {clean_text(frame.code.strip())}")
        lines.append(f"{name}: {clean_text(outcome.message)}")
        # The line and Python's words in the headline itself: a feedback file or a report's
        # one-line field shows nothing else.
        said = " ".join(clean_text(outcome.message).split())
        said = f" ({name}: {said})" if said else ""
        read = f"line {frame.line}" if frame and frame.line else "the file"
        return Failure(
            f"Fix the syntax error in {where}: Python cannot read {read}{said}.",
            ["", *_indent(lines)],
        )
    limit = outcome.details.get("limit")
    if isinstance(limit, str):
        return Failure(limit_words(limit, ctx) + ".", ["", *_indent(_traceback(outcome, ctx))])
    denied = outcome.details.get("denied")
    if isinstance(denied, dict):
        return _denied(outcome, ctx, where, denied)
    if outcome.details.get("pytest"):
        call = {
            "Skipped": "pytest.skip()",
            "XFailed": "pytest.xfail()",
            "Exit": "pytest.exit()",
            "Failed": "pytest.fail()",
        }.get(name, f"pytest ({name})")
        return Failure(
            f"Remove the call to {call} from {ctx.code}: graded code cannot skip, fail or stop "
            "the grader, so this case counts as failed."
        )
    if name == "SystemExit":
        code = outcome.details.get("code")
        return Failure(
            f"Remove the call to sys.exit(), exit() or quit() from {ctx.code}: it ended the "
            f"case (exit code {code}) before {ctx.entry} returned an answer."
        )
    if name == "BdbQuit" or outcome.details.get("module") == "bdb":
        # pdb found no terminal (graded code runs isolated, its input closed) and quit.
        stopped = ""
        if outcome.frames:  # none in a result file the learner's code wrote itself
            stopped = f" (the debugger stopped at line {outcome.frames[-1].line})"
        if not where.endswith(".py"):  # a notebook's cell: pytest's options are no help
            return Failure(
                f"Remove breakpoint() or pdb.set_trace() from {where}{stopped}, and debug the "
                "function in a cell of its own, without %%lesson: graded code runs isolated, "
                "where a debugger has no terminal to read from, so it quit."
            )
        return Failure(
            f"Remove breakpoint() or pdb.set_trace() from {where}{stopped}, or debug with "
            f"`pytest {ctx.show(ctx.solution.parent)} --lesson-isolation=off -s`: graded code "
            "runs isolated, where a debugger has no terminal to read from, so it quit."
        )
    if name == "KeyboardInterrupt":
        return Failure(
            f"Remove the code that raises KeyboardInterrupt: it stopped {ctx.entry} before it "
            "returned an answer."
        )
    if name == "MemoryError" or re.search(EXPLANATIONS[3][0], outcome.message):
        limit = f"the {ctx.memory_mb:g} MiB a case may use" if ctx.memory_mb else "the memory"
        return Failure(
            f"Use less memory: {ctx.code} asked for more than {limit}. Look for a tensor or "
            "list that grows far beyond the size of the inputs.",
            ["", *_indent(_traceback(outcome, ctx))],
        )
    if name == "RecursionError":
        return Failure(
            f"Stop the recursion: {ctx.entry} called a function that calls itself without end.",
            ["", *_indent(_traceback(outcome, ctx))],
        )
    lines = ["", *_indent(_traceback(outcome, ctx))]
    inside = _in_library(outcome)
    if inside is not None:
        library, caller = inside
        who = f"line {caller.line}" if caller else "your code"
        lines += [
            "",
            *_indent(
                wrap(
                    f"The course library's {library.function} is the lesson's own code: check "
                    f"what {who} passes to it (each argument's type and shape) against what "
                    f"it takes, as its docstring in {ctx.show(library.file)} says."
                )
            ),
        ]
    for pattern, advice in EXPLANATIONS:
        if re.search(pattern, outcome.message):
            lines += ["", *_indent(wrap(advice))]
            break
    return Failure(raised_headline(outcome, ctx), lines)


#: Each limit of a case: the option that sets it, and how its words name it.
_LIMIT_OPTIONS = {
    "memory": ("--lesson-memory", "the memory limit"),
    "processes": ("--lesson-processes", "the process limit"),
    "disk": ("--lesson-disk", "the file size limit"),
    "open_files": ("--lesson-open-files", "the open file limit"),
}

#: How the words name each limit of a process that no setting sets (``raise:core``...).
_OTHER_LIMITS = {
    "core": "the core dump size limit (RLIMIT_CORE)",
    "cpu": "the CPU time limit (RLIMIT_CPU)",
    "stack": "the stack size limit (RLIMIT_STACK)",
    "memlock": "the locked memory limit (RLIMIT_MEMLOCK)",
    "locks": "the file lock limit (RLIMIT_LOCKS)",
    "msgqueue": "the message queue limit (RLIMIT_MSGQUEUE)",
    "nice": "the priority limit (RLIMIT_NICE)",
    "rtprio": "the real-time priority limit (RLIMIT_RTPRIO)",
    "rttime": "the real-time CPU time limit (RLIMIT_RTTIME)",
    "sigpending": "the pending signal limit (RLIMIT_SIGPENDING)",
}


def limit_words(limit: str, ctx: Context, used: int = 0) -> str:
    """What to do about a limit of the case that its code ran into (*limit*: ``processes``,
    ``disk``, ``open_files``, or ``raise:`` and the limit it tried to raise), and why: the
    limit and the setting that sets it. *used*: the bytes the case's files took, where the
    runner counted them. One sentence without its full stop."""
    value = {
        "memory": ctx.memory_mb,
        "processes": ctx.sandbox_limits.get("processes", 0),
        "disk": ctx.sandbox_limits.get("disk_mb", 0),
        "open_files": ctx.sandbox_limits.get("open_files", 0),
    }
    if limit.startswith("raise:"):
        name = limit.partition(":")[2]
        if name in _OTHER_LIMITS:
            return f"Remove the call that raises {_OTHER_LIMITS[name]}: a case cannot raise it"
        if name not in _LIMIT_OPTIONS:
            return (
                "Remove the call that raises a limit: the run sets each limit of a case "
                "(--lesson-memory, --lesson-disk, --lesson-open-files, --lesson-processes), "
                "and a case cannot raise them"
            )
        option, words = _LIMIT_OPTIONS[name]
        allowed = {
            "memory": f"a case may use {value['memory']:g} MiB",
            "processes": f"a case may run {value['processes']:g} processes and threads",
            "disk": f"a case may write {value['disk']:g} MiB in all",
            "open_files": f"a case may hold {value['open_files']:g} files open",
        }[name]
        if not value[name]:
            allowed = "the run sets it"
        return f"Remove the call that raises {words}: {allowed} ({option}), and cannot raise it"
    if limit == "processes":
        count = value["processes"]
        if not count:
            return f"Start fewer processes or threads: the system refused {ctx.code} another one"
        return (
            f"Start fewer processes or threads: a case may run at most {count:g} at once, "
            f"itself included (--lesson-processes), and {ctx.code} asked for more"
        )
    if limit == "open_files":
        count = value["open_files"]
        if not count:
            return f"Close the files you no longer need: the system refused {ctx.code} another one"
        return (
            "Close the files you no longer need (a with block closes each one): a case may "
            f"hold {count:g} files open at once (--lesson-open-files), and {ctx.code} opened more"
        )
    size = value["disk"]
    if not size:
        return f"Write less to disk: the system refused to store more of what {ctx.code} wrote"
    took = f"left {used / (1 << 20):.1f} MiB" if used else "wrote more"
    return (
        f"Write less to disk: a case's files may take {size:g} MiB in all (--lesson-disk), "
        f"and {ctx.code} {took}"
    )


def shorten(text: str, limit: int = HEADLINE_LIMIT) -> str:
    """*text* whole when it fits *limit*, else cut at a word with an ellipsis within it."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > limit // 2 else cut).rstrip(" ,;:.") + "…"


def raised_headline(outcome: Outcome, ctx: Context) -> str:
    """One whole sentence for an exception: who raised what, at which line of which file, and
    the exception's own message (cut with an ellipsis past :data:`HEADLINE_LIMIT`):
    ``solve raised RuntimeError at line 4 of solution.py: Expected size ...``."""
    frame = outcome.frames[-1] if outcome.frames else None
    where = f" at line {frame.line} of {Path(frame.file).name}" if frame else ""
    inside = _in_library(outcome)
    if inside is not None:  # raised in the course library, from the learner's call
        library, caller = inside
        called = f", called at line {caller.line} of {Path(caller.file).name}" if caller else ""
        where = f" in the course library's {library.function}{called}"
    if outcome.phase == "import":
        if frame and Path(frame.file).name == ctx.solution.name:
            where = f" at line {frame.line}"
        start = f"{ctx.solution.name} raised {outcome.error_type}{where} while it was loading"
    else:
        start = f"{ctx.entry} raised {outcome.error_type}{where}"
    message = " ".join(clean_text(outcome.message).split())
    if not message:
        return start + "."
    if message[-1] not in ".!?…":
        message += "."
    return shorten(f"{start}: {message}")


def _in_library(outcome: Outcome) -> tuple[Frame, Frame | None] | None:
    """Where an exception the learner's call raised inside the course library was: the
    library's outermost frame of it, and the learner's line that called it; None when the
    exception is not the library's."""
    if not outcome.frames or not outcome.frames[-1].library:
        return None
    mine = [n for n, f in enumerate(outcome.frames) if not f.library]
    if not mine:
        return outcome.frames[0], None
    return outcome.frames[mine[-1] + 1], outcome.frames[mine[-1]]


def _denied(outcome: Outcome, ctx: Context, where: str, denied: dict[str, Any]) -> Failure:
    """The sandbox refused something: say what, and that it is not allowed while grading."""
    path = str(denied.get("path") or "")
    allowed = (
        f"while grading, your code may read only its own file ({where}) and write only in its "
        "temporary folder (TMPDIR)"
    )
    if path and outcome.error_type == "ModuleNotFoundError":
        module = Path(path).stem
        text = (
            f"Remove `import {module}` and put the code you need in {where}: reading "
            f"{ctx.show(path)} is not allowed while grading; {allowed}."
        )
    elif path:
        text = (
            f"Remove the code that uses {ctx.show(path)}: that is not allowed while grading; "
            f"{allowed}."
        )
    elif denied.get("action") == "signal":
        text = (
            "Remove the code that signals or controls another process: that is not allowed "
            "while grading. Your code may compute and print, nothing more."
        )
    elif denied.get("action") == "network":
        text = (
            "Remove the code that uses the network: connections are not allowed while grading. "
            "Your code may compute and print, nothing more."
        )
    else:
        text = (
            "Remove the call that the system refused (below): that is not allowed while "
            "grading. Your code may compute and print, nothing more."
        )
    return Failure(text, ["", *_indent(_traceback(outcome, ctx))])


def describe_mismatch(
    comparison: Comparison,
    ctx: Context,
    diagnosis: Diagnosis | None = None,
    repeat_of: str = "",
) -> Failure:
    """The failure for a returned answer that is not right: the diagnosis (or the comparison's
    own headline), then the evidence."""
    part = comparison.where  # which output is wrong, for an exercise with several
    if diagnosis is not None and repeat_of:
        first = _in_part(first_sentence(diagnosis.headline), part)
        lines = [f"  (the same mistake as {repeat_of}; its explanation is there)"]
    elif diagnosis is not None:
        first, lines = _in_part(diagnosis.headline, part), []
        for detail in diagnosis.details:
            lines += _indent(wrap(detail))
    else:
        first, lines = comparison.headline, []
    if diagnosis is not None and comparison.problem not in (Problem.VALUES, Problem.SHAPE):
        lines += _indent(wrap(comparison.headline))  # e.g. "add .tolist()" still applies
    # A diagnosis of a wrong shape says how it came about; the comparison's generic notes on
    # shapes ("check the sizes you reshape to") would compete with it.
    if diagnosis is None or comparison.problem != Problem.SHAPE:
        for note in comparison.notes:
            lines += _indent(wrap(note))
    lines.append("")
    kind = named(comparison.kind)
    lines += _indent(_table(kind.facts(comparison)))
    listing, more = kind.listing(comparison)
    if listing:
        lines += ["", *_indent(_table(listing), "    ")]
        if more > 0:
            lines.append(f"    ... and {more} more")
    lines += mismatch_map(comparison)
    return Failure(first, lines)


def _in_part(headline: str, part: str) -> str:
    """*headline* naming the output it is about (*part*, such as ``out (value 1 of 3)``)."""
    if not part:
        return headline
    if headline.startswith("Watch out: "):
        return f"Watch out, in {part}: {headline[len('Watch out: ') :]}"
    return f"In {part}: {headline}"


#: The largest grid a mismatch map draws (rows, columns of the last two dimensions).
MAP_ROWS, MAP_COLUMNS = 12, 24


#: The first line of a mismatch map, which :func:`colour_map` looks for.
MAP_TITLE = "  where it differs"


def mismatch_map(comparison: Comparison) -> list[str]:
    """A grid of the last two dimensions: ``x`` where a value is outside tolerance (in any of
    the leading dimensions), ``.`` where it matches. Empty when shapes differ or it is too big.

    Always plain text: the same text goes into report files, which must never hold terminal
    escapes; :func:`colour_map` colours it on the way to a terminal."""
    shape = comparison.expected_shape
    if comparison.got_shape != shape or not comparison.bad or not shape:
        return []
    rows_n, cols_n = (1, shape[0]) if len(shape) == 1 else shape[-2:]
    if rows_n > MAP_ROWS or cols_n > MAP_COLUMNS or rows_n * cols_n < 2:
        return []
    expected = comparison.expected
    assert expected is not None
    wrong = set()
    for position in comparison.bad:
        index = expected.index(position)
        wrong.add((0, index[0]) if len(shape) == 1 else index[-2:])
    width = len(str(cols_n - 1))
    what = "" if len(shape) <= 2 else " (last two dimensions; x if wrong in any slice)"
    lines = ["", f"{MAP_TITLE}{what}: x is outside tolerance"]
    header = " ".join(str(c).rjust(width) for c in range(cols_n))
    label = len(str(rows_n - 1))
    lines.append("    " + " " * label + "  " + header)
    for r in range(rows_n):
        cells = " ".join(("x" if (r, c) in wrong else ".").rjust(width) for c in range(cols_n))
        lines.append(f"    {str(r).rjust(label)}  {cells}")
    return lines


def colour_map(lines: list[str], paint: Callable[[str, str], str]) -> list[str]:
    """*lines* of a failure's text with the cells of its mismatch map painted: ``paint(text,
    colour)`` returns *text* marked up in ``red`` or ``green`` (a terminal writer's markup).
    Only the map's rows change; everything else, learner output included, is left as it is."""
    out, row = [], -1  # row: -1 outside a map, 0 at its column header, 1.. in its rows
    for line in lines:
        if line.startswith(MAP_TITLE):
            out.append(line)
            row = 0
            continue
        if row < 0 or not line.strip():
            row = -1
            out.append(line)
            continue
        if row == 0:
            row = 1
            out.append(line)
            continue
        label, _, cells = line.strip().partition("  ")
        if not label.isdigit() or set(cells) - {"x", ".", " "}:
            row = -1
            out.append(line)
            continue
        painted = "".join(
            paint(ch, "red") if ch == "x" else paint(ch, "green") if ch == "." else ch
            for ch in cells
        )
        out.append(line[: len(line) - len(cells)] + painted)
    return out


def _table(rows: Sequence[tuple[str, ...]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return [
        "   ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in rows
    ]


#: Lines of printed output one failing case shows (its first and last half); the reports keep
#: everything the per-case byte cap kept.
OUTPUT_LINES = 20


def printed_lines(
    output: str, output_cut: int, limit: int = OUTPUT_LINES, whose: str = "your code"
) -> list[str]:
    """What the learner's code (or *whose*) printed, as shown under a failure: at most *limit*
    lines (the first and the last ones), with a notice of what was left out."""
    if not output and not output_cut:
        return []
    printed = output.rstrip("\n").split("\n")
    lines = ["", f"  what {whose} printed:"]
    if len(printed) > limit:
        head, tail = printed[: limit // 2], printed[-(limit - limit // 2) :]
        hidden = len(printed) - len(head) - len(tail)
        lines += ["  | " + line for line in head]
        lines.append(f"  [… {hidden} lines not shown here]")
        lines += ["  | " + line for line in tail]
    else:
        lines += ["  | " + line for line in printed]
    if output_cut:
        lines.append(f"  [… {output_cut} bytes cut]")
    return lines


def context_lines(
    outcome: Outcome, ctx: Context, show_inputs: bool = True, output_limit: int = OUTPUT_LINES
) -> list[str]:
    """The case's inputs, the learner's file and what the learner's code printed (at most
    *output_limit* lines; 0 puts a notice instead, once the exercise has shown enough)."""
    lines = [""]
    if show_inputs and ctx.inputs:
        width = max(len(name) for name in ctx.inputs)
        for i, (name, value) in enumerate(ctx.inputs.items()):
            label = "inputs" if i == 0 else ""
            lines.append(f"  {label:<11}{name.ljust(width)} = {abbreviate(value)}")
    label = "lesson" if ctx.author else "your code"
    lines.append(f"  {label:<11}{ctx.show(ctx.solution)}")
    if output_limit <= 0 and (outcome.output or outcome.output_cut):
        lines += [
            "",
            f"  what {ctx.code} printed: not shown, because this exercise's earlier cases "
            "already showed as much output as one run shows.",
        ]
        return lines
    lines += printed_lines(outcome.output, outcome.output_cut, output_limit, ctx.code)
    return lines


def fault_key(outcome: Outcome, comparison: Comparison | None) -> str:
    """A short key that is the same for two cases failing for one reason that their inputs
    cannot change (not implemented, a missing or unreadable file, a wrong signature, the same
    exception at the same line, a tensor returned ...); empty for a wrong answer, whose
    evidence differs from case to case."""
    if outcome.kind == SETUP:
        return f"setup {outcome.error_type}"
    if outcome.kind == TIMEOUT:
        return "timeout"
    if outcome.kind == DIED:
        return f"died {outcome.signal or outcome.exit_code} {outcome.message}".strip()
    if outcome.kind == RAISED:
        frame = outcome.frames[-1] if outcome.frames else None
        where = f" at {Path(frame.file).name}:{frame.line}" if frame else ""
        return behaviour.fault(outcome) or f"raised {outcome.error_type}{where}"
    if outcome.kind == RETURNED and comparison is not None:
        part = f" in {comparison.part}" if comparison.part else ""
        got, want = comparison.got_shape, comparison.expected_shape
        if (
            comparison.problem == Problem.SHAPE
            and got is not None
            and size_one_positions(got, want)
        ):
            # A forgotten .squeeze() or .unsqueeze() is the same fault whatever the sizes.
            extra = "an extra" if len(got) > len(want) else "a missing"
            return f"returned {extra} size-1 dimension{part}"
        if comparison.problem in (
            Problem.PASSED,
            Problem.VALUES,
            Problem.SHAPE,
            Problem.NONFINITE,
        ):
            return ""
        return f"returned {comparison.problem}{part}"
    return ""


def repeated(failure: Failure, first: str) -> Failure:
    """The short form of a failure already explained under the case *first*."""
    return Failure(
        first_sentence(failure.headline),
        [f"  (the same problem as {first}; its explanation is there)"],
    )


def describe(
    outcome: Outcome,
    comparison: Comparison | None,
    ctx: Context,
    diagnosis: Diagnosis | None = None,
    repeat_of: str = "",
    output_limit: int = OUTPUT_LINES,
) -> Failure:
    """The whole failure of one case. *repeat_of* names an earlier case that had the same
    diagnosis, so its explanation is not repeated; *output_limit* caps the printed lines
    shown."""
    if comparison is None:
        failure = describe_error(outcome, ctx)
        if diagnosis is not None and diagnosis.kind in ("watch_out", "rule") and diagnosis.details:
            # A watch-out that names a check of the lesson's harness: its words first, the
            # check's own under them.
            details = [line for detail in diagnosis.details for line in _indent(wrap(detail))]
            failure = Failure(diagnosis.headline, ["", *details, *failure.lines])
    else:
        failure = describe_mismatch(comparison, ctx, diagnosis, repeat_of)
    if outcome.kind != INTERNAL:
        failure.lines += context_lines(outcome, ctx, output_limit=output_limit)
    return failure


#: Python's own exception classes, by name: the only ones a hidden case names.
BUILTIN_EXCEPTIONS = frozenset(
    name
    for name, value in vars(builtins).items()
    if isinstance(value, type) and issubclass(value, BaseException)
)


def hidden_exception(outcome: Outcome) -> str:
    """How a hidden case names the exception of a raised outcome: a built-in's class name
    (``ValueError``), else "an exception". A class of the learner's own may have any name
    (built from the case's inputs, say), so its name is never shown."""
    name = outcome.error_type
    module = outcome.details.get("module", "builtins")
    if name in BUILTIN_EXCEPTIONS and module in ("builtins", ""):
        return name
    return "an exception"


def hidden_place(outcome: Outcome, ctx: Context) -> str:
    """Where a hidden case says its exception was raised: `` in double/solution.py`` when the
    learner's solution file is in the traceback; "" when it is not (a file of another name is
    the learner's choice, made from the inputs perhaps). Never the line: code compiled with
    a chosen line number (``compile("\\n" * n + "raise ValueError", __file__, "exec")``)
    would carry n, a number made from the case's inputs, into the learner's own feedback."""
    own = str(ctx.solution)
    found = any(f.file == own for f in outcome.frames)
    return f" in {ctx.show(own)}" if found else ""


def hidden_lesson_error(outcome: Outcome | None, ctx: Context) -> str:
    """The author's account of a lesson's harness failing on a learner's hidden case: that it
    failed and which built-in it raised, never its message, file or line (the child says
    those, and a learner's code could fill them with the case's inputs); empty for any other
    outcome. ``--lesson-check`` shows the harness's own failure whole."""
    if outcome is None or outcome.kind != RAISED or outcome.details.get("harness") != "bug":
        return ""
    return (
        f"The lesson's harness failed on a hidden case (it raised {hidden_exception(outcome)}): "
        f"run pytest --lesson-check on {ctx.slug} to see where.\n"
    )


def _hidden_setup(outcome: Outcome, ctx: Context) -> Failure:
    """A hidden case whose code could not be used: what the child said about the file (the
    names it defines, what the entry is, its parameters) is the child's text, and a hidden
    case's child may have made it up from the inputs, so its words are the lesson's alone."""
    call = f"{ctx.entry}({', '.join(ctx.inputs)})"
    where = ctx.show(ctx.solution)
    problem = outcome.error_type
    if problem == "no_entry":
        what = "a class" if ctx.entry[:1].isupper() else "a function"
        text = f"Define {what} named {ctx.entry} in {where}: the grader calls {call}."
    elif problem == "not_callable":
        text = f"Make {ctx.entry} a function (def {call}:) in {where}."
    elif problem == "signature":
        text = (
            f"Give {ctx.entry} {plural(len(ctx.inputs), 'parameter')}, in this order: def {call}."
        )
    else:  # found by the runner itself (a missing file, a link ...): the usual words
        return describe_error(outcome, ctx)
    return Failure(text)


def describe_hidden(
    outcome: Outcome,
    comparison: Comparison | None,
    ctx: Context,
    label: str,
    diagnosis: Diagnosis | None = None,
) -> Failure:
    """The failure of a hidden case: what kind of failure, never the case's inputs, its
    expected answer, the learner's answer, an error's message (learner code could put the
    inputs in it) or what the code printed. A lesson watch-out is shown when it carries no
    values."""
    if outcome.kind == RETURNED:
        what = "your answer is wrong"
        if comparison is not None and comparison.problem not in (Problem.VALUES, Problem.NONFINITE):
            what = "your answer does not have the expected type or shape"
        if comparison is not None and comparison.part:
            what += f" (in {comparison.part})"
    elif outcome.kind == RAISED and isinstance(outcome.details.get("rule"), str):
        what = f"your code breaks the lesson's rule {outcome.details['rule']}"
    elif outcome.kind == RAISED and behaviour.hidden_words(outcome):
        what = str(behaviour.hidden_words(outcome))
        changed = outcome.details.get("changed")
        name = changed.get("input") if isinstance(changed, dict) else None
        named = isinstance(name, str) and name in ctx.inputs
        if outcome.details.get("harness") == "changed" and not named:
            # An input's name is the lesson's; any other is text the result made up.
            what = "your code changed one of its inputs in place"
    elif outcome.kind == RAISED:
        what = f"your code raised {hidden_exception(outcome)}{hidden_place(outcome, ctx)}"
    elif outcome.kind == TIMEOUT:
        what = f"{ctx.entry} ran longer than {ctx.timeout:g} s and was stopped"
    elif outcome.kind == DIED and outcome.details.get("limit") == "disk":
        size = ctx.sandbox_limits.get("disk_mb", 0)
        what = f"its files took more than the {size:g} MiB a case may write (--lesson-disk)"
    elif outcome.kind == DIED:
        what = f"the process running {ctx.entry} ended before it returned"
    elif outcome.kind == SETUP:
        return _hidden_setup(outcome, ctx)
    else:
        what = "the grader itself failed on it, not your code"
    lines = []
    if diagnosis is not None and diagnosis.kind == "watch_out" and not diagnosis.shows_values:
        wrapped = wrap(diagnosis.headline)
        lines += ["", wrapped[0], *_indent(wrapped[1:])]
    lines += ["", "  Its inputs and expected answer are not shown: it is a hidden case."]
    return Failure(f"{label.capitalize()} failed: {what}.", lines)
