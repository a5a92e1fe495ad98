"""``dojo``: login, list, fetch, test, run, submit, status, open, reference."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import webbrowser
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.markup import escape
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from .client import Api, refusal
from .config import Login, load_login, save_login
from .errors import CliError
from .rung_folder import SOLUTION, find_rung, write_rung

console = Console(highlight=False, soft_wrap=True)
# The longest `dojo run` / `dojo submit` waits for a result before saying where to look.
WAIT_MAX_S = 600.0
MARKS = {"passed": "[green]✓[/]", "failed": "[red]✗[/]", "error": "[red]![/]", "not_run": "[dim]·[/]", "skipped": "[dim]-[/]"}


def _api() -> Api:
    return Api(load_login())


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def cli() -> None:
    """Practise the Dojo's rungs in your own editor: fetch, test locally, Run and Submit."""


@cli.command()
@click.argument("server")
@click.option("--token", envvar="DOJO_TOKEN", help="The token (or DOJO_TOKEN); else asked for, or read from a piped stdin.")
def login(server: str, token: str | None) -> None:
    """Check a personal access token against SERVER and keep both in your config dir (mode 0600)."""
    if token is None:
        token = click.prompt("Personal access token (from the API tokens page)", hide_input=True) if sys.stdin.isatty() else sys.stdin.readline()
    server = server.rstrip("/")
    if not server.startswith(("http://", "https://")):
        raise CliError(f"{server} is not a web address: give it as https://host (or http://127.0.0.1:8000).")
    me = Api(Login(server, token.strip())).get("/me")
    path = save_login(Login(server, token.strip()))
    console.print(f"Logged in to {server} as [bold]{me['username']}[/] (token “{me['token_name']}”, {me['scope']}, expires {me['expires_at'][:10]}). Saved in {path}.")


@cli.command("list")
@click.argument("module", required=False)
def list_rungs(module: str | None) -> None:
    """The modules and their rungs, with where you stand."""
    api = _api()
    for track in api.get("/catalog"):
        for entry in track["modules"]:
            if module and entry["slug"] != module:
                continue
            detail = api.get(f"/modules/{entry['slug']}")
            table = Table(title=f"{entry['title']} ({entry['slug']}): {entry['solved']}/{entry['total']} solved", title_justify="left")
            for column in ("rung", "slug", "title", "state", "difficulty", "minutes"):
                table.add_column(column)
            for rung in detail["rungs"]:
                table.add_row(rung["label"], rung["slug"], rung["title"], rung["state"], rung["difficulty"], str(rung["minutes"]))
            console.print(table)


@cli.command()
@click.argument("rung")
@click.option("--dir", "folder", type=click.Path(file_okay=False, path_type=Path), help="Where to write it (default: ./RUNG).")
@click.option("--force", is_flag=True, help="Overwrite solution.py with your latest draft or the starter.")
def fetch(rung: str, folder: Path | None, force: bool) -> None:
    """Write RUNG's instructions, your latest draft (else the starter), the visible tests, helpers and a conftest."""
    api = _api()
    data = api.get(f"/rungs/{rung}")
    draft = api.request("GET", f"/rungs/{rung}/draft", allow=(404,))
    solution = draft.json()["code"] if draft.status_code == 200 else data["starter_code"]
    target = folder or Path.cwd() / data["slug"]
    written = write_rung(target, data, solution, force=force)
    kept = "" if SOLUTION in written else f" ({SOLUTION} kept: --force replaces it)"
    console.print(f"Fetched {data['title']} (version {data['version']}) into {target}: {', '.join(written)}{kept}.")
    for deadline in data["deadlines"]:
        console.print(f"  {deadline['assignment']}: {deadline['sentence']}")
    console.print(f"Next: cd {target} && dojo test")


@cli.command()
@click.argument("folder", required=False, type=click.Path(file_okay=False, path_type=Path))
@click.argument("pytest_args", nargs=-1)
def test(folder: Path | None, pytest_args: tuple[str, ...]) -> None:
    """Run the visible tests on your machine with pytest (no Docker; the same assertion messages as Run)."""
    rung = find_rung((folder or Path.cwd()).resolve())
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:django", "test_visible.py", *pytest_args]
    # A Django project's settings in the environment would make pytest-django (where installed) load it.
    env = {name: value for name, value in os.environ.items() if name != "DJANGO_SETTINGS_MODULE"}
    sys.exit(subprocess.call(command, cwd=rung.path, env=env))


def _send(kind: str, folder: Path | None, prediction: float | None = None) -> None:
    rung = find_rung((folder or Path.cwd()).resolve())
    code = rung.read_solution()
    api = _api()
    api.request("PUT", f"/rungs/{rung.slug}/draft", json={"code": code})  # the browser opens on it too
    body: dict[str, Any] = {"code": code, "version": rung.version}
    if prediction is not None:
        body["prediction"] = prediction
    response = api.request("POST", f"/rungs/{rung.slug}/{kind}", json=body, allow=(409,))
    if response.status_code == 409:
        body = response.json()
        if body.get("code") == "version_changed":
            now = api.get(f"/rungs/{rung.slug}")["version"]
            raise CliError(f"{rung.slug} changed since you fetched it (version {rung.version}, now {now}): run `dojo fetch {rung.slug}` again; your {SOLUTION} is kept.")
        raise refusal(response)
    state = _wait(api, response.json()["state_url"].removeprefix("/api/v1"), kind)
    _show(state)
    sys.exit(0 if state.get("outcome") == "passed" else 1)


def _wait(api: Api, path: str, kind: str) -> dict[str, Any]:
    started = time.monotonic()
    columns = (SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn())
    with Progress(*columns, console=console, transient=True) as progress:
        task = progress.add_task(f"{kind}: queued", total=None)
        while True:
            state: dict[str, Any] = api.get(path)
            if state["status"] == "done":
                return state
            where = f"queued, position {state['queue_position']}" if state.get("queue_position") else state["status"]
            progress.update(task, description=f"{kind}: {where}, {len(state.get('tests', []))} tests reported")
            if time.monotonic() - started > WAIT_MAX_S:
                raise CliError(f"No result after {WAIT_MAX_S:.0f} s; `dojo status` shows it once it is graded.")
            time.sleep(max(0.2, min(5.0, (state.get("poll_after_ms") or 1000) / 1000)))


def _show(state: dict[str, Any]) -> None:
    """The result as the workspace words it: counts, the summary, the message, failed tests first."""
    tests = state.get("tests", [])
    counts: dict[str, int] = {}
    for row in tests:
        counts[row["outcome"]] = counts.get(row["outcome"], 0) + 1
    tally = " · ".join(f"{n} {outcome.replace('_', ' ')}" for outcome, n in sorted(counts.items(), key=lambda item: item[0] == "passed"))
    console.print(f"[bold]{tally or 'no tests'}[/] — {escape(state.get('summary', ''))}")
    if state.get("message"):
        console.print(escape(state["message"]))
    for row in sorted(tests, key=lambda row: row["outcome"] == "passed"):
        console.print(f" {MARKS.get(row['outcome'], '?')} {escape(row['name'])}" + (f": {escape(row['message'])}" if row.get("message") else ""))
    for stream in ("stdout", "stderr"):
        if state.get(stream):
            console.print(f"[dim]{stream}:[/]\n{escape(state[stream])}")
    if state.get("machine"):
        console.print(f"[dim]{escape(state['machine'])}[/]")
    if state.get("reference_unlocked"):
        console.print("Passed: the reference solution is unlocked (`dojo reference`).")


@cli.command()
@click.argument("folder", required=False, type=click.Path(file_okay=False, path_type=Path))
def run(folder: Path | None) -> None:
    """Grade solution.py against the visible tests on the server."""
    _send("run", folder)


@cli.command()
@click.argument("folder", required=False, type=click.Path(file_okay=False, path_type=Path))
@click.option("--predict", type=float, default=None, metavar="X",
              help="A speed rung that asks for it: the speed-up you expect, times the baseline's speed (e.g. 3).")
def submit(folder: Path | None, predict: float | None) -> None:
    """Grade solution.py against the hidden tests on the server."""
    _send("submit", folder, predict)


@cli.command()
@click.argument("folder", required=False, type=click.Path(file_okay=False, path_type=Path))
def status(folder: Path | None) -> None:
    """Who you are logged in as and, in a rung's folder, your latest attempts at it."""
    api = _api()
    me = api.get("/me")
    console.print(f"{api.server}: {me['username']} (token “{me['token_name']}”, {me['scope']}, expires {me['expires_at'][:10]})")
    try:
        rung = find_rung((folder or Path.cwd()).resolve())
    except CliError:
        return
    data = api.get(f"/rungs/{rung.slug}")
    changed = f" — changed since your fetch (version {rung.version}): `dojo fetch {rung.slug}`" if data["version"] != rung.version else ""
    console.print(f"{data['title']} (version {data['version']}): {'solved' if data['solved'] else 'not solved yet'}{changed}")
    for attempt in api.get(f"/rungs/{rung.slug}/history")["attempts"][:5]:
        speed = f" ({escape(attempt['speed'])})" if attempt.get("speed") else ""  # every test passed; the speed phase failed it
        console.print(f"  {attempt['enqueued_at'][:16]} {attempt['kind']:<6} {attempt['outcome'] or attempt['status']:<12} {attempt['passed']}/{attempt['total']}{speed}")


@cli.command("open")
@click.argument("rung", required=False)
def open_rung(rung: str | None) -> None:
    """Open the rung's workspace in your browser."""
    url = _api().get(f"/rungs/{rung}")["url"] if rung else find_rung(Path.cwd().resolve()).url
    console.print(url)
    webbrowser.open(url)


@cli.command()
@click.argument("folder", required=False, type=click.Path(file_okay=False, path_type=Path))
def reference(folder: Path | None) -> None:
    """After you passed: write the reference solution to reference.py beside yours."""
    rung = find_rung((folder or Path.cwd()).resolve())
    data = _api().get(f"/rungs/{rung.slug}/reference")
    (rung.path / "reference.py").write_text(data["reference"], encoding="utf-8")
    console.print(f"Wrote {rung.path / 'reference.py'}; {len(data['hidden_tests'])} hidden tests described on the workspace page.")


def main() -> None:
    try:
        cli(standalone_mode=False)
    except CliError as exc:
        Console(stderr=True, highlight=False).print(f"[red]dojo:[/] {escape(str(exc))}", soft_wrap=True)
        sys.exit(exc.exit_code)
    except click.exceptions.Abort:
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
