"""Sign-in: passwords, sessions, second factors, WebAuthn, verification codes, captchas, sign-up and recovery."""
