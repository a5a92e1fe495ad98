from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from exercises.exceptions import CatalogError
from exercises.loader import read_rung
from exercises.models import Rung, RungVersion
from exercises.services import sync_catalog

KV_RUNG = Path(__file__).resolve().parents[1] / "llm-systems-frontier" / "inference-and-serving" / "rungs" / "01-kv-cache-size"


def _copy_catalog(tmp_path: Path, settings) -> Path:
    root = tmp_path / "exercises"
    shutil.copytree(settings.EXERCISES_DIR / "llm-systems-frontier", root / "llm-systems-frontier", ignore=shutil.ignore_patterns("__pycache__"))
    return root


def test_it_loads_the_kv_cache_rung(catalog):
    rung = Rung.objects.get(slug="kv-cache-size")
    assert rung.current_version is not None
    assert rung.current_version.title == "Size the KV cache"
    assert rung.current_version.hidden_test_meta
    assert len(rung.current_version.wrong_solutions) >= 3


def test_a_second_run_on_unchanged_files_creates_no_version(db, settings):
    first = sync_catalog(settings.EXERCISES_DIR)
    versions = RungVersion.objects.count()
    second = sync_catalog(settings.EXERCISES_DIR)
    assert first.new_versions
    assert second.new_versions == []
    assert second.changed_modules == []
    assert RungVersion.objects.count() == versions


def test_a_changed_rung_becomes_a_new_version_and_keeps_the_old(db, tmp_path, settings):
    root = _copy_catalog(tmp_path, settings)
    sync_catalog(root)
    rung = Rung.objects.get(slug="kv-cache-size")
    old = rung.current_version
    instructions = next(root.rglob("01-kv-cache-size")) / "instructions.md"
    instructions.write_text(instructions.read_text() + "\nOne more sentence.\n")
    report = sync_catalog(root)
    rung.refresh_from_db()
    assert report.new_versions == ["kv-cache-size"]
    assert rung.current_version is not None and old is not None
    assert rung.current_version.number == old.number + 1
    old.refresh_from_db()
    assert "One more sentence" not in old.instructions_md


def test_it_refuses_an_unknown_key_naming_file_and_key(tmp_path):
    rung = tmp_path / "01-kv-cache-size"
    shutil.copytree(KV_RUNG, rung, ignore=shutil.ignore_patterns("__pycache__"))
    meta = rung / "rung.yaml"
    meta.write_text(meta.read_text() + "colour: blue\n")
    with pytest.raises(CatalogError) as excinfo:
        read_rung(rung)
    assert str(meta) in str(excinfo.value)
    assert "colour" in str(excinfo.value)


def test_it_refuses_a_wrong_type_naming_file_and_key(tmp_path):
    rung = tmp_path / "01-kv-cache-size"
    shutil.copytree(KV_RUNG, rung, ignore=shutil.ignore_patterns("__pycache__"))
    meta = rung / "rung.yaml"
    meta.write_text(meta.read_text().replace("minutes: 8", "minutes: eight"))
    with pytest.raises(CatalogError, match=r"rung\.yaml: key 'minutes'"):
        read_rung(rung)


def test_it_refuses_a_hidden_test_without_description(tmp_path):
    rung = tmp_path / "01-kv-cache-size"
    shutil.copytree(KV_RUNG, rung, ignore=shutil.ignore_patterns("__pycache__"))
    hidden = rung / "test_hidden.py"
    hidden.write_text(hidden.read_text() + "\n\ndef test_brand_new_case(solution):\n    assert True\n")
    with pytest.raises(CatalogError, match=r"hidden_tests\.test_brand_new_case"):
        read_rung(rung)


def test_it_refuses_invalid_yaml(tmp_path):
    rung = tmp_path / "01-kv-cache-size"
    shutil.copytree(KV_RUNG, rung, ignore=shutil.ignore_patterns("__pycache__"))
    (rung / "rung.yaml").write_text("slug: [unclosed\n")
    with pytest.raises(CatalogError, match="invalid YAML"):
        read_rung(rung)


def test_a_broken_file_changes_nothing_in_the_database(db, tmp_path, settings):
    root = _copy_catalog(tmp_path, settings)
    sync_catalog(root)
    before = RungVersion.objects.count()
    rung_dir = next(root.rglob("01-kv-cache-size"))
    (rung_dir / "instructions.md").write_text("changed")
    (rung_dir / "rung.yaml").write_text((rung_dir / "rung.yaml").read_text() + "oops: 1\n")
    with pytest.raises(CatalogError):
        sync_catalog(root)
    assert RungVersion.objects.count() == before


def test_the_load_command_reports_the_broken_file(db, tmp_path, settings):
    from django.core.management import CommandError, call_command

    root = _copy_catalog(tmp_path, settings)
    meta = next(root.rglob("01-kv-cache-size")) / "rung.yaml"
    meta.write_text(meta.read_text() + "colour: blue\n")
    with pytest.raises(CommandError, match="colour"):
        call_command("load_exercises", "--path", str(root))


def test_an_in_app_source_must_name_a_module_of_the_catalog(tmp_path, settings):
    from exercises.loader import check_in_app_sources, read_catalog

    root = _copy_catalog(tmp_path, settings)
    check_in_app_sources(read_catalog(root))
    module_yaml = root / "llm-systems-frontier" / "inference-and-serving" / "module.yaml"
    module_yaml.write_text(module_yaml.read_text().replace("module: P10.llm-systems-frontier.02", "module: P10.llm-systems-frontier.99"))
    with pytest.raises(CatalogError, match=r"sources\.\d+\.module.*P10\.llm-systems-frontier\.99"):
        check_in_app_sources(read_catalog(root))
    module_yaml.write_text(module_yaml.read_text().replace("{kind: in-app, title: \"Training at scale\", module: P10.llm-systems-frontier.99}", "{kind: in-app, title: \"Training at scale\"}"))
    with pytest.raises(CatalogError, match="in-app source names the module"):
        read_catalog(root)


def test_the_senior_flag_places_a_rung_without_making_a_new_version(db, tmp_path, settings):
    root = _copy_catalog(tmp_path, settings)
    sync_catalog(root)
    rung = Rung.objects.get(slug="continuous-batching")
    assert rung.senior
    version = rung.current_version
    rung_yaml = next(root.rglob("03-continuous-batching")) / "rung.yaml"
    rung_yaml.write_text(rung_yaml.read_text().replace("senior: true\n", ""))
    report = sync_catalog(root)
    rung.refresh_from_db()
    assert not rung.senior
    assert report.new_versions == [] and rung.current_version == version
