"""The tool's side of pylti1p3, configured once: registrations, storage, HTTP.

django-lti's ``DjangoToolConfig`` finds registrations; ours refuses a
deployment an admin has not registered (django-lti would create it,
inactive) so the launch can say which deployment id to add.
"""

from __future__ import annotations

from typing import Any

import requests
from django.conf import settings
from lti_tool.models import Key, LtiDeployment, LtiRegistration
from lti_tool.utils import DjangoToolConfig, _prepare_deployment
from pylti1p3.contrib.django.launch_data_storage.cache import DjangoCacheDataStorage
from pylti1p3.contrib.django.message_launch import DjangoMessageLaunch
from pylti1p3.deployment import Deployment
from pylti1p3.registration import Registration
from pylti1p3.service_connector import REQUESTS_USER_AGENT, ServiceConnector

from .claims import check_claim_types
from .exceptions import UnknownDeployment

CACHE_ALIAS = "lti"


class ToolConfig(DjangoToolConfig):  # type: ignore[misc]
    """Registrations by issuer and client id; deployments only as registered."""

    def find_registration_by_params(self, iss: str, client_id: str | None, *args: Any, **kwargs: Any) -> Registration | None:
        # client_id is optional in a login initiation: the registration's uuid in the login URL then names it.
        if client_id is None and self.registration_uuid is not None:
            found: Registration | None = self.find_registration_by_issuer(iss)
            return found
        found = super().find_registration_by_params(iss, client_id, *args, **kwargs)
        return found

    def find_deployment(self, iss: str, deployment_id: str) -> Deployment:
        return self._registered_deployment({"registration__issuer": iss, "deployment_id": deployment_id})

    def find_deployment_by_params(self, iss: str, deployment_id: str, client_id: str, *args: Any, **kwargs: Any) -> Deployment:
        return self._registered_deployment({"registration__issuer": iss, "registration__client_id": client_id, "deployment_id": deployment_id})

    def _registered_deployment(self, lookups: dict[str, Any]) -> Deployment:
        if self.registration_uuid is not None:
            lookups["registration__uuid"] = self.registration_uuid
        deployment = LtiDeployment.objects.filter(registration__is_active=True, **lookups).select_related("registration").first()
        if deployment is None:
            raise UnknownDeployment(str(lookups["deployment_id"]))
        self.deployment = deployment
        prepared: Deployment = _prepare_deployment(deployment)
        return prepared


class _TimeoutSession(requests.Session):
    """Every request to an LMS gives up after LTI_HTTP_TIMEOUT_S."""

    def request(self, *args: Any, **kwargs: Any) -> requests.Response:
        kwargs.setdefault("timeout", settings.LTI_HTTP_TIMEOUT_S)
        return super().request(*args, **kwargs)


def http_session() -> requests.Session:
    session = _TimeoutSession()
    session.headers["User-Agent"] = REQUESTS_USER_AGENT
    return session


def launch_storage() -> DjangoCacheDataStorage:
    """Where OIDC state, nonces and launch data wait between the login and the launch."""
    return DjangoCacheDataStorage(cache_name=CACHE_ALIAS)  # type: ignore[no-untyped-call]


class CheckedMessageLaunch(DjangoMessageLaunch):
    """pylti1p3's launch, checking every claim's type right after the signature (lti/claims.py)."""

    def validate_deployment(self) -> Any:
        check_claim_types(dict(self._jwt.get("body", {})))
        return super().validate_deployment()


def message_launch(request: Any, registration_uuid: Any = None) -> DjangoMessageLaunch:
    return CheckedMessageLaunch(request, ToolConfig(registration_uuid), launch_data_storage=launch_storage(), requests_session=http_session())  # type: ignore[no-untyped-call]


def cached_launch(request: Any, launch_id: str) -> DjangoMessageLaunch:
    """A launch validated earlier in this browser (deep linking's second step)."""
    restored = DjangoMessageLaunch.from_cache(launch_id, request, ToolConfig(), launch_data_storage=launch_storage(), requests_session=http_session())
    assert isinstance(restored, DjangoMessageLaunch)
    return restored


def ensure_tool_key() -> Key:
    """The tool's newest active signing key, made on first use (``manage.py rotate_keys`` makes the next)."""
    key = Key.objects.filter(is_active=True).order_by("-datetime_created").first()
    return key if key is not None else Key.objects.generate()


def service_connector(registration: LtiRegistration) -> ServiceConnector:
    """Calls to the LMS's services (AGS, NRPS) signed with the tool's key, with timeouts."""
    ensure_tool_key()
    lti_registration: Registration = registration.to_registration()
    return ServiceConnector(lti_registration, http_session())
