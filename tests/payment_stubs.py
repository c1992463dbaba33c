"""Local stand-ins for Stripe's and PayPal's APIs, each on 127.0.0.1 and a free port, holding the
sessions and orders they were asked to make. They speak the small part of each API the payment
providers use (commerce/payments), check the credentials, and let a test play the buyer
(`complete`, `approve`) and Stripe's webhook (`signed_event`)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs


class _Stub:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.requests: list[tuple[str, str]] = []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                return None

            def _answer(self, status: int, body: dict) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _serve(self, method: str) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                with stub.lock:
                    stub.requests.append((method, self.path))
                    status, answer = stub.handle(method, self.path, dict(self.headers), body)
                self._answer(status, answer)

            def do_GET(self) -> None:
                self._serve("GET")

            def do_POST(self) -> None:
                self._serve("POST")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def handle(self, method: str, path: str, headers: dict, body: bytes) -> tuple[int, dict]:
        raise NotImplementedError

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


class StripeStub(_Stub):
    """/v1/checkout/sessions (create, retrieve) for one secret key."""

    def __init__(self, secret_key: str) -> None:
        super().__init__()
        self.secret_key = secret_key
        self.sessions: dict[str, dict] = {}

    def handle(self, method, path, headers, body):
        if headers.get("Authorization") != f"Bearer {self.secret_key}":
            return 401, {"error": {"type": "invalid_request_error", "message": "Invalid API Key provided"}}
        if method == "POST" and path == "/v1/checkout/sessions":
            form = {key: values[0] for key, values in parse_qs(body.decode()).items()}
            amount = int(form["line_items[0][price_data][unit_amount]"]) * int(form["line_items[0][quantity]"])
            ident = f"cs_test_{secrets.token_hex(12)}"
            self.sessions[ident] = {
                "id": ident, "object": "checkout.session", "url": f"{self.url}/pay/{ident}", "status": "open",
                "payment_status": "unpaid", "amount_total": amount,
                "currency": form["line_items[0][price_data][currency]"],
                "client_reference_id": form.get("client_reference_id"), "success_url": form.get("success_url"),
                "product_name": form.get("line_items[0][price_data][product_data][name]"),
                "metadata": {"payment": form.get("metadata[payment]", "")}}
            return 200, self.sessions[ident]
        if method == "GET" and path.startswith("/v1/checkout/sessions/"):
            found = self.sessions.get(path.rsplit("/", 1)[1].split("?")[0])
            if found is None:
                return 404, {"error": {"type": "invalid_request_error", "message": "No such checkout.session"}}
            return 200, found
        return 404, {"error": {"type": "invalid_request_error", "message": f"Unrecognized request URL {path}"}}

    def complete(self, ident: str) -> None:
        with self.lock:
            self.sessions[ident].update(status="complete", payment_status="paid")

    def expire(self, ident: str) -> None:
        with self.lock:
            self.sessions[ident].update(status="expired")

    @staticmethod
    def signed_event(session: dict, secret: str, *, at: int | None = None) -> tuple[bytes, str]:
        """A checkout.session.completed event and its Stripe-Signature header, signed with `secret`."""
        body = json.dumps({"id": f"evt_{secrets.token_hex(8)}", "object": "event",
                           "type": "checkout.session.completed", "data": {"object": session}}).encode()
        stamp = at if at is not None else int(time.time())
        signature = hmac.new(secret.encode(), f"{stamp}.".encode() + body, hashlib.sha256).hexdigest()
        return body, f"t={stamp},v1={signature}"


class PayPalStub(_Stub):
    """/v1/oauth2/token and /v2/checkout/orders (create, get, capture) for one client."""

    def __init__(self, client_id: str, secret: str) -> None:
        super().__init__()
        self.basic = "Basic " + base64.b64encode(f"{client_id}:{secret}".encode()).decode()
        self.tokens: set[str] = set()
        self.orders: dict[str, dict] = {}
        self.captures = 0

    def handle(self, method, path, headers, body):
        if path == "/v1/oauth2/token":
            if headers.get("Authorization") != self.basic:
                return 401, {"error": "invalid_client", "error_description": "Client Authentication failed"}
            token = secrets.token_hex(16)
            self.tokens.add(token)
            return 200, {"access_token": token, "token_type": "Bearer", "expires_in": 32400}
        if headers.get("Authorization", "").removeprefix("Bearer ") not in self.tokens:
            return 401, {"name": "AUTHENTICATION_FAILURE", "message": "Authentication failed"}
        if method == "POST" and path == "/v2/checkout/orders":
            request = json.loads(body)
            ident = secrets.token_hex(8).upper()
            self.orders[ident] = {"id": ident, "status": "CREATED", "intent": request["intent"],
                                  "purchase_units": request["purchase_units"],
                                  "return_url": request["application_context"]["return_url"],
                                  "links": [{"rel": "approve", "href": f"{self.url}/checkoutnow?token={ident}"}]}
            return 201, self.orders[ident]
        parts = path.split("/")
        order = self.orders.get(parts[4]) if len(parts) > 4 else None
        if order is None:
            return 404, {"name": "RESOURCE_NOT_FOUND", "message": "The specified resource does not exist."}
        if method == "GET" and len(parts) == 5:
            return 200, order
        if method == "POST" and len(parts) == 6 and parts[5] == "capture":
            if order["status"] != "APPROVED":
                return 422, {"name": "UNPROCESSABLE_ENTITY", "message": "ORDER_NOT_APPROVED"}
            self.captures += 1
            unit = order["purchase_units"][0]
            unit["payments"] = {"captures": [{"id": secrets.token_hex(6), "status": "COMPLETED",
                                              "amount": dict(unit["amount"])}]}
            order["status"] = "COMPLETED"
            return 201, order
        return 404, {"name": "NOT_FOUND", "message": path}

    def approve(self, ident: str) -> None:
        with self.lock:
            self.orders[ident]["status"] = "APPROVED"
