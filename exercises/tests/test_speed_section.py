"""rung.yaml's speed section (issue 60): validated with errors naming file and key, and carried to a Submit's job."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from exercises.exceptions import CatalogError
from exercises.jobs import job_for
from exercises.loader import RungFiles, read_rung
from exercises.validation import RungSource

KV_RUNG = Path(__file__).resolve().parents[1] / "llm-systems-frontier" / "inference-and-serving" / "rungs" / "01-kv-cache-size"


@dataclass(frozen=True)
class TimedSource(RungSource):
    """A rung's content as a version row gives it to ``job_for``, with its speed phase (``RungVersion.speed_payload``)."""

    speed_payload: dict[str, Any] | None = None


def timed(files: RungFiles) -> TimedSource:
    return TimedSource(**RungSource.from_files(files).__dict__, speed_payload=files.speed_payload)


INPUTS = "def make_inputs(rng, layers):\n    return [layers, 8, 128, 4096, 2]\n"
SPEED = """
speed:
  entry: kv_cache_bytes
  sizes: [{layers: 32}, {layers: 80}]
  baseline: naive
  target: {speedup: 3}
  budget_s: 10
"""


def _rung(tmp_path: Path, section: str = SPEED, files: dict[str, str] | None = None) -> Path:
    rung = tmp_path / "01-kv-cache-size"
    shutil.copytree(KV_RUNG, rung, ignore=shutil.ignore_patterns("__pycache__"))
    meta = rung / "rung.yaml"
    meta.write_text(meta.read_text() + section)
    default = {"speed_inputs.py": INPUTS, "baseline.py": "def kv_cache_bytes(*args, **kwargs):\n    return 0\n"}
    for name, text in (default if files is None else files).items():
        (rung / name).write_text(text)
    return rung


def test_a_speed_section_reaches_the_submit_job_and_not_the_run(tmp_path: Path, settings: object) -> None:
    files = read_rung(_rung(tmp_path))
    assert files.meta.speed is not None and files.meta.speed.target.min_ratio == 3
    submit = job_for(timed(files), "submit", "x = 1")
    assert submit.speed is not None
    assert submit.speed["entry"] == "kv_cache_bytes" and submit.speed["generator"] == INPUTS
    assert submit.speed["baseline"].startswith("def kv_cache_bytes") and submit.speed["sizes"] == [{"layers": 32}, {"layers": 80}]
    assert (submit.speed["min_ratio"], submit.speed["budget_s"]) == (3, 10)
    assert job_for(timed(files), "run", "x = 1").speed is None


def test_within_the_reference_sends_the_reference_as_baseline(tmp_path: Path, settings: object) -> None:
    section = SPEED.replace("baseline: naive", "baseline: reference").replace("{speedup: 3}", "{within: 1.25}")
    files = read_rung(_rung(tmp_path, section, {"speed_inputs.py": INPUTS}))
    speed = job_for(timed(files), "submit", "").speed
    assert speed is not None and speed["baseline"] == files.reference and speed["min_ratio"] == pytest.approx(0.8)


def test_a_rung_without_speed_keeps_its_hash(tmp_path: Path) -> None:
    plain = read_rung(_rung(tmp_path / "a", "", {}))
    assert plain.content_hash == read_rung(KV_RUNG).content_hash
    assert plain.speed_payload is None


@pytest.mark.parametrize(
    ("section", "files", "said"),
    [
        (SPEED.replace("{speedup: 3}", "{speedup: 3, within: 1.2}"), None, "speed.target"),
        (SPEED.replace("{speedup: 3}", "{}"), None, "speed.target"),
        (SPEED.replace("baseline: naive", "baseline: fastest"), None, "speed.baseline"),
        (SPEED.replace("{speedup: 3}", "{within: 1.25}"), None, "target.within compares with the reference"),
        (SPEED.replace("budget_s: 10", "budget_s: 1000"), None, "speed.budget_s"),
        (SPEED.replace("entry: kv_cache_bytes", "entry: os.system"), None, "speed.entry"),
        (SPEED.replace("sizes: [{layers: 32}, {layers: 80}]", "sizes: []"), None, "speed.sizes"),
        (SPEED, {"baseline.py": "def f():\n    pass\n"}, "speed_inputs.py"),
        (SPEED, {"speed_inputs.py": "def other(rng):\n    pass\n", "baseline.py": "def kv_cache_bytes():\n    pass\n"}, "make_inputs"),
        (SPEED, {"speed_inputs.py": INPUTS, "baseline.py": "def other():\n    pass\n"}, "baseline.py: defines no kv_cache_bytes"),
        ("", {"speed_inputs.py": INPUTS}, "only a rung whose speed section needs it"),
    ],
)
def test_a_bad_speed_section_is_refused_naming_file_and_key(tmp_path: Path, section: str, files: dict[str, str] | None, said: str) -> None:
    with pytest.raises(CatalogError) as excinfo:
        read_rung(_rung(tmp_path, section, files))
    assert said in str(excinfo.value)


def test_a_published_version_carries_its_speed_phase_to_the_submit_job(db: object, tmp_path: Path) -> None:
    from exercises.models import Rung
    from exercises.services import sync_catalog

    module_dir = KV_RUNG.parent.parent
    copy = tmp_path / "catalog" / module_dir.parent.name / module_dir.name
    copy.mkdir(parents=True)
    shutil.copy(module_dir.parent / "track.yaml", copy.parent / "track.yaml")
    for item in module_dir.iterdir():
        if item.is_file():
            shutil.copy(item, copy / item.name)
    (copy / "rungs").mkdir()
    _rung(copy / "rungs")
    sync_catalog(tmp_path / "catalog")
    version = Rung.objects.get(slug="kv-cache-size").current_version
    assert version is not None and version.speed_payload is not None
    assert job_for(version, "submit", "").speed == version.speed_payload
    assert job_for(version, "run", "").speed is None


def test_the_budget_is_capped_to_the_one_clock(tmp_path: Path, settings: Any) -> None:
    settings.SANDBOX_MAX_SPEED_S = 5
    speed = job_for(timed(read_rung(_rung(tmp_path))), "submit", "").speed
    assert speed is not None and speed["budget_s"] == 5


@pytest.mark.parametrize(("verdict", "ok"), [("pass", True), ("ambiguous", False), ("fail", False)])
def test_validation_times_the_reference_and_each_alternative(tmp_path: Path, verdict: str, ok: bool) -> None:
    from exercises.validation import validate_rung
    from sandbox.jobs import Job, JobResult, SpeedFacts
    from sandbox.testing import FakeRunner, job_result

    def grade(job: Job) -> JobResult:
        if job.speed:
            return job_result("passed", speed=SpeedFacts(verdict, target=3.0, ratio=3.5, ci_low=3.2, ci_high=3.9, rounds=10))
        return job_result("passed")

    runner = FakeRunner(grade)
    source = RungSource.from_files(read_rung(_rung(tmp_path)))
    report = validate_rung(source, runner, mutants=False)
    facts = {fact.claim: fact for fact in report.facts if "speed target" in fact.claim}
    names = ["reference", *(f"alternatives/{name}" for name in sorted(source.alternatives))]
    assert sorted(facts) == sorted(f"{who} reaches the speed target (3.0x the baseline)" for who in names)
    assert all(fact.ok is ok and fact.evidence.startswith(f"{verdict}: 3.5x") for fact in facts.values())
    # Only the speed facts' own jobs carry the speed phase.
    assert sum(1 for job in runner.jobs if job.speed) == len(names)
