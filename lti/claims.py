"""The type of every launch claim read here, checked once the signature holds.

pylti1p3 checks a launch's signature and the claims each message type
needs, not their JSON types: a validly signed ``custom`` list or
``context`` string crashed the launch view (issue 55). ``tool`` checks
these shapes between the signature and pylti1p3's own message checks, so
a misshapen claim is refused as ``bad_message`` and nothing after it
meets one.
"""

from __future__ import annotations

from typing import Any

from . import refusals
from .constants import CLAIM_AGS, CLAIM_CUSTOM, CLAIM_NONCE
from .exceptions import LaunchRefused

_LTI = "https://purl.imsglobal.org/spec/lti/claim/"
# An LMS may send null for a field it has no value for.
_TEXT = (str, type(None))
_SCALAR = (str, int, float, bool, type(None))
# The JSON type of every claim this tool, django-lti or pylti1p3 reads: a
# dict maps the fields read to their shapes (any may be absent; "*" is any
# other key), a one-element list is a list of that shape, a tuple is the
# types allowed. Deep linking's "data" is the platform's own, handed back
# unread, whatever its type.
CLAIM_SHAPES: dict[str, Any] = {
    "sub": _TEXT, "name": _TEXT, "given_name": _TEXT, "family_name": _TEXT, "email": _TEXT, "picture": _TEXT, "locale": _TEXT,
    CLAIM_NONCE: _TEXT,
    _LTI + "message_type": _TEXT, _LTI + "version": _TEXT, _LTI + "deployment_id": _TEXT, _LTI + "target_link_uri": _TEXT,
    _LTI + "roles": [_TEXT],
    _LTI + "context": {"id": _TEXT, "label": _TEXT, "title": _TEXT, "type": [_TEXT]},
    _LTI + "resource_link": {"id": _TEXT, "title": _TEXT, "description": _TEXT},
    _LTI + "tool_platform": {"guid": _TEXT, "name": _TEXT, "product_family_code": _TEXT, "version": _TEXT, "url": _TEXT},
    _LTI + "launch_presentation": {"document_target": _TEXT, "return_url": _TEXT, "locale": _TEXT},
    _LTI + "lis": {"person_sourcedid": _TEXT, "course_offering_sourcedid": _TEXT, "course_section_sourcedid": _TEXT},
    CLAIM_CUSTOM: {"*": _SCALAR},
    CLAIM_AGS: {"lineitem": _TEXT, "lineitems": _TEXT, "scope": [_TEXT]},
    "https://purl.imsglobal.org/spec/lti-nrps/claim/namesroleservice": {"context_memberships_url": _TEXT, "service_versions": [_TEXT]},
    "https://purl.imsglobal.org/spec/lti-dl/claim/deep_linking_settings": {
        "deep_link_return_url": _TEXT, "accept_types": [_TEXT], "accept_presentation_document_targets": [_TEXT],
        "accept_multiple": (bool,), "auto_create": (bool,), "title": _TEXT, "text": _TEXT,
    },
}


def _misshapen(value: Any, shape: Any, where: str) -> str | None:
    """Where ``value`` departs from ``shape`` (see CLAIM_SHAPES), or None."""
    if isinstance(shape, tuple):
        fits = isinstance(value, shape) and (bool in shape or not isinstance(value, bool))
        return None if fits else f"{where} is not {' or '.join(kind.__name__ for kind in shape)}"
    if isinstance(shape, list):
        if not isinstance(value, list):
            return f"{where} is not a list"
        return next((problem for index, item in enumerate(value) if (problem := _misshapen(item, shape[0], f"{where}[{index}]"))), None)
    if not isinstance(value, dict):
        return f"{where} is not an object"
    for key, item in value.items():
        field = shape.get(key, shape.get("*"))
        if field is not None and (problem := _misshapen(item, field, f"{where}.{key}")):
            return problem
    return None


def check_claim_types(launch_data: dict[str, Any]) -> None:
    """Refuse (bad_message) a launch whose claims are not of the types LTI 1.3 gives them."""
    for claim, shape in CLAIM_SHAPES.items():
        if claim in launch_data and (problem := _misshapen(launch_data[claim], shape, claim)):
            raise LaunchRefused(refusals.BAD_MESSAGE, problem)
