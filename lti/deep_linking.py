"""Deep linking: an instructor picks a module or a rung; the LMS gets a signed content item for it.

The picker page is rendered in the deep-linking launch's response, often
inside an LMS dialog (an iframe where our cookies may not be sent). So the
page carries the launch id signed and time-limited instead of relying on a
session, and the choice is posted back with it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.core import signing
from pylti1p3.deep_link_resource import DeepLinkResource
from pylti1p3.exception import LtiException
from pylti1p3.lineitem import LineItem

from exercises.models import Module, Rung
from exercises.schema import is_web_address

from . import refusals, tool
from .constants import CUSTOM_MODULE, CUSTOM_RUNG
from .exceptions import LaunchRefused

SALT = "lti.deep-link"
# As long as pylti1p3 keeps the launch data in the cache.
TOKEN_MAX_AGE_S = 3600
LINEITEM_TAG = "llm-systems-dojo"


@dataclass(frozen=True)
class Choice:
    module: Module
    rung: Rung | None

    @property
    def title(self) -> str:
        if self.rung is not None and self.rung.current_version is not None:
            return self.rung.current_version.title
        return self.module.title

    @property
    def custom(self) -> dict[str, str]:
        return {CUSTOM_RUNG: self.rung.slug} if self.rung is not None else {CUSTOM_MODULE: self.module.slug}

    @property
    def resource_id(self) -> str:
        return f"rung:{self.rung.slug}" if self.rung is not None else f"module:{self.module.slug}"


def sign_launch_id(launch_id: str) -> str:
    return signing.dumps(launch_id, salt=SALT)


def launch_id_from(token: str) -> str:
    try:
        return str(signing.loads(token, salt=SALT, max_age=TOKEN_MAX_AGE_S))
    except signing.BadSignature as exc:  # SignatureExpired is a BadSignature
        raise LaunchRefused(refusals.SESSION_LOST, str(exc)) from exc


def choices() -> list[tuple[Module, list[Rung]]]:
    """Every module with its published rungs, in catalog order."""
    rungs: dict[int, list[Rung]] = {}
    for rung in Rung.objects.filter(current_version__isnull=False).select_related("current_version").order_by("order", "slug"):
        rungs.setdefault(rung.module_id, []).append(rung)
    return [(module, rungs.get(module.pk, [])) for module in Module.objects.select_related("track")]


def parse_choice(value: str) -> Choice | None:
    """``module:<slug>`` or ``rung:<slug>`` -> what it names, None when it names nothing published."""
    kind, _, slug = value.partition(":")
    if kind == "rung":
        rung = Rung.objects.select_related("module", "current_version").filter(slug=slug, current_version__isnull=False).first()
        return Choice(rung.module, rung) if rung is not None else None
    if kind == "module":
        module = Module.objects.filter(slug=slug).first()
        return Choice(module, None) if module is not None else None
    return None


def content_item(choice: Choice, launch_url: str) -> DeepLinkResource:
    """An LTI resource link to ``launch_url`` naming the choice, with a gradebook column out of 1."""
    lineitem = LineItem().set_score_maximum(1).set_label(choice.title).set_resource_id(choice.resource_id).set_tag(LINEITEM_TAG)
    return DeepLinkResource().set_url(launch_url).set_title(choice.title).set_custom_params(choice.custom).set_lineitem(lineitem)


@dataclass(frozen=True)
class DeepLinkAnswer:
    return_url: str
    jwt: str


def answer_deep_link(request: Any, token: str, choice: Choice, launch_url: str) -> DeepLinkAnswer:
    """The signed deep-linking response for the launch ``token`` names, to post back to the LMS."""
    try:
        message_launch = tool.cached_launch(request, launch_id_from(token))
        if not message_launch.is_deep_link_launch():
            raise LaunchRefused(refusals.SESSION_LOST, "not a deep-linking launch")
        deep_link = message_launch.get_deep_link()
    except LtiException as exc:
        raise LaunchRefused(refusals.SESSION_LOST, str(exc)) from exc
    settings_claim = message_launch.get_launch_data()["https://purl.imsglobal.org/spec/lti-dl/claim/deep_linking_settings"]
    return_url = str(settings_claim["deep_link_return_url"])
    if not is_web_address(return_url):
        # It becomes a form's action: a javascript: or data: address would run in this site's page.
        raise LaunchRefused(refusals.BAD_MESSAGE, f"the deep-linking return address is not an http(s) address: {return_url[:80]!r}")
    return DeepLinkAnswer(return_url=return_url, jwt=deep_link.get_response_jwt([content_item(choice, launch_url)]))
