"""The Node.js packages the HTTP tests drive as independent clients (tests/node, installed by
`make node-sdk`): casdoor-nodejs-sdk and openid-client. Without node or the package a suite skips,
and fails under CI, where everything must run."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

NODE_DIR = Path(__file__).resolve().parents[1] / "node"


def missing(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason} (required under CI)")
    pytest.skip(reason)


def node_with(package: str, version: str) -> str:
    """The node executable, once `package` is installed in tests/node at `version`."""
    executable = shutil.which("node")
    if executable is None:
        missing(f"node is not on PATH: the {package} suite needs Node.js 20 or later")
    manifest = NODE_DIR / "node_modules" / package / "package.json"
    if not manifest.is_file():
        missing(f"{package} is not installed: run `make node-sdk` (npm ci --prefix tests/node)")
    installed = json.loads(manifest.read_text())["version"]
    if installed != version:
        missing(f"tests/node has {package} {installed}, not {version}: run `make node-sdk`")
    return executable
