// Drives the IAM server's OpenID provider with openid-client (a certified relying party), for
// tests/api/test_openid_client_auth.py: client authentication (client_secret_basic/post/jwt,
// private_key_jwt, none) and the authentication request parameters (max_age, prompt, acr_values,
// claims, ui_locales), unchanged: only its fetch is pointed at the test server.
//
// One request per stdin line, one answer per stdout line, in order (the test signs in between):
//   {"op": "configure", "issuer", "server", "clientId", "metadata", "auth": {"method", "secret", "jwk"},
//    "assertion": {"aud"?: "token_endpoint" | string, "exp"?: seconds from now, "jti"?: string}}
//        -> {"ok": true, "value": the discovered server metadata}
//   {"op": "authorizationUrl", "parameters"}   -> the URL, with fresh PKCE verifier, state and nonce
//   {"op": "callback", "url", "maxAge"?}        -> {"tokens", "claims"} (authorizationCodeGrant's checks)
//   {"op": "refresh", "refreshToken"}           -> {"tokens", "claims"}
//   {"op": "clientCredentials", "parameters"?}  -> {"tokens"}
//   {"op": "introspect", "token"}               -> the RFC 7662 answer
//   {"op": "revoke", "token"}                   -> null
//   {"op": "userinfo", "accessToken", "sub"}    -> the userinfo answer
// A refusal: {"ok": false, "name", "code", "error", "description", "status"}.

import { createInterface } from 'node:readline';
import * as client from 'openid-client';

let config;
let pending = {};

function rewrite(server, issuer) {
  // the issuer is the server's configured origin (http://testserver); the server listens elsewhere
  return (url, options) => fetch(String(url).replace(issuer, server), options);
}

async function privateKey(jwk) {
  const algorithm = jwk.kty === 'EC'
    ? { name: 'ECDSA', namedCurve: jwk.crv }
    : { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' };
  const key = await crypto.subtle.importKey('jwk', jwk, algorithm, false, ['sign']);
  return { key, kid: jwk.kid };
}

function assertionChanges(assertion, as) {
  if (!assertion) return undefined;
  return {
    [client.modifyAssertion]: (header, payload) => {
      if (assertion.aud === 'token_endpoint') payload.aud = as.token_endpoint;
      else if (assertion.aud !== undefined) payload.aud = assertion.aud;
      if (assertion.exp !== undefined) payload.exp = payload.iat + assertion.exp;
      if (assertion.jti !== undefined) payload.jti = assertion.jti;
    },
  };
}

async function authentication(job, as) {
  const { method, secret, jwk } = job.auth;
  const options = assertionChanges(job.assertion, as);
  switch (method) {
    case 'client_secret_basic': return client.ClientSecretBasic(secret);
    case 'client_secret_post': return client.ClientSecretPost(secret);
    case 'client_secret_jwt': return client.ClientSecretJwt(secret, options);
    case 'private_key_jwt': return client.PrivateKeyJwt(await privateKey(jwk), options);
    case 'none': return client.None();
    default: throw new Error(`unknown method ${method}`);
  }
}

function result(tokens) {
  return { tokens: { ...tokens }, claims: tokens.claims() ?? null };
}

const operations = {
  async configure(job) {
    const fetcher = rewrite(job.server, job.issuer);
    const options = { execute: [client.allowInsecureRequests], [client.customFetch]: fetcher };
    const discovered = await client.discovery(new URL(job.issuer), job.clientId, job.metadata, client.None(), options);
    const as = discovered.serverMetadata();
    config = new client.Configuration(as, job.clientId, job.metadata, await authentication(job, as));
    config[client.customFetch] = fetcher;
    client.allowInsecureRequests(config);
    return as;
  },
  async authorizationUrl(job) {
    pending = { verifier: client.randomPKCECodeVerifier(), state: client.randomState(), nonce: client.randomNonce() };
    return client.buildAuthorizationUrl(config, {
      redirect_uri: job.redirectUri, scope: 'openid profile', response_type: 'code', state: pending.state,
      nonce: pending.nonce, code_challenge: await client.calculatePKCECodeChallenge(pending.verifier),
      code_challenge_method: 'S256', ...job.parameters,
    }).href;
  },
  async callback(job) {
    const checks = { pkceCodeVerifier: pending.verifier, expectedState: pending.state, expectedNonce: pending.nonce };
    if (job.maxAge !== undefined) checks.maxAge = job.maxAge;
    return result(await client.authorizationCodeGrant(config, new URL(job.url), checks));
  },
  async refresh(job) {
    return result(await client.refreshTokenGrant(config, job.refreshToken));
  },
  async clientCredentials(job) {
    return { tokens: { ...(await client.clientCredentialsGrant(config, job.parameters ?? {})) } };
  },
  async introspect(job) {
    return await client.tokenIntrospection(config, job.token);
  },
  async revoke(job) {
    await client.tokenRevocation(config, job.token);
    return null;
  },
  async userinfo(job) {
    return await client.fetchUserInfo(config, job.accessToken, job.sub);
  },
};

const write = process.stdout.write.bind(process.stdout);
for await (const line of createInterface({ input: process.stdin })) {
  if (!line.trim()) continue;
  const job = JSON.parse(line);
  try {
    const value = await operations[job.op](job);
    write(JSON.stringify({ ok: true, value: value ?? null }) + '\n');
  } catch (err) {
    // a 401 with a WWW-Authenticate challenge is thrown before its body is read: read it here
    let body = {};
    if (err?.response && !err.response.bodyUsed) body = await err.response.json().catch(() => ({}));
    write(JSON.stringify({
      ok: false, name: err?.name, code: err?.code, error: err?.error ?? body.error ?? null,
      description: err?.error_description ?? body.error_description ?? err?.message ?? String(err),
      status: err?.status ?? err?.response?.status ?? null,
    }) + '\n');
  }
}
