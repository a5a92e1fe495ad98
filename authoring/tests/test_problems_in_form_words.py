"""A draft's problems are named by the rung form's fields, not by files and YAML keys (issue 18)."""

from __future__ import annotations

import pytest

from authoring.problems import by_field, describe, describe_all, sentence


@pytest.mark.parametrize(
    ("loader_says", "field", "label", "words"),
    [
        ("01-add/rung.yaml: key 'hidden_tests.test_zero': missing (every hidden test needs a description)",
         "hidden_tests", "Hidden tests", "the test test_zero needs a description in the table under the hidden tests."),
        ("01-add/rung.yaml: key 'hidden_tests.test_gone': no such test in test_hidden.py",
         "hidden_tests", "Hidden tests", "the table describes test_gone, but the hidden tests define no such function."),
        ("01-add/rung.yaml: key 'wrong_solutions.off_by_one.py': missing (describe the mistake it makes)",
         "wrong_solutions", "Wrong solutions", "off_by_one.py needs a description of the mistake it makes."),
        ("01-add/rung.yaml: key 'minutes': Input should be less than or equal to 240",
         "minutes", "Minutes", "Input should be less than or equal to 240"),
        ("01-add/rung.yaml: key 'limits.time_s': Input should be greater than 0",
         "limits", "Limits", "time s: Input should be greater than 0"),
        ("01-add/test_hidden.py: syntax error on line 3: invalid syntax",
         "hidden_tests", "Hidden tests", "Syntax error on line 3: invalid syntax"),
        ("01-add/reference.py: syntax error on line 1: expected ':'",
         "reference_code", "Reference solution", "Syntax error on line 1: expected ':'"),
        ("01-add/test_visible.py: defines no test_ function", "visible_tests", "Visible tests", "Defines no test_ function"),
        ("01-add/wrong/bad.py: syntax error on line 2: unexpected indent", "wrong_solutions", "Wrong solutions", "bad.py: syntax error on line 2: unexpected indent"),
    ],
)
def test_each_loader_message_is_named_by_its_form_field(loader_says: str, field: str, label: str, words: str) -> None:
    problem = describe(loader_says)
    assert (problem.field, problem.label, problem.message) == (field, label, words)
    assert "rung.yaml" not in str(problem) and "key '" not in str(problem)


def test_a_message_it_does_not_know_is_kept_whole_under_the_draft() -> None:
    problem = describe("something unexpected happened")
    assert (problem.field, problem.message) == ("general", "something unexpected happened")


def test_problems_are_grouped_by_field() -> None:
    grouped = by_field(["01-add/test_hidden.py: defines no test_ function", "01-add/rung.yaml: key 'title': Field required"])
    assert sorted(grouped) == ["hidden_tests", "title"]


def test_every_empty_description_in_one_message_is_named_in_a_sentence_of_its_own() -> None:
    # The schema reports every key at fault in one message; the form showed it raw, naming
    # only the first key's field (issue 59, item 15).
    loader_says = ("01-add/rung.yaml: key 'hidden_tests.test_a.description': String should have at least 1 character; "
                   "key 'hidden_tests.test_b.description': String should have at least 1 character")
    grouped = by_field([loader_says])
    assert [(problem.item, problem.message) for problem in grouped["hidden_tests"]] == [
        ("test_a", "the test test_a needs a description in the table under the hidden tests."),
        ("test_b", "the test test_b needs a description in the table under the hidden tests."),
    ]
    assert sentence(loader_says) == ("Hidden tests: the test test_a needs a description in the table under the hidden tests. "
                                     "Hidden tests: the test test_b needs a description in the table under the hidden tests.")


@pytest.mark.parametrize(
    ("loader_says", "words"),
    [
        ("01-add/rung.yaml: key 'wrong_solutions.bad.py.description': String should have at least 1 character",
         "bad.py needs a description of the mistake it makes."),
        ("01-add/rung.yaml: key 'title': String should have at least 1 character", "Title is empty: fill it in."),
        ("01-add/rung.yaml: key 'title': Field required", "Title is empty: fill it in."),
    ],
)
def test_pydantic_words_for_an_empty_value_become_the_forms(loader_says: str, words: str) -> None:
    [problem] = describe_all(loader_says)
    assert problem.message == words
    assert "String should" not in str(problem) and "Field required" not in str(problem)
