// The Skyline REST API as used by the reference client: plain fetch, problem+json errors,
// and a Server-Sent Events reader over fetch (EventSource cannot send a Bearer token).
// Every request names the client's language (Accept-Language): the server answers its texts
// (legal moves, events, problems, the catalogue) in English, Czech or German.

/** The languages the server speaks, with their own names. */
export const LANGUAGES = { en: "English", cs: "Čeština", de: "Deutsch" };

/** An RFC 9457 problem answered by the API (status, code, title, detail, currentVersion). */
export class ApiProblem extends Error {
  constructor(status, body) {
    const detail = (body && (body.detail || body.title)) || `HTTP ${status}`;
    super(detail);
    this.status = status;
    this.code = (body && body.code) || "http_" + status;
    this.title = (body && body.title) || "";
    this.detail = detail;
    this.body = body || {};
  }
}

export class Api {
  constructor(base = "", lang = "en") {
    this.base = base;
    this.lang = lang in LANGUAGES ? lang : "en";
  }

  async request(path, { method = "GET", token = null, body = undefined, accept = "application/json", signal, cache = "no-store" } = {}) {
    const headers = { Accept: accept, "Accept-Language": this.lang };
    if (token) headers.Authorization = `Bearer ${token}`;
    if (body !== undefined) headers["Content-Type"] = "application/json";
    const response = await fetch(this.base + path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal,
      cache,
    });
    if (!response.ok) {
      let problem = null;
      try {
        problem = await response.json();
      } catch {
        problem = null;
      }
      throw new ApiProblem(response.status, problem);
    }
    return response;
  }

  async json(path, options) {
    return (await this.request(path, options)).json();
  }

  games() {
    return this.json("/v1/games");
  }

  /** A game's component catalogue under one rules version: immutable, so the browser's
   * HTTP cache may answer it (Cache-Control: immutable). */
  catalogue(game, rulesVersion) {
    // The language is in the URL too, so that the browser's cache keeps one copy per language.
    return this.json(`/v1/games/${encodeURIComponent(game)}?rulesVersion=${encodeURIComponent(rulesVersion)}&lang=${this.lang}`, { cache: "default" });
  }

  createMatch(body) {
    return this.json("/v1/matches", { method: "POST", body });
  }

  state(matchId, token) {
    return this.json(`/v1/matches/${encodeURIComponent(matchId)}`, { token });
  }

  legalMoves(matchId, token) {
    return this.json(`/v1/matches/${encodeURIComponent(matchId)}/legal-moves`, { token });
  }

  act(matchId, token, action, expectedVersion) {
    return this.json(`/v1/matches/${encodeURIComponent(matchId)}/actions`, {
      method: "POST",
      token,
      body: { action, expectedVersion },
    });
  }

  log(matchId, token, after) {
    return this.json(`/v1/matches/${encodeURIComponent(matchId)}/log?after=${after}`, { token });
  }

  async boardSvg(matchId, token, highlight = null) {
    const query = highlight === null ? "" : `?highlight=${highlight}`;
    const response = await this.request(
      `/v1/matches/${encodeURIComponent(matchId)}/board.svg${query}`,
      { token, accept: "image/svg+xml" },
    );
    return response.text();
  }

  /**
   * Follow /events: calls onState(matchState) for every version, reconnecting with
   * Last-Event-ID after a dropped connection, until the match is finished or `signal` aborts.
   */
  async follow(matchId, token, onState, { signal, onError } = {}) {
    let lastId = null;
    let delay = 500;
    while (!signal || !signal.aborted) {
      try {
        const headers = { Accept: "text/event-stream", "Accept-Language": this.lang };
        if (token) headers.Authorization = `Bearer ${token}`;
        if (lastId !== null) headers["Last-Event-ID"] = lastId;
        const response = await fetch(`${this.base}/v1/matches/${encodeURIComponent(matchId)}/events`, {
          headers,
          signal,
          cache: "no-store",
        });
        if (response.status === 204) return; // nothing will ever follow
        if (!response.ok) {
          let body = null;
          try { body = await response.json(); } catch { body = null; }
          throw new ApiProblem(response.status, body);
        }
        delay = 500;
        let finished = false;
        for await (const event of readEvents(response.body)) {
          if (event.id) lastId = event.id;
          if (event.event !== "state" || !event.data) continue;
          const state = JSON.parse(event.data);
          onState(state);
          if (state.status === "finished") finished = true;
        }
        if (finished) return;
      } catch (error) {
        if (signal && signal.aborted) return;
        if (error instanceof ApiProblem && error.status < 500) {
          if (onError) onError(error);
          return;
        }
      }
      await new Promise((resolve) => setTimeout(resolve, delay));
      delay = Math.min(delay * 2, 8000);
    }
  }
}

/** Parse a text/event-stream body into {event, data, id} records. */
async function* readEvents(body) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  let record = { event: "message", data: [], id: null };
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      let newline;
      while ((newline = buffer.search(/\r\n|\r|\n/)) >= 0) {
        const line = buffer.slice(0, newline);
        const width = buffer.startsWith("\r\n", newline) ? 2 : 1;
        buffer = buffer.slice(newline + width);
        if (line === "") {
          if (record.data.length) {
            yield { event: record.event, data: record.data.join("\n"), id: record.id };
          }
          record = { event: "message", data: [], id: null };
          continue;
        }
        if (line.startsWith(":")) continue; // comment / ping
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        let value = colon < 0 ? "" : line.slice(colon + 1);
        if (value.startsWith(" ")) value = value.slice(1);
        if (field === "event") record.event = value;
        else if (field === "data") record.data.push(value);
        else if (field === "id") record.id = value;
      }
    }
  } finally {
    reader.releaseLock();
  }
}
