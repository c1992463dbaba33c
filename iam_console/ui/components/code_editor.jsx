// The console's code editor: CodeMirror 6 for Casbin model text, HTML, CSS and JSON, in a box of
// a fixed size, editable or read-only. Its whole interface is documented in docs/architecture.md
// ("The code editor"); code_editor.py is the only caller:
//   - onReady() once the editor exists (it "announces it is ready");
//   - value and language are what it shows (it "receives the text and language");
//   - onChange(text) after a pause in typing and when it loses focus (it "sends text updates");
//   - window.iamCodeEditorText(id) answers its current text at once (it "can be asked for it").
// The state echoes every update back as `value`, possibly an older one while the user goes on
// typing: a `value` equal to an update it sent is such an echo and is ignored; any other value
// comes from the state itself (a record read, a reset) and replaces the text.
import { useEffect, useRef } from "react";
import { Compartment, EditorState, Transaction } from "@codemirror/state";
import { EditorView, drawSelection, keymap, lineNumbers } from "@codemirror/view";
import { defaultKeymap, history, historyKeymap } from "@codemirror/commands";
import { LanguageSupport, StreamLanguage, bracketMatching, indentOnInput, syntaxHighlighting } from "@codemirror/language";
import { classHighlighter } from "@lezer/highlight";
import { html } from "@codemirror/lang-html";
import { css } from "@codemirror/lang-css";
import { json } from "@codemirror/lang-json";

const PAUSE_MS = 250; // typing pause before an update goes to the state
const ECHOES_KEPT = 50; // sent updates remembered to recognise their echoes

// Casbin's model text: INI-like sections ([request_definition], [policy_definition],
// [role_definition], [policy_effect], [matchers]), `key = value` lines, `#` comments, and values
// that are argument lists, effect expressions (some(where (p.eft == allow))) or matchers.
const CASBIN_KEYWORDS = new Set(["some", "where", "any", "priority", "subjectPriority", "in"]);
const CASBIN_ATOMS = new Set(["allow", "deny", "indeterminate", "true", "false"]);

const casbinLanguage = StreamLanguage.define({
  name: "casbin",
  startState: () => ({ lineStart: true }),
  token(stream, state) {
    if (stream.sol()) state.lineStart = true;
    if (stream.eatSpace()) return null;
    const first = state.lineStart;
    state.lineStart = false;
    if (stream.match("#") || (first && stream.match(";"))) {
      stream.skipToEnd();
      return "comment";
    }
    if (first && stream.match(/^\[[^\]]*\]?/)) return "heading";
    if (first && stream.match(/^[A-Za-z_]\w*(?=\s*=)/)) return "variableName.definition";
    if (stream.match(/^"(?:[^"\\]|\\.)*"?/) || stream.match(/^'(?:[^'\\]|\\.)*'?/)) return "string";
    if (stream.match(/^\d+(?:\.\d+)?/)) return "number";
    if (stream.match(/^(?:==|!=|<=|>=|&&|\|\||[=!<>+\-*/%])/)) return "operator";
    const word = stream.match(/^[A-Za-z_]\w*/);
    if (word) {
      if (CASBIN_KEYWORDS.has(word[0])) return "keyword";
      if (CASBIN_ATOMS.has(word[0])) return "atom";
      return stream.string.charAt(stream.start - 1) === "." ? "propertyName" : "variableName";
    }
    stream.next();
    return "punctuation";
  },
  languageData: { commentTokens: { line: "#" } },
});

const LANGUAGES = {
  casbin: () => new LanguageSupport(casbinLanguage),
  html: () => html(),
  css: () => css(),
  json: () => json(),
};

function languageOf(name) {
  const make = LANGUAGES[name];
  return make ? make() : [];
}

// Colours are Radix Themes' variables, so the editor follows the console's light and dark
// themes; text uses the scales' steps 11 and 12, which are made for text on steps 1 and 2.
const theme = EditorView.theme({
  "&": {
    height: "100%",
    color: "var(--gray-12)",
    backgroundColor: "var(--color-background)",
    border: "1px solid var(--gray-a7)",
    borderRadius: "var(--radius-2)",
    fontSize: "var(--font-size-2)",
  },
  "&.cm-focused": { outline: "2px solid var(--focus-8)", outlineOffset: "1px" },
  ".cm-scroller": { fontFamily: "var(--code-font-family, monospace)", overflow: "auto" },
  ".cm-content": { caretColor: "var(--gray-12)" },
  ".cm-cursor, .cm-dropCursor": { borderLeftColor: "var(--gray-12)" },
  "& .cm-selectionLayer .cm-selectionBackground, &.cm-focused .cm-selectionLayer .cm-selectionBackground": {
    backgroundColor: "var(--accent-a5)",
  },
  ".cm-gutters": {
    backgroundColor: "var(--gray-2)",
    color: "var(--gray-11)",
    borderRight: "1px solid var(--gray-a5)",
  },
  "&.cm-focused .cm-matchingBracket": { backgroundColor: "var(--accent-a4)", outline: "1px solid var(--accent-a8)" },
  "&.cm-focused .cm-nonmatchingBracket": { backgroundColor: "var(--red-a4)" },
  ".tok-comment": { color: "var(--gray-11)", fontStyle: "italic" },
  ".tok-heading": { color: "var(--blue-11)", fontWeight: "bold" },
  ".tok-keyword": { color: "var(--purple-11)" },
  ".tok-atom, .tok-bool, .tok-literal": { color: "var(--crimson-11)" },
  ".tok-number": { color: "var(--crimson-11)" },
  ".tok-string, .tok-string2": { color: "var(--green-11)" },
  ".tok-definition": { color: "var(--blue-11)" },
  ".tok-typeName, .tok-className": { color: "var(--purple-11)" },
  ".tok-propertyName": { color: "var(--cyan-11)" },
  ".tok-operator, .tok-punctuation, .tok-meta": { color: "var(--gray-11)" },
  ".tok-invalid": { color: "var(--red-11)" },
});

// Every editor's "current text", by id, for window.iamCodeEditorText.
const editors = new Map();
if (typeof window !== "undefined") {
  window.iamCodeEditorText = (id) => {
    const current = editors.get(id);
    return current ? current() : null;
  };
}

export function CodeEditor({
  id, value, language, readOnly, label, width, height, className, onReady, onChange,
}) {
  const host = useRef(null);
  const view = useRef(null);
  const sent = useRef([]); // updates sent and not yet echoed back, oldest first
  const timer = useRef(null);
  const latest = useRef({ onChange, onReady });
  latest.current = { onChange, onReady };
  const parts = useRef({ language: new Compartment(), readOnly: new Compartment(), label: new Compartment() });

  // the text as the state should have it: sent now, unless it was the last one sent
  const flush = () => {
    clearTimeout(timer.current);
    timer.current = null;
    const text = view.current.state.doc.toString();
    if (sent.current[sent.current.length - 1] !== text) {
      sent.current = [...sent.current.slice(1 - ECHOES_KEPT), text];
      latest.current.onChange && latest.current.onChange(text);
    }
    return text;
  };

  useEffect(() => {
    const { language: lang, readOnly: ro, label: named } = parts.current;
    const created = new EditorView({
      parent: host.current,
      state: EditorState.create({
        doc: value || "",
        extensions: [
          lineNumbers(), history(), drawSelection(), indentOnInput(), bracketMatching(),
          // no Tab binding: Tab and Shift+Tab leave the editor, as from any other field
          keymap.of([...defaultKeymap, ...historyKeymap]),
          syntaxHighlighting(classHighlighter), theme,
          lang.of(languageOf(language)),
          ro.of(EditorState.readOnly.of(!!readOnly)),
          named.of(EditorView.contentAttributes.of({ "aria-label": label || "" })),
          // the text box is in the Tab order by its tabindex too, so a scrolling text (a long
          // read-only preview) is a scroll region the keyboard reaches, as assistive checks read it
          EditorView.contentAttributes.of({ tabindex: "0" }),
          EditorView.updateListener.of((update) => {
            const typed = update.transactions.some((tr) => tr.docChanged && !tr.annotation(Transaction.remote));
            if (typed) {
              clearTimeout(timer.current);
              timer.current = setTimeout(flush, PAUSE_MS);
            }
          }),
          EditorView.domEventHandlers({ blur: () => { if (timer.current) flush(); } }),
        ],
      }),
    });
    view.current = created;
    latest.current.onReady && latest.current.onReady();
    return () => {
      if (timer.current) flush();
      created.destroy();
      view.current = null;
    };
  }, []);

  useEffect(() => {
    if (!id) return undefined;
    editors.set(id, flush);
    return () => { if (editors.get(id) === flush) editors.delete(id); };
  }, [id]);

  useEffect(() => {
    const current = view.current;
    const text = value || "";
    const echoed = sent.current.indexOf(text);
    if (echoed >= 0) {
      sent.current = sent.current.slice(echoed + 1);
      return;
    }
    sent.current = [];
    clearTimeout(timer.current);
    timer.current = null;
    if (text === current.state.doc.toString()) return;
    current.dispatch({
      changes: { from: 0, to: current.state.doc.length, insert: text },
      annotations: [Transaction.remote.of(true), Transaction.addToHistory.of(false)],
    });
  }, [value]);

  useEffect(() => {
    view.current.dispatch({ effects: parts.current.language.reconfigure(languageOf(language)) });
  }, [language]);

  useEffect(() => {
    view.current.dispatch({ effects: parts.current.readOnly.reconfigure(EditorState.readOnly.of(!!readOnly)) });
  }, [readOnly]);

  useEffect(() => {
    view.current.dispatch({
      effects: parts.current.label.reconfigure(EditorView.contentAttributes.of({ "aria-label": label || "" })),
    });
  }, [label]);

  return (
    <div id={id} ref={host} className={className}
         style={{ width: width || "100%", height: height || "300px", maxWidth: "100%" }} />
  );
}
