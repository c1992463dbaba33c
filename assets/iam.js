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
  if (result.status === "ok") {
    // a full load: the websocket reconnects carrying the new cookie
    window.location.assign(returnTo);
    return { status: "redirecting", msg: "" };
  }
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
  if (result.status === "ok" && result.data2) {
    window.location.replace(result.data2); // Back must not land here and issue another code
    return { status: "redirecting", msg: "" };
  }
  return { status: result.status, msg: result.msg };
};

window.iamLogout = function () {
  return window.iamPost("/api/logout");
};
