"""Operations: syncers, webhooks, and the server about itself (System Info, metrics)."""
