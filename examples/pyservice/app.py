"""pyservice: an MCP 2025-06-18 service on FastAPI + SQLAlchemy 1.4 + psycopg2,
served by uvicorn -- the stack leakbench's users run -- leaky or fixed by
--variant. See README.md.

    PYSERVICE_DSN=postgres://... /usr/bin/python3 app.py --variant held-while-waiting \\
        --port 8000 --ground-truth /tmp/gt.jsonl

The route and its dependencies are sync (def), as users write them: FastAPI
runs them, and the teardown of the get_db dependency, on AnyIO's worker
threads (40), after the response has been sent.
"""

import json
import logging
import socket
import sys
from typing import Any, Optional

import uvicorn
from fastapi import Body, Depends, FastAPI, Header
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from sqlalchemy import exc as sa_exc
from sqlalchemy.orm import Session

import config
import db
import groundtruth
import protocol
import tools
import upstream
from protocol import RPCError

log = logging.getLogger("pyservice")


def build(settings: config.Settings, gt: groundtruth.Log) -> FastAPI:
    db.init(settings, gt)
    server = protocol.Server(tools.Tools(settings))
    # The variant's authentication: held for the request, or released first.
    authenticate = db.get_mcp_actor if settings.variant == config.HELD_WHILE_WAITING else db.get_mcp_actor_short

    app = FastAPI(title="pyservice", docs_url=None, redoc_url=None, openapi_url=None)
    app.add_middleware(groundtruth.Middleware, log=gt)

    @app.post("/mcp")
    def mcp_post(
        payload: Any = Body(None),
        actor: db.Actor = Depends(authenticate),
        session: Session = Depends(db.get_db),  # the same session as the actor's in held-while-waiting
        mcp_session_id: Optional[str] = Header(None),
        mcp_protocol_version: Optional[str] = Header(None),
    ):
        if isinstance(payload, (bytes, str)):  # sent without Content-Type: application/json
            try:
                payload = json.loads(payload)
            except ValueError:
                raise RPCError(400, protocol.PARSE_ERROR, "Parse error: the body is not JSON")
        return server.post(payload, mcp_session_id, mcp_protocol_version, actor, session)

    @app.delete("/mcp")
    def mcp_delete(actor: db.Actor = Depends(authenticate), mcp_session_id: Optional[str] = Header(None)):
        return server.delete(mcp_session_id)

    @app.get("/mcp")
    def mcp_get():
        # No server-initiated stream: JSON answers only.
        return Response(status_code=405, headers={"Allow": "POST, DELETE"})

    app.add_api_route("/upstream", upstream.endpoint, methods=["GET"])

    @app.get("/healthz")
    def healthz():
        return {"ok": True, "variant": settings.variant, "protocolVersion": config.PROTOCOL_VERSION}

    @app.exception_handler(RPCError)
    async def on_rpc_error(request, e: RPCError):
        return protocol.error_response(e)

    @app.exception_handler(sa_exc.TimeoutError)
    async def on_pool_timeout(request, e: sa_exc.TimeoutError):
        log.warning("database pool timeout after %.1f s (pool_size %d, max_overflow 0)", settings.pool_timeout, settings.pool_size)
        return protocol.error_response(RPCError(
            503, protocol.SERVER_ERROR,
            f"database pool timeout: no connection free within {settings.pool_timeout:g} s "
            f"(pool_size {settings.pool_size}, max_overflow 0): {e.args[0] if e.args else e}",
        ))

    @app.exception_handler(sa_exc.DBAPIError)
    async def on_db_error(request, e: sa_exc.DBAPIError):
        msg = str(getattr(e, "orig", e)).strip().splitlines()[0] if str(getattr(e, "orig", e)).strip() else type(e).__name__
        log.warning("database error: %s", msg)
        return protocol.error_response(RPCError(503, protocol.SERVER_ERROR, f"database unavailable: {msg}"))

    @app.exception_handler(RequestValidationError)
    async def on_bad_body(request, e: RequestValidationError):
        return protocol.error_response(RPCError(400, protocol.PARSE_ERROR, "Parse error: the body is not JSON"))

    return app


class _Server(uvicorn.Server):
    """uvicorn's server, which also ends the waits in flight on SIGTERM."""

    def handle_exit(self, sig, frame):
        tools.shutdown.set()
        super().handle_exit(sig, frame)


def main(argv=None) -> int:
    settings = config.parse(argv)
    logging.basicConfig(
        stream=sys.stderr,
        level=getattr(logging, settings.log_level.upper()),
        format="%(asctime)s pyservice[%(process)d] %(levelname)s %(name)s: %(message)s",
    )
    try:
        db.check_connection(settings)
    except Exception as e:  # psycopg2's messages carry no password
        log.error("cannot use the database: %s", str(e).strip())
        return 1

    gt = groundtruth.Log(settings.ground_truth, settings.variant)
    app = build(settings, gt)

    sockets = None
    if settings.fd is not None:
        sock = socket.socket(fileno=settings.fd)
        host, port = sock.getsockname()[:2]
        sockets = [sock]
    else:
        host, port = settings.host, settings.port
    upstream.set_own_url(f"http://{host}:{port}/upstream")

    uv = uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
        log_level=settings.log_level,
        log_config=None,  # uvicorn's loggers go to the root logger's stderr handler
        access_log=settings.log_level == "debug",
        lifespan="off",
        timeout_keep_alive=30,
    )
    server = _Server(uv)
    log.info(
        "serving MCP %s on http://%s:%d/mcp: variant %s, pool_size %d, pool_timeout %g s, application_name %s, ground truth %s",
        config.PROTOCOL_VERSION, host, port, settings.variant, settings.pool_size, settings.pool_timeout,
        settings.application_name or "(none)", settings.ground_truth or "(none)",
    )
    try:
        server.run(sockets=sockets)
    finally:
        tools.shutdown.set()
        if db.engine is not None:
            db.engine.dispose()
        gt.close()
    log.info("stopped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
