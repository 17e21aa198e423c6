"""`ragbench serve` (the HTTP API) and `ragbench mcp` (the MCP server) over one workspace.

The servers live in `ragbench.service`; this module only reads options and starts them.
"""

from __future__ import annotations

import os
import sys
from typing import Annotated

import typer

from ragbench.cli.common import Output, choice, command, one_of
from ragbench.errors import SettingsError
from ragbench.workbench import Workbench

app = typer.Typer()
PANEL = "Service"
"""Where these commands are listed in `ragbench --help`."""
TOKEN_ENV = "RAGBENCH_API_TOKEN"
MCP_TRANSPORTS = ("stdio", "http")


def _token(token_file: str | None) -> str | None:
    """The bearer token: the first line of `token_file`, else $RAGBENCH_API_TOKEN, else None."""
    if token_file:
        try:
            with open(token_file, encoding="utf-8") as handle:
                token = handle.readline().strip()
        except OSError as e:
            raise SettingsError(f"cannot read the token file {token_file}: {e.strerror}") from e
        if not token:
            raise SettingsError(f"the token file {token_file} is empty")
        return token
    return os.environ.get(TOKEN_ENV) or None


HostOption = Annotated[str, typer.Option(
    metavar="HOST", help="Address to bind; anything but loopback needs a token.")]
PortOption = Annotated[int, typer.Option(metavar="PORT", min=1, max=65535, help="Port.")]
TokenFileOption = Annotated[str | None, typer.Option(
    metavar="FILE", show_default=False,
    help=f"File whose first line is the bearer token (else ${TOKEN_ENV}).")]
AllowedHostOption = Annotated[list[str] | None, typer.Option(
    "--allowed-host", metavar="HOST[:PORT]", show_default=False,
    help="Host header to serve besides loopback (repeatable; also $RAGBENCH_ALLOWED_HOSTS, "
         "comma-separated); others get 421.")]


def _allowed_hosts(given: list[str] | None, bind: str) -> list[str]:
    """Host names served besides loopback: --allowed-host, $RAGBENCH_ALLOWED_HOSTS and the
    bound address when it is a specific one (not loopback, not 0.0.0.0 or ::).
    """
    from ragbench.service.guards import ALLOWED_HOSTS_ENV, is_loopback, parse_hosts

    hosts = [*(given or []), *parse_hosts(os.environ.get(ALLOWED_HOSTS_ENV))]
    if not is_loopback(bind) and bind not in ("0.0.0.0", "::", ""):
        hosts.append(f"[{bind}]" if ":" in bind else bind)
    return list(dict.fromkeys(hosts))


def _check_bind(host: str, token: str | None) -> None:
    from ragbench.service.api import is_loopback

    if not is_loopback(host) and not token:
        raise SettingsError(
            f"binding to {host} exposes the workspace to the network: set a bearer token "
            f"(${TOKEN_ENV} or --token-file) or bind to 127.0.0.1")


@command(app, "serve", rich_help_panel=PANEL)
def serve(
    wb: Workbench,
    out: Output,
    host: HostOption = "127.0.0.1",
    port: PortOption = 8000,
    token_file: TokenFileOption = None,
    allowed_host: AllowedHostOption = None,
    cors_origin: Annotated[list[str] | None, typer.Option(
        metavar="ORIGIN", show_default=False,
        help="Allow browser calls from this origin (repeatable); default: CORS off.")] = None,
) -> int:
    """Serve the HTTP API (specs/001 chat, OpenAI-compatible chat completions, search,
    documents, reports); docs at http://HOST:PORT/docs.

    Binds to 127.0.0.1 by default. With a token every /v1 route needs
    `Authorization: Bearer <token>`; a token is required to bind anywhere else. Requests
    naming another Host than loopback, the bound address or --allowed-host get 421.
    """
    import uvicorn

    from ragbench.service.api import ServiceOptions, create_app

    token = _token(token_file)
    _check_bind(host, token)
    options = ServiceOptions(token=token, cors_origins=list(cors_origin or []),
                             max_request_mb=wb.settings.max_upload_mb + 16,
                             allowed_hosts=_allowed_hosts(allowed_host, host))
    out.note(f"ragbench API on http://{host}:{port} (docs: /docs), workspace "
             f"{wb.workspace}{', token required' if token else ''}")
    uvicorn.run(create_app(wb, options), host=host, port=port, log_level="warning",
                access_log=False)
    return 0


@command(app, "mcp", rich_help_panel=PANEL)
def mcp(
    wb: Workbench,
    out: Output,
    transport: Annotated[str, typer.Option(
        parser=choice(MCP_TRANSPORTS), metavar="TRANSPORT",
        help=f"{one_of(MCP_TRANSPORTS)}: stdio for a client that starts the server (Claude "
        "Desktop, MCP Inspector), http for the streamable HTTP transport at /mcp.")] = "stdio",
    host: HostOption = "127.0.0.1",
    port: PortOption = 8001,
    allowed_host: AllowedHostOption = None,
) -> int:
    """Run the MCP server: tools search, ask, get_chunk, list_documents, report_create,
    report_complete_part, report_tune_part, report_suggest (specs/000's essay_* tools).
    """
    from ragbench.service.mcp_server import create_mcp, mcp_security

    server = create_mcp(wb)
    if transport == "stdio":
        print(f"ragbench MCP server (stdio), workspace {wb.workspace}", file=sys.stderr)
        server.run("stdio")
    else:
        from ragbench.service.api import is_loopback

        if not is_loopback(host):
            raise SettingsError("the MCP HTTP transport has no authentication: bind it to "
                                "127.0.0.1 (or put it behind an authenticating proxy)")
        out.note(f"ragbench MCP server on http://{host}:{port}/mcp, workspace "
                 f"{wb.workspace}")
        server.run("streamable-http", host=host, port=port,
                   transport_security=mcp_security(_allowed_hosts(allowed_host, host)))
    return 0
