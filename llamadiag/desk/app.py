"""The desk's routes: a page that works without JavaScript, and a JSON API beside it.

GET  /                 the page; with ?q=... it also shows the lookup results
POST /                 the form (log, version_text, cmdline) -> the report on the page
POST /api/explain      JSON {"log", "version_text", "cmdline"} -> the JSON of `explain --format json`
GET  /api/lookup?q=... the JSON of `lookup --format json` (also &build=N, &cmdline=...)
GET  /healthz          "ok"
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

from jinja2 import Environment, FileSystemLoader
from starlette.applications import Starlette
from starlette.datastructures import UploadFile
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from llamadiag import __version__
from llamadiag.desk.adapter import Looked, redact_query
from llamadiag.desk.guard import Guard, Scope
from llamadiag.desk.service import FIELDS, BadInput, Desk, fields_from_json, size_message
from llamadiag.desk.work import RETRY_AFTER, WorkQueue
from llamadiag.render.markdown import CONF_WORDS, ref_detail, ref_label, run_summary

HERE = Path(__file__).parent


def _environment() -> Environment:
    env = Environment(loader=FileSystemLoader(HERE / "templates"), autoescape=True)  # pasted text is echoed back
    env.filters["ref_label"] = ref_label
    env.filters["ref_detail"] = ref_detail
    env.filters["run_summary"] = run_summary
    env.globals["conf_words"] = CONF_WORDS
    return env


class DeskApp:
    """The desk's Starlette routes: the HTML page and the JSON API."""

    def __init__(self, desk: Desk, work: WorkQueue | None = None) -> None:
        self.desk = desk
        self.env = _environment()
        self.work = work or WorkQueue()

    # -- rendering ----------------------------------------------------------------
    def page(self, status: int = 200, **context: Any) -> HTMLResponse:
        """Render the desk's page with the given status and template context."""
        context.setdefault("fields", dict.fromkeys(FIELDS, ""))
        context.setdefault("q", "")
        html = self.env.get_template("page.html").render(
            version=__version__,
            rules_version=self.desk.knowledge.digest,
            rule_count=self.desk.rule_count,
            max_mb=f"{self.desk.max_bytes / 1e6:.1f}",
            **context,
        )
        headers = {"retry-after": str(RETRY_AFTER)} if status == 503 else None
        return HTMLResponse(html, status_code=status, headers=headers)

    async def crashed(self, request: Request, exc: Exception) -> Response:
        """A bug: the user gets a short answer; guard.py logs the exception's type only."""
        message = f"internal error ({type(exc).__name__}); nothing was kept"
        if request.url.path.startswith("/api/"):
            return _json_error(BadInput(message, 500))
        return self.page(500, error=message)

    def too_large(self, scope: Scope, size: int | None) -> tuple[str, bytes]:
        """The content type and body answering a request body over the size limit."""
        message = size_message(size, self.desk.max_bytes)
        if scope["path"].startswith("/api/"):
            return "application/json", json.dumps({"error": message}).encode()
        return "text/html", cast(bytes, self.page(413, error=message).body)  # an HTMLResponse renders to bytes

    # -- routes ---------------------------------------------------------------------
    async def index(self, request: Request) -> Response:
        """The page, with lookup results when the query string asks for a lookup."""
        params = request.query_params
        q = params.get("q", "")
        if not (q or params.get("build") or params.get("cmdline")):
            return self.page()
        shown = redact_query(q, params.get("cmdline", ""))  # the search box repeats the query: redacted too
        try:
            looked = await self.work.run(self._lookup, request, gone=request.is_disconnected)
        except BadInput as exc:
            return self.page(exc.status, q=shown, error=exc.message)
        if looked.response.error:
            return self.page(400, q=shown, error=f"the query could not be read: {looked.response.error}")
        return self.page(q=shown, looked=looked)

    async def submit(self, request: Request) -> Response:
        """The page with the diagnosis of a submitted form (log, version text, command line)."""
        try:
            fields = await self._form_fields(request)
        except BadInput as exc:
            return self.page(exc.status, error=exc.message)
        try:
            explained = await self.work.run(self.desk.explain, fields, gone=request.is_disconnected)
        except BadInput as exc:
            return self.page(exc.status, fields=fields, error=exc.message)
        # the result is redacted; the raw paste is not shown again (the form is ready for the next ticket)
        return self.page(explained=explained)

    async def api_explain(self, request: Request) -> Response:
        """The JSON API for a diagnosis: the redacted report of a JSON request body."""
        try:
            fields = fields_from_json(await request.body())
            explained = await self.work.run(self.desk.explain, fields, gone=request.is_disconnected)
        except BadInput as exc:
            return _json_error(exc)
        return Response(explained.redacted.json(), media_type="application/json")

    async def api_lookup(self, request: Request) -> Response:
        """The JSON API for a lookup: the redacted response, 400 when the query could not be read."""
        try:
            looked = await self.work.run(self._lookup, request, gone=request.is_disconnected)
        except BadInput as exc:
            return _json_error(exc)
        status = 400 if looked.response.error else 200
        return Response(looked.json(), status_code=status, media_type="application/json")

    def _lookup(self, request: Request) -> Looked:
        p = request.query_params
        return self.desk.lookup(p.get("q", ""), p.get("build", ""), p.get("cmdline", ""))

    async def _form_fields(self, request: Request) -> dict[str, str]:
        try:
            # no file parts: Starlette would spool a large upload to a temporary file
            form = await request.form(max_files=0, max_fields=16, max_part_size=self.desk.max_bytes)
        except HTTPException as exc:
            message = f"the form could not be read ({exc.detail}); paste the text instead of attaching a file"
            raise BadInput(message) from None
        out: dict[str, str] = {}
        for name in FIELDS:
            value = form.get(name, "")
            out[name] = "" if isinstance(value, UploadFile) else value
        return out


def _json_error(exc: BadInput) -> Response:
    headers = {"retry-after": str(RETRY_AFTER)} if exc.status == 503 else None
    return Response(
        json.dumps({"error": exc.message}), status_code=exc.status, media_type="application/json", headers=headers
    )


async def _healthz(request: Request) -> Response:
    return PlainTextResponse("ok")


async def _no_icon(request: Request) -> Response:
    return Response(status_code=204)  # browsers ask for one; an empty answer keeps the log quiet


def create_app(
    desk: Desk, hosts: frozenset[str] | None = None, token: str | None = None, work: WorkQueue | None = None
) -> Guard:
    """The ASGI app, wrapped in the guard (Host, Origin and token checks, size cap and read
    time-out, headers, access log of paths). `hosts`: the Host values to answer (None: any);
    `work`: how many diagnoses run and wait at once (default: one per core, 16 waiting)."""
    view = DeskApp(desk, work)
    app = Starlette(
        routes=[
            Route("/", view.index, methods=["GET"]),
            Route("/", view.submit, methods=["POST"]),
            Route("/api/explain", view.api_explain, methods=["POST"]),
            Route("/api/lookup", view.api_lookup, methods=["GET"]),
            Route("/healthz", _healthz, methods=["GET"]),
            Route("/favicon.ico", _no_icon, methods=["GET"]),
            Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
        ],
        exception_handlers={Exception: view.crashed},
    )
    return Guard(app, desk.max_bytes, view.too_large, hosts=hosts, token=token)
