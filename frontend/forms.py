from __future__ import annotations

from typing import Any

from django import forms
from django.conf import settings
from django.contrib.auth.forms import UserCreationForm
from django.contrib.auth.models import User
from django.core.validators import ProhibitNullCharactersValidator

from core.untrusted_patterns import untrusted
from grader import speed_board
from grader.exceptions import CodeRejected
from grader.messages import BOARD_NAME_NEEDED, BOARD_NAME_RULE, BOARD_NAME_TAKEN, CODE_EMPTY, PREDICTION_INVALID, STALE_PAGE
from grader.services import validate_code

ASCII_USERNAME = untrusted(r"[A-Za-z0-9@.+_-]+", max_chars=150, reads="a username typed at sign-up")
# A name shown on speed boards: Latin letters, digits, and a few joiners, for the reason usernames are.
BOARD_NAME = untrusted(r"[A-Za-z0-9][A-Za-z0-9 ._-]{2,29}", max_chars=30, reads="a name typed for the speed boards")
USERNAME_RULE = "Use only the letters a-z and A-Z, digits and @ . + - _ (names in other scripts can look exactly like someone else's)."


class SignupForm(UserCreationForm[User]):
    """Username and password; the email is optional and only used to reset a forgotten password."""

    email = forms.EmailField(required=False, help_text="Optional: lets you reset a forgotten password.")

    class Meta(UserCreationForm.Meta):
        model = User
        fields = ("username", "email")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["username"].help_text = "Up to 150 characters: letters a-z, digits and @ . + - _ only."

    def clean_username(self) -> str:
        # Django returns None here, against its annotation, when it has
        # already found the name taken (its error is on the form).
        username: str = super().clean_username()
        prefix = settings.LTI_USERNAME_PREFIX
        if username and username.lower().startswith(prefix):
            raise forms.ValidationError(f"Names starting with “{prefix}” are kept for accounts made by an LMS; choose another.", code="reserved")
        # Latin letters only: a name in another script can look exactly like
        # someone else's ("admin" spelt with a Cyrillic a, U+0430), and rosters, reports and
        # the admin show names side by side. Django already refuses a name
        # that differs from a taken one only in case or width.
        if username and not ASCII_USERNAME.fullmatch(username):
            raise forms.ValidationError(USERNAME_RULE, code="not_ascii")
        return username


class CodeField(forms.CharField):
    """A learner's code, held to the one rule for code (``grader.services.validate_code``)
    in place of Django's own NUL check, so a refusal carries the rule's code and sentence."""

    def __init__(self) -> None:
        super().__init__(strip=False, required=False)
        self.validators = [check for check in self.validators if not isinstance(check, ProhibitNullCharactersValidator)]

    def validate(self, value: Any) -> None:
        super().validate(value)
        try:
            validate_code(value)
        except CodeRejected as exc:
            raise forms.ValidationError(str(exc), code=exc.reason) from exc


class CodeForm(forms.Form):
    """A Run or Submit: the code, and the version the page showed. Every
    refusal is one sentence of ``grader.messages``, never Django's own."""

    code = CodeField()
    version = forms.IntegerField(min_value=1, error_messages={"required": STALE_PAGE, "invalid": STALE_PAGE, "min_value": STALE_PAGE})
    # The speed-up predicted before a Submit of a speed rung that asks (grader.speed_board.check_prediction rules on it).
    prediction = forms.FloatField(required=False, error_messages={"invalid": PREDICTION_INVALID})

    def clean_code(self) -> str:
        code: str = self.cleaned_data["code"]
        if not code.strip():
            raise forms.ValidationError(CODE_EMPTY, code="empty")
        return code


class DraftForm(forms.Form):
    """An autosave of the editor, capped like a submission (in UTF-8 bytes); an empty draft is allowed."""

    code = CodeField()


class BoardNameForm(forms.Form):
    """Whether the learner shows on speed boards, and under which name; anonymous by default."""

    shown = forms.BooleanField(required=False, label="Show my name on speed boards")
    name = forms.CharField(required=False, max_length=30, label="Name to show", help_text=BOARD_NAME_RULE)

    def __init__(self, *args: Any, user: User, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.user = user

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        name = " ".join(str(data.get("name") or "").split())
        if not data.get("shown"):
            data["name"] = ""
            return data
        if not name:
            self.add_error("name", forms.ValidationError(BOARD_NAME_NEEDED, code="required"))
        elif not BOARD_NAME.fullmatch(name):
            self.add_error("name", forms.ValidationError(BOARD_NAME_RULE, code="invalid"))
        elif speed_board.board_name_taken(self.user, name):
            self.add_error("name", forms.ValidationError(BOARD_NAME_TAKEN, code="taken"))
        data["name"] = name
        return data
