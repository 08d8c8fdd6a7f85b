"""``python -m pytest_lessons push canvas``, through canvasapi, against a fake Canvas on the
loopback that answers the endpoints canvasapi calls as Canvas's REST API documents them: the
course, the assignment, its submissions (paginated with Link headers), the bulk grade update
(``POST .../submissions/update_grades``, form fields ``grade_data[<user id>][posted_grade]``,
answered with a Progress) and the progress itself."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest

from pytest_lessons import __main__ as commands
from pytest_lessons.core.results import CaseResult
from pytest_lessons.core.submissions import Roll
from pytest_lessons.reports import outputs
from pytest_lessons.reports.outputs import Outputs

from helpers import case_result

pytest.importorskip("canvasapi")

TOKEN = "test-token-7"
COURSE, ASSIGNMENT = 31, 402


class FakeCanvas:
    """Canvas's state for one assignment, and every request it was sent."""

    def __init__(self, scores: dict[int, float | None]) -> None:
        self.scores = dict(scores)
        self.points_possible = 2.0
        self.requests: list[tuple[str, str, dict[str, str]]] = []
        self.ignore: set[int] = set()
        """Users whose grades an upload silently leaves as they were."""
        self.fail_with = ""
        """A progress that fails with this message."""
        self.tokens: set[str] = set()
        self.polls = 0

    def answer(self, method: str, path: str, form: dict[str, str]) -> tuple[int, Any, str]:
        self.requests.append((method, path, form))
        base = f"/api/v1/courses/{COURSE}"
        assignment = f"{base}/assignments/{ASSIGNMENT}"
        if method == "GET" and path == base:
            return 200, {"id": COURSE, "name": "GPT from scratch"}, ""
        if method == "GET" and path == assignment:
            return (
                200,
                {
                    "id": ASSIGNMENT,
                    "course_id": COURSE,
                    "name": "Lessons",
                    "points_possible": self.points_possible,
                },
                "",
            )
        if method == "GET" and path == f"{assignment}/submissions":
            users = sorted(self.scores)
            page = int(form.get("page", "1"))
            chunk = users[(page - 1) * 2 : page * 2]
            body = [
                {"id": 9000 + u, "user_id": u, "assignment_id": ASSIGNMENT, "score": self.scores[u]}
                for u in chunk
            ]
            link = ""
            if page * 2 < len(users):
                link = f'<http://{{host}}{path}?page={page + 1}&per_page=2>; rel="next"'
            return 200, body, link
        if method == "POST" and path == f"{assignment}/submissions/update_grades":
            for key, value in form.items():
                user = int(key.removeprefix("grade_data[").split("]")[0])
                if not self.fail_with and user not in self.ignore:
                    self.scores[user] = float(value)
            return 200, {"id": 77, "workflow_state": "queued", "url": "/api/v1/progress/77"}, ""
        if method == "GET" and path == "/api/v1/progress/77":
            self.polls += 1
            if self.polls < 2:
                return 200, {"id": 77, "workflow_state": "running", "completion": 50}, ""
            if self.fail_with:
                return 200, {"id": 77, "workflow_state": "failed", "message": self.fail_with}, ""
            return 200, {"id": 77, "workflow_state": "completed", "completion": 100}, ""
        return 404, {"errors": [{"message": "The specified resource does not exist."}]}, ""


@pytest.fixture
def canvas() -> Iterator[tuple[FakeCanvas, str]]:
    state = FakeCanvas({1001: 2.0, 1002: None, 1003: 1.0})

    class Handler(BaseHTTPRequestHandler):
        def _serve(self, method: str) -> None:
            parts = urlsplit(self.path)
            form = dict(parse_qsl(parts.query))
            if method == "POST":
                length = int(self.headers.get("Content-Length", "0"))
                form.update(parse_qsl(self.rfile.read(length).decode()))
            state.tokens.add(self.headers.get("Authorization", ""))
            status, body, link = state.answer(method, parts.path, form)
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            if link:
                self.send_header("Link", link.replace("{host}", self.headers["Host"]))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            self._serve("GET")

        def do_POST(self) -> None:
            self._serve("POST")

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def class_files(top: Path, passes: dict[str, int], roster: str) -> None:
    """A class's json report (each learner passing the first N of 2 cases) and its roster."""
    results: list[CaseResult] = [
        case_result(case, case <= n, learner=who, cases=2)
        for who, n in passes.items()
        for case in (1, 2)
    ]
    outputs.write(Outputs(report="class.json"), results, 1.0, top, Roll(tuple(passes)))
    (top / "roster.csv").write_text(roster)


ROSTER = (
    "learner,Student,ID,SIS User ID,email\n"
    "ada,Ada L,1001,s1,ada@example.edu\n"
    "bo,Bo K,1002,s2,bo@example.edu\n"
    "cy,Cy M,1003,s3,cy@example.edu\n"
)


def push(
    top: Path, url: str, capsys: pytest.CaptureFixture[str], *extra: str
) -> tuple[int, str, str]:
    argv = [
        "push", "canvas", str(top / "class.json"), "--roster", str(top / "roster.csv"),
        "--url", url, "--course", str(COURSE), "--assignment", str(ASSIGNMENT), "--wait", "5",
        *extra,
    ]  # fmt: skip
    status = commands.main(argv)
    out, err = capsys.readouterr()
    return status, out, err


def test_a_dry_run_shows_the_changes_then_apply_uploads_only_those_and_a_rerun_uploads_none(
    tmp_path: Path,
    canvas: tuple[FakeCanvas, str],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    state, url = canvas
    monkeypatch.setenv("CANVAS_API_TOKEN", TOKEN)
    class_files(tmp_path, {"ada": 2, "bo": 1, "cy": 2}, ROSTER)
    status, out, err = push(tmp_path, url, capsys)
    assert (status, err) == (0, "")
    assert "canvas: GPT from scratch, assignment Lessons (2 points)" in out
    assert "canvas: 2 grades would change, 1 unchanged (skipped)" in out
    assert "  bo (Canvas 1002): no grade → 1 of 2" in out
    assert "  cy (Canvas 1003): 1 → 2 of 2" in out and "ada (Canvas" not in out
    assert "a dry run, nothing was sent: give --apply" in out
    assert not [r for r in state.requests if r[0] == "POST"]

    status, out, err = push(tmp_path, url, capsys, "--apply")
    assert (status, err) == (0, ""), err
    assert "canvas: uploaded 2 grades; Canvas holds them" in out
    [(_, _, form)] = [r for r in state.requests if r[0] == "POST"]
    # Only the changes, keyed by Canvas id: ada's unchanged grade is not sent again.
    assert form == {"grade_data[1002][posted_grade]": "1", "grade_data[1003][posted_grade]": "2"}
    assert state.scores == {1001: 2.0, 1002: 1.0, 1003: 2.0}
    assert state.tokens == {f"Bearer {TOKEN}"}

    status, out, _ = push(tmp_path, url, capsys, "--apply")
    assert status == 0 and "nothing to upload: every grade is unchanged" in out
    assert len([r for r in state.requests if r[0] == "POST"]) == 1
    # Every request went to an endpoint of the course's assignment, none to one a name or
    # an e-mail could shape.
    paths = {path for _, path, _ in state.requests}
    assert paths <= {
        f"/api/v1/courses/{COURSE}",
        f"/api/v1/courses/{COURSE}/assignments/{ASSIGNMENT}",
        f"/api/v1/courses/{COURSE}/assignments/{ASSIGNMENT}/submissions",
        f"/api/v1/courses/{COURSE}/assignments/{ASSIGNMENT}/submissions/update_grades",
        "/api/v1/progress/77",
    }
    assert not any("example.edu" in json.dumps(r) for r in state.requests)

    # A regrade that would lower bo's grade is held at the best recorded one, and said.
    outputs.write(
        Outputs(history="h"),
        [case_result(c, True, learner="bo", cases=2) for c in (1, 2)],
        1.0,
        tmp_path,
        Roll(("bo",)),
    )
    status, out, _ = push(tmp_path, url, capsys, "--history", str(tmp_path / "h"), "--never-lower")
    assert status == 0 and "  bo (Canvas 1002): 1 → 2 of 2 (held at the best recorded)" in out
    assert "never lower: 1 grade of 1 learner held" in out


def test_a_failed_upload_fails_loudly_and_names_each_learner(
    tmp_path: Path,
    canvas: tuple[FakeCanvas, str],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    state, url = canvas
    monkeypatch.setenv("CANVAS_API_TOKEN", TOKEN)
    class_files(tmp_path, {"ada": 2, "bo": 1, "cy": 2}, ROSTER)
    state.ignore = {1003}  # Canvas answers "completed" but keeps cy's old grade
    status, _, err = push(tmp_path, url, capsys, "--apply")
    assert status == 1
    assert (
        "push: ERROR: Canvas did not take the grade of cy (Canvas 1003): it holds 1, 2 was sent"
        in err
    )
    assert "bo (Canvas" not in err  # bo's grade was taken

    state.ignore, state.polls, state.fail_with = set(), 0, "Grading rules changed"
    status, _, err = push(tmp_path, url, capsys, "--apply")
    assert status == 1
    assert "push: ERROR: Canvas failed the upload (Grading rules changed)" in err
    assert "cy (Canvas 1003)" in err


def test_learners_are_matched_on_the_canvas_id_alone_and_a_bad_one_sends_nothing(
    tmp_path: Path,
    canvas: tuple[FakeCanvas, str],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    state, url = canvas
    monkeypatch.setenv("CANVAS_API_TOKEN", TOKEN)
    # An e-mail is no match: a roster without Canvas's ID is refused.
    class_files(tmp_path, {"ada": 2}, "learner,email\nada,ada@example.edu\n")
    status, _, err = push(tmp_path, url, capsys, "--apply")
    assert status == 2 and "in a column named `ID`" in err and "never by name or e-mail" in err
    # An id that is no whole number (it could shape a request) is refused, naming the row.
    class_files(tmp_path, {"ada": 2, "bo": 1}, "learner,ID\nada,1001\nbo,1002][x\n")
    status, _, err = push(tmp_path, url, capsys, "--apply")
    assert status == 2 and "bo (ID '1002][x')" in err and "Nothing was sent." in err
    # An id Canvas does not know in the assignment: named, and nothing is sent.
    class_files(tmp_path, {"ada": 2, "bo": 1}, "learner,ID\nada,1001\nbo,5555\n")
    status, _, err = push(tmp_path, url, capsys, "--apply")
    assert status == 2 and "not in the assignment in Canvas" in err and "bo (Canvas 5555)" in err
    # Points possible that differ from the grades' maximum would scale every grade wrong.
    state.points_possible = 10.0
    class_files(tmp_path, {"ada": 2}, "learner,ID\nada,1001\n")
    status, _, err = push(tmp_path, url, capsys, "--apply")
    assert status == 2 and "worth 10 points in Canvas and these grades are out of 2" in err
    assert not [r for r in state.requests if r[0] == "POST"]
    # The token is read from the environment alone, and travels only over https or loopback.
    monkeypatch.delenv("CANVAS_API_TOKEN")
    status, _, err = push(tmp_path, url, capsys)
    assert status == 2 and "Put a Canvas API token in CANVAS_API_TOKEN" in err
    monkeypatch.setenv("CANVAS_API_TOKEN", TOKEN)
    status, _, err = push(tmp_path, "http://canvas.example.edu", capsys)
    assert status == 2 and "give an https:// address" in err
