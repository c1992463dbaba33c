// Drives the server's PAR (RFC 9126), JAR (RFC 9101) and DPoP (RFC 9449) with openid-client 6.9.0,
// unchanged, for tests/api/test_openid_client_par_dpop.py. One job on stdin (JSON), one JSON line
// out: what the client got at each step, or the error it threw (its OAuth error code and status).
//
// The server's issuer is IAM_ORIGIN (http://testserver in the tests), which names no host: every
// request openid-client makes is sent to the test server's real address (job.server) by a custom
// fetch, with its URL otherwise unchanged, so the DPoP proofs name the issuer's URLs as a client
// on the internet would.
import * as client from 'openid-client'

const job = JSON.parse(await new Promise((resolve) => {
  let text = ''
  process.stdin.on('data', (chunk) => { text += chunk })
  process.stdin.on('end', () => resolve(text))
}))

const steps = {}
const output = (value) => { process.stdout.write(JSON.stringify(value) + '\n') }

// a refusal with a WWW-Authenticate challenge (a 401) is thrown as the challenge: its body's
// OAuth error is read from the response the error keeps
async function failure (error) {
  let body = null
  if (error.response && !error.response.bodyUsed) body = await error.response.json().catch(() => null)
  return {
    ok: false,
    name: error.name,
    error: error.error ?? body?.error ?? null,
    status: error.status ?? error.cause?.status ?? null,
    challenge: Array.isArray(error.cause) ? error.cause.map((c) => c.scheme) : null,
    message: String(error.message)
  }
}

async function step (name, action) {
  try {
    steps[name] = { ok: true, value: await action() }
  } catch (error) {
    steps[name] = await failure(error)
  }
  return steps[name]
}

function redirected (input) {
  const url = new URL(input instanceof Request ? input.url : String(input))
  return url.origin === job.issuer ? job.server + url.pathname + url.search : url.href
}

async function configuration (secret = job.clientSecret) {
  const auth = secret === '' ? client.None() : client.ClientSecretPost(secret)
  const options = {
    execute: [client.allowInsecureRequests],
    [client.customFetch]: (url, init) => fetch(redirected(url), init)
  }
  return client.discovery(new URL(job.issuer), job.clientId, undefined, auth, options)
}

// the authorize page's sign-in: the browser posts the page's query with the password (what
// tests/api/oauth_world.py authorization_code does); the answer names the URL to go on to
async function signIn (authorizationUrl) {
  const response = await fetch(job.server + '/api/login' + authorizationUrl.search, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      application: job.appName, organization: job.orgName, username: job.username, password: job.password, type: 'code'
    })
  })
  const answer = await response.json()
  if (answer.status !== 'ok') throw new Error(`sign-in refused: ${answer.msg}`)
  return new URL(answer.data2)
}

const claimsOf = (jwt) => JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url').toString())

async function importSigningKey (jwk) {
  const algorithm = jwk.kty === 'EC'
    ? { name: 'ECDSA', namedCurve: 'P-256' }
    : { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' }
  return { key: await crypto.subtle.importKey('jwk', jwk, algorithm, false, ['sign']), kid: jwk.kid }
}

// the code flow: PAR (with JAR inside when job.requestObjectKey is given), PKCE, and DPoP when
// job.dpop; then userinfo, introspection and a refresh with the same key
async function codeFlow () {
  const config = await configuration(job.public ? '' : job.clientSecret)
  const DPoP = job.dpop ? client.getDPoPHandle(config, await client.randomDPoPKeyPair('ES256')) : undefined
  const verifier = client.randomPKCECodeVerifier()
  const state = client.randomState()
  const nonce = client.randomNonce()
  let parameters = {
    redirect_uri: job.redirectUri,
    scope: 'openid profile email',
    state,
    nonce,
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256'
  }
  if (job.requestObjectKey) {
    const signed = await step('jar', async () => {
      const url = await client.buildAuthorizationUrlWithJAR(config, parameters, await importSigningKey(job.requestObjectKey))
      return Object.fromEntries(url.searchParams)
    })
    if (!signed.ok) return
    parameters = signed.value
  }
  let authorizationUrl
  if (job.par === false) {
    authorizationUrl = client.buildAuthorizationUrl(config, parameters)
  } else {
    const pushed = await step('par', async () => {
      const url = await client.buildAuthorizationUrlWithPAR(config, parameters, { DPoP })
      return { url: url.href, query: Object.fromEntries(url.searchParams) }
    })
    if (!pushed.ok) return
    authorizationUrl = new URL(pushed.value.url)
  }
  const callback = await step('signIn', async () => (await signIn(authorizationUrl)).href)
  if (!callback.ok) return
  const tokens = await step('token', async () => {
    const answer = await client.authorizationCodeGrant(config, new URL(callback.value), {
      pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce
    }, undefined, { DPoP })
    return { ...answer, claims: claimsOf(answer.access_token), idTokenClaims: answer.claims() }
  })
  if (!tokens.ok) return
  const { access_token: accessToken, refresh_token: refreshToken } = tokens.value
  await step('userinfo', () => client.fetchUserInfo(config, accessToken, tokens.value.idTokenClaims.sub, { DPoP }))
  if (!job.public) await step('introspection', () => client.tokenIntrospection(config, accessToken))
  if (refreshToken && job.dpop && job.public) {
    // a public client's refresh token is bound to its key: another key's proof is refused (and
    // spends nothing)
    const other = client.getDPoPHandle(config, await client.randomDPoPKeyPair('ES256'))
    await step('refreshWithAnotherKey', () => client.refreshTokenGrant(config, refreshToken, undefined, { DPoP: other }))
  }
  if (refreshToken) {
    await step('refresh', async () => {
      const answer = await client.refreshTokenGrant(config, refreshToken, undefined, { DPoP })
      return { token_type: answer.token_type, claims: claimsOf(answer.access_token) }
    })
  }
}

async function clientCredentials () {
  const config = await configuration()
  const DPoP = client.getDPoPHandle(config, await client.randomDPoPKeyPair('ES256'))
  await step('plain', async () => {
    const answer = await client.clientCredentialsGrant(config, { scope: 'openid' })
    return { token_type: answer.token_type, claims: claimsOf(answer.access_token) }
  })
  const bound = await step('dpop', async () => {
    const answer = await client.clientCredentialsGrant(config, { scope: 'openid' }, { DPoP })
    return { token_type: answer.token_type, access_token: answer.access_token, claims: claimsOf(answer.access_token) }
  })
  if (bound.ok) await step('introspection', () => client.tokenIntrospection(config, bound.value.access_token))
}

async function pushOnce (secret, redirectUri) {
  const config = await configuration(secret)
  const challenge = await client.calculatePKCECodeChallenge(client.randomPKCECodeVerifier())
  await step('par', () => client.buildAuthorizationUrlWithPAR(config, {
    redirect_uri: redirectUri, scope: 'openid', code_challenge: challenge, code_challenge_method: 'S256'
  }))
}

const pushWithWrongSecret = () => pushOnce(job.clientSecret + '-wrong', job.redirectUri)
const pushUnregisteredRedirect = () => pushOnce(job.clientSecret, 'https://evil.example/cb')

async function discovered () {
  await step('metadata', async () => (await configuration()).serverMetadata())
}

const scenarios = { codeFlow, clientCredentials, pushWithWrongSecret, pushUnregisteredRedirect, discovered }
await scenarios[job.scenario]()
output(steps)
