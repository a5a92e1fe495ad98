from __future__ import annotations

from django import forms
from django.contrib.auth.forms import UserCreationForm
from django.contrib.auth.models import User


class SignupForm(UserCreationForm[User]):
    class Meta(UserCreationForm.Meta):
        model = User
        fields = ("username",)


class CodeForm(forms.Form):
    """A Run or Submit: the code, and the version the page showed."""

    code = forms.CharField(strip=False, required=True, max_length=1_000_000)
    version = forms.IntegerField(min_value=1)
