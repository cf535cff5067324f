// Small text operations on search strings.

// errorOffset finds where in source an error message's "line:column: " prefix points
// (line 1-based, column 1-based in code points); null when the message has none.
export function errorOffset(message: string, source: string): number | null {
  const m = /^(\d+):(\d+): /.exec(message);
  if (!m) return null;
  let line = +m[1];
  const col = +m[2];
  let off = 0;
  while (line > 1) {
    const nl = source.indexOf("\n", off);
    if (nl < 0) return null;
    off = nl + 1;
    line--;
  }
  const chars = Array.from(source.slice(off));
  let units = 0;
  for (let i = 0; i < col - 1 && i < chars.length; i++) units += chars[i].length;
  return Math.min(off + units, source.length);
}

// firstPipe is the offset of the first "|" outside quotes, or -1.
export function firstPipe(s: string): number {
  let q = "";
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (q) {
      if (c === "\\") i++;
      else if (c === q) q = "";
    } else if (c === '"' || c === "'" || c === "`") q = c;
    else if (c === "|") return i;
  }
  return -1;
}

export function quote(v: string): string {
  return '"' + v.replace(/\\/g, "\\\\").replace(/"/g, '\\"') + '"';
}

// addFilter adds field="value" to the base search (the first segment), so that the
// filter applies before every command of the pipeline.
export function addFilter(spl: string, field: string, value: string): string {
  const f = (/^[A-Za-z_][\w.]*$/.test(field) ? field : quote(field)) + "=" + quote(value);
  const p = firstPipe(spl);
  const base = (p < 0 ? spl : spl.slice(0, p)).trimEnd();
  const rest = p < 0 ? "" : " " + spl.slice(p);
  return (base === "" || base === "*" ? f : base + " " + f) + rest;
}
