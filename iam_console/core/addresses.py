"""The client's address: the one reading of it, for the audit trail, rate limits,
captcha rules and sessions (docs/security.md, "The client's address").

`X-Forwarded-For` is believed only from a proxy listed in `IAM_TRUSTED_PROXIES`:
anyone else can write any address into it. Through trusted proxies the header is
read from the right (each proxy appends the address it saw), and the first address
that is not itself a trusted proxy is the client."""

from __future__ import annotations

import ipaddress

from iam_console.settings import settings

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def parse_networks(text: str) -> tuple[Network, ...]:
    """Comma-separated IP addresses and CIDR networks; a bad entry raises ValueError."""
    return tuple(ipaddress.ip_network(entry.strip(), strict=False) for entry in text.split(",") if entry.strip())


# read at start: a bad entry stops the server
TRUSTED = parse_networks(settings.trusted_proxies)


def _address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    text = text.strip()
    if text.startswith("[") and "]" in text:  # [v6]:port
        text = text[1:text.index("]")]
    elif text.count(":") == 1:  # v4:port
        text = text.split(":")[0]
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    mapped = getattr(address, "ipv4_mapped", None)
    return mapped or address


def is_trusted(address: str, trusted: tuple[Network, ...] | None = None) -> bool:
    parsed = _address(address)
    networks = TRUSTED if trusted is None else trusted
    return parsed is not None and any(parsed.version == n.version and parsed in n for n in networks)


def client_ip(peer: str, forwarded_for: str = "", trusted: tuple[Network, ...] | None = None) -> str:
    """The client of a connection from `peer` that carried `forwarded_for` (the joined
    X-Forwarded-For headers). The header counts only while the hop that wrote it is a
    trusted proxy; an entry that is not an address stops the walk at the hop before it."""
    networks = TRUSTED if trusted is None else trusted
    client = peer
    if not networks or not is_trusted(peer, networks):
        return client
    for entry in reversed([e for e in forwarded_for.split(",") if e.strip()]):
        parsed = _address(entry)
        if parsed is None:
            break
        client = str(parsed)
        if not is_trusted(client, networks):
            break
    return client


def lookup_url(address: str, template: str | None = None) -> str:
    """The IP lookup page of an address (`IAM_IP_LOOKUP_URL`, "{ip}" standing for it); "" when no
    lookup is configured, the template is not an http(s) URL, or the text is not an address."""
    template = settings.ip_lookup_url if template is None else template
    parsed = _address(address.strip().removesuffix(":"))
    if not template or parsed is None or not template.startswith(("https://", "http://")):
        return ""
    return template.replace("{ip}", str(parsed)) if "{ip}" in template else template + str(parsed)
