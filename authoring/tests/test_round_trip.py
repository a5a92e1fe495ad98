"""Export a module to the catalog's file layout and import it back: nothing changes."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest
import yaml

from authoring import transfer
from authoring.exceptions import ImportRefused
from authoring.models import ModuleRole
from exercises.constants import gpu_need
from exercises.loader import read_module
from exercises.models import Module, Rung, RungVersion, Track
from exercises.services import sync_catalog

pytestmark = pytest.mark.django_db

TRACK = "llm-systems-frontier"
MODULE = "inference-and-serving"


def _wipe_catalog() -> None:
    # NOTE: Rung.current_version protects its version; clear it so the whole catalog can go.
    Rung.objects.update(current_version=None)
    Track.objects.all().delete()
    assert not Module.objects.exists() and not RungVersion.objects.exists()


def _unzip(data: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def test_the_shipped_module_survives_export_import_export_byte_for_byte(catalog, admin_user, client, settings):
    shipped = read_module(Path(settings.EXERCISES_DIR) / TRACK / MODULE)
    client.force_login(admin_user)
    first = client.get(f"/author/modules/{MODULE}/export.zip")
    assert first.status_code == 200 and first["Content-Type"] == "application/zip"

    _wipe_catalog()
    upload = io.BytesIO(first.content)
    upload.name = f"{MODULE}.zip"
    response = client.post("/author/import", {"archive": upload})
    assert response.status_code == 302
    assert Module.objects.filter(slug=MODULE).exists()

    second = client.get(f"/author/modules/{MODULE}/export.zip")
    assert _unzip(first.content) == _unzip(second.content)  # identical bytes per file
    assert first.content == second.content  # and the zip itself

    # What a learner is graded against is what the files say: same hash, version 1, nothing else.
    for rung_files in shipped.rungs:
        rung = Rung.objects.get(slug=rung_files.meta.slug)
        assert rung.current_version is not None
        assert rung.current_version.content_hash == rung_files.content_hash, rung.slug
        assert rung.versions.count() == 1
    # A second import of the same files creates nothing.
    report = transfer.import_files(transfer.unzip_files(second.content), admin_user)
    assert report.new_versions == [] and report.changed_modules == []


def test_the_export_keeps_every_text_file_of_the_shipped_module_and_the_meaning_of_its_yaml(catalog, settings):
    root = Path(settings.EXERCISES_DIR) / TRACK
    files = transfer.export_module(Module.objects.get(slug=MODULE))
    # The track's other modules are not part of this module's export.
    module_files = [root / "track.yaml", *(root / MODULE).rglob("*")]
    shipped = {str(path.relative_to(root.parent)): path for path in module_files if path.is_file() and "__pycache__" not in path.parts}
    assert set(files) == set(shipped)
    for name, path in shipped.items():
        if name.endswith(".yaml"):
            # YAML is written canonically (flow style, quoting, defaults spelled out) but means the same.
            exported, original = yaml.safe_load(files[name]), yaml.safe_load(path.read_text())
            if name.endswith("rung.yaml"):
                # `gpu: false` (before no | preferred | required) means `gpu: no`.
                assert gpu_need(exported.pop("gpu")) == gpu_need(original.pop("gpu", "no"))
                assert {**exported, "limits": None} == {**original, "limits": None}
                assert original["limits"].items() <= exported["limits"].items()
            elif name.endswith("module.yaml"):
                assert exported == original
            else:
                assert exported == original
        else:
            assert files[name] == path.read_text(), name


def test_an_import_re_read_by_sync_catalog_from_disk_changes_nothing(catalog, tmp_path):
    files = transfer.export_module(Module.objects.get(slug=MODULE))
    transfer.write_tree(tmp_path, files)
    report = sync_catalog(tmp_path)
    assert report.new_versions == [] and not report.changed


@pytest.mark.parametrize(
    ("name", "problem"),
    [("../evil.py", "not a plain relative path"), ("/etc/passwd", "not a plain relative path")],
)
def test_it_refuses_paths_outside_the_catalog(name, problem):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(name, "x")
    with pytest.raises(ImportRefused, match=problem):
        transfer.unzip_files(buffer.getvalue())


def test_it_refuses_a_symlink_in_the_zip():
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        info = zipfile.ZipInfo("t/link")
        info.external_attr = (0o120777) << 16
        archive.writestr(info, "/etc/passwd")
    with pytest.raises(ImportRefused, match="plain files"):
        transfer.unzip_files(buffer.getvalue())


def test_it_refuses_a_broken_rung_naming_the_file_and_key(catalog, admin_user):
    files = transfer.export_module(Module.objects.get(slug=MODULE))
    key = f"{TRACK}/{MODULE}/rungs/01-kv-cache-size/rung.yaml"
    files[key] = files[key].replace("minutes: 8", "minutes: 0")
    with pytest.raises(ImportRefused, match=r"01-kv-cache-size/rung.yaml: key 'minutes'"):
        transfer.import_files(files, admin_user)


def test_an_instructor_cannot_import_over_a_module_they_do_not_own(catalog, instructor):
    files = transfer.export_module(Module.objects.get(slug=MODULE))
    with pytest.raises(ImportRefused, match="only its editors import over it"):
        transfer.import_files(files, instructor)
    ModuleRole.objects.create(module=Module.objects.get(slug=MODULE), user=instructor, role="editor")
    report = transfer.import_files(files, instructor)
    assert report.new_versions == []


def _zip_of(entries: list[tuple[str, str]]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, text in entries:
            archive.writestr(name, text)
    return buffer.getvalue()


@pytest.mark.parametrize("entries", [[("t/a/b", "x"), ("t/a", "y")], [("t/a", "y"), ("t/a/b", "x")]])
def test_it_refuses_a_name_that_is_both_a_file_and_a_folder(entries):
    with pytest.raises(ImportRefused, match="t/a: is both a file and a folder"):
        transfer.unzip_files(_zip_of(entries))


def test_it_refuses_an_entry_damaged_in_the_zip():
    data = bytearray(_zip_of([("t/track.yaml", "slug: t\ntitle: T\n" * 50)]))
    # Flip bytes of the compressed data (after the 30-byte local header and the name).
    start = 30 + len("t/track.yaml")
    data[start + 5 : start + 9] = b"\xde\xad\xbe\xef"
    with pytest.raises(ImportRefused, match=r"t/track\.yaml: damaged in the zip file"):
        transfer.unzip_files(bytes(data))


def test_yaml_nested_too_deeply_is_refused_in_words(catalog, admin_user):
    files = transfer.export_module(Module.objects.get(slug=MODULE))
    key = f"{TRACK}/{MODULE}/module.yaml"
    files[key] = files[key] + "deep: " + "[" * 5000 + "]" * 5000 + "\n"
    with pytest.raises(ImportRefused, match="nested too deeply"):
        transfer.import_files(files, admin_user)


def test_an_import_cannot_take_the_slug_of_an_unpublished_draft(catalog, instructor, admin_user):
    from authoring import services

    module = Module.objects.get(slug=MODULE)
    ModuleRole.objects.create(module=module, user=instructor, role="editor")
    services.create_draft(module=module, slug="not-yet-published", title="Soon", user=instructor)
    files = transfer.export_module(module)
    old = f"{TRACK}/{MODULE}/rungs/01-kv-cache-size/"
    renamed = {
        (name.replace(old, f"{TRACK}/{MODULE}/rungs/09-not-yet-published/") if name.startswith(old) else name): text for name, text in files.items()
    }
    rung_yaml = f"{TRACK}/{MODULE}/rungs/09-not-yet-published/rung.yaml"
    renamed[rung_yaml] = renamed[rung_yaml].replace("slug: kv-cache-size", "slug: not-yet-published")
    for user in (instructor, admin_user):
        with pytest.raises(ImportRefused, match="'not-yet-published' is an unpublished draft in module"):
            transfer.import_files(renamed, user)
    assert not Rung.objects.filter(slug="not-yet-published").exists()
