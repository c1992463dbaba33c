// Sign-in and sign-out run in the browser so that the HttpOnly session cookie
// is set by the API and the password never crosses the Reflex websocket.
window.iamLanguage = function () {
  try { return JSON.parse(localStorage.getItem("iam_lang")) || "en"; } catch (e) { return localStorage.getItem("iam_lang") || "en"; }
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
window.iamLogin = async function (organization, returnTo) {
  const value = (id) => document.getElementById(id)?.value ?? "";
  const auto = document.getElementById("login-auto");
  const result = await window.iamPost("/api/login", {
    application: "",
    organization: organization,
    username: value("login-username"),
    password: value("login-password"),
    autoSignin: auto ? auto.getAttribute("data-state") === "checked" : true,
    type: "login",
    signinMethod: "Password",
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
  if (result.status === "ok" && authorize && String(result.data2).startsWith("/mfa/setup")) {
    // the organization requires MFA: set it up first, then back to the authorize page
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

// The OAuth authorize page: the sign-in carries the page's own authorization
// request (its query string); the answer is the redirect URI with the code.
window.iamAuthorize = async function (organization, application) {
  const value = (id) => document.getElementById(id)?.value ?? "";
  const result = await window.iamPost("/api/login" + window.location.search, {
    application: application,
    organization: organization,
    username: value("authorize-username"),
    password: value("authorize-password"),
    autoSignin: true,
    type: "login",
    signinMethod: "Password",
  });
  return window.iamSignedIn(result, true, "");
};

window.iamLogout = function () {
  return window.iamPost("/api/logout");
};
