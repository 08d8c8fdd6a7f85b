"""The documentation: README.md stays short, every internal link and anchor resolves, every
code example works, and the lists a page copies from the code agree with the code.

The examples run with Sybil, page by page and top to bottom (the ``python`` blocks of a page
share their names): a ``python`` block is executed; a ``toml`` block is parsed and its tables
checked against the format's own key lists (``exercise.toml``) or loaded by the course's own
reader (``course.toml``); a ``bash`` block's commands are checked without being run, since each
grades lessons for seconds: every file and folder they name exists, every long option is one
that pytest (with the plugin) or the merge command lists in its ``--help``, every extra is one
pyproject.toml declares. An example that cannot run says why in a comment on the line before it
(``<!-- skip: next "why" -->``). ``docs/build.sh`` runs this module after building the site.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import re
import shlex
import subprocess
import sys
import unittest
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from markdown_it import MarkdownIt

from helpers import ROOT

DOCS = ROOT / "docs"
#: Every Markdown page: the three at the top, the course's and the tests' own, and the site's.
PAGES = [
    ROOT / "README.md",
    ROOT / "CONTRIBUTING.md",
    ROOT / "CHANGELOG.md",
    ROOT / "exercises" / "README.md",
    ROOT / "tests" / "README.md",
    *sorted(p for p in DOCS.rglob("*.md") if "_build" not in p.parts),
]
MARKDOWN = MarkdownIt("commonmark").enable("table")


def page_id(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def test_the_readme_stays_under_150_lines_and_keeps_the_test_command() -> None:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 150, (
        f"README.md has {len(lines)} lines: keep it to what the project is, a failure message, "
        "the quick start and the links; move the rest to a page of docs/"
    )
    # .ci/run runs the test command README.md gives.
    assert "python -m pytest tests -n auto" in lines


# --- links and anchors ---------------------------------------------------------------------


def slug(title: str) -> str:
    """A heading's anchor as GitHub and MyST (``myst_heading_anchors``) make it."""
    return re.sub(r"[^\w\- ]", "", title.strip().lower()).replace(" ", "-")


def _inline_text(token: Any) -> str:
    return "".join(c.content for c in token.children or () if c.type in ("text", "code_inline"))


@cache
def anchors(path: Path) -> frozenset[str]:
    """The anchors of a page's headings, a repeated one numbered as GitHub numbers it."""
    tokens = MARKDOWN.parse(path.read_text(encoding="utf-8"))
    found: list[str] = []
    for opening, inline in zip(tokens, tokens[1:]):
        if opening.type == "heading_open":
            name = slug(_inline_text(inline))
            seen = found.count(name) + sum(1 for f in found if re.fullmatch(rf"{name}-\d+", f))
            found.append(f"{name}-{seen}" if seen else name)
    return frozenset(found)


def links(path: Path) -> Iterator[tuple[int, str]]:
    """Each link of a page that points inside the repository: (line, target)."""
    for token in MARKDOWN.parse(path.read_text(encoding="utf-8")):
        for child in token.children or ():
            href = child.attrs.get("href") if child.type == "link_open" else None
            if isinstance(href, str) and not re.match(r"[a-z][a-z+.-]*:", href):
                yield (token.map[0] + 1 if token.map else 0), href


def broken(path: Path, href: str) -> str | None:
    """Why *href* on page *path* leads nowhere, or None when it resolves."""
    target, _, anchor = href.partition("#")
    linked = (path.parent / target).resolve() if target else path
    if not linked.exists():
        return f"{target} does not exist"
    if anchor and linked.suffix == ".md" and anchor not in anchors(linked):
        return f"{target or path.name} has no heading whose anchor is #{anchor}"
    return None


@pytest.mark.parametrize("path", PAGES, ids=page_id)
def test_every_link_inside_the_repository_and_its_anchor_resolve(path: Path) -> None:
    wrong = [
        f"line {line}: {href}: {why}" for line, href in links(path) if (why := broken(path, href))
    ]
    assert not wrong, f"{page_id(path)}:\n" + "\n".join(wrong)


def test_the_link_check_finds_a_missing_page_and_a_missing_anchor(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text(
        "# A page\n\n## The `--lesson-check` run\n\n## Again\n\n## Again\n"
    )
    page = tmp_path / "b.md"
    page.write_text(
        "[ok](a.md#the---lesson-check-run) [dup](a.md#again-1) [here](#b)\n\n# B\n\n"
        "[gone](c.md) [no anchor](a.md#the-sandbox) [web](https://example.org/#x)\n"
    )
    found = {href: broken(page, href) for _, href in links(page)}
    assert found == {
        "a.md#the---lesson-check-run": None,
        "a.md#again-1": None,
        "#b": None,
        "c.md": "c.md does not exist",
        "a.md#the-sandbox": "a.md has no heading whose anchor is #the-sandbox",
    }


# --- what a page copies from the code ------------------------------------------------------


def test_the_detectors_a_watch_out_may_word_are_the_format_pages_list() -> None:
    from pytest_lessons.core.model import DETECTORS

    page = (DOCS / "authors" / "format-v1.md").read_text(encoding="utf-8")
    listed = re.search(r"# \(([a-z, ]+)\) for this lesson", page)
    assert listed, "docs/authors/format-v1.md lost its list of detectors (detector = ...)"
    assert tuple(listed.group(1).split(", ")) == DETECTORS


def test_the_generated_tables_hold_every_row_of_the_codes_tables() -> None:
    """The site's reference tables are made from the code's (docs/_ext/lessons_tables.py);
    each row the code has is in them, and a marker that names no table stops the build."""
    from pytest_lessons.core.settings import SETTINGS
    from pytest_lessons.reports.options import MERGE, OUTPUT_OPTIONS, PYTEST
    from pytest_lessons.reports.registry import FORMATS, LAYOUTS

    spec = importlib.util.spec_from_file_location(
        "lessons_tables", DOCS / "_ext" / "lessons_tables.py"
    )
    assert spec and spec.loader
    tables = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tables)
    made = tables.fill(
        "\n".join(
            f"<!-- table: {name} -->"
            for name in ("settings", "report-formats", "gradebook-layouts", "output-options")
        )
    )
    rows = [line for line in made.splitlines() if line.startswith("| `")]
    assert len(rows) == len(FORMATS) + len(LAYOUTS)
    for setting in SETTINGS:
        assert f"`{setting.env}`" in made and " ".join(setting.help.split()) in made
    assert "### `--lesson-workers=N`\n\nini `lesson_workers`, environment " in made
    assert "`PYTEST_LESSONS_WORKERS`, default `auto`.\n" in made
    assert "`PYTEST_LESSONS_PASS_ENV`, default (none).\n" in made
    assert "default `10`; an exercise may set `timeout` in its `exercise.toml`." in made
    for option in OUTPUT_OPTIONS:
        assert f"### `{option.flag(PYTEST)}" in made and f"`{option.flag(MERGE)}" in made
    for row in (*FORMATS, *LAYOUTS):
        assert f"| `{row.name}` |" in made
    with pytest.raises(KeyError, match="no table named 'setting'"):
        tables.fill("<!-- table: setting -->")


# --- the examples --------------------------------------------------------------------------


@cache
def long_options(*command: str) -> frozenset[str]:
    """The long options *command* lists in its ``--help`` (pytest with this plugin, or the
    merge command)."""
    plugin: list[str] = []
    if command == ("pytest",):
        registered = {e.name for e in importlib.metadata.entry_points(group="pytest11")}
        plugin = [] if "lessons" in registered else ["-p", "pytest_lessons.plugin"]
        command = ("-m", "pytest", "-p", "no:cacheprovider", *plugin)
    else:
        command = ("-m", "pytest_lessons", *command)
    shown = subprocess.run(
        [sys.executable, *command, "--help"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    return frozenset(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", shown))


#: pytest's options that take the next word as their value.
PYTEST_VALUES = {"-n", "-k", "-m", "-p", "-o", "-c", "--maxfail", "--deselect"}


def _exists(word: str) -> str | None:
    return None if (ROOT / word).exists() or "*" in word else f"{word} does not exist"


def _options(words: list[str], known: frozenset[str], command: str) -> list[str]:
    return [
        f"{command} has no option {word.split('=')[0]}"
        for word in words
        if word.startswith("--") and word.split("=")[0] not in known
    ]


def check_pytest(words: list[str]) -> list[str]:
    problems = _options(words, long_options("pytest"), "pytest")
    after_value = False
    for word in words:
        if not after_value and not word.startswith("-"):
            problems += filter(None, [_exists(word)])
        after_value = word in PYTEST_VALUES
    return problems


def check_pip(words: list[str]) -> list[str]:
    if words[:1] != ["install"]:
        return [f"pip {' '.join(words)}: only pip install is checked"]
    project = _pyproject()
    problems = []
    for before, word in zip(["install", *words], words[1:]):
        extras = re.fullmatch(r"\.\[([a-z,]+)\]", word)
        if extras:
            problems += [
                f"pyproject.toml has no extra {name!r}"
                for name in extras.group(1).split(",")
                if name not in project["project"]["optional-dependencies"]
            ]
        elif before in ("-r", "--requirement") or word.startswith(("./", "../")):
            problems += filter(None, [_exists(word)])
    return problems


@cache
def _pyproject() -> dict[str, Any]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:
        import tomli as tomllib
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def check_python(words: list[str]) -> list[str]:
    if words[:1] == ["-m"] and len(words) > 1:
        module, rest = words[1], words[2:]
        if module == "pytest":
            return check_pytest(rest)
        if module == "pip":
            return check_pip(rest)
        if module.startswith("pytest_lessons"):
            if importlib.util.find_spec(module) is None:
                return [f"there is no module {module}"]
            if module == "pytest_lessons" and rest[:1] == ["merge"]:
                return _options(rest, long_options("merge"), "the merge command")
        return []
    script = next((w for w in words if not w.startswith("-")), None)
    return (
        [f"python runs no file: {words}"]
        if script is None
        else list(filter(None, [_exists(script)]))
    )


def check_command(words: list[str]) -> list[str]:
    """What is wrong with one simple command of a bash example (empty when nothing is)."""
    while words and re.fullmatch(r"[A-Z_]+=\S*", words[0]):
        words = words[1:]  # VARIABLE=value before the command
    if not words:
        return []
    name, rest = words[0], words[1:]
    if name == "pytest":
        return check_pytest(rest)
    if name == "pip":
        return check_pip(rest)
    if re.fullmatch(r"(\S*/)?(python3?|py)", name):
        return check_python(rest)
    if name == "export":
        return []
    if name in ("bash", ".", "source", "cd"):
        return list(filter(None, [_exists(rest[0])])) if rest and name != "." else []
    if name == "cp":
        return list(filter(None, [_exists(rest[0])]))
    if name == "git" and rest[:1] == ["checkout"]:
        return [p for w in rest[1:] if w != "--" and (p := _exists(w)) is not None]
    if name == "docker" and rest[:1] == ["build"]:
        # .ci/run builds the image where docker runs; here the Dockerfile it names must exist.
        return [p for i, w in enumerate(rest[1:]) if rest[i] == "-f" and (p := _exists(w))]
    if name == "docker" and rest[:1] == ["run"]:
        return []  # the built image's own run, which .ci/run's container stage makes
    if name in ("ruff", "mypy", "twine"):
        return []
    return [f"{name}: the examples do not check this command; say why it is not run"]


def check_bash(example: Any) -> str | None:
    source = re.sub(r"\\\n", " ", str(example.parsed))
    problems = []
    for line in source.splitlines():
        words = shlex.split(line, comments=True)
        command: list[str] = []
        for word in [*words, "&&"]:
            if word in ("&&", "||", ";", "|"):
                problems += check_command(command)
                command = []
            else:
                command.append(word)
    return "\n".join(problems) or None


def check_toml(example: Any) -> str | None:
    """Parse a TOML example, then check it as the plugin would: ``course.toml`` through the
    course's own reader (on lesson folders made for it), ``exercise.toml`` tables against the
    format's key lists."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:
        import tomli as tomllib
    try:
        data = tomllib.loads(str(example.parsed))
    except tomllib.TOMLDecodeError as error:
        return f"not valid TOML: {error}"
    if "course" in data or "chapter" in data or "library" in data:
        return _course_problem(str(example.parsed), data)
    return "\n".join(_exercise_problems(data)) or None


def _course_problem(text: str, data: dict[str, Any]) -> str | None:
    import tempfile

    from pytest_lessons.core import course

    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        lessons = list(data.get("course", {}).get("lessons", []))
        for chapter in data.get("chapter", []):
            lessons += chapter.get("lessons", [])
        if "course" not in data:  # a [library] table alone: in a course of its parts' lessons
            library_table = data.get("library", {})
            lessons = sorted(set(library_table.get("parts", {}).values()))
            lessons += [name for name in library_table.get("given", {}) if name not in lessons]
            text = f'[course]\ntitle = "x"\nlessons = {lessons!r}\n{text}'.replace("'", '"')
        for lesson in lessons:
            (root / lesson).mkdir(exist_ok=True)
            (root / lesson / "exercise.toml").write_text(
                '[exercise]\ntitle = "x"\ninputs = ["a"]\n'
            )
        library = data.get("library", {}).get("folder")
        if library:
            (root / library).mkdir()
            (root / library / "__init__.py").write_text("")
        (root / "course.toml").write_text(text)
        try:
            course.load(root / "course.toml")
        except (course.CourseError, ValueError) as error:
            return f"course.toml: {error}"
    return None


def _exercise_problems(data: dict[str, Any]) -> list[str]:
    from pytest_lessons.core import budget, model

    def unknown(table: Any, known: Any, where: str) -> list[str]:
        if not isinstance(table, dict):
            return []
        return [f"{where}: unknown key {key!r}" for key in table if key not in set(known)]

    def names(fields: Any) -> list[str]:
        return [f.name for f in fields]

    problems = unknown(data, model.TOP_LEVEL, "top level")
    exercise = data.get("exercise", {})
    problems += unknown(exercise, names(model.EXERCISE_FIELDS), "exercise")
    inputs = [i if isinstance(i, str) else i.get("name") for i in exercise.get("inputs", [])]
    for spec in exercise.get("inputs", []):
        problems += unknown(spec, model.INPUT_KEYS, "an input table")
    for case in data.get("case", []):
        known = names(model.CASE_FIELDS) + names(model.STATISTICAL_FIELDS)
        problems += unknown(case, known + inputs if inputs else [*known, *case], "case")
    for name, fields in (("watch_out", model.WATCH_OUT_FIELDS), ("hint", model.HINT_FIELDS)):
        for table in data.get(name, []):
            problems += unknown(table, names(fields), name)
    problems += unknown(data.get("solution"), names(model.SOLUTION_FIELDS), "solution")
    problems += unknown(data.get("gradients"), names(model.GRADIENT_FIELDS), "gradients")
    problems += unknown(
        data.get("generate"),
        [*names(model.GENERATE_FIELDS), *inputs] if inputs else data.get("generate", {}),
        "generate",
    )
    spent = data.get("budget", {})
    problems += unknown(spent, budget.BUDGET_KEYS, "budget")
    problems += unknown(spent.get("growth"), budget.GROWTH_KEYS, "budget.growth")
    return problems


def run_python(example: Any) -> str | None:
    """A ``python`` block, executed in its page's namespace. One that needs torch, which the
    docs' own environment leaves out, is skipped there: the test suite has torch and runs it."""
    try:
        exec(compile(str(example.parsed), example.path, "exec"), example.namespace)
    except ModuleNotFoundError as error:
        if error.name != "torch":
            raise
        raise unittest.SkipTest("needs torch, which the docs' environment leaves out") from None
    return None


def not_runnable(example: Any) -> str:
    """A block of a language no check reads (Windows commands): it must be marked."""
    return "this example cannot run here: put a skip marker before it that says why"


#: Fenced blocks that are not examples: output, data and the site's own directives.
NOT_EXAMPLES = {"", "text", "xml", "json", "yaml", "csv"}
RUN = {"python", "toml", "bash"}
MARKED = {"bat", "powershell"}


def _sybil() -> Any:
    from sybil import Sybil
    from sybil.parsers.markdown import CodeBlockParser, SkipParser

    return Sybil(
        parsers=[
            SkipParser(),
            CodeBlockParser("python", run_python),
            CodeBlockParser("toml", check_toml),
            CodeBlockParser("bash", check_bash),
            *(CodeBlockParser(language, not_runnable) for language in sorted(MARKED)),
        ]
    )


@pytest.mark.parametrize("path", PAGES, ids=page_id)
def test_every_example_of_a_page_works(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip(
        "sybil", reason="Sybil is not installed (the test extra has it on Python 3.11 or newer)"
    )
    monkeypatch.syspath_prepend(str(ROOT / "exercises"))  # a course's code imports course_lib
    failures = []
    for example in _sybil().parse(path):
        try:
            example.evaluate()
        except unittest.SkipTest:
            continue
        except Exception as error:  # the example's own failure, with its line
            failures.append(f"line {example.line}: {type(error).__name__}: {error}")
    assert not failures, f"{page_id(path)}:\n" + "\n".join(failures)


def test_every_code_block_is_an_example_a_check_reads_or_output() -> None:
    unread = []
    for path in PAGES:
        for token in MARKDOWN.parse(path.read_text(encoding="utf-8")):
            language = token.info.split()[0] if token.info.split() else ""
            # A directive of the site ({toctree}, {include}) is no code block.
            known = language.startswith("{") or language in RUN | MARKED | NOT_EXAMPLES
            if token.type == "fence" and not known:
                unread.append(f"{page_id(path)}, line {token.map[0] + 1}: {language}")
    assert not unread, "blocks of a language no check reads: " + ", ".join(unread)


def test_an_example_that_is_not_run_says_why() -> None:
    bare = [
        f"{page_id(path)}, line {n}"
        for path in PAGES
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.match(r"\s*<!--\s*skip:", line)
        and not re.match(r'\s*<!-- skip: next "[^"]{10,}" -->$', line)
    ]
    assert not bare, "a skip marker without its reason: " + ", ".join(bare)


def test_a_broken_example_of_each_kind_fails(tmp_path: Path) -> None:
    pytest.importorskip(
        "sybil", reason="Sybil is not installed (the test extra has it on Python 3.11 or newer)"
    )
    page = tmp_path / "page.md"
    page.write_text(
        "```python\nassert 1 + 1 == 3\n```\n\n"
        '```toml\n[exercise]\ntitle = "x"\ninputs = ["a"]\nexpect = 1\n```\n\n'
        "```toml\n[exercise\n```\n\n"
        "```bash\npytest exercises/no_such_lesson --lesson-hint\n```\n\n"
        "```bash\nrm -rf build\n```\n\n"
        '<!-- skip: next "shows a step that cannot run here" -->\n\n```bash\nrm -rf build\n```\n'
    )
    said = []
    for example in _sybil().parse(page):
        try:
            example.evaluate()
        except unittest.SkipTest as skipped:
            said.append(f"skipped: {skipped}")
        except Exception as error:
            said.append(f"{type(error).__name__}: {error}")
        else:
            said.append("passed")
    assert said[0].startswith("AssertionError"), said
    assert "exercise: unknown key 'expect'" in said[1]
    assert "not valid TOML" in said[2]
    assert "exercises/no_such_lesson does not exist" in said[3]
    assert "pytest has no option --lesson-hint" in said[3]
    assert "rm: the examples do not check this command" in said[4]
    # said[5] is the skip marker itself, then the example it skips.
    assert said[5:] == ["passed", "skipped: shows a step that cannot run here"], said
