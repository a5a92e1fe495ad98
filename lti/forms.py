from __future__ import annotations

from typing import Any

from django import forms

from . import deep_linking


class DeepLinkForm(forms.Form):
    """The instructor's pick: ``module:<slug>`` or ``rung:<slug>``, with the signed launch it answers."""

    launch = forms.CharField(widget=forms.HiddenInput, max_length=2000)
    target = forms.CharField(max_length=200, error_messages={"required": "Pick a module or a rung."})

    def clean_target(self) -> deep_linking.Choice:
        choice = deep_linking.parse_choice(self.cleaned_data["target"])
        if choice is None:
            raise forms.ValidationError("That module or rung does not exist (or is not published).")
        return choice

    def choice(self) -> deep_linking.Choice:
        value: Any = self.cleaned_data["target"]
        return value  # type: ignore[no-any-return]
