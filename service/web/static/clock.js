// Match clocks in words: a seat's time left, ticking locally between states, its deadline in
// local time, and the match's time control. Written defensively: a server without clocks
// (no `clock`, no `timeControl`) shows nothing.
//
// A state's `clock` is {serverTime, seats: [{seat, remainingMs, deadline, running,
// turnStartedAt}]}: `remainingMs` is what was left at `serverTime`. A running seat keeps
// draining: the client keeps the offset between the server's clock and its own when the
// state arrives and counts down from the deadline (or from remainingMs) locally.

/** The server's clock minus this browser's, in milliseconds (0 when unknown). */
export function clockOffset(clock, now = Date.now()) {
  const server = clock && Date.parse(clock.serverTime);
  return Number.isFinite(server) ? server - now : 0;
}

/** One seat's clock entry of a state, or null. */
export function seatClock(clock, seat) {
  if (!clock || !Array.isArray(clock.seats)) return null;
  return clock.seats.find((c) => c && c.seat === seat) || null;
}

/** Milliseconds left for a seat's clock entry now (server time = local `now` + offset), or
 * null for an untimed seat. Never below zero. */
export function remainingNow(entry, clock, offset, now = Date.now()) {
  if (!entry) return null;
  const serverNow = now + offset;
  if (entry.running) {
    const deadline = entry.deadline ? Date.parse(entry.deadline) : NaN;
    if (Number.isFinite(deadline)) return Math.max(0, deadline - serverNow);
    const at = clock && Date.parse(clock.serverTime);
    if (typeof entry.remainingMs === "number" && Number.isFinite(at)) {
      return Math.max(0, entry.remainingMs - (serverNow - at));
    }
  }
  return typeof entry.remainingMs === "number" ? Math.max(0, entry.remainingMs) : null;
}

const pad = (n) => String(n).padStart(2, "0");

/** "4:05" (m:ss), "1:02:03" (h:mm:ss) under a day, "3 d 4 h" beyond. */
export function formatRemaining(ms) {
  if (ms === null || ms === undefined) return "";
  // Round up: a clock reads 0:00 only when the time is over.
  const seconds = Math.ceil(ms / 1000);
  if (seconds >= 86400) {
    const days = Math.floor(seconds / 86400);
    const hours = Math.floor((seconds % 86400) / 3600);
    return `${days} d ${hours} h`;
  }
  const hours = Math.floor(seconds / 3600);
  const minutes = Math.floor((seconds % 3600) / 60);
  const rest = seconds % 60;
  return hours ? `${hours}:${pad(minutes)}:${pad(rest)}` : `${minutes}:${pad(rest)}`;
}

/** The whole time of a time control in ms (a move's time, or the base time), or null. */
export function controlTotalMs(control) {
  if (!control) return null;
  if (control.correspondence) return (control.correspondence.secondsPerMove || 0) * 1000 || null;
  if (control.live) return (control.live.baseSeconds || 0) * 1000 || null;
  return null;
}

/** A clock is low under 10 s or under a tenth of its time control. */
export function isLow(ms, control) {
  if (ms === null || ms === undefined) return false;
  const total = controlTotalMs(control);
  return ms < 10_000 || (total !== null && ms < total / 10);
}

function duration(seconds) {
  if (seconds % 86400 === 0) return `${seconds / 86400} ${seconds === 86400 ? "day" : "days"}`;
  if (seconds % 3600 === 0) return `${seconds / 3600} h`;
  if (seconds % 60 === 0) return `${seconds / 60} min`;
  return `${seconds} s`;
}

/** "10 s per move", "2 days per move", "10+5" (minutes + seconds added per turn), or "". */
export function formatControl(control) {
  if (!control) return "";
  if (control.correspondence && typeof control.correspondence.secondsPerMove === "number") {
    return `${duration(control.correspondence.secondsPerMove)} per move`;
  }
  if (control.live && typeof control.live.baseSeconds === "number") {
    const base = control.live.baseSeconds;
    const minutes = base % 60 === 0 ? String(base / 60) : (base / 60).toFixed(1);
    return `${minutes}+${control.live.incrementSeconds || 0}`;
  }
  return "";
}

/** What happens at a timeout, in words, or "". */
export function formatOnTimeout(onTimeout) {
  if (!onTimeout) return "";
  if (onTimeout.policy === "bot") return `at a timeout a ${onTimeout.bot || "random"} bot takes the seat (it can be taken back)`;
  if (onTimeout.policy === "forfeit") return "at a timeout the seat forfeits";
  return "";
}

/** A deadline in local time: the time of day today, else the date too. */
export function formatDeadline(iso, now = new Date()) {
  const when = iso ? new Date(iso) : null;
  if (!when || Number.isNaN(when.getTime())) return "";
  const sameDay = when.toDateString() === now.toDateString();
  const time = when.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" });
  return sameDay ? time : `${when.toLocaleDateString()} ${time}`;
}

// ------------------------------------------------------------------------------ the forms
/** The time control fields of a match form (ids `<prefix>-kind`, `-seconds`, `-base`,
 * `-increment`, `-policy`) in `fieldset`: none, correspondence (seconds per move) or live
 * (base minutes + increment seconds), and what happens at a timeout. */
export function timeControlFields(fieldset, prefix, el) {
  const id = (name) => `${prefix}-${name}`;
  const field = (name, label, input, hint = null) => el("div", { class: "field", "data-for": name },
    el("label", { for: id(name), text: label }), input, hint ? el("p", { class: "hint", text: hint }) : null);
  const number = (name, min, max, value) => el("input", {
    id: id(name), name: id(name), type: "number", inputmode: "numeric", min, max, value,
  });
  const kind = el("select", { id: id("kind"), name: id("kind") },
    el("option", { value: "", text: "None: no clock" }),
    el("option", { value: "correspondence", text: "Correspondence: a deadline for each move" }),
    el("option", { value: "live", text: "Live: a clock per seat, with an increment" }));
  const policy = el("select", { id: id("policy"), name: id("policy") },
    el("option", { value: "forfeit", text: "The seat forfeits (out of the match)" }),
    el("option", { value: "bot:random", text: "A random bot plays it (it can be taken back)" }),
    el("option", { value: "bot:greedy", text: "A greedy bot plays it (it can be taken back)" }),
    el("option", { value: "bot:search", text: "A search bot plays it (it can be taken back)" }));
  const seconds = field("seconds", "Seconds per move", number("seconds", 10, 14 * 86400, 86400),
    "86400 is a day; at least 10.");
  const base = field("base", "Minutes per seat", number("base", 1, 180, 10));
  const increment = field("increment", "Seconds added per turn", number("increment", 0, 180, 5));
  const onTimeout = field("policy", "When a seat's time runs out", policy);
  const show = () => {
    seconds.hidden = kind.value !== "correspondence";
    base.hidden = increment.hidden = kind.value !== "live";
    onTimeout.hidden = kind.value === "";
  };
  kind.addEventListener("change", show);
  fieldset.replaceChildren(el("legend", { text: "Clock" }), field("kind", "Time control", kind),
    seconds, base, increment, onTimeout);
  show();
}

/** The form's choice as request fields: {timeControl, onTimeout}, or {} for no clock. */
export function readTimeControl(prefix) {
  const value = (name) => document.getElementById(`${prefix}-${name}`)?.value ?? "";
  const kind = value("kind");
  if (!kind) return {};
  const timeControl = kind === "correspondence"
    ? { correspondence: { secondsPerMove: Number(value("seconds")) } }
    : { live: { baseSeconds: Math.round(Number(value("base")) * 60), incrementSeconds: Number(value("increment") || 0) } };
  const policy = value("policy");
  const onTimeout = policy.startsWith("bot:") ? { policy: "bot", bot: policy.slice(4) } : { policy: "forfeit" };
  return { timeControl, onTimeout };
}
