// Completion in the search editor, driven by the capabilities manifest: commands after a
// pipe, functions inside eval/where and stats-like commands, and field names.

import { firstPipe } from "./spl";

export interface Manifest {
  commands: { name: string; synopsis: string }[];
  functions: { name: string; kind: string; signature: string; description: string }[];
  built_in_fields: string[];
}

interface Item { label: string; detail: string; insert: string }

const aggregating = new Set(["stats", "chart", "timechart", "eventstats", "streamstats"]);
const evaluating = new Set(["eval", "where"]);

function lastPipe(s: string): number {
  let at = -1;
  for (let off = 0; ; ) {
    const p = firstPipe(s.slice(off));
    if (p < 0) return at;
    at = off + p;
    off = at + 1;
  }
}

export class Completer {
  private items: Item[] = [];
  private active = -1;
  private fields: string[];
  private start = 0;

  constructor(private ta: HTMLTextAreaElement, private list: HTMLUListElement, private m: Manifest, private run: () => void) {
    this.fields = [...m.built_in_fields];
    ta.addEventListener("input", () => this.update());
    ta.addEventListener("keydown", (e) => this.key(e));
    ta.addEventListener("blur", () => setTimeout(() => this.close(), 150));
  }

  setFields(fs: string[]) {
    this.fields = Array.from(new Set([...this.m.built_in_fields, ...fs]));
  }

  private candidates(before: string): { token: string; items: Item[] } {
    const token = /[\w.]*$/.exec(before)![0];
    const p = lastPipe(before);
    const seg = p < 0 ? null : before.slice(p + 1);
    const fields = this.fields.map((f) => ({ label: f, detail: "field", insert: f }));
    if (seg !== null && seg.trimStart() === token) {
      return { token, items: this.m.commands.map((c) => ({ label: c.name, detail: "command", insert: c.name + " " })) };
    }
    const cmd = seg === null ? "" : (/^\s*(\w+)/.exec(seg)?.[1] ?? "");
    const kind = aggregating.has(cmd) ? "aggregate" : evaluating.has(cmd) ? "eval" : "";
    const fns = kind
      ? this.m.functions.filter((f) => f.kind === kind).map((f) => ({ label: f.name, detail: f.signature, insert: f.name + "(" }))
      : [];
    return { token, items: [...fns, ...fields] };
  }

  update() {
    const caret = this.ta.selectionStart;
    const before = this.ta.value.slice(0, caret);
    const { token, items } = this.candidates(before);
    const afterPipe = /\|\s*$/.test(before);
    if (token === "" && !afterPipe) return this.close();
    const t = token.toLowerCase();
    this.items = items.filter((i) => i.label.toLowerCase().startsWith(t) && i.label !== token).slice(0, 12);
    this.start = caret - token.length;
    if (this.items.length === 0) return this.close();
    this.active = 0;
    this.render();
  }

  private render() {
    this.list.replaceChildren(
      ...this.items.map((it, i) => {
        const li = document.createElement("li");
        li.id = "completion-" + i;
        li.setAttribute("role", "option");
        li.setAttribute("aria-selected", String(i === this.active));
        const small = document.createElement("small");
        small.textContent = it.detail;
        li.append(it.label, small);
        li.addEventListener("mousedown", (e) => {
          e.preventDefault();
          this.accept(i);
        });
        return li;
      }),
    );
    this.list.hidden = false;
    this.ta.setAttribute("aria-expanded", "true");
    this.ta.setAttribute("aria-activedescendant", "completion-" + this.active);
    this.list.children[this.active]?.scrollIntoView({ block: "nearest" });
  }

  close() {
    this.items = [];
    this.list.hidden = true;
    this.ta.setAttribute("aria-expanded", "false");
    this.ta.removeAttribute("aria-activedescendant");
  }

  private accept(i: number) {
    const it = this.items[i];
    const v = this.ta.value;
    const caret = this.ta.selectionStart;
    this.ta.value = v.slice(0, this.start) + it.insert + v.slice(caret);
    const at = this.start + it.insert.length;
    this.ta.setSelectionRange(at, at);
    this.close();
    this.ta.focus();
  }

  private key(e: KeyboardEvent) {
    const open = !this.list.hidden && this.items.length > 0;
    if (open && (e.key === "ArrowDown" || e.key === "ArrowUp")) {
      e.preventDefault();
      this.active = (this.active + (e.key === "ArrowDown" ? 1 : this.items.length - 1)) % this.items.length;
      this.render();
    } else if (open && (e.key === "Tab" || e.key === "Enter") && !e.shiftKey) {
      e.preventDefault();
      this.accept(this.active);
    } else if (open && e.key === "Escape") {
      e.preventDefault();
      this.close();
    } else if (e.key === "Enter" && !e.shiftKey) {
      // Enter runs the search, as in a search box; Shift+Enter starts a new line.
      e.preventDefault();
      this.run();
    } else if (e.key === " " && e.ctrlKey) {
      e.preventDefault();
      this.update();
    }
  }
}
