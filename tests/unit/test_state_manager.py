"""REDIS_URL moves the console's per-browser state into Redis (Reflex's Redis state manager),
which several workers and servers share; without it each server keeps its own on disk."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

from tests.conftest import require_service

PROJECT = Path(__file__).resolve().parents[2]
REDIS = ("127.0.0.1", 6379)


def _manager(redis_url: str) -> str:
    env = {**os.environ, "REDIS_URL": redis_url}
    done = subprocess.run([sys.executable, "-c", "from reflex.istate.manager import StateManager\n"
                           "print(type(StateManager.create()).__name__)"],
                          cwd=PROJECT, env=env, capture_output=True, text=True, timeout=120, check=True)
    return done.stdout.strip().splitlines()[-1]


def _redis_answers() -> bool:
    try:
        with socket.create_connection(REDIS, timeout=2) as connection:
            connection.sendall(b"PING\r\n")
            return connection.recv(16).startswith(b"+PONG")
    except OSError:
        return False


def test_redis_url_selects_the_redis_state_manager():
    require_service(_redis_answers(), "a Redis server on 127.0.0.1:6379")
    assert _manager("redis://127.0.0.1:6379") == "StateManagerRedis"


def test_without_redis_url_the_state_stays_on_the_server():
    assert _manager("") == "StateManagerDisk"
