"""The sandbox: learner code cannot read the answers, change the course, see the grader's
secrets, reach the network or stop the run. Each known attack fails its own case, with words
that name what was refused, while a right answer in the same run passes."""

from __future__ import annotations

import fnmatch
import hashlib
import json
import os
import shutil
import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Callable

import pytest

from pytest_lessons.isolation import sandbox

from helpers import DOUBLE_RIGHT, DOUBLE_TOML, ROOT, failed, said

Make = Callable[..., Path]

SUPPORT = sandbox.probe()
needs_landlock = pytest.mark.skipif(
    not SUPPORT.abi, reason=f"no Landlock on this machine: {SUPPORT.reason}"
)
pytestmark = needs_landlock

#: Right on case 2; on case 1 (the 1-D input) it runs the attack first, then answers right,
#: so only a refused attack fails the case.
ATTACKER = """
import os, sys
from pathlib import Path
{imports}

def solve(x):
    if not isinstance(x[0], list):
{attack}
        return [2 * v for v in x]
    return [[2 * v for v in row] for row in x]
"""

#: The double exercise with a hidden case whose answer no learner output may ever show.
HIDDEN_TOML = (
    DOUBLE_TOML
    + """
[[case]]
name = "secret"
hidden = true
x = [[7.25], [8.5625]]
expected = [[14.5], [17.125]]
"""
)

#: A line of the reference that no learner output may ever show.
REFERENCE_MARK = "# the author's own answer: 5c1d"

MISTAKES = "def off_by_one(x):\n    return x\n"


def attacker(attack: str, imports: str = "") -> str:
    body = "\n".join("        " + line for line in attack.strip().splitlines())
    return ATTACKER.format(imports=imports, attack=body)


@pytest.fixture(params=["fork", "spawn"])
def isolation(request: pytest.FixtureRequest, no_preload: None) -> str:
    """Both ways learner code runs isolated: each confines itself the same way. (The attacks
    need no torch, so the processes that run them import none.)"""
    return str(request.param)


def course_files(folder: Path) -> dict[str, str]:
    return {
        path.name: hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.iterdir())
        if path.is_file()
    }


def make_double(make_exercise: Make, solution: str) -> Path:
    return make_exercise(
        solution=solution,
        toml=HIDDEN_TOML,
        reference__py=REFERENCE_MARK + "\n" + DOUBLE_RIGHT,
        mistakes__py=MISTAKES,
    )


@pytest.mark.usefixtures("no_preload")
def test_the_header_names_the_protections_this_kernel_gives(
    pytester: pytest.Pytester, make_exercise: Make
) -> None:
    make_exercise()
    # The sandbox's detail is -v's: a plain run's header is one line (the test below).
    result = pytester.runpytest("double", "-v")
    kinds = ", ".join(SUPPORT.protections)
    tools = f"Landlock ABI {SUPPORT.abi}" + (" + seccomp" if SUPPORT.seccomp else "")
    result.stdout.fnmatch_lines(
        [
            f"lessons: learner code runs isolated (fork, sandbox {tools}, torch *",
            f"lessons: the sandbox denies {kinds} outside the case; clean environment; runs as *",
        ]
    )
    assert "files" in kinds


@pytest.mark.parametrize(
    ("attack", "words"),
    [
        (
            'print(Path(__file__).with_name("reference.py").read_text())',
            "Remove the code that uses double/reference.py: that is not allowed while grading",
        ),
        (
            'import importlib\nimportlib.import_module("reference")',
            "Remove `import reference` and put the code you need in double/solution.py: "
            "reading double/reference.py is not allowed while grading",
        ),
        (
            "import importlib.util\n"
            'spec = importlib.util.spec_from_file_location("r", Path(__file__).with_name("reference.py"))\n'
            "spec.loader.exec_module(importlib.util.module_from_spec(spec))",
            "Remove the code that uses double/reference.py: that is not allowed while grading",
        ),
        (
            'exec(Path(__file__).with_name("mistakes.py").read_text())',
            "Remove the code that uses double/mistakes.py: that is not allowed while grading",
        ),
        (
            'print(Path(__file__).with_name("exercise.toml").read_text())',
            "Remove the code that uses double/exercise.toml: that is not allowed while grading",
        ),
        (
            "print(os.listdir(Path(__file__).parent))",
            "Remove the code that uses double: that is not allowed while grading",
        ),
    ],
    ids=["read", "import", "importlib-spec", "exec-mistakes", "hidden-case", "list-folder"],
)
def test_reading_the_course_fails_the_case_and_names_the_file(
    pytester: pytest.Pytester, make_exercise: Make, isolation: str, attack: str, words: str
) -> None:
    make_double(make_exercise, attacker(attack))
    result = pytester.runpytest(
        "double", f"--lesson-isolation={isolation}", "--lesson-report=r.json"
    )
    result.assert_outcomes(passed=2, failed=1)
    text = said(result)
    assert fnmatch.fnmatch(text, f"*double: case 1 (a row)* {words}*")
    # Nothing of the hidden case, nor of the reference, reached what the learner sees.
    report = (pytester.path / "r.json").read_text()
    for shown in (text, report):
        assert "17.125" not in shown and "8.5625" not in shown
        assert REFERENCE_MARK not in shown


@pytest.mark.parametrize(
    "attack",
    [
        'link = Path(os.environ["TMPDIR"], "r.py")\n'
        'link.symlink_to(Path(__file__).with_name("reference.py"))\n'
        "print(link.read_text())",
        'copy = Path(os.environ["TMPDIR"], "r.py")\n'
        'os.link(Path(__file__).with_name("reference.py"), copy)\n'
        "print(copy.read_text())",
    ],
    ids=["symlink", "hard-link"],
)
def test_a_link_from_the_private_folder_does_not_reach_the_course(
    pytester: pytest.Pytester, make_exercise: Make, isolation: str, attack: str
) -> None:
    make_double(make_exercise, attacker(attack))
    result = pytester.runpytest("double", f"--lesson-isolation={isolation}")
    result.assert_outcomes(passed=2, failed=1)
    text = said(result)
    assert "that is not allowed while grading" in text
    assert REFERENCE_MARK not in text


def test_a_fifo_in_place_of_the_result_cannot_stall_the_run(
    pytester: pytest.Pytester, make_exercise: Make, isolation: str
) -> None:
    attack = """
os.mkfifo(Path(os.environ["TMPDIR"], "result.json.part"))
os.mkfifo(Path(os.environ["TMPDIR"], "result.json"))
"""
    make_double(make_exercise, attacker(attack))
    result = pytester.runpytest("double", f"--lesson-isolation={isolation}")
    result.assert_outcomes(passed=2, failed=1)
    assert "that is not allowed while grading" in said(result)


@pytest.mark.parametrize("target", ["reference.py", "mistakes.py", "exercise.toml", "solution.py"])
def test_course_files_cannot_be_changed_or_removed(
    pytester: pytest.Pytester, make_exercise: Make, isolation: str, target: str
) -> None:
    attack = f"""
target = Path(__file__).with_name({target!r})
failures = []
for change in (
    lambda: target.write_text("def solve(x):\\n    return x\\n"),
    lambda: open(target, "a").write("# changed"),
    lambda: target.unlink(),
    lambda: target.rename(target.with_name("moved")),
    lambda: os.truncate(target, 0),
    lambda: os.chmod(target, 0),
):
    try:
        change()
    except OSError as exc:
        failures.append(exc)
if len(failures) == 6:
    raise failures[0]
"""
    folder = make_double(make_exercise, attacker(attack))
    before = course_files(folder)
    result = pytester.runpytest("double", f"--lesson-isolation={isolation}")
    result.assert_outcomes(passed=2, failed=1)
    assert "that is not allowed while grading" in said(result)
    assert course_files(folder) == before
    assert (folder / target).stat().st_mode & 0o777 != 0


@pytest.mark.usefixtures("no_preload")
def test_a_classmates_solution_cannot_be_read_in_batch_grading(
    pytester: pytest.Pytester, make_exercise: Make
) -> None:
    make_double(make_exercise, DOUBLE_RIGHT)
    submissions = pytester.path / "class"
    (submissions / "ada" / "double").mkdir(parents=True)
    (submissions / "ada" / "double" / "solution.py").write_text(DOUBLE_RIGHT)
    (submissions / "eve" / "double").mkdir(parents=True)
    copy = "ns = {}\nexec((Path(__file__).parents[2] / 'ada' / 'double' / 'solution.py').read_text(), ns)\nreturn ns['solve'](x)"
    (submissions / "eve" / "double" / "solution.py").write_text(
        "from pathlib import Path\n\ndef solve(x):\n"
        + "\n".join("    " + line for line in copy.splitlines())
        + "\n"
    )
    result = pytester.runpytest(
        "double",
        "--lesson-submissions=class",
        "--lesson-gradebook=gradebook.csv",
        "--lesson-show-failures",
    )
    assert result.parseoutcomes()["passed"] == 3 and failed(result) == 3
    assert "Remove the code that uses class/ada/double/solution.py: that is not allowed" in said(
        result
    )
    book = (pytester.path / "gradebook.csv").read_text().splitlines()
    assert book[1:] == ["ada,double,3,3,", "eve,double,0,3,"]


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    """A TCP server on 127.0.0.1 that should never hear from learner code."""
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.setblocking(False)
    yield server
    server.close()


def test_no_tcp_connection_reaches_a_listener(
    pytester: pytest.Pytester, make_exercise: Make, isolation: str, listener: socket.socket
) -> None:
    if SUPPORT.abi < 4:
        pytest.skip(f"Landlock ABI {SUPPORT.abi} has no network rules (4 and later do)")
    port = listener.getsockname()[1]
    attack = f"""
import socket
import tempfile
with socket.create_connection(("127.0.0.1", {port}), timeout=2) as connection:
    connection.sendall(b"the hidden cases")
"""
    make_double(make_exercise, attacker(attack))
    result = pytester.runpytest("double", f"--lesson-isolation={isolation}")
    result.assert_outcomes(passed=2, failed=1)
    assert (
        "Remove the code that uses the network: connections are not allowed while grading."
        in said(result)
    )
    with pytest.raises(BlockingIOError):
        listener.accept()


def test_the_graders_environment_never_reaches_learner_output(
    pytester: pytest.Pytester,
    make_exercise: Make,
    isolation: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    secret = "gh-secret-7f3a9c"
    monkeypatch.setenv("GRADER_TOKEN", secret)
    monkeypatch.setenv("PASSED_ON", "visible-by-choice")
    attack = """
print(dict(os.environ))
for path in ("/proc/self/environ", f"/proc/{os.getppid()}/environ", "/proc/1/environ"):
    try:
        print(path, open(path, "rb").read())
    except OSError as exc:
        print(path, exc)
import subprocess
print(subprocess.run(["env"], capture_output=True, text=True).stdout)
raise RuntimeError("show what I printed")
"""
    make_double(make_exercise, attacker(attack))
    result = pytester.runpytest(
        "double",
        f"--lesson-isolation={isolation}",
        "--lesson-pass-env=PASSED_ON",
        "--lesson-report=r.json",
        "--junitxml=junit.xml",
    )
    result.assert_outcomes(passed=2, failed=1)
    text = result.stdout.str()
    assert "'PASSED_ON': 'visible-by-choice'" in text
    assert "'HOME': " in text
    for output in (text, *(p.read_text() for p in (pytester.path / "r.json",))):
        assert secret not in output
    assert secret not in (pytester.path / "junit.xml").read_text()


def test_home_is_a_private_folder_and_the_graders_home_is_untouched(
    pytester: pytest.Pytester,
    make_exercise: Make,
    isolation: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    home = pytester.path / "grader-home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    attack = f"""
import tempfile
mine = Path(os.path.expanduser("~")) / "notes.txt"
mine.write_text("scratch")
print("wrote", mine, tempfile.gettempdir() == os.environ["HOME"])
Path({str(home)!r}, "planted.py").write_text("import os")
"""
    make_double(make_exercise, attacker(attack))
    result = pytester.runpytest("double", f"--lesson-isolation={isolation}")
    result.assert_outcomes(passed=2, failed=1)
    text = said(result)
    assert "Remove the code that uses grader-home/planted.py: that is not allowed" in text
    assert " True" in text  # TMPDIR is the same private folder
    assert list(home.iterdir()) == []
    # The private folder went with the case.
    private = text.split("wrote ")[1].split(" ")[0]
    assert not Path(private).exists()


def test_killing_every_pytest_process_fails_only_that_case(
    pytester: pytest.Pytester, make_exercise: Make, isolation: str
) -> None:
    attack = """
import signal
targets = {os.getppid(), os.getpgid(os.getppid())}
try:
    for name in os.listdir("/proc"):
        if name.isdigit():
            with open(f"/proc/{name}/cmdline", "rb") as handle:
                if b"pytest" in handle.read():
                    targets.add(int(name))
except OSError as exc:
    print("no list of processes:", exc)
refused = []
for pid in targets:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass  # a group id that is no process's id
    except OSError as exc:
        refused.append(exc)
if refused:
    raise refused[0]
"""
    make_double(make_exercise, attacker(attack))
    result = pytester.runpytest_subprocess(
        "double", f"--lesson-isolation={isolation}", "--lesson-report=r.json"
    )
    assert result.ret == 1
    result.assert_outcomes(passed=2, failed=1)
    assert (
        "Remove the code that signals or controls another process: that is not allowed while "
        "grading." in said(result)
    )
    report = json.loads((pytester.path / "r.json").read_text())
    assert [r["status"] for r in report["results"]] == ["error", "passed", "passed"]


def test_a_solution_using_many_torch_operators_passes_in_the_sandbox(
    pytester: pytest.Pytester, combine_heads: Make
) -> None:
    # torch loads libraries and files lazily; every one of them must stay readable.
    combine_heads(
        """
        import math
        import torch
        import torch.nn.functional as F

        def solve(Q, K, V):
            q, k, v = (torch.tensor(x, dtype=torch.float64) for x in (Q, K, V))
            scores = torch.einsum("htd,hsd->hts", q, k) / math.sqrt(q.shape[-1])
            weights = F.softmax(scores, dim=-1)
            out = torch.bmm(weights, v)
            check = F.scaled_dot_product_attention(q, k, v)
            assert torch.allclose(out, check)
            torch.linalg.svd(out.flatten(1)); torch.fft.rfft(out, dim=-1); torch.distributions.Normal(0, 1).sample()
            F.layer_norm(out, out.shape[-1:]); torch.nn.Linear(2, 2)(torch.zeros(1, 2))
            out = torch.cat([torch.stack(list(out.unbind(0)), 0)], 0)
            return out.permute(1, 0, 2).reshape(q.shape[1], -1).numpy().tolist()
        """
    )
    result = pytester.runpytest("combine_heads", "--lesson-timeout=60")
    result.assert_outcomes(passed=10)


@pytest.mark.torch
@pytest.mark.course
def test_every_lesson_of_the_course_passes_with_its_reference_in_the_sandbox(
    pytester: pytest.Pytester,
) -> None:
    shutil.copytree(ROOT / "exercises", pytester.path / "exercises")
    lessons = 0
    for lesson in (pytester.path / "exercises").iterdir():
        if (lesson / "reference.py").exists():
            shutil.copy(lesson / "reference.py", lesson / "solution.py")
            lessons += 1
    result = pytester.runpytest("exercises", "--lesson-sandbox=require")
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed", 0) >= 40 and "failed" not in outcomes
    result.stdout.fnmatch_lines([f"lessons: {lessons}/{lessons} passed *"])


@pytest.mark.usefixtures("no_preload")
def test_without_the_sandbox_the_header_and_a_grading_run_say_so(
    pytester: pytest.Pytester, make_exercise: Make
) -> None:
    make_exercise()
    result = pytester.runpytest("double", "--lesson-sandbox=off", "--lesson-report=r.json")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(
        [
            "lessons: learner code runs isolated (fork, sandbox OFF, *",
            "lessons: WARNING: grading without a sandbox.*",
        ]
    )
    assert said(result).count("WARNING: grading without a sandbox") == 2
    # Without -v the header is one line: the sandbox's detail (a Python's path among it) is -v's.
    assert "learner code can read and change what you can" not in said(result)


# --- the policy, without running anything --------------------------------------------------


def test_the_readable_paths_leave_out_the_course_checkout_and_submissions(tmp_path: Path) -> None:
    system = tmp_path / "usr"
    (system / "lib").mkdir(parents=True)
    (system / "share" / "course" / "lesson").mkdir(parents=True)
    (system / "share" / "doc").mkdir()
    checkout = tmp_path / "checkout"
    venv = checkout / ".venv"
    (venv / "lib" / "site-packages").mkdir(parents=True)
    (checkout / "tests").mkdir()
    lesson = checkout / "exercises" / "combine_heads"
    lesson.mkdir(parents=True)
    submissions = tmp_path / "class"
    submissions.mkdir()
    allowed = sandbox.read_paths(
        system=[str(system), str(tmp_path / "nowhere")],
        runtime=[
            str(venv),
            str(venv / "lib" / "site-packages"),
            str(checkout),
            "",
            str(lesson),
            str(checkout / "tests"),
            str(tmp_path),
        ],
        prefixes=[str(venv)],
        course=[system / "share" / "course" / "lesson", lesson, submissions],
        checkout=checkout,
    )
    assert allowed == [
        # The system folder that holds a lesson is opened up around it.
        str(system / "lib"),
        str(system / "share" / "doc"),
        # The interpreter's installation inside the checkout stays readable; the checkout, its
        # tests, the lesson and the folders above them do not.
        str(venv),
        str(venv / "lib" / "site-packages"),
    ]


def test_the_readable_paths_need_no_rule_for_what_another_holds(tmp_path: Path) -> None:
    (tmp_path / "usr" / "bin").mkdir(parents=True)
    (tmp_path / "usr" / "zone").write_text("UTC")
    (tmp_path / "etc").mkdir()
    (tmp_path / "bin").symlink_to(tmp_path / "usr" / "bin")
    (tmp_path / "etc" / "localtime").symlink_to(tmp_path / "usr" / "zone")
    (tmp_path / "etc" / "passwd").write_text("root")
    paths = [str(tmp_path / name) for name in ("usr", "bin", "etc/localtime", "etc/passwd")]
    paths += [str(tmp_path / "usr" / "bin"), str(tmp_path / "usr"), "/proc/self", "/proc/stat"]
    # A folder's rule allows what it holds, links followed as Landlock follows them; each
    # process's own /proc/self is never resolved in the grader's.
    assert sandbox.outermost(paths) == [
        str(tmp_path / "usr"),
        str(tmp_path / "etc" / "passwd"),
        "/proc/self",
        "/proc/stat",
    ]


def test_the_environment_is_an_allow_list() -> None:
    environ = {
        "PATH": "/usr/bin",
        "LANG": "C.UTF-8",
        "LC_ALL": "C",
        "OMP_NUM_THREADS": "2",
        "GITHUB_TOKEN": "x",
        "AWS_SECRET_ACCESS_KEY": "y",
        "HOME": "/root",
        "MY_SETTING": "z",
    }
    assert sandbox.learner_env(environ, passed=["MY_SETTING"]) == {
        "PATH": "/usr/bin",
        "LANG": "C.UTF-8",
        "LC_ALL": "C",
        "OMP_NUM_THREADS": "2",
        "MY_SETTING": "z",
    }


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0, reason="switching user needs root"
)
def test_as_root_the_child_switches_to_an_unprivileged_user_before_it_is_confined() -> None:
    # Laid out as the runner does: a folder others may pass through, a private one inside.
    session = Path(tempfile.mkdtemp(prefix="pytest-lessons-test-"))
    session.chmod(0o711)
    private = session / "case"
    private.mkdir(mode=0o700)
    policy = sandbox.Policy(abi=SUPPORT.abi, read=tuple(sandbox.SYSTEM_READ), uid=65534, gid=65534)
    policy.prepare_private(private)
    readable, writable = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child reports through the pipe
        found = {}
        try:
            sandbox.confine(policy.request(private, private / "solution.py"))
            found["uid"] = os.getuid()
            found["cwd"] = os.getcwd()
            (private / "scratch").write_text("mine")
            for name, action in (
                ("signal", lambda: os.kill(os.getppid(), 0)),
                ("read", lambda: Path(__file__).read_text()),
            ):
                try:
                    action()
                    found[name] = "allowed"
                except OSError as exc:
                    found[name] = type(exc).__name__
        except BaseException as exc:
            found["error"] = repr(exc)
        os.write(writable, json.dumps(found).encode())
        os._exit(0)
    os.close(writable)
    with os.fdopen(readable, "rb") as handle:
        found = json.loads(handle.read())
    os.waitpid(pid, 0)
    assert found == {
        "uid": 65534,
        "cwd": str(private),
        "signal": "PermissionError",
        "read": "PermissionError",
    }
    assert (private / "scratch").stat().st_uid == 65534
    shutil.rmtree(session)


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0, reason="the user is looked up only as root"
)
def test_a_user_that_does_not_exist_stops_the_run_before_anything_is_graded(
    pytester: pytest.Pytester, make_exercise: Make
) -> None:
    make_double(make_exercise, DOUBLE_RIGHT)
    result = pytester.runpytest("double", "--lesson-sandbox-user=no-such-learner-user")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*--lesson-sandbox-user: there is no user 'no-such-learner-user' on this system*"]
    )
