"""Every reason a launch is refused: a stable code, what the page says, and how a library error maps to it.

pylti1p3 raises one exception type with a sentence; ``classify`` turns the
pinned version's sentences (and the JWT library's error under them) into
our codes. Each code has a test in tests/lti/test_refusals.py, so a
library upgrade that rewords a sentence fails there, not in production.
"""

from __future__ import annotations

from dataclasses import dataclass

import jwt

from .exceptions import LaunchRefused, UnknownDeployment

UNKNOWN_PLATFORM = "unknown_platform"
UNKNOWN_DEPLOYMENT = "unknown_deployment"
INACTIVE_DEPLOYMENT = "inactive_deployment"
EXPIRED = "expired_token"
BAD_SIGNATURE = "bad_signature"
REPLAY = "replayed_launch"
BAD_STATE = "bad_state"
BAD_NONCE = "bad_nonce"
MALFORMED = "malformed_token"
BAD_MESSAGE = "bad_message"
KEYS_UNREACHABLE = "platform_keys_unreachable"
NO_TARGET = "no_target"
NOT_INSTRUCTOR = "not_instructor"
SESSION_LOST = "session_lost"
BAD_LOGIN = "bad_login"


@dataclass(frozen=True)
class Refusal:
    title: str
    text: str
    status: int = 403


REFUSALS: dict[str, Refusal] = {
    UNKNOWN_PLATFORM: Refusal("This LMS is not registered", "The launch came from an LMS (issuer and client id) that no administrator has registered here. An administrator adds it under LTI registrations."),
    UNKNOWN_DEPLOYMENT: Refusal("Unknown deployment", "The LMS is registered, but not this deployment of the tool. An administrator adds the deployment id below to the registration."),
    INACTIVE_DEPLOYMENT: Refusal("Deployment switched off", "An administrator has switched this deployment off."),
    EXPIRED: Refusal("The launch has expired", "The LMS's launch token is no longer valid. Go back to your course and open the link again."),
    BAD_SIGNATURE: Refusal("The launch is not signed by your LMS", "The launch token's signature does not match any key the LMS publishes, so it cannot be trusted."),
    REPLAY: Refusal("This launch was already used", "Each launch can be used once. Go back to your course and open the link again."),
    BAD_STATE: Refusal("The launch did not start here", "The launch does not belong to a sign-in this browser started (its state is unknown). Open the link again from your course; if it keeps failing, allow cookies for this site or open the link in a new window."),
    BAD_NONCE: Refusal("The launch is not one we asked for", "The launch's nonce was never issued here or has expired. Open the link again from your course."),
    MALFORMED: Refusal("The launch is not readable", "The LMS sent something that is not a valid launch token.", 400),
    BAD_MESSAGE: Refusal("The launch is incomplete", "The launch token lacks a claim LTI 1.3 requires for this kind of message, or carries one of the wrong type.", 400),
    KEYS_UNREACHABLE: Refusal("Your LMS's keys could not be fetched", "The LMS's key set URL did not answer, so the launch cannot be checked. Try again in a minute; if it persists, an administrator checks the key set URL.", 502),
    NO_TARGET: Refusal("The link points nowhere here", "The link names no module or rung of this site, or one that no longer exists. The instructor picks the content again (deep linking) or sets the custom parameter dojo_rung or dojo_module.", 404),
    NOT_INSTRUCTOR: Refusal("Only instructors add content", "Choosing what a course links to is for the course's instructors."),
    SESSION_LOST: Refusal("The launch is no longer known", "This page belongs to a launch this browser no longer holds. Start again from your course."),
    BAD_LOGIN: Refusal("The login request is incomplete", "The LMS's login initiation lacks its issuer, login hint or target link URI, or names an unregistered client.", 400),
}

# pylti1p3 2.0.0's sentences -> our codes (checked in order; the first match wins).
_SENTENCES: tuple[tuple[str, str], ...] = (
    ("Missing state param", BAD_STATE),
    # The browser did not send back pylti1p3's session cookie (HTTPS only), e.g. third-party cookies blocked.
    ("Missing %s cookie", BAD_STATE),
    ("State not found", BAD_STATE),
    ("Missing id_token", MALFORMED),
    ("JWT must contain 3 parts", MALFORMED),
    ("Invalid JWT format", MALFORMED),
    ('"nonce" is empty', BAD_NONCE),
    ("Invalid Nonce", BAD_NONCE),
    ('"iss" is empty', MALFORMED),
    ("Registration not found", UNKNOWN_PLATFORM),
    ("Client id not registered", UNKNOWN_PLATFORM),
    ("Error during fetch URL", KEYS_UNREACHABLE),
    ("Invalid response from", KEYS_UNREACHABLE),
    ("Unable to find public key", BAD_SIGNATURE),
    ("JWT KID not found", BAD_SIGNATURE),
    ("JWT ALG not found", BAD_SIGNATURE),
    ("Can't convert JWT key", BAD_SIGNATURE),
    ("deployment_id is not set", BAD_MESSAGE),
    ("Unable to find deployment", UNKNOWN_DEPLOYMENT),
    ("Invalid message type", BAD_MESSAGE),
    ("Message validation failed", BAD_MESSAGE),
    ("Unrecognized message type", BAD_MESSAGE),
    ("Validator conflict", BAD_MESSAGE),
)


def classify(exc: BaseException) -> LaunchRefused:
    """The refusal a validation error stands for."""
    if isinstance(exc, LaunchRefused):
        return exc
    if isinstance(exc, UnknownDeployment):
        return LaunchRefused(UNKNOWN_DEPLOYMENT, exc.deployment_id)
    cause = exc.__cause__
    if isinstance(cause, jwt.ExpiredSignatureError):
        return LaunchRefused(EXPIRED, str(cause))
    if isinstance(cause, jwt.InvalidSignatureError):
        return LaunchRefused(BAD_SIGNATURE, str(cause))
    if isinstance(cause, jwt.InvalidTokenError):
        # Not yet valid (iat/nbf in the future), an unknown algorithm, a bad encoding.
        return LaunchRefused(MALFORMED, str(cause))
    text = str(exc)
    for sentence, code in _SENTENCES:
        if sentence in text:
            return LaunchRefused(code, text)
    return LaunchRefused(MALFORMED, text)
