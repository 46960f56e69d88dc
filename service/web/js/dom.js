// A tiny element builder: h("button", {onclick, "aria-label": "…"}, "text", child…).
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "class") el.className = v;
    else if (k === "text") el.textContent = v;
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  append(el, children);
  return el;
}

// Replace an element's children (null/false children are skipped, arrays flattened).
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

const SVG = "http://www.w3.org/2000/svg";
export function s(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) if (v !== null && v !== undefined) el.setAttribute(k, String(v));
  append(el, children);
  return el;
}

// A card: its value when visible, "remembered" when only known (recall: perfect), else its back.
export function card(value, { known = null, label = "", cls = "" } = {}) {
  if (value !== null && value !== undefined) {
    return h("span", { class: `card up ${cls}`, title: `${label} ${value}`.trim(), "data-card": value }, String(value));
  }
  if (known !== null && known !== undefined) {
    return h("span", { class: `card known ${cls}`, title: `${label} face down, remembered: ${known}`.trim(),
      "aria-label": `${label} face down, remembered ${known}`.trim(), "data-known": known }, String(known));
  }
  return h("span", { class: `card back ${cls}`, title: `${label} face down`.trim(), "aria-label": `${label} face down`.trim() }, "");
}

export function seatName(view, k) {
  const p = (view.players || []).find((pl) => pl.seat === k);
  return p ? p.name : `seat ${k}`;
}
