"""ASGI guards in front of the HTTP API: Host allowlist, cross-site writes, body size.

- `HostGuard`: a request whose `Host` is not a loopback name and not in the allowed hosts is
  answered 421, like the MCP SDK's streamable HTTP transport does. A web page on another
  domain that re-points its name to 127.0.0.1 (DNS rebinding) sends its own name as Host, so
  it never reaches a route.
- `CrossSiteGuard`: a state-changing request (POST, PUT, PATCH, DELETE) sent by a browser from
  another site (`Origin` not the server's own, or `Sec-Fetch-Site: cross-site`) is answered
  403, with or without a token: a page the user visits cannot make their browser ingest,
  delete or write. Clients that send no `Origin` (curl, SDKs) pass; so do the CORS origins.
- `BodyLimit`: a body over the limit is refused with 413 without reading the rest, whether
  its size is declared (`Content-Length`) or not (chunked transfer).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ragbench.service.errors import error_response

UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
ALLOWED_HOSTS_ENV = "RAGBENCH_ALLOWED_HOSTS"
"""Comma-separated extra Host names (`name` for any port, `name:port` for one port)."""


def is_loopback(host: str) -> bool:
    """Whether `host` is `localhost` or a loopback IP address (`127.0.0.1`, `::1`, `[::1]`).

    Parsed as an address, so a name that merely starts with `127.` is not loopback.
    """
    name = host.strip().lower()
    if name.startswith("[") and name.endswith("]"):
        name = name[1:-1]
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def split_host(value: str) -> tuple[str, str | None]:
    """A Host header (`name`, `name:port`, `[v6]:port`) as (lower-case name, port or None)."""
    value = value.strip().lower()
    if value.startswith("["):
        name, _, rest = value[1:].partition("]")
        return name, rest[1:] if rest.startswith(":") and rest[1:] else None
    if value.count(":") == 1:
        name, port = value.split(":")
        return name, port or None
    return value, None


def host_allowed(header: str, allowed: Iterable[str]) -> bool:
    """Whether a Host header names this server: a loopback name (any port) or an allowed
    host (an entry without a port allows every port).
    """
    name, port = split_host(header)
    if not name:
        return False
    if is_loopback(name):
        return True
    for entry in allowed:
        want_name, want_port = split_host(entry)
        if want_name == name and (want_port is None or want_port == port):
            return True
    return False


def parse_hosts(text: str | None) -> list[str]:
    """The entries of a comma-separated host list (e.g. `$RAGBENCH_ALLOWED_HOSTS`)."""
    return [h.strip() for h in (text or "").split(",") if h.strip()]


def foreign_origin(origin: str, host: str, trusted: Iterable[str]) -> bool:
    """Whether a browser `Origin` is another site than the server reached at `host`
    (`trusted` origins, the CORS ones, are not foreign).
    """
    if origin.rstrip("/") in {t.rstrip("/") for t in trusted}:
        return False
    parts = urlsplit(origin)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return True  # "null" (sandboxed frames, file://) and anything unparsable
    return split_host(parts.netloc) != split_host(host)


class HostGuard:
    """421 for a Host header that names neither loopback nor an allowed host."""

    def __init__(self, app: ASGIApp, allowed_hosts: Iterable[str] = ()) -> None:
        self.app = app
        self.allowed = list(allowed_hosts)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer 421 to a foreign Host; pass everything else on."""
        if scope["type"] == "http":
            host = Headers(scope=scope).get("host", "")
            if not host_allowed(host, self.allowed):
                response = error_response(
                    421, "misdirected_request",
                    f"Host {host!r} is not served here: use 127.0.0.1 or localhost, or name "
                    f"the host in ${ALLOWED_HOSTS_ENV} (or --allowed-host)")
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


class CrossSiteGuard:
    """403 for a state-changing request a browser sends from another site."""

    def __init__(self, app: ASGIApp, trusted_origins: Iterable[str] = ()) -> None:
        self.app = app
        self.trusted = list(trusted_origins)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer 403 to a cross-site write; pass everything else on."""
        if scope["type"] == "http" and scope["method"] in UNSAFE_METHODS:
            reason = self.refusal(Headers(scope=scope))
            if reason:
                await error_response(403, "cross_site_request", reason)(scope, receive, send)
                return
        await self.app(scope, receive, send)

    def refusal(self, headers: Headers) -> str | None:
        """Why the request is refused, or None when it may go on."""
        origin = headers.get("origin")
        if origin and origin.rstrip("/") in {t.rstrip("/") for t in self.trusted}:
            return None
        if origin and foreign_origin(origin, headers.get("host", ""), self.trusted):
            return (f"a request from the web page origin {origin!r} may not change this "
                    "server's data (allow it with --cors-origin)")
        if headers.get("sec-fetch-site", "").lower() == "cross-site":
            return "a cross-site browser request may not change this server's data"
        return None


class BodyLimit:
    """413 for a request body over `limit` bytes: declared, or counted while it arrives."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass the body on while it stays under the limit; past it, answer 413, close the
        connection and tell the app the client went away (so it stops reading).
        """
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = Headers(scope=scope).get("content-length", "")
        if declared.isdigit() and int(declared) > self.limit:
            await self._refuse(scope, receive, send, f"request body of {int(declared)} bytes")
            return
        received = 0
        started = False
        refused = False

        async def counting_receive() -> Message:
            nonlocal received, refused
            if refused:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.limit:
                    refused = True
                    if not started:
                        await self._refuse(scope, receive, send,
                                           f"request body of over {self.limit} bytes")
                    return {"type": "http.disconnect"}  # the app stops reading
            return message

        async def guarded_send(message: Message) -> None:
            nonlocal started
            if refused:
                return  # the 413 went out; whatever the app answers is dropped
            started = started or message["type"] == "http.response.start"
            await send(message)

        await self.app(scope, counting_receive, guarded_send)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send, what: str) -> None:
        mb = self.limit / (1024 * 1024)
        response = error_response(413, "payload_too_large",
                                  f"{what} is over the limit of {mb:g} MB",
                                  headers={"Connection": "close"})  # no reading the rest
        await response(scope, receive, send)
