from __future__ import annotations

from django import forms

from .constants import QUESTION_MAX_CHARS


class AskForm(forms.Form):
    module = forms.SlugField(max_length=50)
    rung = forms.SlugField(max_length=50, required=False)
    question = forms.CharField(max_length=QUESTION_MAX_CHARS, strip=True)
