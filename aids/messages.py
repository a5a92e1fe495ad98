"""Every sentence a learner or instructor reads from the learning aids, in one place."""

from __future__ import annotations

NO_SUCH_HINT = "This rung has no hint with that number."
HINT_OUT_OF_ORDER = "Hints are revealed in order: reveal hint {expected} first."
NO_HINTS = "This rung has no hints."
REPORT_EMPTY = "Please say what the problem is."
REPORT_ALREADY_RESOLVED = "Someone resolved this report meanwhile; reload to see their note."
TOO_MANY_REPORTS = "You have sent many reports in the last hour; please wait a little before sending another."
REPORT_SENT = "Thank you: your report was sent to the module's instructors."
REPORT_ALREADY_OPEN = "This report is already open."
LOGIN_REQUIRED = "Log in first."
NO_SUCH_RUNG = "There is no such rung."
