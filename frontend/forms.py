from __future__ import annotations

from django import forms
from django.contrib.auth.forms import UserCreationForm
from django.contrib.auth.models import User

from grader.messages import CODE_NOT_TEXT


class SignupForm(UserCreationForm[User]):
    """Username and password; the email is optional and only used to reset a forgotten password."""

    email = forms.EmailField(required=False, help_text="Optional: lets you reset a forgotten password.")

    class Meta(UserCreationForm.Meta):
        model = User
        fields = ("username", "email")


class CodeForm(forms.Form):
    """A Run or Submit: the code, and the version the page showed."""

    code = forms.CharField(
        strip=False, required=True, max_length=1_000_000, error_messages={"null_characters_not_allowed": CODE_NOT_TEXT}
    )
    version = forms.IntegerField(min_value=1)


class DraftForm(forms.Form):
    """An autosave of the editor. Capped like a submission, counted in UTF-8 bytes."""

    MAX_BYTES = 64 * 1024

    code = forms.CharField(strip=False, required=False, max_length=MAX_BYTES)

    def clean_code(self) -> str:
        code: str = self.cleaned_data["code"]
        size = len(code.encode("utf-8", errors="surrogatepass"))
        if size > self.MAX_BYTES:
            raise forms.ValidationError(f"The draft is {size} bytes; drafts are limited to {self.MAX_BYTES} bytes (64 KiB).", code="too_large")
        if "\x00" in code:
            raise forms.ValidationError("The draft must be text.", code="not_text")
        return code
