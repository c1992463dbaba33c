// Back and Forward on an edit page with unsaved edits ask first (docs/architecture.md, "Accessibility
// and forms"). The router learns of them from popstate; this script is inlined in the page head, so
// its listener is on the window before the router's and can keep the event from it when the visitor
// stays, then step history back to the edit page (whose own popstate is kept from the router too).
// window.iamUnsavedQuestion comes from iam.js.
(function () {
  let restoring = false;
  let editIndex = null;  // the router's history index of the page being edited
  const noteEditIndex = () => {
    const state = window.history.state;
    editIndex = state && typeof state.idx === "number" ? state.idx : null;
  };
  document.addEventListener("input", noteEditIndex, true);
  document.addEventListener("click", noteEditIndex, true);
  window.addEventListener("popstate", (event) => {
    if (restoring) {
      restoring = false;
      event.stopImmediatePropagation();
      return;
    }
    const question = window.iamUnsavedQuestion ? window.iamUnsavedQuestion() : "";
    if (question && !window.confirm(question)) {
      event.stopImmediatePropagation();
      restoring = true;
      const here = window.history.state && window.history.state.idx;
      const forward = typeof here === "number" && editIndex !== null && here > editIndex;
      window.history.go(forward ? -1 : 1);
    }
  }, true);
})();
