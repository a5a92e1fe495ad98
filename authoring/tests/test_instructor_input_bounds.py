"""Instructor input that got a 500 gets a form error or an import refusal
naming the field and file (issue 55, finding 6), and the import schema
takes the database's bounds for every stored number and string."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from authoring import transfer
from authoring.exceptions import ImportRefused
from exercises.models import Module, Rung

pytestmark = pytest.mark.django_db

TRACK = "llm-systems-frontier"
MODULE = "inference-and-serving"
NESTED = "[" * 1000 + "]" * 1000


@pytest.fixture
def author(catalog: Any, admin_user: Any) -> Client:
    client = Client()
    client.force_login(admin_user)
    return client


def _module_form(author: Client) -> dict[str, Any]:
    page = author.get(f"/author/modules/{MODULE}/")
    form = page.context["form"]
    return {name: ("" if value is None else value) for name, value in ((name, form[name].value()) for name in form.fields)}


def test_sources_nested_too_deeply_are_a_form_error(author: Client) -> None:
    data = {**_module_form(author), "sources_yaml": NESTED}
    answer = author.post(f"/author/modules/{MODULE}/", data)
    assert answer.status_code == 200
    assert "nested too deeply" in str(answer.context["form"].errors["sources_yaml"])


def test_equivalent_mutants_nested_too_deeply_are_a_form_error(author: Client) -> None:
    page = author.get(f"/author/modules/{MODULE}/rungs/kv-cache-size/")
    data: dict[str, Any] = {}
    for key in ("form", "hidden", "wrong", "alternatives"):
        bound = page.context.get(key)
        if bound is None:
            continue
        for form in ([bound] if key == "form" else [bound.management_form, *bound.forms]):
            for name in form.fields:
                value = form[name].value()
                data[form.add_prefix(name)] = "" if value is None else value
    data["equivalent_mutants_yaml"] = NESTED
    answer = author.post(f"/author/modules/{MODULE}/rungs/kv-cache-size/", data)
    assert answer.status_code == 200
    assert "nested too deeply" in str(answer.context["form"].errors["equivalent_mutants_yaml"])


def test_an_integer_of_thousands_of_digits_is_a_form_error(author: Client) -> None:
    data = {**_module_form(author), "sources_yaml": "- year: " + "9" * 5000 + "\n"}
    answer = author.post(f"/author/modules/{MODULE}/", data)
    assert answer.status_code == 200 and "sources_yaml" in answer.context["form"].errors


def _exported() -> dict[str, str]:
    return transfer.export_module(Module.objects.get(slug=MODULE))


def test_an_import_member_name_too_long_for_the_file_system_is_refused_naming_it(catalog: Any, admin_user: Any) -> None:
    files = _exported()
    name = f"{TRACK}/{MODULE}/rungs/01-kv-cache-size/wrong/" + "x" * 300 + ".py"
    files[name] = "x = 1\n"
    with pytest.raises(ImportRefused, match=r"wrong/x{20}.*: a name in the path is longer than 255 bytes"):
        transfer.import_files(files, admin_user)


def test_an_import_member_nested_very_deep_is_refused_naming_it(catalog: Any, admin_user: Any) -> None:
    files = _exported()
    name = f"{TRACK}/" + "/".join(["deep"] * 1000) + "/file.txt"
    files[name] = "x"
    with pytest.raises(ImportRefused, match=r"deep/deep.*: the path is longer than"):
        transfer.import_files(files, admin_user)


def test_the_upload_of_such_a_zip_is_refused_in_the_page(author: Client) -> None:
    import io
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("t/" + "y" * 300, "x")
    buffer.name = "catalog.zip"
    buffer.seek(0)
    answer = author.post("/author/import", {"archive": buffer})
    assert answer.status_code in (200, 302, 400)


@pytest.mark.parametrize(
    ("file", "old", "new", "problem"),
    [
        ("module.yaml", "order: 1", "order: 100000000000000000000", r"module\.yaml: key 'order': at most 2147483647"),
        ("module.yaml", "order: 1", "order: 2147483648", r"module\.yaml: key 'order': at most 2147483647"),
        ("module.yaml", "audience: ", "audience: " + "a" * 51 + " ", r"module\.yaml: key 'audience': at most 50 characters"),
        ("rungs/01-kv-cache-size/rung.yaml", "minutes: 8", "minutes: 100000000000000000000", r"01-kv-cache-size/rung\.yaml: key 'minutes'"),
    ],
)
def test_every_number_and_string_must_fit_its_database_column(catalog: Any, admin_user: Any, file: str, old: str, new: str, problem: str) -> None:
    files = _exported()
    key = f"{TRACK}/{MODULE}/{file}"
    assert old in files[key], files[key][:400]
    files[key] = files[key].replace(old, new, 1)
    with pytest.raises(ImportRefused, match=problem):
        transfer.import_files(files, admin_user)
    assert Rung.objects.filter(slug="kv-cache-size").exists()


def test_the_database_bounds_are_derived_from_the_model_fields() -> None:
    from exercises.bounds import column_bounds
    from exercises.models import Module as ModuleModel

    bounds = column_bounds(ModuleModel)
    assert bounds["title"] == (None, None, 200)
    assert bounds["order"] == (0, 2147483647, None)
    assert bounds["id"] == (None, None, 100)  # module.yaml's id is the column external_id
