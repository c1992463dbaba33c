"""A real OpenLDAP `slapd` for the tests and the benchmark: a throw-away
configuration (slapd.conf), an mdb database in a temporary directory, users
loaded offline with slapadd, and the server on two free ports: ldap:// and
ldaps:// (a self-signed certificate made with `cryptography`).

    with Directory(users=300) as directory:
        directory.ldap_record()   # the fields of an Ldap row pointing at it

Users are `uid=user0001,ou=people,dc=example,dc=com` ... (inetOrgPerson and
posixAccount): their password is `password_of(uid)`, every second one has a
mail, every third a mobile, every fifth a postalAddress; gidNumber cycles
through GROUP_IDS. The posixGroup entries under ou=groups are not accounts,
so the usual filter (objectClass=posixAccount) leaves them out."""

from __future__ import annotations

import base64
import datetime
import hashlib
import ipaddress
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

SLAPD = "/usr/sbin/slapd"
SLAPADD = "/usr/sbin/slapadd"
SUFFIX = "dc=example,dc=com"
ADMIN_DN = f"cn=admin,{SUFFIX}"
ADMIN_PASSWORD = "directory-admin-secret"
PEOPLE = f"ou=people,{SUFFIX}"
GROUP_IDS = (500, 501, 502)
SCHEMAS = ("core", "cosine", "nis", "inetorgperson")


def available() -> bool:
    return os.path.exists(SLAPD) and os.path.exists(SLAPADD)


def uid_of(index: int) -> str:
    return f"user{index:04d}"


def password_of(uid: str) -> str:
    return f"pw-{uid}-Directory"


def _ssha(password: str) -> str:
    salt = os.urandom(4)
    digest = hashlib.sha1(password.encode() + salt).digest()
    return "{SSHA}" + base64.b64encode(digest + salt).decode()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _certificate(folder: Path) -> tuple[Path, Path]:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=30))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost"),
                                                        x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                           critical=False)
            .sign(key, hashes.SHA256()))
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_path, key_path


def _config(folder: Path, cert: Path, key: Path) -> Path:
    includes = "\n".join(f"include /etc/ldap/schema/{s}.schema" for s in SCHEMAS)
    conf = folder / "slapd.conf"
    conf.write_text(f"""{includes}
modulepath /usr/lib/ldap
moduleload back_mdb
pidfile {folder}/slapd.pid
argsfile {folder}/slapd.args
TLSCertificateFile {cert}
TLSCertificateKeyFile {key}
sizelimit unlimited

database mdb
maxsize 2147483648
suffix "{SUFFIX}"
rootdn "{ADMIN_DN}"
rootpw {_ssha(ADMIN_PASSWORD)}
directory {folder}/db
index objectClass eq
index uid,mail,mobile eq
access to attrs=userPassword by self write by anonymous auth by * none
access to * by * read
""")
    (folder / "db").mkdir()
    return conf


def person(index: int) -> str:
    """One account as LDIF."""
    uid = uid_of(index)
    lines = [
        f"dn: uid={uid},{PEOPLE}",
        "objectClass: inetOrgPerson", "objectClass: posixAccount",
        f"uid: {uid}", f"cn: User {index:04d}", f"sn: {index:04d}",
        f"uidNumber: {10000 + index}", f"gidNumber: {GROUP_IDS[index % len(GROUP_IDS)]}",
        f"homeDirectory: /home/{uid}", f"userPassword: {_ssha(password_of(uid))}",
    ]
    if index % 2 == 0:
        lines.append(f"mail: {uid}@example.com")
    if index % 3 == 0:
        lines.append(f"mobile: +1555{index:07d}")
    if index % 5 == 0:
        lines.append(f"postalAddress: {index} Directory Street")
    if index % 4 == 0:
        lines.append(f"displayName: Display {index:04d}")
    return "\n".join(lines) + "\n\n"


def _ldif(users: int, referral: str = "") -> Iterator[str]:
    yield f"dn: {SUFFIX}\nobjectClass: dcObject\nobjectClass: organization\ndc: example\no: Example\n\n"
    yield f"dn: {PEOPLE}\nobjectClass: organizationalUnit\nou: people\n\n"
    yield f"dn: ou=groups,{SUFFIX}\nobjectClass: organizationalUnit\nou: groups\n\n"
    for gid in GROUP_IDS:
        yield f"dn: cn=group{gid},ou=groups,{SUFFIX}\nobjectClass: posixGroup\ncn: group{gid}\ngidNumber: {gid}\n\n"
    for index in range(1, users + 1):
        yield person(index)
    if referral:  # RFC 3296: a search over it answers a continuation reference to `referral`
        yield (f"dn: ou=elsewhere,{SUFFIX}\nobjectClass: referral\nobjectClass: extensibleObject\nou: elsewhere\n"
               f"ref: {referral}\n\n")


class Directory:
    """slapd with `users` accounts, on free ldap:// and ldaps:// ports; with `referral` (an
    LDAP URL), also a referral entry pointing there."""

    def __init__(self, users: int = 300, referral: str = "") -> None:
        self.users = users
        self.referral = referral
        self.folder = Path(tempfile.mkdtemp(prefix="iam-slapd-"))
        self.port = _free_port()
        self.ssl_port = _free_port()
        self.process: subprocess.Popen | None = None

    def start(self) -> Directory:
        cert, key = _certificate(self.folder)
        conf = _config(self.folder, cert, key)
        ldif = self.folder / "users.ldif"
        with ldif.open("w") as out:
            out.writelines(_ldif(self.users, self.referral))
        # offline load: seconds for 10,000 entries, where adds over the wire take minutes
        subprocess.run([SLAPADD, "-q", "-f", str(conf), "-l", str(ldif)], check=True, capture_output=True)
        urls = f"ldap://127.0.0.1:{self.port}/ ldaps://127.0.0.1:{self.ssl_port}/"
        # -d 0: stays in the foreground (our child), logging nothing
        self.process = subprocess.Popen([SLAPD, "-f", str(conf), "-h", urls, "-d", "0"],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
        self._wait()
        return self

    def _wait(self) -> None:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"slapd exited: {self.process.stderr.read().decode(errors='replace')}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5), \
                        socket.create_connection(("127.0.0.1", self.ssl_port), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("slapd did not start listening within 20 s")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        shutil.rmtree(self.folder, ignore_errors=True)

    def __enter__(self) -> Directory:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def ldap_record(self, *, ssl: bool = False, **fields) -> dict:
        """The wire fields of an LDAP server record pointing at this directory."""
        return {
            "serverName": "Test directory", "host": "127.0.0.1",
            "port": self.ssl_port if ssl else self.port, "enableSsl": ssl, "allowSelfSignedCert": ssl,
            "username": ADMIN_DN, "password": ADMIN_PASSWORD, "baseDn": SUFFIX,
            "filter": "(objectClass=posixAccount)", "filterFields": ["uid"], "passwordType": "SSHA",
            **fields,
        }
