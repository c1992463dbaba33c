// Sign-in and sign-out run in the browser so that the HttpOnly session cookie
// is set by the API and the password never crosses the Reflex websocket.
// The language the page shows (ui/state/prefs.py Prefs.settle sets it): <html lang dir>, and the
// Accept-Language of the API calls below. Before it is known, the browser's own languages.
window.iamSetLanguage = function (code, dir) {
  document.documentElement.lang = code;
  document.documentElement.dir = dir;
  document.documentElement.dataset.iamLanguage = code;
};
window.iamLanguage = function () {
  return document.documentElement.dataset.iamLanguage || navigator.languages.join(",") || "en";
};

window.iamPost = async function (path, body) {
  try {
    const response = await fetch(path, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "Accept-Language": window.iamLanguage() },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return await response.json();
  } catch (e) {
    return { status: "network", msg: String(e) };
  }
};

// Called with the organization and the (server-checked) path to return to.
// The application's Agreement item on the sign-in page must be checked first.
window.iamAgreed = function () {
  const agreement = document.getElementById("login-agreement");
  return !agreement || agreement.getAttribute("data-state") === "checked";
};

// `method`: the Password or the LDAP tab (the same fields; LDAP binds to the organization's directory).
window.iamLogin = async function (organization, returnTo, method) {
  if (!window.iamAgreed()) return { status: "agreement", msg: "" };
  const value = (id) => document.getElementById(id)?.value ?? "";
  const auto = document.getElementById("login-auto");
  const result = await window.iamPost("/api/login", {
    application: "",
    organization: organization,
    username: value("login-username"),
    password: value("login-password"),
    autoSignin: auto ? auto.getAttribute("data-state") === "checked" : true,
    type: "login",
    signinMethod: method || "Password",
  });
  return window.iamSignedIn(result, false, returnTo);
};

// What the page does with /api/login's answer: a second factor owed ("NextMfa": the
// page asks for the code), or signed in (a full load: the websocket reconnects carrying
// the new cookie; the authorize page goes to the redirect URI, replacing itself so that
// Back cannot issue another code).
window.iamSignedIn = function (result, authorize, returnTo) {
  if (result.status === "ok" && result.data === "NextMfa") {
    return { status: "mfa", msg: "", methods: result.data2 || [] };
  }
  if (result.status === "ok" && authorize && /^\/(mfa\/setup|prompt\/)/.test(String(result.data2))) {
    // the organization requires MFA, or the application prompts for items: those first, then
    // back to the authorize page
    window.location.assign(result.data2);
    return { status: "mfa-setup", msg: "" };
  }
  if (result.status === "ok" && authorize && result.data2) {
    window.location.replace(result.data2);
    return { status: "redirecting", msg: "" };
  }
  if (result.status === "ok" && !authorize) {
    window.location.assign(returnTo);
    return { status: "redirecting", msg: "" };
  }
  return { status: result.status, msg: result.msg };
};

// The second step: the code of the chosen method, or a recovery code, completes the
// pending sign-in (an HttpOnly cookie the page never sees).
window.iamSecondFactor = async function (prefix, authorize, returnTo, mfaType, recovery) {
  const code = (document.getElementById(prefix + "-passcode")?.value ?? "").trim();
  const body = recovery ? { recoveryCode: code } : { passcode: code, mfaType: mfaType };
  const result = await window.iamPost("/api/login" + (authorize ? window.location.search : ""), body);
  return window.iamSignedIn(result, authorize, returnTo);
};

window.iamSendMfaCode = async function (mfaType) {
  const result = await window.iamPost("/api/send-verification-code",
    { type: mfaType === "sms" ? "phone" : "email", method: "mfaAuth" });
  return { status: result.status, msg: result.msg };
};

// Back from an upstream identity provider with a second factor owed: the pending sign-in's
// methods (its cookie is the API's), then the page's second step as after a password.
window.iamPendingMfa = async function (returnTo) {
  let result;
  try {
    const answer = await fetch("/api/federation/pending-mfa", { credentials: "same-origin" });
    result = await answer.json();
  } catch (e) {
    return { status: "network", msg: String(e) };
  }
  return window.iamSignedIn(result, false, returnTo);
};

// The OAuth authorize page: the sign-in carries the page's own authorization
// request (its query string); the answer is the redirect URI with the code.
window.iamAuthorize = async function (organization, application, method) {
  const value = (id) => document.getElementById(id)?.value ?? "";
  const result = await window.iamPost("/api/login" + window.location.search, {
    application: application,
    organization: organization,
    username: value("authorize-username"),
    password: value("authorize-password"),
    autoSignin: true,
    type: "login",
    signinMethod: method || "Password",
  });
  return window.iamSignedIn(result, true, "");
};

// Signing out also forgets the wallet sign-in tokens kept per address (see iamWalletLogin).
window.iamLogout = function () {
  window.iamClearWeb3Tokens();
  return window.iamPost("/api/logout");
};

// Signing out when applications of the session have front-channel logout URIs: a navigation (a
// form POST), so that the server's answer is the page framing them, which then goes on to where
// the console goes after signing out (docs/api.md, "Logout").
window.iamLogoutNavigation = function () {
  window.iamClearWeb3Tokens();
  const form = document.createElement("form");
  form.method = "POST";
  form.action = "/api/logout";
  form.hidden = true;
  document.body.appendChild(form);
  form.submit();
};

// Wallet sign-in (docs/api.md, "Wallet sign-in"), with the browser's injected wallet
// (window.ethereum: MetaMask, or what Web3-Onboard's injected module finds): the account, a nonce
// from the server, the wallet's EIP-712 signature of the typed data the server issued; the Web3
// auth token {address, nonce, createAt, typedData, signature, walletType} is kept in local storage
// under Web3AuthToken_<address>, and the page goes on to the sign-in URL with web3AuthTokenKey,
// which posts it (iamWalletFinish).
window.iamWeb3Prefix = "Web3AuthToken_";
window.iamClearWeb3Tokens = function () {
  try {
    Object.keys(localStorage).filter((key) => key.startsWith(window.iamWeb3Prefix))
      .forEach((key) => localStorage.removeItem(key));
  } catch (e) { /* storage unavailable: nothing kept */ }
};

window.iamWalletLogin = async function (application, organization, provider, walletType) {
  if (!window.iamAgreed()) return { status: "agreement", msg: "" };
  const wallet = window.ethereum;
  if (!wallet || typeof wallet.request !== "function") return { status: "no-wallet", msg: "" };
  let address, chainId, signature;
  try {
    address = (await wallet.request({ method: "eth_requestAccounts" }))[0];
    chainId = await wallet.request({ method: "eth_chainId" });
  } catch (e) {
    return { status: "wallet", type: walletType, msg: (e && e.message) || String(e) };
  }
  const issued = await window.iamPost("/api/web3/nonce", {
    application: application, organization: organization, provider: provider, address: address,
    chainId: chainId,
  });
  if (issued.status !== "ok") return issued;
  try {
    signature = await wallet.request({ method: "eth_signTypedData_v4", params: [address, issued.data.typedData] });
  } catch (e) {
    return { status: "wallet", type: walletType, msg: (e && e.message) || String(e) };
  }
  const key = window.iamWeb3Prefix + address;
  localStorage.setItem(key, JSON.stringify({
    address: address, nonce: issued.data.nonce, createAt: issued.data.createAt,
    typedData: issued.data.typedData, signature: signature, walletType: walletType,
  }));
  const next = new URL(window.location.href);
  next.searchParams.set("web3AuthTokenKey", key);
  next.searchParams.set("provider", provider);
  window.location.assign(next.toString());
  return { status: "redirecting", msg: "" };
};

// `authorize`: the OAuth authorize page, whose query (the authorization request) the sign-in answers.
window.iamWalletFinish = async function (key, application, organization, provider, returnTo, authorize) {
  // the page's on_load may run again while it hydrates: the token is posted once per page load
  if (window.iamWalletPosted === key) return { status: "redirecting", msg: "" };
  window.iamWalletPosted = key;
  const here = new URL(window.location.href);  // a reload must not post the spent token again
  here.searchParams.delete("web3AuthTokenKey");
  here.searchParams.delete("provider");
  window.history.replaceState(window.history.state, "", here.toString());
  const token = String(key).startsWith(window.iamWeb3Prefix) ? localStorage.getItem(key) : null;
  if (!token) return { status: "error", msg: "" };
  const auto = document.getElementById("login-auto");
  const result = await window.iamPost("/api/login" + (authorize ? here.search : ""), {
    application: application, organization: organization, provider: provider, code: token, type: "login",
    autoSignin: auto ? auto.getAttribute("data-state") === "checked" : true,
    // the sign-in page's ?invitationCode=, spent if the address signs a user up
    invitationCode: here.searchParams.get("invitationCode") || "",
  });
  return window.iamSignedIn(result, authorize, returnTo);
};

// WebAuthn: the server's options carry base64url strings where the browser wants bytes,
// and the browser's credential carries bytes where the server reads base64url.
window.iamB64ToBytes = function (text) {
  const b64 = text.replace(/-/g, "+").replace(/_/g, "/") + "===".slice((text.length + 3) % 4);
  return Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
};

window.iamBytesToB64 = function (buffer) {
  let text = "";
  for (const byte of new Uint8Array(buffer)) text += String.fromCharCode(byte);
  return btoa(text).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
};

window.iamWebauthnGet = async function (path) {
  try {
    const response = await fetch(path, {
      credentials: "same-origin", headers: { "Accept-Language": window.iamLanguage() },
    });
    return await response.json();
  } catch (e) {
    return { status: "network", msg: String(e) };
  }
};

// The ceremony itself (create or get) failed in the browser: cancelled, timed out, no authenticator.
// At sign-in, NotAllowedError is also what a browser says when none of its authenticators holds a
// credential the server offered (an account without one is offered a decoy): status "no-passkey",
// which the page words in the user's language.
window.iamWebauthnFailure = function (e, signIn) {
  if (signIn && e && e.name === "NotAllowedError") return { status: "no-passkey", msg: "" };
  return { status: "error", msg: (e && e.name ? e.name + ": " : "") + (e && e.message ? e.message : String(e)) };
};

// The account page's Add: begin, navigator.credentials.create, finish. {status, msg}.
window.iamWebauthnRegister = async function (name) {
  const options = await window.iamWebauthnGet("/api/webauthn/signup/begin");
  if (!options.publicKey) return options;
  const pk = options.publicKey;
  pk.challenge = window.iamB64ToBytes(pk.challenge);
  pk.user.id = window.iamB64ToBytes(pk.user.id);
  (pk.excludeCredentials || []).forEach((c) => { c.id = window.iamB64ToBytes(c.id); });
  let credential;
  try {
    credential = await navigator.credentials.create({ publicKey: pk });
  } catch (e) {
    return window.iamWebauthnFailure(e);
  }
  const response = credential.response;
  return window.iamPost("/api/webauthn/signup/finish?name=" + encodeURIComponent(name || ""), {
    id: credential.id,
    rawId: window.iamBytesToB64(credential.rawId),
    type: credential.type,
    authenticatorAttachment: credential.authenticatorAttachment,
    response: {
      clientDataJSON: window.iamBytesToB64(response.clientDataJSON),
      attestationObject: window.iamBytesToB64(response.attestationObject),
      transports: response.getTransports ? response.getTransports() : [],
    },
    clientExtensionResults: credential.getClientExtensionResults(),
  });
};

// Sign-in with WebAuthn: begin for the typed username, navigator.credentials.get, finish
// (with `query`, an authorization request the answer completes). The server's answer.
window.iamWebauthnSignIn = async function (organization, application, usernameId, query) {
  const username = document.getElementById(usernameId)?.value ?? "";
  const params = new URLSearchParams({ owner: organization, name: username.trim(), application: application });
  const options = await window.iamWebauthnGet("/api/webauthn/signin/begin?" + params.toString());
  if (!options.publicKey) return options;
  const pk = options.publicKey;
  pk.challenge = window.iamB64ToBytes(pk.challenge);
  (pk.allowCredentials || []).forEach((c) => { c.id = window.iamB64ToBytes(c.id); });
  let assertion;
  try {
    assertion = await navigator.credentials.get({ publicKey: pk });
  } catch (e) {
    return window.iamWebauthnFailure(e, true);
  }
  const response = assertion.response;
  return window.iamPost("/api/webauthn/signin/finish" + (query || ""), {
    id: assertion.id,
    rawId: window.iamBytesToB64(assertion.rawId),
    type: assertion.type,
    authenticatorAttachment: assertion.authenticatorAttachment,
    response: {
      clientDataJSON: window.iamBytesToB64(response.clientDataJSON),
      authenticatorData: window.iamBytesToB64(response.authenticatorData),
      signature: window.iamBytesToB64(response.signature),
      userHandle: response.userHandle ? window.iamBytesToB64(response.userHandle) : null,
    },
    clientExtensionResults: assertion.getClientExtensionResults(),
  });
};

// The console's sign-in page: as iamLogin, with a WebAuthn credential instead of the password.
window.iamWebauthnLogin = async function (organization, returnTo) {
  const auto = document.getElementById("login-auto");
  const autoSignin = auto ? auto.getAttribute("data-state") === "checked" : true;
  const result = await window.iamWebauthnSignIn(organization, "", "login-username", "?autoSignin=" + autoSignin);
  return window.iamSignedIn(result, false, returnTo);
};

// The OAuth authorize page: as iamAuthorize, with a WebAuthn credential.
window.iamWebauthnAuthorize = async function (organization, application) {
  const result = await window.iamWebauthnSignIn(organization, application, "authorize-username",
    window.location.search);
  return window.iamSignedIn(result, true, "");
};

// The forgotten-password page (/forget/{application}): the code and the new password go
// from the page to the API, never over the websocket; verify-code's grant is an HttpOnly cookie
// that set-password takes with the code.
let iamForgetCode = "";  // the verified code, which set-password takes with the grant
window.iamVerifyCode = async function (organization, name, address) {
  iamForgetCode = (document.getElementById("forget-code")?.value ?? "").trim();
  return await window.iamPost("/api/verify-code", { organization: organization, name: name, username: address,
                                                    code: iamForgetCode });
};

window.iamResetPassword = async function (organization, name) {
  const value = (id) => document.getElementById(id)?.value ?? "";
  if (value("forget-password") !== value("forget-confirm")) return { status: "mismatch", msg: "" };
  return await window.iamPost("/api/set-password", {
    userOwner: organization, userName: name, newPassword: value("forget-password"),
    code: iamForgetCode,
  });
};

// The console's password dialog (the user edit page and /account): what is typed stays in the
// page and goes to set-password from here, never over the websocket (docs/security.md, "Where
// typed secrets travel"). The live hints run the organization's rules, which the dialog carries
// in data-rules; the server checks them again.
window.iamPasswordHints = function () {
  const value = (id) => document.getElementById(id)?.value ?? "";
  let given = {};
  try { given = JSON.parse(document.getElementById("password-dialog")?.dataset.rules || "{}"); } catch (e) { given = {}; }
  const typed = value("password-new"), confirm = value("password-confirm");
  const breaks = (rule) => {
    for (const flags of ["u", ""]) {
      try { return !new RegExp(rule.pattern, flags).test(typed); } catch (e) { /* another engine's syntax */ }
    }
    return false;  // a regex the browser cannot read: the server judges
  };
  const broken = typed ? (given.rules || []).find(breaks) : undefined;
  return { hint: broken ? broken.message : "", confirm: confirm && confirm !== typed ? given.inconsistent || "" : "" };
};

window.iamSetPassword = async function (owner, name) {
  const value = (id) => document.getElementById(id)?.value ?? "";
  const typed = value("password-new"), confirm = value("password-confirm");
  if (!typed || !confirm) return { status: "empty", msg: "" };
  if (typed !== confirm) return { status: "mismatch", msg: "" };
  return await window.iamPost("/api/set-password", {
    userOwner: owner, userName: name, oldPassword: value("password-old"), newPassword: typed,
  });
};

// Forms behave as people expect (docs/architecture.md, "Accessibility and forms").
// Leaving an edit page with unsaved edits asks first: its #edit-unsaved marker says whether
// the form is dirty and carries the question in the viewer's language.
window.iamUnsavedQuestion = function () {
  const marker = document.getElementById("edit-unsaved");
  return marker && marker.dataset.dirty === "true" ? marker.dataset.question : "";
};
window.addEventListener("beforeunload", (event) => {
  if (window.iamUnsavedQuestion()) {
    event.preventDefault();
    event.returnValue = "";  // the browser shows its own question
  }
});
// Back and Forward ask too: assets/history_guard.js, inlined in the page head so that it runs
// before the router starts listening.
// in-app links: asked before the router sees the click (capture phase, on the document);
// a download link (a cert's files) leaves nothing
document.addEventListener("click", (event) => {
  const question = window.iamUnsavedQuestion();
  const link = question && event.target.closest ? event.target.closest("a[href]") : null;
  if (!link || link.target === "_blank" || link.hasAttribute("download")) return;
  if (!window.confirm(question)) {
    event.preventDefault();
    event.stopImmediatePropagation();
  }
}, true);

// Escape closes a page's guided tour (as its Skip does), unless it closes something above the
// page first: an open dialog, menu or list takes the key.
document.addEventListener("keydown", (event) => {
  if (event.key !== "Escape" || event.defaultPrevented) return;
  if (document.querySelector('[role="dialog"], [role="alertdialog"], [role="menu"], [role="listbox"]')) return;
  document.getElementById("tour-skip")?.click();
});

// The sign-up form (/signup/{application}): every field marked data-signup-key, posted to
// /api/signup with the page's authorization request if it has one; the password and its
// confirmation are compared here and never leave the browser but to the API.
window.iamSignup = async function (application, organization, captchaId, returnTo) {
  const body = { application: application, organization: organization };
  document.querySelectorAll("[data-signup-key]").forEach((field) => {
    const key = field.getAttribute("data-signup-key");
    if (key) body[key] = field.value ?? "";
  });
  if ("confirm" in body && body.confirm !== body.password) return { status: "mismatch", msg: "" };
  delete body.confirm;
  const agreement = document.getElementById("signup-agreement");
  if (agreement && agreement.getAttribute("data-state") !== "checked") return { status: "agreement", msg: "" };
  if (captchaId) {
    body.captchaType = "Default";
    body.captchaToken = document.getElementById("signup-captcha-answer")?.value ?? "";
    body.clientSecret = captchaId;
  }
  const query = new URLSearchParams(window.location.search);
  const authorize = query.has("clientId") || query.has("client_id");
  const result = await window.iamPost("/api/signup" + (authorize ? window.location.search : ""), body);
  // returnTo: a same-site path the server checked (the page's ?from=)
  return window.iamSignedIn(result, authorize, returnTo || "/");
};

// Sign-in with a verification code: the typed email or phone and the code it received.
window.iamCodeLogin = async function (application, organization, returnTo) {
  if (!window.iamAgreed()) return { status: "agreement", msg: "" };
  const value = (id) => document.getElementById(id)?.value ?? "";
  const auto = document.getElementById("login-auto");
  const result = await window.iamPost("/api/login", {
    application: application,
    organization: organization,
    username: value("login-code-address"),
    code: value("login-code"),
    autoSignin: auto ? auto.getAttribute("data-state") === "checked" : true,
    type: "login",
    signinMethod: "Verification code",
  });
  return window.iamSignedIn(result, false, returnTo);
};

// Google One Tap (docs/security.md, "Upstream identity providers"): a state and nonce from the
// server (bound to this browser's cookie), Google Identity Services' script (options.script:
// IAM_GOOGLE_GSI_SCRIPT) and its prompt; the credential it hands over is posted as it is, and the
// server verifies it against Google's keys. Resolves with the server's refusal, or when the page
// moves on; never while the prompt waits (or was dismissed).
window.iamGoogleOneTap = async function (options) {
  const key = JSON.stringify([options.application, options.provider, window.location.href]);
  if (window.iamOneTapShown === key) return { status: "shown", msg: "" };  // on_load reruns while hydrating
  window.iamOneTapShown = key;
  const started = await window.iamPost("/api/federation/google-one-tap/start", {
    application: options.application, provider: options.provider, authorize: options.authorize, from: options.from,
  });
  if (started.status !== "ok") return started;
  try {
    await new Promise((loaded, failed) => {
      const script = document.createElement("script");
      script.src = options.script;
      script.async = true;
      script.onload = loaded;
      script.onerror = () => failed(new Error("Google Identity Services did not load"));
      document.head.appendChild(script);
    });
  } catch (e) {
    return { status: "unavailable", msg: String(e) };  // no prompt: the buttons remain
  }
  return await new Promise((done) => {
    window.google.accounts.id.initialize({
      client_id: started.data.clientId,
      nonce: started.data.nonce,
      callback: async (response) => {
        const answer = await window.iamPost("/api/federation/google-one-tap", {
          application: options.application, provider: options.provider, credential: response.credential,
          state: started.data.state,
          // the page's ?invitationCode=, spent if the credential signs a user up
          invitationCode: new URL(window.location.href).searchParams.get("invitationCode") || "",
        });
        if (answer.status !== "ok") {
          done(answer);
          return;
        }
        window.location.assign(answer.data2);
        done({ status: "redirecting", msg: "" });
      },
    });
    window.google.accounts.id.prompt();
  });
};

// The sign-up page's provider buttons carry the invitation code typed into the form: their links
// hold the page's ?invitationCode= only, and a code typed before choosing a provider is the one
// that provider's sign-up spends (services/upstream.buttons, the start's invitationCode).
document.addEventListener("click", (event) => {
  const button = event.target instanceof Element && event.target.closest("#signup-providers a.provider-button");
  const field = button && document.querySelector('[data-signup-key="invitationCode"]');
  if (!field) return;
  const url = new URL(button.getAttribute("href"), window.location.href);
  const typed = field.value.trim();
  if (typed) url.searchParams.set("invitationCode", typed);
  else url.searchParams.delete("invitationCode");
  button.setAttribute("href", url.pathname + url.search);
}, true);
