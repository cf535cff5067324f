// The svc web console: log search (timeline, fields, per-stage counts) and SQL, over the
// API at /ui/api/… with the session cookie and its CSRF token. No framework: the DOM in
// index.html, filled here. uPlot (vendored, a global) draws the charts.

import { api, setCSRF, ApiError } from "./api";
import { Completer, Manifest } from "./complete";
import { errorOffset, addFilter } from "./spl";

declare const uPlot: any;

const $ = <T extends HTMLElement = HTMLElement>(id: string) => document.getElementById(id) as T;
const el = <K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string> = {}, ...kids: (Node | string)[]) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  e.append(...kids);
  return e;
};

interface Scope { org: string; cluster: string; database: string }
const scope: Scope = { org: "", cluster: "", database: "" };

function scopeParams(withDB = true): Record<string, string> {
  const p: Record<string, string> = { organization: scope.org, cluster: scope.cluster };
  if (withDB) p.database = scope.database;
  return p;
}

// ---- errors -------------------------------------------------------------------------

function showError(box: HTMLElement, err: unknown, source?: string, editor?: HTMLTextAreaElement) {
  box.replaceChildren();
  box.hidden = false;
  if (!(err instanceof ApiError)) {
    box.append(String(err));
    return;
  }
  box.dataset.code = err.code;
  if (err.code === "app_not_installed") {
    box.append(el("strong", {}, "The log search app is not installed on this cluster. "));
  }
  box.append(el("span", { class: "msg" }, err.message));
  if (err.hint) box.append(el("span", { class: "hint" }, "Hint: " + err.hint));
  if (source !== undefined && editor) {
    const off = errorOffset(err.message, source);
    if (off !== null) {
      const lineStart = source.lastIndexOf("\n", off - 1) + 1;
      let lineEnd = source.indexOf("\n", off);
      if (lineEnd < 0) lineEnd = source.length;
      const line = source.slice(lineStart, lineEnd);
      const col = Array.from(source.slice(lineStart, off)).length;
      box.append(el("pre", { id: "error-caret" }, line + "\n" + " ".repeat(col) + "^"));
      box.dataset.offset = String(off);
      editor.focus();
      editor.setSelectionRange(off, Math.min(off + 1, source.length));
    }
  }
}

function clearError(box: HTMLElement) {
  box.hidden = true;
  box.replaceChildren();
  delete box.dataset.code;
  delete box.dataset.offset;
}

// ---- session ------------------------------------------------------------------------

async function start() {
  const r = await fetch("/ui/session", { credentials: "same-origin" });
  if (r.status !== 200) {
    showLogin();
    return;
  }
  const s = await r.json();
  await enter(s.user.username, s.csrf_token);
}

function showLogin() {
  $("app").hidden = true;
  $("login-view").hidden = false;
  $<HTMLInputElement>("username").focus();
}

$("login-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const box = $("login-error");
  box.hidden = true;
  const r = await fetch("/ui/login", {
    method: "POST",
    credentials: "same-origin",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ username: $<HTMLInputElement>("username").value, password: $<HTMLInputElement>("password").value }),
  });
  const body = await r.json().catch(() => ({}));
  if (r.status !== 200) {
    box.textContent = body?.error?.message ?? `sign-in failed (${r.status})`;
    box.hidden = false;
    return;
  }
  $<HTMLInputElement>("password").value = "";
  await enter(body.user.username, body.csrf_token);
});

$("logout").addEventListener("click", async () => {
  await api("POST", "/ui/logout").catch(() => undefined);
  setCSRF("");
  showLogin();
});

const url = new URL(location.href);

async function enter(user: string, csrf: string) {
  setCSRF(csrf);
  $("user").textContent = user;
  $("login-view").hidden = true;
  $("app").hidden = false;
  const p = url.searchParams;
  try {
    await loadOrgs(p.get("org") ?? "", p.get("cluster") ?? "", p.get("db") ?? "");
  } catch (err) {
    // No organization, cluster or database to choose: say why instead of a blank page.
    showError($("search-error"), err);
  }
  loadManifest().catch((err) => showError($("search-error"), err));
  const v = p.get("view");
  showView(v === "sql" || v === "alerts" || v === "tables" ? v : "search");
  if (p.get("q")) {
    $<HTMLTextAreaElement>("spl").value = p.get("q")!;
    setRange(p.get("earliest") ?? "", p.get("latest") ?? "");
    runSearch();
  }
}

// ---- organization, cluster, database ------------------------------------------------

function fill(sel: HTMLSelectElement, names: string[], want: string): string {
  sel.replaceChildren(...names.map((n) => el("option", { value: n }, n)));
  const pick = names.includes(want) ? want : names.includes("default") ? "default" : names[0] ?? "";
  sel.value = pick;
  return pick;
}

async function loadOrgs(org: string, cluster: string, db: string) {
  const me = await api("GET", "/ui/api/me");
  scope.org = fill($("org") as HTMLSelectElement, me.organizations.map((o: any) => o.name), org);
  await loadClusters(cluster, db);
}

async function loadClusters(cluster: string, db: string) {
  const cs = await api("GET", "/ui/api/clusters", undefined, { organization: scope.org });
  scope.cluster = fill($("cluster") as HTMLSelectElement, cs.clusters.map((c: any) => c.name), cluster);
  await loadDatabases(db);
}

async function loadDatabases(db: string) {
  const ds = await api("GET", "/ui/api/databases", undefined, scopeParams(false));
  scope.database = fill($("database") as HTMLSelectElement, ds.databases.map((d: any) => d.name), db);
  loadSaved();
}

$("org").addEventListener("change", (e) => { scope.org = (e.target as HTMLSelectElement).value; loadClusters("", ""); });
$("cluster").addEventListener("change", (e) => { scope.cluster = (e.target as HTMLSelectElement).value; loadDatabases(""); });
$("database").addEventListener("change", (e) => {
  scope.database = (e.target as HTMLSelectElement).value;
  if (!$("tables-view").hidden) loadTables();
});

// ---- views --------------------------------------------------------------------------

type View = "search" | "sql" | "alerts" | "tables";
function showView(v: View) {
  for (const name of ["search", "sql", "alerts", "tables"] as View[]) {
    $(`${name}-view`).hidden = v !== name;
    if (v === name) $(`nav-${name}`).setAttribute("aria-current", "page");
    else $(`nav-${name}`).removeAttribute("aria-current");
  }
  url.searchParams.set("view", v);
  history.replaceState(null, "", url);
  if (v === "alerts") loadAlerts();
  if (v === "tables") loadTables();
}
$("nav-search").addEventListener("click", () => showView("search"));
$("nav-sql").addEventListener("click", () => showView("sql"));
$("nav-alerts").addEventListener("click", () => showView("alerts"));
$("nav-tables").addEventListener("click", () => showView("tables"));

// ---- alerts -------------------------------------------------------------------------

// loadAlerts lists the cluster's alerts with their state and active groups (GET /v1/alerts).
async function loadAlerts() {
  const box = $("alerts-error");
  clearError(box);
  $("alerts-status").textContent = "Loading alerts…";
  try {
    const res = await api("GET", "/ui/api/alerts", undefined, scopeParams(false));
    const rows = (res.alerts as any[]).map((a) => {
      const active = (a.groups as any[]).filter((g) => g.state === "firing" || g.state === "pending");
      const lang = ["sql", "promql", "spl"].find((k) => k in a.query) ?? "";
      // A search alert's window is part of its query (earliest → latest, relative to the evaluation).
      const window = lang === "spl" ? ` [${a.query.earliest} → ${a.query.latest}]` : "";
      return {
        name: a.name,
        state: a.state,
        query: `${lang}: ${a.query[lang] ?? ""}${window}`,
        condition: a.condition.op === "any" ? "any" : `${a.condition.of} ${a.condition.op} ${a.condition.threshold}`,
        for: a.for,
        active: active.map((g) => `${g.state} {${Object.entries(g.labels).map(([k, v]) => `${k}=${v}`).join(", ")}}`).join("; "),
        enabled: a.enabled ? "yes" : "no",
        silenced_until: a.silenced_until ?? "",
      };
    });
    renderTable($<HTMLTableElement>("alerts-table"),
      ["name", "state", "query", "condition", "for", "active", "enabled", "silenced_until"].map((n) => ({ name: n, type: "String" })), rows);
    $("alerts-status").textContent = `${rows.length} alert${rows.length === 1 ? "" : "s"}.`;
  } catch (err) {
    $("alerts-status").textContent = "";
    showError(box, err);
  }
}
$("alerts-refresh").addEventListener("click", () => loadAlerts());

// ---- tables -------------------------------------------------------------------------

// retentionText is a table's retention as the engine enforces it, with its status when
// the engine's TTL and the setting differ (GET /v1/tables reads both).
function retentionText(t: any): string {
  const kept = t.retention ?? "forever";
  if (t.retention_status === "in_sync") return kept;
  const asked = t.retention_setting ?? "forever";
  return `${kept} (${t.retention_status}; set: ${asked})`;
}

// loadTables lists the selected database's tables with their sorting key and retention
// (GET /v1/tables); a click on a name shows the table (GET /v1/tables/{table}).
async function loadTables() {
  const box = $("tables-error");
  clearError(box);
  $("table-detail").hidden = true;
  $("tables-status").textContent = "Loading tables…";
  try {
    const res = await api("GET", "/ui/api/tables", undefined, scopeParams(true));
    const tables = res.tables as any[];
    const table = $<HTMLTableElement>("tables-table");
    const cols = ["name", "sorting_key", "retention", "retention_status"];
    const head = el("tr", {}, ...cols.map((c) => el("th", { scope: "col" }, c)));
    const body = tables.map((t) => {
      const open = el("button", { type: "button", class: "link", "data-table": t.name }, t.name);
      open.addEventListener("click", () => showTable(t.name));
      return el("tr", {}, el("td", {}, open), el("td", {}, t.sorting_key || "(automatic)"),
        el("td", {}, retentionText(t)), el("td", {}, t.retention_status));
    });
    table.replaceChildren(el("thead", {}, head), el("tbody", {}, ...body));
    table.dataset.rows = String(body.length);
    $("tables-status").textContent = `${tables.length} table${tables.length === 1 ? "" : "s"} in ${scope.database}.`;
  } catch (err) {
    $("tables-status").textContent = "";
    showError(box, err);
  }
}
$("tables-refresh").addEventListener("click", () => loadTables());

async function showTable(name: string) {
  const box = $("tables-error");
  clearError(box);
  try {
    const t = await api("GET", `/ui/api/tables/${encodeURIComponent(name)}`, undefined, scopeParams(true));
    $("table-detail-title").textContent = `${t.database}.${t.name}`;
    const facts: [string, string][] = [
      ["sorting key", t.sorting_key || `(automatic) ${t.automatic_sorting_key ?? ""}`],
      ["retention", retentionText(t)],
      ["retention setting", t.retention_setting ?? "none (rows kept forever)"],
      ["engine TTL", t.retention_ttl ?? "none"],
      ["retention status", t.retention_status + (t.retention_problem ? `: ${t.retention_problem}` : "")],
      ["created", t.created_at],
    ];
    $("table-detail-facts").replaceChildren(...facts.flatMap(([k, v]) => [el("dt", {}, k), el("dd", { "data-fact": k }, v)]));
    renderTable($<HTMLTableElement>("table-detail-columns"), [{ name: "name", type: "String" }, { name: "type", type: "String" }], t.columns ?? []);
    renderTable($<HTMLTableElement>("table-detail-generations"), [{ name: "number", type: "UInt32" }, { name: "physical_sorting_key", type: "String" }], t.generations ?? []);
    $("table-detail").hidden = false;
  } catch (err) {
    showError(box, err);
  }
}

// ---- completion ---------------------------------------------------------------------

let completer: Completer | null = null;
async function loadManifest() {
  const m: Manifest = await api("GET", "/v1/spl/capabilities");
  completer = new Completer($("spl") as HTMLTextAreaElement, $("completions") as HTMLUListElement, m, () => runSearch());
}

// ---- time range ---------------------------------------------------------------------

function toLocalInput(epoch: number): string {
  return new Date(epoch * 1000).toISOString().slice(0, 19);
}
function fromLocalInput(v: string): string {
  if (!v) return "";
  const ms = Date.parse(v.length === 16 ? v + ":00Z" : v + "Z");
  return isNaN(ms) ? "" : String(Math.floor(ms / 1000));
}

function range(): { earliest: string; latest: string } {
  const v = $<HTMLSelectElement>("range").value;
  if (v === "custom") return { earliest: fromLocalInput($<HTMLInputElement>("earliest").value), latest: fromLocalInput($<HTMLInputElement>("latest").value) };
  // All time is earliest 0: no earliest means the API's default window (the last 24 hours).
  if (v === "all") return { earliest: "0", latest: "" };
  return { earliest: v, latest: "now" };
}

function setRange(earliest: string, latest: string) {
  const sel = $<HTMLSelectElement>("range");
  if (earliest === "" && latest === "") sel.value = "-24h"; // the API's default window
  else if (earliest === "0" && (latest === "" || latest === "now")) sel.value = "all";
  else if ((latest === "now" || latest === "") && Array.from(sel.options).some((o) => o.value === earliest)) sel.value = earliest;
  else {
    sel.value = "custom";
    if (/^\d+$/.test(earliest)) $<HTMLInputElement>("earliest").value = toLocalInput(+earliest);
    if (/^\d+$/.test(latest)) $<HTMLInputElement>("latest").value = toLocalInput(+latest);
  }
  $("custom-range").hidden = sel.value !== "custom";
}
$("range").addEventListener("change", () => { $("custom-range").hidden = $<HTMLSelectElement>("range").value !== "custom"; });

// ---- search -------------------------------------------------------------------------

interface Stage { command: string; expression: string; output_rows: number | null; truncated: boolean; kept_percent: number | null }
interface Search {
  meta: { name: string; type: string }[];
  data: Record<string, unknown>[];
  rows: number;
  statistics: { elapsed: number; rows_read: number; bytes_read: number };
  timeline: { time: string; span_seconds: number; count: number }[];
  result_kind: "events" | "statistics";
  truncated: boolean;
  stages: Stage[];
  field_statistics?: FieldStat[];
}
interface FieldStat { field: string; type: string; coverage: number; distinct_count: number; non_null_rows: number; top_values: { value: string; count: number }[] }

let running: { id: string; abort: AbortController } | null = null;
let seq = 0;
const newID = (p: string) => `${p}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;

$("search-form").addEventListener("submit", (ev) => { ev.preventDefault(); runSearch(); });

async function runSearch() {
  const spl = $<HTMLTextAreaElement>("spl").value.trim();
  if (!spl) return;
  performance.clearMarks();
  performance.clearMeasures();
  performance.clearResourceTimings();
  performance.mark("search:start");
  const t0 = performance.now();
  const { earliest, latest } = range();
  const body: Record<string, unknown> = { spl, include_field_statistics: false };
  if (earliest) body.earliest = earliest;
  if (latest) body.latest = latest;
  const my = ++seq;
  const id = newID("ui-search");
  body.query_id = id;
  // The request goes out first; the page updates while the service searches.
  const pending: Promise<Search> = api("POST", "/ui/api/spl/search", body, scopeParams());
  running = { id, abort: new AbortController() };
  completer?.close();
  url.searchParams.set("view", "search");
  url.searchParams.set("q", spl);
  url.searchParams.set("earliest", earliest);
  url.searchParams.set("latest", latest);
  url.searchParams.set("org", scope.org);
  url.searchParams.set("cluster", scope.cluster);
  url.searchParams.set("db", scope.database);
  history.replaceState(null, "", url);
  delete $("search-view").dataset.paintMs;
  const status = $("search-status");
  clearError($("search-error"));
  status.textContent = "Searching…";
  $("search-view").dataset.state = "running";
  const side = $("fields");
  side.dataset.state = "loading";
  side.replaceChildren(el("p", { class: "status" }, "Fields load after the events…"));
  $<HTMLButtonElement>("cancel").disabled = false;
  try {
    const res = await pending;
    if (my !== seq) return;
    performance.mark("search:parsed", { detail: res.statistics.elapsed * 1000 });
    renderSearch(res);
    status.textContent = `${res.rows.toLocaleString("en")} ${res.result_kind === "events" ? "events" : "results"}${res.truncated ? " (truncated)" : ""} in ${res.statistics.elapsed.toFixed(3)} s · ${res.statistics.rows_read.toLocaleString("en")} rows read`;
    $("search-view").dataset.state = "done";
    performance.mark("search:dom");
    // Painted: the frame after the DOM changes has been drawn. Nothing else is asked of
    // the service (on the same machine, often) until then.
    // A hidden page draws no frames: its fields do not wait for one.
    if (!document.hidden) {
      await new Promise<void>((painted) =>
        requestAnimationFrame(() => {
          performance.mark("search:frame");
          setTimeout(() => {
            performance.mark("search:painted");
            $("search-view").dataset.paintMs = String(performance.now() - t0);
            painted();
          }, 0);
        }),
      );
    }
    if (my !== seq) return;
    if (res.result_kind === "events") {
      // Field statistics cost several times the search; they come in a second request
      // so that the timeline and the events are on screen first.
      const fid = id + "-f";
      running = { id: fid, abort: running!.abort };
      const fs: Search = await api("POST", "/ui/api/spl/search", { ...body, query_id: fid, include_field_statistics: true }, scopeParams());
      if (my !== seq) return;
      renderFields(fs.field_statistics ?? []);
    } else {
      renderFields([]);
    }
  } catch (err) {
    if (my !== seq) return;
    if (!(err instanceof ApiError && err.code === "canceled" && $("search-view").dataset.state === "done")) clearResults();
    renderFields([]);
    $("search-view").dataset.state = err instanceof ApiError && err.code === "canceled" ? "canceled" : "error";
    if (err instanceof ApiError && err.code === "canceled") status.textContent = "Search canceled.";
    else {
      status.textContent = "";
      showError($("search-error"), err, spl, $("spl") as HTMLTextAreaElement);
    }
  } finally {
    if (my === seq) {
      running = null;
      $<HTMLButtonElement>("cancel").disabled = true;
    }
  }
}

// cancelQuery cancels a running query by id. A cancel sent right after the request may
// reach the engine before the query registered its id (404): it is sent again while the
// page still waits for that query.
async function cancelQuery(id: string, stillRunning: () => boolean, box: HTMLElement) {
  for (;;) {
    try {
      await api("POST", "/ui/api/query/cancel", { query_id: id }, scopeParams());
      return;
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 404 && stillRunning())) {
        if (stillRunning()) showError(box, err);
        return;
      }
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

$("cancel").addEventListener("click", () => {
  if (!running) return;
  const id = running.id;
  $("search-status").textContent = "Canceling…";
  cancelQuery(id, () => running?.id === id, $("search-error"));
});

// clearResults empties every result view, so that nothing on screen belongs to an
// earlier search once a search failed or was canceled.
function clearResults() {
  renderStages([]);
  renderTimeline([]);
  $("events").replaceChildren();
  $("more-events").hidden = true;
  $("stats-table").replaceChildren();
  chartPlot?.destroy();
  chartPlot = null;
  $("chart").replaceChildren();
  $("stats-panel").querySelector<HTMLElement>(".chart-controls")!.hidden = true;
}

// renderSearch changes the DOM without reading layout back (plot widths come from a
// ResizeObserver), so the frame after it lays the page out once.
function renderSearch(res: Search) {
  if (res.result_kind === "events") {
    renderEvents(res);
    performance.mark("search:events");
    $("stats-table").replaceChildren();
    $("chart").replaceChildren();
    selectTab("events");
  }
  renderStages(res.stages);
  performance.mark("search:stages");
  renderTimeline(res.timeline);
  performance.mark("search:timeline");
  if (res.result_kind !== "events") {
    $("events").replaceChildren();
    $("more-events").hidden = true;
    renderTable($("stats-table") as HTMLTableElement, res.meta, res.data);
    // The panel is shown, without the field sidebar, first: the chart takes its width.
    renderFields([]);
    selectTab("stats");
    renderChart(res);
  }
}

function renderStages(stages: Stage[]) {
  const ol = $("stages");
  ol.replaceChildren(
    ...stages.map((s, i) => {
      const rows = s.output_rows === null ? "—" : s.output_rows.toLocaleString("en") + (s.truncated ? "+" : "");
      const kept = s.kept_percent === null ? "" : ` (${s.kept_percent.toFixed(1)}% kept)`;
      return el("li", { "data-stage": String(i), "data-output-rows": s.output_rows === null ? "" : String(s.output_rows), title: s.expression },
        el("span", { class: "cmd" }, s.command), " ", el("span", { class: "rows" }, rows + " rows"), el("span", { class: "kept" }, kept));
    }),
  );
}

// ---- timeline -----------------------------------------------------------------------

let timelinePlot: any = null;
const barColor = "rgb(37, 99, 235)";

function plotWidth(node: HTMLElement) {
  return Math.max(240, node.clientWidth - 2);
}

// The timeline's width, kept by a ResizeObserver on the search view it spans, so that
// drawing it never forces a layout: the frame after the search lays the page out once.
// (The timeline's 1 px borders and plotWidth's 2 px margin.)
let timelineWidth = 0;
new ResizeObserver((entries) => {
  const w = entries[entries.length - 1].contentRect.width;
  if (w <= 0) return; // hidden (the SQL page)
  const width = Math.max(240, Math.floor(w) - 4);
  if (width === timelineWidth) return;
  timelineWidth = width;
  if (timelinePlot) timelinePlot.setSize({ width, height: 130 });
}).observe($("search-view"));

// The x range of the timeline's data (bucket starts to the last bucket's end).
let timelineRange: [number, number] = [0, 1];

function renderTimeline(buckets: Search["timeline"]) {
  const node = $("timeline");
  node.dataset.buckets = String(buckets.length);
  node.dataset.total = String(buckets.reduce((a, b) => a + b.count, 0));
  if (buckets.length === 0) {
    timelinePlot?.destroy();
    timelinePlot = null;
    node.replaceChildren();
    node.hidden = true;
    return;
  }
  node.hidden = false;
  const xs = buckets.map((b) => Date.parse(b.time) / 1000);
  const ys = buckets.map((b) => b.count);
  const span = buckets[0].span_seconds;
  timelineRange = [xs[0], xs[xs.length - 1] + span];
  node.setAttribute("aria-label", `Events over time: ${buckets.length} buckets of ${span} s, ${node.dataset.total} events`);
  if (timelinePlot) {
    // The same plot, new data: its scales are set again from the data.
    timelinePlot.setData([xs, ys]);
    return;
  }
  timelinePlot = new uPlot(
    {
      width: timelineWidth || plotWidth(node),
      height: 130,
      legend: { show: false },
      cursor: { drag: { x: true, y: false, setScale: false } },
      scales: { x: { time: true, range: () => timelineRange }, y: { range: (_u: any, _min: number, max: number) => [0, Math.max(1, max)] } },
      axes: [{ space: 60 }, { size: 44, space: 30 }],
      series: [{}, { label: "events", fill: barColor, stroke: barColor, width: 0, paths: uPlot.paths.bars({ size: [0.8, 100], align: 1 }), points: { show: false } }],
      hooks: {
        setSelect: [
          (u: any) => {
            if (u.select.width < 3) return;
            const a = Math.floor(u.posToVal(u.select.left, "x"));
            const b = Math.ceil(u.posToVal(u.select.left + u.select.width, "x"));
            u.setSelect({ left: 0, width: 0, top: 0, height: 0 }, false);
            setRange(String(a), String(b));
            runSearch();
          },
        ],
      },
    },
    [xs, ys],
    node,
  );
}

addEventListener("resize", () => {
  if (chartPlot) chartPlot.setSize({ width: plotWidth($("chart")), height: 260 });
});

// ---- events -------------------------------------------------------------------------

let shownEvents: Record<string, unknown>[] = [];
let eventsShown = 0;
const eventsPage = 100;

function renderEvents(res: Search) {
  shownEvents = res.data;
  eventsShown = 0;
  $("events").replaceChildren();
  moreEvents();
}

function fmt(v: unknown): string {
  if (v === null || v === undefined) return "";
  return typeof v === "object" ? JSON.stringify(v) : String(v);
}

const escapeHTML = (v: string) => v.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

// eventFields are the fields of an event shown in its table (all but _raw, without nulls).
function eventFields(ev: Record<string, unknown>): [string, unknown][] {
  return Object.entries(ev).filter(([k, v]) => k !== "_raw" && v !== null && v !== undefined);
}

// moreEvents appends the next page of events as one HTML string; an event's field table
// is built when its details are first opened.
function moreEvents() {
  const ol = $("events");
  const next = shownEvents.slice(eventsShown, eventsShown + eventsPage);
  let html = "";
  next.forEach((ev, j) => {
    const raw = ev._raw !== undefined ? fmt(ev._raw) : JSON.stringify(ev);
    html += `<li data-i="${eventsShown + j}"><time>${escapeHTML(fmt(ev._time))}</time><div><pre>${escapeHTML(raw)}</pre>` +
      `<details><summary>${eventFields(ev).length} fields</summary></details></div></li>`;
  });
  ol.insertAdjacentHTML("beforeend", html);
  eventsShown += next.length;
  ol.dataset.count = String(eventsShown);
  $("more-events").hidden = eventsShown >= shownEvents.length;
}
$("events").addEventListener(
  "toggle",
  (e) => {
    const d = e.target as HTMLDetailsElement;
    const i = Number(d.closest("li")?.dataset.i);
    if (!d.open || d.querySelector("table") || !shownEvents[i]) return;
    const rows = eventFields(shownEvents[i]).map(([k, v]) => el("tr", {}, el("th", { scope: "row" }, k), el("td", {}, fmt(v))));
    d.append(el("table", {}, el("tbody", {}, ...rows)));
  },
  true, // toggle does not bubble
);
$("more-events").addEventListener("click", moreEvents);

// ---- fields -------------------------------------------------------------------------

function renderFields(fields: FieldStat[]) {
  const side = $("fields");
  side.replaceChildren();
  side.dataset.state = "done";
  side.closest(".results")!.classList.toggle("nofields", fields.length === 0);
  if (fields.length === 0) return;
  side.append(el("h2", { class: "sr" }, "Fields"));
  completer?.setFields(fields.map((f) => f.field));
  for (const f of fields) {
    const ul = el("ul", {});
    for (const tv of f.top_values.slice(0, 5)) {
      const b = el("button", { type: "button", "data-field": f.field, "data-value": tv.value, "aria-label": `Filter ${f.field} = ${tv.value} (${tv.count} events)` },
        el("span", { class: "v" }, tv.value), el("span", { class: "c" }, tv.count.toLocaleString("en")));
      b.addEventListener("click", () => {
        const ta = $<HTMLTextAreaElement>("spl");
        ta.value = addFilter(ta.value, f.field, tv.value);
        runSearch();
      });
      ul.append(el("li", {}, b));
    }
    const d = el("details", { "data-field": f.field },
      el("summary", {}, el("span", {}, f.field), " ", el("span", { class: "meta" }, `${f.coverage.toFixed(0)}% · ${f.distinct_count.toLocaleString("en")} distinct · ${f.type}`)),
      ul);
    if (fields.length <= 8) d.setAttribute("open", "");
    side.append(d);
  }
}

// ---- statistics ---------------------------------------------------------------------

function selectTab(which: "events" | "stats") {
  $("tab-events").setAttribute("aria-selected", String(which === "events"));
  $("tab-stats").setAttribute("aria-selected", String(which === "stats"));
  $("events-panel").hidden = which !== "events";
  $("stats-panel").hidden = which !== "stats";
}
$("tab-events").addEventListener("click", () => selectTab("events"));
$("tab-stats").addEventListener("click", () => selectTab("stats"));
for (const id of ["tab-events", "tab-stats"]) {
  $(id).addEventListener("keydown", (e) => {
    if (e.key === "ArrowRight" || e.key === "ArrowLeft") {
      const other = id === "tab-events" ? "tab-stats" : "tab-events";
      selectTab(other === "tab-events" ? "events" : "stats");
      $(other).focus();
    }
  });
}

const numeric = (t: string) => /^(Nullable\()?(U?Int|Float|Decimal)/.test(t);

function renderTable(table: HTMLTableElement, meta: { name: string; type: string }[], data: Record<string, unknown>[] | unknown[][]) {
  const head = el("tr", {}, ...meta.map((m) => el("th", { scope: "col" }, m.name)));
  const body = (data as any[]).map((row) =>
    el("tr", {}, ...meta.map((m, i) => el("td", numeric(m.type) ? { class: "num" } : {}, fmt(Array.isArray(row) ? row[i] : row[m.name])))),
  );
  table.replaceChildren(el("thead", {}, head), el("tbody", {}, ...body));
  table.dataset.rows = String(body.length);
}

let chartPlot: any = null;
let lastStats: Search | null = null;
const palette = ["#2563eb", "#dc2626", "#16a34a", "#d97706", "#7c3aed", "#0891b2", "#db2777", "#65a30d", "#475569", "#ea580c"];

function renderChart(res: Search) {
  lastStats = res;
  const node = $("chart");
  chartPlot?.destroy();
  chartPlot = null;
  node.replaceChildren();
  const cmds = res.stages.map((s) => s.command);
  const charted = cmds.includes("timechart") || cmds.includes("chart");
  node.hidden = !charted || res.data.length === 0;
  $("stats-panel").querySelector<HTMLElement>(".chart-controls")!.hidden = node.hidden;
  if (node.hidden) return;
  const timed = res.meta[0]?.name === "_time";
  const series = res.meta.slice(1).filter((m) => numeric(m.type) || res.data.some((r) => typeof r[m.name] === "number"));
  const xs = res.data.map((r, i) => (timed ? Date.parse(String(r._time).replace(" ", "T") + (String(r._time).endsWith("Z") ? "" : "Z")) / 1000 : i));
  const labels = res.data.map((r) => fmt(r[res.meta[0].name]));
  const bar = $<HTMLSelectElement>("chart-type").value === "bar";
  const n = Math.max(1, series.length);
  node.dataset.series = String(series.length);
  node.dataset.points = String(xs.length);
  chartPlot = new uPlot(
    {
      width: plotWidth(node),
      height: 260,
      scales: { x: { time: timed } },
      axes: [timed ? {} : { values: (_u: any, ticks: number[]) => ticks.map((t) => labels[Math.round(t)] ?? "") }, { size: 50 }],
      series: [
        { label: res.meta[0].name, value: timed ? undefined : (_u: any, v: number) => labels[v] ?? "" },
        ...series.map((m, i) => ({
          label: m.name,
          stroke: palette[i % palette.length],
          fill: bar ? palette[i % palette.length] : undefined,
          width: bar ? 0 : 2,
          paths: bar ? uPlot.paths.bars({ size: [0.8 / n, 80], align: 0, disp: { x0: { unit: 2, values: () => xs.map(() => (i - (n - 1) / 2) * (0.8 / n)) } } }) : undefined,
          points: { show: !bar && xs.length < 60 },
        })),
      ],
    },
    [xs, ...series.map((m) => res.data.map((r) => (r[m.name] === null || r[m.name] === undefined ? null : Number(r[m.name]))))],
    node,
  );
}
$("chart-type").addEventListener("change", () => { if (lastStats) renderChart(lastStats); });

// ---- saved searches -----------------------------------------------------------------

async function loadSaved() {
  const sel = $<HTMLSelectElement>("saved");
  sel.replaceChildren(el("option", { value: "" }, "Open saved search…"));
  try {
    const list = await api("GET", "/ui/api/apps/logsearch/searches", undefined, scopeParams(false));
    for (const s of list.searches) sel.append(el("option", { value: s.id }, `${s.name}${s.visibility === "shared" ? " (shared)" : ""}`));
  } catch (err) {
    if (err instanceof ApiError && err.code === "app_not_installed") showError($("search-error"), err);
  }
}

$("saved").addEventListener("change", async (e) => {
  const id = (e.target as HTMLSelectElement).value;
  if (!id) return;
  try {
    const s = await api("GET", `/ui/api/apps/logsearch/searches/${encodeURIComponent(id)}`, undefined, scopeParams(false));
    $<HTMLTextAreaElement>("spl").value = s.spl ?? "";
    if (s.database && s.database !== scope.database && Array.from($<HTMLSelectElement>("database").options).some((o) => o.value === s.database)) {
      scope.database = s.database;
      $<HTMLSelectElement>("database").value = s.database;
    }
    setRange(s.earliest ?? "", s.latest ?? "");
    (e.target as HTMLSelectElement).value = "";
    runSearch();
  } catch (err) {
    showError($("search-error"), err);
  }
});

const dialog = $("save-dialog") as HTMLDialogElement;
$("save").addEventListener("click", () => {
  $("save-error").hidden = true;
  dialog.showModal();
  $<HTMLInputElement>("save-name").focus();
});
$("save-cancel").addEventListener("click", (e) => { e.preventDefault(); dialog.close(); });
$("save-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  const { earliest, latest } = range();
  const body: Record<string, unknown> = {
    name: $<HTMLInputElement>("save-name").value,
    spl: $<HTMLTextAreaElement>("spl").value,
    database: scope.database,
    visibility: $<HTMLSelectElement>("save-visibility").value,
    earliest: earliest || "0",
  };
  if (latest) body.latest = latest;
  try {
    await api("POST", "/ui/api/apps/logsearch/searches", body, scopeParams(false));
    dialog.close();
    $("search-status").textContent = `Saved "${body.name}".`;
    await loadSaved();
  } catch (err) {
    showError($("save-error"), err);
  }
});

// ---- SQL ----------------------------------------------------------------------------

let sqlRunning: string | null = null;
$("sql-form").addEventListener("submit", (e) => { e.preventDefault(); runSQL(); });
$("sql").addEventListener("keydown", (e) => {
  if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) { e.preventDefault(); runSQL(); }
});

async function runSQL() {
  const sql = $<HTMLTextAreaElement>("sql").value.trim();
  if (!sql) return;
  const format = $<HTMLSelectElement>("format").value;
  const id = newID("ui-sql");
  sqlRunning = id;
  const status = $("sql-status");
  clearError($("sql-error"));
  $("sql-view").dataset.state = "running";
  status.textContent = "Running…";
  // Nothing of the previous answer stays beside this query's.
  $("sql-table").replaceChildren();
  $("sql-stats").replaceChildren();
  $("sql-raw").hidden = true;
  $("sql-raw").textContent = "";
  $<HTMLButtonElement>("sql-cancel").disabled = false;
  const t0 = performance.now();
  try {
    const res = await api("POST", "/ui/api/query", { sql, format }, { ...scopeParams(), query_id: id }, format.startsWith("JSON") && !format.startsWith("JSONEachRow"));
    const stats = $("sql-stats");
    const table = $("sql-table") as HTMLTableElement;
    const raw = $("sql-raw");
    if (typeof res === "string") {
      table.replaceChildren();
      raw.hidden = false;
      raw.textContent = res;
      stats.replaceChildren(stat("elapsed (browser)", `${((performance.now() - t0) / 1000).toFixed(3)} s`));
      status.textContent = "Done.";
    } else {
      raw.hidden = true;
      renderTable(table, res.meta, res.data);
      const st = res.statistics ?? {};
      stats.replaceChildren(
        stat("elapsed", `${(+st.elapsed || 0).toFixed(3)} s`),
        stat("rows read", (+st.rows_read || 0).toLocaleString("en")),
        stat("bytes read", (+st.bytes_read || 0).toLocaleString("en")),
      );
      status.textContent = `${res.rows.toLocaleString("en")} rows.`;
    }
    $("sql-view").dataset.state = "done";
  } catch (err) {
    $("sql-view").dataset.state = err instanceof ApiError && err.code === "canceled" ? "canceled" : "error";
    if (err instanceof ApiError && err.code === "canceled") status.textContent = "Query canceled.";
    else {
      status.textContent = "";
      showError($("sql-error"), err);
    }
  } finally {
    if (sqlRunning === id) {
      sqlRunning = null;
      $<HTMLButtonElement>("sql-cancel").disabled = true;
    }
  }
}

function stat(name: string, value: string) {
  return el("div", {}, el("dt", {}, name), el("dd", { "data-stat": name }, value));
}

$("sql-cancel").addEventListener("click", () => {
  if (!sqlRunning) return;
  const id = sqlRunning;
  $("sql-status").textContent = "Canceling…";
  cancelQuery(id, () => sqlRunning === id, $("sql-error"));
});

start();
