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

# Content roles (authoring.content_roles).
ROLE_GRANT_REFUSED = "Only an editor of this module or an admin grants its content roles."
ROLE_REVOKE_REFUSED = "Only an editor of this module or an admin revokes its content roles."
ROLE_UNKNOWN = "“{role}” is not a content role: choose editor or viewer."
ROLE_NO_ACCOUNT = "No active account is called “{username}”."
ROLE_HELD_ALREADY = "{username} is already {role} of this module."
ROLE_NOT_HELD = "That account holds no content role on this module."
ROLE_CHANGED_MEANWHILE = "The role changed meanwhile: look again and retry."
ROLE_LAST_EDITOR = "This is the module's last editor: make someone else editor first."
ROLE_CHOOSE = "Choose a role to revoke."
MODULE_TAKEN_MEANWHILE = "Another module took this slug or id a moment ago: choose another."
TAKEN_MEANWHILE = "another module took a slug or an id of this zip a moment ago: look at the catalog and import again"
