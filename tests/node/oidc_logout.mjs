// Drives OpenID Connect logout with openid-client 6.9.0, a certified relying party, for
// tests/api/test_logout.py: discovery, the authorization code grant with its own ID token
// validation (signature included: non-repudiation checks against the published JWKS, nonce,
// audience, issuer, times), then buildEndSessionUrl.
//
// stdin: one JSON job
//   {"issuer", "endpoint", "clientId", "clientSecret", "callbackUrl", "state", "nonce",
//    "postLogoutRedirectUri", "logoutState"}
//   The issuer (IAM_ORIGIN) is not where the test's server listens: every request to it goes to
//   `endpoint` instead (as a hosts file would send it), through openid-client's customFetch.
// stdout: one JSON line
//   {"ok": true, "metadata": {the discovered logout members}, "claims": {the validated ID token's},
//    "idToken", "endSessionUrl"}
//   {"ok": false, "error", "code", "cause"}

import * as client from 'openid-client';

async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

const job = await readStdin();
const toServer = (url) => {
  const text = String(url);
  return text.startsWith(job.issuer) ? job.endpoint + text.slice(job.issuer.length) : text;
};
const options = {
  execute: [client.allowInsecureRequests, client.enableNonRepudiationChecks],
  [client.customFetch]: (url, init) => fetch(toServer(url), init),
};

try {
  const config = await client.discovery(new URL(job.issuer), job.clientId, undefined,
    client.ClientSecretPost(job.clientSecret), options);
  const metadata = config.serverMetadata();
  const tokens = await client.authorizationCodeGrant(config, new URL(job.callbackUrl), {
    expectedState: job.state, expectedNonce: job.nonce, idTokenExpected: true,
  });
  const endSessionUrl = client.buildEndSessionUrl(config, {
    id_token_hint: tokens.id_token, post_logout_redirect_uri: job.postLogoutRedirectUri, state: job.logoutState,
  });
  const members = ['end_session_endpoint', 'backchannel_logout_supported', 'backchannel_logout_session_supported',
    'frontchannel_logout_supported', 'frontchannel_logout_session_supported'];
  process.stdout.write(JSON.stringify({
    ok: true, metadata: Object.fromEntries(members.map((m) => [m, metadata[m]])), claims: tokens.claims(),
    idToken: tokens.id_token, endSessionUrl: endSessionUrl.href,
  }) + '\n');
} catch (error) {
  process.stdout.write(JSON.stringify({
    ok: false, error: String(error), code: error.code, cause: error.cause ? String(error.cause) : undefined,
  }) + '\n');
}
