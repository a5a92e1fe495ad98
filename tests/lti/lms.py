"""An LMS for the tests, built on lti1p3platform (a third-party LTI 1.3 platform library).

It serves over real HTTP, from a thread of the test process, what a Canvas
or Moodle would: its key set, the OIDC auth endpoint that answers the
tool's login redirect with a signed launch, the OAuth2 token endpoint,
line items, scores and results (AGS), the course roster (NRPS) and the
deep-linking return URL. Its keys are generated per test. The tool runs
under Django's live server: every exchange between the two is HTTP.

``Browser`` plays the user agent: it follows redirects and submits the
auto-posting forms both sides answer with.
"""

from __future__ import annotations

import base64
import json
import threading
import uuid
from dataclasses import dataclass, field
from html.parser import HTMLParser
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import requests
from jwcrypto.jwk import JWK
from lti1p3platform.ltiplatform import LTI1P3PlatformConfAbstract
from lti1p3platform.membership import Context
from lti1p3platform.message_launch import LTIAdvantageMessageLaunchAbstract
from lti1p3platform.oidc_login import OIDCLoginAbstract
from lti1p3platform.registration import Registration
from lti1p3platform.request import Request, TRequest
from lti1p3platform.response import Response
from lti1p3platform.score import UpdateScoreStatus
from lti1p3platform.service_connector import AssignmentsGradesService, NamesRoleProvisioningService

INSTRUCTOR = "http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor"
LEARNER = "http://purl.imsglobal.org/vocab/lis/v2/membership#Learner"


def generate_key_pair() -> tuple[str, str]:
    """A fresh RSA key pair, PEM (private, public)."""
    key = JWK.generate(kty="RSA", size=2048)
    return key.export_to_pem(private_key=True, password=None).decode(), key.export_to_pem().decode()


@dataclass
class Person:
    sub: str
    name: str
    email: str
    roles: list[str]


@dataclass
class Link:
    """A resource link placed in the course (by deep linking): what the launch carries."""

    id: str
    title: str
    custom: dict[str, str]
    lineitem_id: str | None = None


@dataclass
class LmsState:
    """What the LMS holds; the tests read and change it."""

    course_id: str = "course-ml-systems"
    course_title: str = "ML Systems, autumn"
    people: dict[str, Person] = field(default_factory=dict)
    links: dict[str, Link] = field(default_factory=dict)
    lineitems: dict[str, dict[str, Any]] = field(default_factory=dict)
    scores: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    score_posts: int = 0
    # Where deep linking sends its answer ("": the LMS's own page).
    deep_link_return_url: str = ""
    # Fault injection: the next N score posts answer this status instead.
    fail_scores_with: int = 0
    fail_scores_times: int = 0
    # What the next launch does wrong, for the refusal tests.
    launch_tampering: str = ""
    # Claims the next launch sends instead of the right ones (still validly signed).
    launch_claims: dict[str, Any] = field(default_factory=dict)


class _HttpRequest(Request):
    """lti1p3platform's request metadata, from what the HTTP handler read."""

    def build_metadata(self, request: dict[str, Any]) -> TRequest:
        return request


class _Config(LTI1P3PlatformConfAbstract):
    def init_platform_config(self, **kwargs: Any) -> None:
        self._registration = kwargs["registration"]

    def get_registration_by_params(self, **kwargs: Any) -> Registration:
        return self._registration


class _Login(OIDCLoginAbstract):
    def set_lti_message_hint(self, **kwargs: Any) -> None:
        self._lti_message_hint = kwargs["hint"]

    def get_redirect(self, url: str) -> str:
        return url


class _Launch(LTIAdvantageMessageLaunchAbstract):
    def render_launch_form(self, launch_data: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        return launch_data


class _Grades(AssignmentsGradesService):
    def __init__(self, request: Request, config: _Config, lms: Lms) -> None:
        super().__init__(request, config, lms.url("/lineitems"))
        self.lms = lms

    def find_lineitems(self, page: int = 1, limit: int | None = None, **filters: Any) -> Any:
        items = list(self.lms.state.lineitems.values())
        return {"content": items, "has_next": False}

    def find_lineitem(self, line_item_id: str) -> Any:
        from lti1p3platform.exceptions import LineItemNotFoundException

        if line_item_id not in self.lms.state.lineitems:
            raise LineItemNotFoundException()
        return self.lms.state.lineitems[line_item_id]

    def create_lineitem(self, creation_data: Any) -> Any:
        return self.lms.add_lineitem(dict(creation_data))

    def update_lineitem(self, update_data: Any) -> Any:
        self.lms.state.lineitems[update_data["id"]].update(update_data)
        return self.lms.state.lineitems[update_data["id"]]

    def delete_lineitem(self, line_item_id: str) -> None:
        self.lms.state.lineitems.pop(line_item_id, None)

    def update_score(self, line_item_id: str, score: Any) -> UpdateScoreStatus:
        self.find_lineitem(line_item_id)
        by_user = self.lms.state.scores.setdefault(line_item_id, {})
        previous = by_user.get(score["userId"])
        # As AGS asks: a score older than the one held is not applied.
        if previous is not None and previous["timestamp"] > score["timestamp"]:
            return UpdateScoreStatus.OLD_TIMESTAMP
        by_user[score["userId"]] = score
        return UpdateScoreStatus.SUCCESS if previous is not None else UpdateScoreStatus.CREATED

    def get_results(self, line_item_id: str, page: int = 1, limit: int | None = None, user_id: str | None = None) -> Any:
        self.find_lineitem(line_item_id)
        results = [
            {"id": f"{self.lms.url('/lineitems/' + line_item_id)}/results/{sub}", "userId": sub, "resultScore": score["scoreGiven"],
             "resultMaximum": score["scoreMaximum"], "scoreOf": self.lms.url("/lineitems/" + line_item_id)}
            for sub, score in self.lms.state.scores.get(line_item_id, {}).items()
        ]
        return {"content": results, "has_next": False}


class _Roster(NamesRoleProvisioningService):
    def __init__(self, request: Request, config: _Config, lms: Lms) -> None:
        super().__init__(request, config, lms.url("/memberships"))
        self.lms = lms

    def get_member_data_page(self, page: int = 1, limit: int | None = None, role: str | None = None, since: str | None = None, **kwargs: Any) -> Any:
        members = [{"user_id": p.sub, "name": p.name, "email": p.email, "roles": p.roles, "status": "Active"} for p in self.lms.state.people.values()]
        return {"content": members, "has_next": False}

    def get_context_by_id(self) -> Context:
        return Context(id=self.lms.state.course_id, label="MLSYS", title=self.lms.state.course_title)


class Lms:
    """The LMS: one registration of the tool, served on 127.0.0.1 from a thread."""

    def __init__(self, issuer_port: int = 0) -> None:
        self.state = LmsState()
        self.private_key, self.public_key = generate_key_pair()
        self.client_id = "dojo-client-" + uuid.uuid4().hex[:8]
        self.deployment_id = "deployment-1"
        self.server = ThreadingHTTPServer(("127.0.0.1", issuer_port), self._handler())
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.issuer = self.base
        self.registration = Registration()
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    # --- set-up -----------------------------------------------------------------
    def url(self, path: str) -> str:
        return self.base + path

    def register_tool(self, login_url: str, launch_url: str, jwks_url: str) -> None:
        """What the LMS admin pastes from the tool's registration page."""
        (self.registration.set_iss(self.issuer).set_client_id(self.client_id).set_deployment_id(self.deployment_id)
         .set_oidc_login_url(login_url).set_launch_url(launch_url).set_deeplink_launch_url(launch_url)
         .set_tool_key_set_url(jwks_url).set_platform_public_key(self.public_key).set_platform_private_key(self.private_key))

    def config(self) -> _Config:
        config = _Config(registration=self.registration)
        config.get_registration()
        return config

    def start(self) -> Lms:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def enrol(self, sub: str, name: str, roles: list[str]) -> Person:
        person = Person(sub=sub, name=name, email=f"{sub}@lms.example", roles=roles)
        self.state.people[sub] = person
        return person

    def add_lineitem(self, data: dict[str, Any]) -> dict[str, Any]:
        line_id = str(len(self.state.lineitems) + 1)
        data["id"] = self.url(f"/lineitems/{line_id}")
        self.state.lineitems[line_id] = data
        return data

    # --- the launches ---------------------------------------------------------
    def login_url(self, person: Person, hint: str) -> str:
        """Third-party login initiation, as the LMS starts it: the tool's login URL with iss, login_hint, ..."""
        login = _Login(None, self.config())
        login.set_lti_message_hint(hint=hint)
        return login.prepare_preflight_url(person.sub)

    def _launch(self, query: dict[str, Any]) -> dict[str, Any]:
        """The OIDC auth endpoint: the tool redirected the browser here with its state and nonce."""
        person = self.state.people[query["login_hint"]]
        hint = query.get("lti_message_hint", "")
        config = self.config()
        tampering = self.state.launch_tampering
        self.state.launch_tampering = ""
        if tampering == "foreign_nonce":
            query = {**query, "nonce": "nonce-the-tool-never-issued"}
        launch = _Launch(_HttpRequest({"method": "GET", "get_data": query, "form_data": {}, "headers": {}, "content_type": None, "path": "/auth", "json": None}), config)
        launch.set_user_data(person.sub, person.roles, full_name=person.name, email_address=person.email)
        launch.set_launch_context_claim(self.state.course_id, context_title=self.state.course_title, context_label="MLSYS")
        launch.set_nrps(self.url("/memberships"))
        if hint == "deep-link":
            launch.set_dl(self.state.deep_link_return_url or self.url("/deep-link-return"), title="Add content", accept_types={"ltiResourceLink"}, extra_data={"opaque": "kept"})
        else:
            link = self.state.links[hint]
            launch.set_resource_link_claim(link.id, title=link.title)
            if link.custom:
                launch.set_custom_parameters_claim(link.custom)
            launch.set_ags(self.url("/lineitems"), self.url(f"/lineitems/{link.lineitem_id}") if link.lineitem_id else None,
                           allow_creating_lineitems=True)
        if self.state.launch_claims:
            launch.set_extra_claims(self.state.launch_claims)
            self.state.launch_claims = {}
        if tampering == "expired":
            launch.set_id_token_expiration(-120)
        if tampering == "unknown_deployment":
            self.registration.set_deployment_id("deployment-nobody-registered")
        try:
            form = launch.lti_launch()
        finally:
            self.registration.set_deployment_id(self.deployment_id)
        if tampering == "tampered":
            form["id_token"] = _tamper(form["id_token"])
        return form

    def _deep_link_return(self, form: dict[str, Any]) -> list[dict[str, Any]]:
        """The tool's deep-linking response: checked against the tool's key set; each item becomes a link with a line item."""
        items = self.config().validate_deeplinking_resp(form)
        for item in items:
            link = Link(id="link-" + uuid.uuid4().hex[:8], title=item["title"], custom=dict(item.get("custom") or {}))
            if item.get("lineItem"):
                created = self.add_lineitem({**item["lineItem"], "resourceLinkId": link.id})
                link.lineitem_id = created["id"].rsplit("/", 1)[1]
            self.state.links[link.id] = link
        return items

    # --- HTTP -----------------------------------------------------------------
    def _handler(self) -> type[BaseHTTPRequestHandler]:
        lms = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                return

            def _send(self, code: int, body: Any, content_type: str = "application/json", headers: dict[str, str] | None = None) -> None:
                data = body if isinstance(body, bytes) else json.dumps(body).encode()
                self.send_response(code)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def _request(self) -> Request:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                content_type = self.headers.get("Content-Type") or ""
                form = dict(parse_qsl(raw.decode())) if "form-urlencoded" in content_type else {}
                body = json.loads(raw) if raw and "json" in content_type else None
                split = urlsplit(self.path)
                return _HttpRequest({"method": self.command, "form_data": form, "get_data": dict(parse_qsl(split.query)), "headers": dict(self.headers),
                                     "content_type": content_type, "path": split.path, "json": body})

            def _answer(self, response: Response) -> None:
                result = response.result
                if 200 <= response.code < 300:
                    data = result["content"] if isinstance(result, dict) and "content" in result else result
                    self._send(response.code, data if data is not None else {}, response.media_type)
                else:
                    self._send(response.code, {"error": response.message}, response.media_type)

            def do_GET(self) -> None:
                request = self._request()
                path = request.path
                if path == "/jwks":
                    self._send(200, lms.config().get_jwks())
                elif path == "/auth":
                    form = lms._launch(request.get_data)
                    self._send(200, _autopost(form["launch_url"], {"id_token": form["id_token"], "state": form["state"]}), "text/html")
                elif path == "/memberships":
                    self._answer(_Roster(request, lms.config(), lms).handle_get_members())
                elif path.startswith("/lineitems/") and path.endswith("/results"):
                    line_id = path.split("/")[2]
                    self._answer(_Grades(request, lms.config(), lms).handle_get_results(line_id))
                elif path.startswith("/lineitems/"):
                    self._answer(_Grades(request, lms.config(), lms).handle_get_lineitem(path.split("/")[2]))
                elif path == "/lineitems":
                    self._answer(_Grades(request, lms.config(), lms).handle_get_lineitems())
                else:
                    self._send(404, {"error": "no such page"})

            def do_POST(self) -> None:
                request = self._request()
                path = request.path
                if path == "/token":
                    try:
                        self._send(200, lms.config().get_access_token(request.form_data))
                    except Exception as exc:  # noqa: BLE001 - any refusal is a 400 to the tool
                        self._send(400, {"error": "invalid_client", "error_description": str(exc)})
                elif path == "/deep-link-return":
                    items = lms._deep_link_return(request.form_data)
                    self._send(200, f"<p>Added {len(items)} item(s).</p>".encode(), "text/html")
                elif path.startswith("/lineitems/") and path.endswith("/scores"):
                    lms.state.score_posts += 1
                    if lms.state.fail_scores_times > 0:
                        lms.state.fail_scores_times -= 1
                        self._send(lms.state.fail_scores_with, {"error": "the gradebook is busy"})
                        return
                    self._answer(_Grades(request, lms.config(), lms).handle_update_score(path.split("/")[2]))
                elif path == "/lineitems":
                    self._answer(_Grades(request, lms.config(), lms).handle_create_lineitem())
                else:
                    self._send(404, {"error": "no such page"})

        return Handler


def _autopost(action: str, fields: dict[str, str]) -> bytes:
    from html import escape

    inputs = "".join(f'<input type="hidden" name="{escape(k)}" value="{escape(v)}">' for k, v in fields.items())
    return f'<form method="post" action="{escape(action)}">{inputs}</form><script>document.forms[0].submit()</script>'.encode()


def _tamper(token: str) -> str:
    """The same signature over a changed body: the learner claims to be someone else."""
    header, body, signature = token.split(".")
    claims = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    claims["sub"] = "someone-else"
    forged = base64.urlsafe_b64encode(json.dumps(claims).encode()).rstrip(b"=").decode()
    return f"{header}.{forged}.{signature}"


class _Forms(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.forms: list[dict[str, Any]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name: value or "" for name, value in attrs}
        if tag == "form":
            self.forms.append({"action": values.get("action", ""), "method": values.get("method", "get").lower(), "fields": {}})
        elif tag == "input" and self.forms and values.get("name") and values.get("type") in ("hidden", None, "text"):
            self.forms[-1]["fields"][values["name"]] = values.get("value", "")


def forms_in(html: str) -> list[dict[str, Any]]:
    parser = _Forms()
    parser.feed(html)
    return parser.forms


class Browser:
    """The user agent: one cookie jar, follows redirects, submits auto-posting forms as a browser's script would."""

    def __init__(self) -> None:
        self.session = requests.Session()

    def get(self, url: str) -> requests.Response:
        return self.session.get(url, timeout=30)

    def post(self, url: str, data: dict[str, str]) -> requests.Response:
        return self.session.post(url, data=data, timeout=30)

    def submit_autopost(self, response: requests.Response) -> tuple[requests.Response, dict[str, Any]]:
        """Post the page's first form (the launch or deep-link return); returns the answer and what was posted."""
        (form, *_) = forms_in(response.text)
        return self.post(form["action"], form["fields"]), form

    def launch(self, lms: Lms, person: Person, hint: str) -> tuple[requests.Response, dict[str, Any]]:
        """Login initiation -> the LMS's auth endpoint -> the launch form posted to the tool."""
        auth_page = self.get(lms.login_url(person, hint))
        assert auth_page.status_code == 200, auth_page.text[:500]
        return self.submit_autopost(auth_page)
