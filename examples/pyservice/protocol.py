"""MCP 2025-06-18 over Streamable HTTP, JSON answers only, by hand (no SDK).

POST /mcp takes one JSON-RPC message: initialize (answered with 2025-06-18
whatever the client asks for, and an Mcp-Session-Id), notifications (202),
ping, tools/list and tools/call. A 2026-07-28 client's server/discover, or
any request whose _meta names a protocol version, is answered -32601
(method not found): to such a client this is a legacy server, and a client
set to "auto" falls back to the initialize handshake.
"""

import json
import threading
import uuid
from typing import Any, Optional

from fastapi.responses import JSONResponse, Response

import groundtruth
from config import PROTOCOL_VERSION

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
SERVER_ERROR = -32000  # the service's own failures: database pool timeout, database down

META_VERSION = "io.modelcontextprotocol/protocolVersion"


class RPCError(Exception):
    """A request refused with a JSON-RPC error, and the HTTP status it goes with."""

    def __init__(self, http_status: int, code: int, message: str, headers: Optional[dict] = None):
        super().__init__(message)
        self.http_status = http_status
        self.code = code
        self.message = message
        self.headers = headers


def error_response(err: RPCError) -> JSONResponse:
    req = groundtruth.current()
    rpc_id = None
    if req is not None:
        req.error = err.message
        rpc_id = req.rpc_id
    body = {"jsonrpc": "2.0", "id": rpc_id, "error": {"code": err.code, "message": err.message}}
    return JSONResponse(body, status_code=err.http_status, headers=err.headers)


def _result(rpc_id: Any, result: dict, headers: Optional[dict] = None) -> JSONResponse:
    return JSONResponse({"jsonrpc": "2.0", "id": rpc_id, "result": result}, headers=headers)


class _Sessions:
    def __init__(self):
        self._lock = threading.Lock()
        self._ids = set()

    def new(self) -> str:
        sid = uuid.uuid4().hex
        with self._lock:
            self._ids.add(sid)
        return sid

    def known(self, sid: str) -> bool:
        with self._lock:
            return sid in self._ids

    def end(self, sid: str) -> bool:
        with self._lock:
            if sid in self._ids:
                self._ids.remove(sid)
                return True
            return False


class Server:
    """The MCP endpoint's logic; tools is the tool registry (tools.Tools)."""

    def __init__(self, tools, name: str = "pyservice", version: str = "0.1.0"):
        self.tools = tools
        self.info = {"name": name, "version": version}
        self.sessions = _Sessions()

    def post(self, payload: Any, session_id: Optional[str], protocol_header: Optional[str], actor, db) -> Response:
        if not isinstance(payload, dict) or payload.get("jsonrpc") != "2.0" or not isinstance(payload.get("method"), str):
            raise RPCError(400, INVALID_REQUEST, "Invalid Request: want one JSON-RPC 2.0 message with jsonrpc \"2.0\" and a method (batches are not part of 2025-06-18)")
        method = payload["method"]
        is_request = "id" in payload
        rpc_id = payload.get("id")
        params = payload.get("params")
        if params is None:
            params = {}
        if not isinstance(params, dict):
            raise RPCError(400, INVALID_REQUEST, "Invalid Request: params must be an object")

        # The 2026-07-28 era: not spoken here. Method not found tells an
        # auto client to fall back to the handshake.
        meta = params.get("_meta")
        modern = isinstance(meta, dict) and META_VERSION in meta and meta[META_VERSION] != PROTOCOL_VERSION
        if method == "server/discover" or modern:
            if not is_request:
                return Response(status_code=202)
            raise RPCError(200, METHOD_NOT_FOUND, f"Method not found: {method} (this server speaks MCP {PROTOCOL_VERSION} only: use initialize)")

        if method == "initialize":
            if not is_request:
                raise RPCError(400, INVALID_REQUEST, "Invalid Request: initialize must be a request")
            sid = self.sessions.new()
            result = {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {"tools": {"listChanged": False}},
                "serverInfo": self.info,
                "instructions": "pyservice: whoami, start_run, wait_for_run, call_upstream.",
            }
            req = groundtruth.current()
            if req is not None:
                req.session = sid
            return _result(rpc_id, result, headers={"Mcp-Session-Id": sid})

        if not session_id:
            raise RPCError(400, INVALID_REQUEST, "Bad Request: no Mcp-Session-Id (initialize first)")
        if not self.sessions.known(session_id):
            raise RPCError(404, -32001, "Session not found: initialize again")
        if protocol_header is not None and protocol_header != PROTOCOL_VERSION:
            raise RPCError(400, INVALID_REQUEST, f"Bad Request: unsupported MCP-Protocol-Version {protocol_header[:32]!r}; this server speaks {PROTOCOL_VERSION}")

        if not is_request:  # notifications/initialized, notifications/cancelled, ...
            return Response(status_code=202)
        if method == "ping":
            return _result(rpc_id, {})
        if method == "tools/list":
            return _result(rpc_id, {"tools": self.tools.list()})
        if method == "tools/call":
            name = params.get("name")
            args = params.get("arguments") or {}
            if not isinstance(name, str) or not isinstance(args, dict):
                raise RPCError(200, INVALID_PARAMS, "Invalid params: want name (a string) and arguments (an object)")
            structured, is_error = self.tools.call(name, args, actor, db)
            if is_error:
                req = groundtruth.current()
                if req is not None:
                    req.error = structured.get("error")
            return _result(rpc_id, {
                "content": [{"type": "text", "text": json.dumps(structured)}],
                "structuredContent": structured,
                "isError": is_error,
            })
        raise RPCError(200, METHOD_NOT_FOUND, f"Method not found: {method[:64]}")

    def delete(self, session_id: Optional[str]) -> Response:
        if not session_id:
            raise RPCError(400, INVALID_REQUEST, "Bad Request: no Mcp-Session-Id")
        if not self.sessions.end(session_id):
            raise RPCError(404, -32001, "Session not found")
        return Response(status_code=204)
