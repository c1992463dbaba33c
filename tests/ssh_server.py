"""A small SSH server for the tests (paramiko's server side), on a free port of 127.0.0.1: it
accepts one user, with a password or a public key, and forwards direct-tcpip channels (what a
client's local port forwarding opens) to their destination. No shell, no exec. Used where no
sshd runs (tests/api/test_syncers.py, the syncer's SSH tunnel)."""

from __future__ import annotations

import select
import socket
import threading

import paramiko


class _Server(paramiko.ServerInterface):
    def __init__(self, user: str, password: str, key: paramiko.PKey | None) -> None:
        self.user, self.password, self.key = user, password, key
        self.destinations: dict[int, tuple[str, int]] = {}

    def get_allowed_auths(self, username: str) -> str:
        return "password,publickey"

    def check_auth_password(self, username: str, password: str) -> int:
        ok = username == self.user and password == self.password
        return paramiko.AUTH_SUCCESSFUL if ok else paramiko.AUTH_FAILED

    def check_auth_publickey(self, username: str, key: paramiko.PKey) -> int:
        ok = username == self.user and self.key is not None and key == self.key
        return paramiko.AUTH_SUCCESSFUL if ok else paramiko.AUTH_FAILED

    def check_channel_request(self, kind: str, chanid: int) -> int:
        return paramiko.OPEN_FAILED_ADMINISTRATIVELY_PROHIBITED

    def check_channel_direct_tcpip_request(self, chanid: int, origin, destination) -> int:
        self.destinations[chanid] = destination
        return paramiko.OPEN_SUCCEEDED


def _pump(channel: paramiko.Channel, destination: tuple[str, int]) -> None:
    try:
        upstream = socket.create_connection(destination, timeout=5)
    except OSError:
        channel.close()
        return
    try:
        while True:
            ready, _, _ = select.select([channel, upstream], [], [], 1.0)
            if channel in ready:
                data = channel.recv(65536)
                if not data:
                    break
                upstream.sendall(data)
            if upstream in ready:
                data = upstream.recv(65536)
                if not data:
                    break
                channel.sendall(data)
    except OSError:
        pass
    finally:
        channel.close()
        upstream.close()


class SshServer:
    def __init__(self, user: str, password: str, key: paramiko.PKey | None = None) -> None:
        self.host_key = paramiko.RSAKey.generate(2048)
        self.credentials = (user, password, key)
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(8)
        self.port = self.listener.getsockname()[1]
        self.forwarded = 0  # channels opened: proves the traffic went through the tunnel
        self._transports: list[paramiko.Transport] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            transport = paramiko.Transport(client)
            transport.add_server_key(self.host_key)
            self._transports.append(transport)
            interface = _Server(*self.credentials)
            try:
                transport.start_server(server=interface)
            except (paramiko.SSHException, EOFError):
                continue
            threading.Thread(target=self._channels, args=(transport, interface), daemon=True).start()

    def _channels(self, transport: paramiko.Transport, interface: _Server) -> None:
        while transport.is_active():
            channel = transport.accept(1.0)
            if channel is None:
                continue
            self.forwarded += 1
            destination = interface.destinations.pop(channel.get_id())
            threading.Thread(target=_pump, args=(channel, destination), daemon=True).start()

    def close(self) -> None:
        self.listener.close()
        for transport in self._transports:
            transport.close()
