from __future__ import annotations

from django import forms

from .constants import REPORT_MESSAGE_MAX_CHARS, REPORT_NOTE_MAX_CHARS


class RevealHintForm(forms.Form):
    number = forms.IntegerField(min_value=1, max_value=100)


class ReportForm(forms.Form):
    message = forms.CharField(max_length=REPORT_MESSAGE_MAX_CHARS, strip=True)
    # The editor's content; services.file_report cuts long code rather than refusing the report.
    code = forms.CharField(required=False, strip=False)


class ResolveReportForm(forms.Form):
    note = forms.CharField(
        max_length=REPORT_NOTE_MAX_CHARS, required=False, strip=True,
        widget=forms.Textarea(attrs={"rows": 3}), label="Note to the learner",
    )
