"""The API's own sentences (refusals of a token or a scope). Refusals of code, a
Run or a Submit are the web's, from ``grader.messages`` and ``grader.exceptions``."""

from __future__ import annotations

TOKEN_MISSING = "Send a personal access token: Authorization: Bearer <token> (make one on the API tokens page)."
TOKEN_UNKNOWN = "This token is not known: check it, or make a new one on the API tokens page."
TOKEN_REVOKED = "This token was revoked: make a new one on the API tokens page."
TOKEN_PASSWORD_CHANGED = "This token ended when the account's password changed: make a new one on the API tokens page."
TOKEN_EXPIRED = "This token has expired: make a new one on the API tokens page."
ACCOUNT_INACTIVE = "This account is disabled."
SCOPE_RUN_SUBMIT = "This token may only read: Run, Submit and saving drafts need a token with the run_submit scope."
NOT_FOUND = "Not found."
NO_DRAFT = "You have no draft of this rung."
REFERENCE_LOCKED = "The reference solution unlocks once you pass the hidden tests."
INVALID_BODY = "The request body is not what this endpoint takes: {detail}"
TOO_MANY_TOKENS = "You have {limit} tokens that still work; revoke one first."
