// Calls to the API through /ui/api/…, which checks the CSRF token bound to the session.

let csrf = "";
export function setCSRF(t: string) {
  csrf = t;
}

// ApiError is the service's error envelope: {"error": {"code", "message", "hint"}}.
export class ApiError extends Error {
  constructor(public status: number, public code: string, message: string, public hint = "", public field = "") {
    super(message);
  }
}

export async function api(method: string, path: string, body?: unknown, params?: Record<string, string>, json = true): Promise<any> {
  const q = params ? "?" + new URLSearchParams(Object.entries(params).filter(([, v]) => v !== "")).toString() : "";
  const headers: Record<string, string> = { "X-CSRF-Token": csrf };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  let r: Response;
  try {
    r = await fetch(path + q, { method, credentials: "same-origin", headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch (e) {
    throw new ApiError(0, "network_error", "the service did not answer: " + String(e));
  }
  if (r.status === 204) return null;
  const text = await r.text();
  if (r.status >= 400) {
    let e: any = null;
    try {
      e = JSON.parse(text)?.error;
    } catch {
      /* not the envelope */
    }
    if (r.status === 401 && e?.code === "unauthenticated" && path.startsWith("/ui/")) {
      // The session ended: back to the sign-in form.
      location.reload();
    }
    throw new ApiError(r.status, e?.code ?? "http_" + r.status, e?.message ?? (text.slice(0, 500) || r.statusText), e?.hint ?? "", e?.field ?? "");
  }
  return json ? JSON.parse(text) : text;
}
