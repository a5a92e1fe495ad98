from __future__ import annotations

from django import forms

from .constants import TOKEN_DAYS_CHOICES, Scope


class TokenForm(forms.Form):
    name = forms.CharField(max_length=100, help_text="Where you use it, e.g. “laptop”.")
    scope = forms.ChoiceField(choices=Scope.choices, initial=Scope.RUN_SUBMIT, widget=forms.RadioSelect)
    days = forms.TypedChoiceField(
        label="Expires after", choices=[(days, f"{days} days") for days in TOKEN_DAYS_CHOICES], coerce=int, initial=90
    )
