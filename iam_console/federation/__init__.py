"""Sign-in at upstream identity providers and with wallets, and the accounts linked to them."""
