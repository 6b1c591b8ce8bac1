"""The run viewer: a Starlette app over the runs database, server-rendered with Jinja2.

Every page has a JSON twin with the same data (``/runs`` and ``/runs.json``, ``/runs/ID``
and ``/runs/ID.json``, …): one function in :mod:`plangate.web.pages` builds the dict, the
template draws it, the twin returns it. Errors become a status code in one place,
:func:`_error`, as a page or as JSON. The only write is the reply box, through the runs
engine (:mod:`plangate.web.reply`); everything else reads over read-only connections.

Routes::

    /runs[.json]                                   the runs list
    /runs/ID[.json]                                conversation, plan panel, version list
    /runs/ID/versions/N[.json]                     the same, the plan at version N
    /runs/ID/diff[.json]?from=1&to=3&view=split    two versions compared (p<seq>: a refused one)
    /runs/ID/changes[.json]?commit=SHA&view=split  the run's code changes, or one step's
    /runs/ID/checks[.json]                         every check run, with its output
    /runs/ID/stamp.json, /stamp.json               what pages poll to follow a run live
    POST /runs/ID/reply[.json]                     a reply: starts the run's next turn; it must
                                                   carry the run page's reply token (the form's
                                                   ``token`` field, or ``X-Plangate-Token``)
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import threading
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import jinja2
from markupsafe import Markup, escape
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from plangate import __version__, markdown
from plangate.errors import PlangateError
from plangate.runs.model import ENDED_STATES
from plangate.web import compare, pages, run_page
from plangate.web.pages import BadRequest, Conflict, Data, NotFound, PageError
from plangate.web.queries import Reader
from plangate.web.reply import EngineReplier, Replier

HERE = Path(__file__).parent
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1", "[::1]")
MESSAGE_LIMIT = 20_000
TOKEN_HEADER = "x-plangate-token"
"""The header a JSON reply carries its token in (a form carries it as the ``token`` field)."""
SECURITY_HEADERS = [
    (
        b"content-security-policy",
        b"default-src 'self'; img-src 'self' data:; "
        b"style-src 'self'; script-src 'self'; form-action 'self'; frame-ancestors 'none'",
    ),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"cache-control", b"no-store"),
]


class Forbidden(PageError):
    status = 403
    title = "Forbidden"


class Unavailable(PageError):
    status = 503
    title = "No runs database"


# -- templates -------------------------------------------------------------------------------


def _when(value: str | None) -> str:
    """``2025-06-05T14:03:07.123Z`` as ``5 Jun 14:03:07`` (UTC; the page shows local time)."""
    if not value:
        return ""
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return value
    return f"{moment.day} {moment:%b %H:%M:%S}"


def _code_spans(text: str | None) -> Markup:
    """``text`` escaped, with each Markdown code span (`` `x` ``, ``` ``a`b`` ```) drawn as
    code, by CommonMark's rules (:func:`plangate.markdown.code_spans`): an unclosed backtick
    stays a backtick and never pairs with one further on."""
    if not text:
        return Markup("")
    return Markup("").join(
        Markup("<code>%s</code>") % piece if is_code else escape(piece)
        for piece, is_code in markdown.code_spans(text)
    )


def _sentence(text: str, capital: bool = True) -> str:
    """``text`` as a sentence: a capital first letter (unless told not to) and a full stop."""
    text = text.strip()
    if not text:
        return text
    if capital:
        text = text[0].upper() + text[1:]
    return text if text[-1] in ".!?" else text + "."


def templates() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(HERE / "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["when"] = _when
    env.filters["sentence"] = _sentence
    env.filters["code"] = _code_spans
    env.filters["short"] = lambda sha: (sha or "")[:10]
    env.globals["version"] = __version__
    return env


# -- the app --------------------------------------------------------------------------------


class Viewer:
    """The app's state: where the runs are, the templates, and who sends replies."""

    def __init__(self, url: str, replier: Replier) -> None:
        self.url = url
        self.replier = replier
        self.env = templates()
        self._secret = secrets.token_bytes(32)  # one per server process: tokens die with it
        self._reader: Reader | None = None
        self._lock = threading.Lock()

    def reply_token(self, run_id: str) -> str:
        """The token a reply to ``run_id`` must carry: it proves the reply was written on a
        page this server served (or read from its JSON twin), never on another site."""
        return hmac.new(self._secret, b"reply:" + run_id.encode(), hashlib.sha256).hexdigest()

    def check_reply_token(self, run_id: str, token: str | None) -> None:
        if not token or not hmac.compare_digest(token, self.reply_token(run_id)):
            raise Forbidden(
                "a reply must carry the token of the run page it was written on",
                "open the run page (or its .json twin) and reply from there",
            )

    def reader(self) -> Reader:
        with self._lock:
            if self._reader is None:
                try:
                    self._reader = Reader(self.url)
                except PlangateError as error:
                    raise Unavailable(error.message, error.remedy) from None
            return self._reader

    def close(self) -> None:
        self.replier.close()
        with self._lock:
            if self._reader is not None:
                self._reader.close()
                self._reader = None

    def render(self, name: str, data: Data, status: int = 200) -> HTMLResponse:
        template = self.env.get_template(name)
        return HTMLResponse(template.render(**data), status_code=status)


def _viewer(request: Request) -> Viewer:
    viewer: Viewer = request.app.state.viewer
    return viewer


def _wants_json(request: Request) -> bool:
    return request.url.path.endswith(".json")


def _twin(template: str, build: Callable[[Request, Reader], Data]) -> tuple[Any, Any]:
    """A page and its JSON twin, built by one function."""

    def html(request: Request) -> Response:
        viewer = _viewer(request)
        return viewer.render(template, _with_token(viewer, build(request, viewer.reader())))

    def as_json(request: Request) -> Response:
        viewer = _viewer(request)
        return JSONResponse(_with_token(viewer, build(request, viewer.reader())))

    return html, as_json


def _with_token(viewer: Viewer, data: Data) -> Data:
    """A run page's reply box carries the run's reply token."""
    reply, run = data.get("reply"), data.get("run")
    if isinstance(reply, dict) and isinstance(run, dict) and isinstance(run.get("id"), str):
        reply["token"] = viewer.reply_token(run["id"])
    return data


def _runs(request: Request, reader: Reader) -> Data:
    return pages.runs_page(reader)


def _run(request: Request, reader: Reader) -> Data:
    return run_page.run_page(reader, request.path_params["run_id"])


def _version(request: Request, reader: Reader) -> Data:
    number: int = request.path_params["number"]
    return run_page.run_page(reader, request.path_params["run_id"], number)


def _diff(request: Request, reader: Reader) -> Data:
    params = request.query_params
    return compare.diff_page(
        reader,
        request.path_params["run_id"],
        params.get("from") or None,
        params.get("to") or None,
        params.get("view", "auto"),
    )


def _changes(request: Request, reader: Reader) -> Data:
    params = request.query_params
    return compare.changes_page(
        reader,
        request.path_params["run_id"],
        params.get("commit") or None,
        params.get("view", "unified"),
    )


def _checks(request: Request, reader: Reader) -> Data:
    return pages.checks_page(reader, request.path_params["run_id"])


def _stamp(request: Request) -> Response:
    run_id = request.path_params.get("run_id")
    return JSONResponse(pages.stamp_page(_viewer(request).reader(), run_id))


def _home(request: Request) -> Response:
    return RedirectResponse("/runs", status_code=307)


# -- replying --------------------------------------------------------------------------------


def _same_origin(request: Request) -> None:
    """Refuse a reply posted from another site (the server is local, the browser is not)."""
    if request.headers.get("sec-fetch-site") == "cross-site":
        raise Forbidden("a reply must come from this page", "open the run page and reply there")
    origin = request.headers.get("origin")
    if origin and origin != "null" and urlsplit(origin).netloc != request.headers.get("host"):
        raise Forbidden("a reply must come from this page", "open the run page and reply there")


def _send(viewer: Viewer, run_id: str, message: str, version: str | None) -> int:
    message = message.strip()
    if not message:
        raise BadRequest("the reply is empty", "write what the run should do next")
    if len(message) > MESSAGE_LIMIT:
        raise BadRequest(
            f"the reply is {len(message)} characters long", f"keep it under {MESSAGE_LIMIT}"
        )
    run = viewer.reader().run(run_id)
    if run is None:
        raise NotFound(f"there is no run {run_id!r}", "see the list of runs")
    if version and version.isdigit() and int(version) != run.version:
        raise Conflict(
            f"The plan changed to version {run.version}. Review it before sending changes.",
            "read the new version, then send your reply again",
        )
    if run.state not in ENDED_STATES:
        label = pages.STATE_LABELS.get(run.state, run.state).lower()
        raise Conflict(
            f"run {run_id} is {label}, not waiting on you",
            "reply when the run waits on you or is done",
        )
    try:
        return viewer.replier.reply(run_id, message)
    except PlangateError as error:
        raise Conflict(error.message, error.remedy) from None


async def _reply(request: Request) -> Response:
    viewer = _viewer(request)
    run_id: str = request.path_params["run_id"]
    as_json = _wants_json(request)
    _same_origin(request)
    body = await request.body()
    # The token first: nothing is looked up for a request that does not carry it.
    if as_json:
        viewer.check_reply_token(run_id, request.headers.get(TOKEN_HEADER))
        try:
            fields = json.loads(body or b"{}")
        except ValueError:
            raise BadRequest("the body is not JSON", 'send {"message": "…"}') from None
        if not isinstance(fields, dict):
            raise BadRequest("the body is not a JSON object", 'send {"message": "…"}')
        message = str(fields.get("message") or "")
        version = None if fields.get("version") is None else str(fields["version"])
    else:
        form = parse_qs(body.decode("utf-8", errors="replace"), keep_blank_values=True)
        viewer.check_reply_token(run_id, form.get("token", [None])[0])
        message = form.get("message", [""])[0]
        version = form.get("version", [None])[0]
    try:
        turn = await run_in_threadpool(_send, viewer, run_id, message, version)
    except PageError as error:
        if as_json or isinstance(error, NotFound | Forbidden | Unavailable):
            raise
        data = await run_in_threadpool(run_page.run_page, viewer.reader(), run_id)
        _with_token(viewer, data)
        data["reply"]["error"] = {"message": error.message, "remedy": error.remedy}
        data["reply"]["draft"] = message
        return viewer.render("run.html", data, status=error.status)
    url = pages.run_url(run_id)
    if as_json:
        return JSONResponse({"run": run_id, "turn": turn, "url": url})
    # No fragment: the page opens with its conversation scrolled to the end, the reply.
    return RedirectResponse(url, status_code=303)


# -- errors, once ----------------------------------------------------------------------------


async def _error(request: Request, exc: Exception) -> Response:
    if isinstance(exc, PageError):
        status, title, message, remedy = exc.status, exc.title, exc.message, exc.remedy
    elif isinstance(exc, HTTPException):
        status, title = exc.status_code, "Not found" if exc.status_code == 404 else "Error"
        message = "there is no such page" if exc.status_code == 404 else str(exc.detail)
        remedy = "see the list of runs"
    elif isinstance(exc, PlangateError):
        status, title, message, remedy = 503, "Cannot read the runs", exc.message, exc.remedy
    else:
        status, title = 500, "Something went wrong"
        message, remedy = f"{type(exc).__name__}: {exc}", "see the server's output"
    if _wants_json(request):
        return JSONResponse(
            {"error": {"status": status, "message": message, "remedy": remedy}},
            status_code=status,
        )
    viewer = _viewer(request)
    data = {"status": status, "title": title, "message": message, "remedy": remedy}
    return viewer.render("error.html", data, status=status)


class _Headers:
    """Security and no-cache headers on every response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                names = {name.lower() for name, _ in headers}
                static = scope["path"].startswith("/static/")
                for name, value in SECURITY_HEADERS:
                    if name not in names and not (static and name == b"cache-control"):
                        headers.append((name, value))
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, send_with_headers)


def routes() -> list[BaseRoute]:
    found: list[BaseRoute] = [Route("/", _home)]
    pairs = [
        ("/runs", "runs.html", _runs),
        ("/runs/{run_id}/versions/{number:int}", "run.html", _version),
        ("/runs/{run_id}/diff", "diff.html", _diff),
        ("/runs/{run_id}/changes", "changes.html", _changes),
        ("/runs/{run_id}/checks", "checks.html", _checks),
        ("/runs/{run_id}", "run.html", _run),
    ]
    found.append(Route("/stamp.json", _stamp))
    found.append(Route("/runs/{run_id}/stamp.json", _stamp))
    found.append(Route("/runs/{run_id}/reply.json", _reply, methods=["POST"]))
    found.append(Route("/runs/{run_id}/reply", _reply, methods=["POST"]))
    for path, template, build in pairs:
        html, as_json = _twin(template, build)
        found.append(Route(path + ".json", as_json))
        found.append(Route(path, html))
    found.append(Mount("/static", StaticFiles(directory=HERE / "static"), name="static"))
    return found


def create_app(
    url: str | None = None,
    *,
    replier: Replier | None = None,
    allowed_hosts: Sequence[str] = LOOPBACK_HOSTS,
) -> Starlette:
    """The viewer over the runs database at ``url`` (default: the engine's)."""
    if url is None:
        from plangate.runs.store import database_url

        url = database_url()
    viewer = Viewer(url, replier if replier is not None else EngineReplier(url))

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            await run_in_threadpool(viewer.close)

    app = Starlette(
        routes=routes(),
        middleware=[
            Middleware(TrustedHostMiddleware, allowed_hosts=list(allowed_hosts)),
            Middleware(_Headers),
        ],
        exception_handlers={
            PageError: _error,
            HTTPException: _error,
            PlangateError: _error,
            Exception: _error,
        },
        lifespan=lifespan,
    )
    app.state.viewer = viewer
    return app
