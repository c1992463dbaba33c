// openid-client 6.9.0 (a certified relying party library) against the server, for
// tests/api/test_openid_client_exchange.py: token exchange (RFC 8693, genericGrantRequest),
// dynamic client registration (RFC 7591, dynamicClientRegistration) and resource indicators
// (RFC 8707, clientCredentialsGrant with `resource`).
//
// stdin: {"server": "http://127.0.0.1:<port>", "issuer": "http://testserver", "calls": [...]}.
// The server's documents name its public origin (the issuer); requests to it go to `server`.
// One JSON line per call on stdout: {"ok": true, ...} or {"ok": false, "error", "status", "description"}.
import * as client from 'openid-client';

const job = JSON.parse(await new Promise((resolve) => {
  let text = '';
  process.stdin.on('data', (chunk) => { text += chunk; });
  process.stdin.on('end', () => resolve(text));
}));

const rewrite = (url) => String(url).replace(job.issuer, job.server);
const options = {
  [client.customFetch]: (url, init) => fetch(rewrite(url), init),
  execute: [client.allowInsecureRequests],
};
const discoveryUrl = new URL(`${job.server}/.well-known/openid-configuration`);

async function configuration(clientId, clientSecret) {
  return client.discovery(discoveryUrl, clientId, clientSecret, undefined, options);
}

const calls = {
  async exchange({ clientId, clientSecret, parameters }) {
    const config = await configuration(clientId, clientSecret);
    const tokens = await client.genericGrantRequest(
      config, 'urn:ietf:params:oauth:grant-type:token-exchange', parameters);
    return { tokens: { ...tokens } };
  },
  async clientCredentials({ clientId, clientSecret, parameters }) {
    const config = await configuration(clientId, clientSecret);
    const tokens = await client.clientCredentialsGrant(config, parameters);
    return { tokens: { ...tokens } };
  },
  async register({ metadata, initialAccessToken, organization }) {
    const server = organization
      ? new URL(`${job.server}/.well-known/${organization}/openid-configuration`) : discoveryUrl;
    const config = await client.dynamicClientRegistration(
      server, metadata, undefined, { ...options, initialAccessToken });
    const registered = config.clientMetadata();
    // the new client's first use: a client_credentials token, if it registered that grant
    let tokens = null;
    if ((registered.grant_types || []).includes('client_credentials')) {
      tokens = { ...(await client.clientCredentialsGrant(config)) };
    }
    return { client: { ...registered }, server: config.serverMetadata(), tokens };
  },
};

for (const call of job.calls) {
  try {
    const answer = await calls[call.method](call);
    process.stdout.write(JSON.stringify({ ok: true, ...answer }) + '\n');
  } catch (err) {
    process.stdout.write(JSON.stringify({
      ok: false, error: err.error || err.code || err.name, status: err.status ?? err.response?.status ?? null,
      description: err.error_description || err.message,
    }) + '\n');
  }
}
