"""What the authoring pages say to an instructor, in one place (as grader.messages is for learners)."""

from __future__ import annotations

CHECK_QUEUED = "The Check is queued."
CHECK_SAVED_AND_QUEUED = "Draft saved; the Check is queued."
CHECK_REUSED = "This content was checked already: the result below is that Check's."
CHECK_IN_FLIGHT_FOR_DRAFT = (
    "A Check of this draft is still running (#{pk}, asked for by {who}). Wait for its result, then check again; "
    "try again in about {seconds} s."
)
CHECKS_IN_FLIGHT_FOR_INSTRUCTOR = (
    "You have {count} Check(s) running, the most one instructor may have at once ({limit}): Checks share the graders "
    "with learners' Submits. Try again in about {seconds} s."
)
EXTERNAL_ID_TAKEN = (
    "The id “{external_id}” is already module “{slug}”'s: a catalog id names one module (“Where next” links follow it). "
    "Choose another id."
)
