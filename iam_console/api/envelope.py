"""Casdoor's response envelope: all seven keys, HTTP 200 even for business errors."""

from __future__ import annotations

from typing import Any

from fastapi import Request
from fastapi.responses import JSONResponse

from iam_console.core.errors import ServiceError
from iam_console.i18n import language_from_header, translate


def language(request: Request) -> str:
    return language_from_header(request.headers.get("accept-language"))


def ok(data: Any = None, data2: Any = None, *, data3: Any = None, sub: str = "", name: str = "",
       msg: str = "") -> JSONResponse:
    return JSONResponse({"status": "ok", "msg": msg, "sub": sub, "name": name,
                         "data": data, "data2": data2, "data3": data3})


def error(request: Request, message: str, *args: object, data: Any = None) -> JSONResponse:
    return JSONResponse({"status": "error", "msg": translate(message, language(request), *args), "sub": "",
                         "name": "", "data": data, "data2": None, "data3": None})


def service_error(request: Request, exc: ServiceError) -> JSONResponse:
    # Casdoor's console matches on data == "Please login first"; keep the English there.
    data = exc.template if exc.template == "Please login first" else None
    return error(request, exc.template, *exc.args_, data=data)
