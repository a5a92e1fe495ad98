"""The registration page (django-lti's, extended with what to paste into the LMS), placements and grades sent."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.urls import reverse
from lti_tool.admin import LtiRegistrationAdmin
from lti_tool.models import LtiDeployment, LtiRegistration, LtiUser

from exercises.admin import MadeByThePlatform

from . import passback, tool
from .models import Placement, ScorePost


class DeploymentForm(forms.ModelForm):  # type: ignore[type-arg]
    class Meta:
        model = LtiDeployment
        fields = ["deployment_id", "is_active"]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # A deployment an admin types in is meant to work (django-lti's default is off).
        if self.instance.pk is None:
            self.fields["is_active"].initial = True


class DeploymentInline(admin.TabularInline):  # type: ignore[type-arg]
    model = LtiDeployment
    form = DeploymentForm
    fields = ["deployment_id", "is_active"]
    extra = 1
    verbose_name = "deployment id"


def tool_urls(request: HttpRequest, registration: LtiRegistration | None) -> list[tuple[str, str]]:
    """What an LMS administrator pastes into the LMS, as absolute URLs of this site."""
    urls = [
        ("Public keyset URL (JWKS)", request.build_absolute_uri(reverse("lti:jwks"))),
        ("Redirect URI / target link URI / launch URL", request.build_absolute_uri(reverse("lti:launch"))),
        ("Deep linking URL", request.build_absolute_uri(reverse("lti:launch"))),
    ]
    if registration is not None and registration.pk is not None:
        urls.insert(0, ("OpenID Connect login initiation URL", request.build_absolute_uri(reverse("lti:login", args=[registration.uuid]))))
    return urls


admin.site.unregister(LtiRegistration)


@admin.register(LtiRegistration)
class RegistrationAdmin(LtiRegistrationAdmin):  # type: ignore[misc]
    """django-lti's registration form (issuer, client id, key set, auth and token URLs), with deployment ids inline."""

    change_form_template = "lti/admin/registration_change_form.html"
    inlines = [DeploymentInline]

    def changeform_view(self, request: HttpRequest, object_id: str | None = None, form_url: str = "", extra_context: dict[str, Any] | None = None) -> HttpResponse:
        tool.ensure_tool_key()
        registration = self.get_object(request, object_id) if object_id else None
        extra = {**(extra_context or {}), "tool_urls": tool_urls(request, registration)}
        return super().changeform_view(request, object_id, form_url, extra)  # type: ignore[no-any-return]


@admin.register(LtiUser)
class LtiUserAdmin(MadeByThePlatform, admin.ModelAdmin):  # type: ignore[type-arg]
    """People of the registered LMSes; ``auth user`` is the account they are signed in as (set it to link an existing one)."""

    list_display = ["sub", "name", "email", "registration", "auth_user"]
    list_filter = ["registration"]
    search_fields = ["sub", "name", "email", "auth_user__username"]
    raw_id_fields = ["auth_user"]
    readonly_fields = ["registration", "sub", "given_name", "family_name", "name", "email", "picture_url", "lti1p1_id_on_platform"]


@admin.register(Placement)
class PlacementAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ["resource_link", "module", "rung", "lineitem_url", "updated_at"]
    list_select_related = ["resource_link", "module", "rung"]
    readonly_fields = ["resource_link", "lineitem_url", "lineitems_url", "ags_scopes", "updated_at"]


@admin.register(ScorePost)
class ScorePostAdmin(MadeByThePlatform, admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ["enqueued_at", "lti_user", "placement", "score_given", "status", "outcome", "attempts"]
    list_filter = ["status", "outcome"]
    list_select_related = ["lti_user", "placement__resource_link"]
    readonly_fields = [field.name for field in ScorePost._meta.fields]
    actions = ["send_again"]

    @admin.action(description="Send the selected failed grades again")
    def send_again(self, request: HttpRequest, queryset: QuerySet[ScorePost]) -> None:
        again = sum(passback.retry_failed(post) for post in queryset)
        messages.info(request, f"{again} grade(s) queued again.")
