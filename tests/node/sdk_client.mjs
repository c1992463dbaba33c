// Drives the IAM API with the official Casdoor Node.js SDK (casdoor-nodejs-sdk), for
// tests/api/test_sdk_node.py and tests/api/test_sdk_node_oauth.py.
//
// stdin: one JSON job
//   {"endpoint", "clientId", "clientSecret", "certificate", "orgName", "appName",
//    "calls": [{"method": "getUser", "args": ["alice"], "orgName": "optional override", "raw": false}, ...]}
// stdout: one JSON line per call, in order:
//   {"ok": true, "httpStatus", "contentType", "keys", "status", "msg", "data", "data2"}  an AxiosResponse
//   {"ok": true, "value"}                         a method that returns something else (enforce, URLs, JWT;
//                                                 getAuthToken / refreshToken: {access_token, refresh_token};
//                                                 parseJwtToken: the claims)
//   {"ok": true, "httpStatus", "contentType", "body"}  a call with "raw": true (introspect: RFC 7662 JSON,
//                                                 not the envelope)
//   {"ok": false, "error", "httpStatus", "body"}  the SDK threw (any non-2xx answer throws; parseJwtToken
//                                                 throws on a bad signature, algorithm or expiry)
// Calls run one after the other, so later calls see what earlier ones wrote.
// "args" are passed as given, except {"$ref": i, "set": {...}}: a copy of the data of call i's
// answer with the fields in "set" changed (so "update the object as read" runs in one process);
// {"$ref": i, "get": "key"}: the field "key" of call i's value, data or body (a token it got back);
// {"$file": path}: a read stream of that file (what uploadResource posts, named by its path).

import { createReadStream } from 'node:fs';
import { createRequire } from 'node:module';

// stdout carries only the answers: the SDK's own logging (mfa.js logs its payload) goes to stderr
const write = process.stdout.write.bind(process.stdout);
for (const level of ['log', 'info', 'debug']) console[level] = (...args) => console.error(...args);

const require = createRequire(import.meta.url);
const { SDK } = require('casdoor-nodejs-sdk');

async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

function outcome(result, raw = false) {
  const isResponse = result && typeof result === 'object' && 'status' in result && 'headers' in result
    && 'data' in result && 'config' in result;
  if (!isResponse) return { ok: true, value: result === undefined ? null : result };
  if (raw) {
    return {
      ok: true, httpStatus: result.status, contentType: String(result.headers['content-type'] ?? ''), body: result.data,
    };
  }
  const body = result.data;
  const envelope = body !== null && typeof body === 'object' && !Array.isArray(body);
  return {
    ok: true,
    httpStatus: result.status,
    contentType: String(result.headers['content-type'] ?? ''),
    keys: envelope ? Object.keys(body).sort() : null,
    status: envelope ? body.status : undefined,
    msg: envelope ? body.msg : undefined,
    data: envelope ? body.data ?? null : body,
    data2: envelope ? body.data2 ?? null : null,
  };
}

function failure(error) {
  return {
    ok: false,
    error: String(error?.message ?? error),
    httpStatus: error?.response?.status ?? null,
    body: error?.response?.data ?? null,
  };
}

function resolve(arg, answers) {
  if (arg && typeof arg === 'object' && !Array.isArray(arg) && '$file' in arg) return createReadStream(arg.$file);
  if (arg && typeof arg === 'object' && !Array.isArray(arg) && '$ref' in arg) {
    if ('get' in arg) {
      const answer = answers[arg.$ref];
      return (answer?.value ?? answer?.data ?? answer?.body)?.[arg.get] ?? null;
    }
    const data = structuredClone(answers[arg.$ref]?.data ?? null);
    return data && arg.set ? Object.assign(data, arg.set) : data;
  }
  return arg;
}

async function main() {
  const job = await readStdin();
  const clients = new Map();
  const client = (orgName) => {
    if (!clients.has(orgName)) {
      clients.set(orgName, new SDK({
        endpoint: job.endpoint,
        clientId: job.clientId,
        clientSecret: job.clientSecret,
        certificate: job.certificate,
        orgName,
        appName: job.appName,
      }));
    }
    return clients.get(orgName);
  };
  const answers = [];
  for (const call of job.calls) {
    let answer;
    try {
      const sdk = client(call.orgName ?? job.orgName);
      if (typeof sdk[call.method] !== 'function') throw new Error(`the SDK has no method ${call.method}`);
      const args = (call.args ?? []).map((arg) => resolve(arg, answers));
      answer = outcome(await sdk[call.method](...args), call.raw === true);
    } catch (error) {
      answer = failure(error);
    }
    answers.push(answer);
    write(`${JSON.stringify(answer)}\n`);
  }
}

main().catch((error) => {
  process.stderr.write(`${error?.stack ?? error}\n`);
  process.exit(1);
});
