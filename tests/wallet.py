"""A software wallet for the tests: an Ethereum key held by the test, signing EIP-712 typed data
as eth_signTypedData_v4 does (with eth-account)."""

from __future__ import annotations

import json

from eth_account import Account
from eth_account.messages import encode_typed_data


class SoftWallet:
    def __init__(self) -> None:
        self.account = Account.create()

    @property
    def address(self) -> str:
        return self.account.address  # EIP-55 checksummed, as wallets give it

    def sign(self, typed_data: str) -> str:
        signed = self.account.sign_message(encode_typed_data(full_message=json.loads(typed_data)))
        return "0x" + signed.signature.hex().removeprefix("0x")
