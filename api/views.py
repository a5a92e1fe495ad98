"""The API tokens page: make a token (shown once) and revoke one. A signed-in web page, not part of the API."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from core.types import AuthenticatedHttpRequest

from . import tokens
from .exceptions import ApiRefused
from .forms import TokenForm
from .models import ApiToken


@login_required
@require_http_methods(["GET", "POST"])
def token_list(request: AuthenticatedHttpRequest) -> HttpResponse:
    secret = ""
    form = TokenForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            made = tokens.create_token(user=request.user, name=form.cleaned_data["name"], scope=form.cleaned_data["scope"], days=form.cleaned_data["days"])
        except ApiRefused as exc:
            form.add_error(None, str(exc))
        else:
            # NOTE: the only time the secret is shown; the page is not cached (below).
            secret = made.secret
            form = TokenForm()
    context = {
        "form": form,
        "secret": secret,
        "tokens": ApiToken.objects.filter(user=request.user),
        "server": request.build_absolute_uri("/").rstrip("/"),
    }
    response = render(request, "api/tokens.html", context)
    response["Cache-Control"] = "no-store"
    return response


@login_required
@require_POST
def token_revoke(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    tokens.revoke_token(user=request.user, token_id=pk)
    return redirect("api-tokens")
