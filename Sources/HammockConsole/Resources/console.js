// The Hammock console: plain JavaScript against the mock's own API and its admin API, no build step.
"use strict";

const admin = document.body.dataset.admin;
const state = {
  token: sessionStorage.getItem("hammock-admin-token") || "",
  resources: [], routes: [], current: null, page: 1, perPage: 10, sort: null, order: "asc", total: 0, editing: null,
};
const $ = (id) => document.getElementById(id);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function element(name, attributes = {}, ...children) {
  const node = document.createElement(name);
  for (const [key, value] of Object.entries(attributes)) {
    if (key === "text") node.textContent = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value);
  }
  for (const child of children) node.append(child);
  return node;
}

function say(id, text, failed = false) {
  const node = $(id);
  node.textContent = text;
  node.classList.toggle("failed", failed);
}

async function describe(response) {
  try {
    const problem = await response.json();
    return `${response.status} ${problem.title || response.statusText}${problem.detail ? ": " + problem.detail : ""}`;
  } catch {
    return `${response.status} ${response.statusText}`;
  }
}

// A call to the admin API, with the token when one was given.
async function adminCall(method, path, body) {
  const headers = { Accept: "application/json" };
  if (state.token) headers.Authorization = "Bearer " + state.token;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(admin + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  if (response.status === 401) {
    $("token-form").hidden = false;
    throw new Error("The admin API needs its token (the server's --admin-token).");
  }
  if (!response.ok) throw new Error(await describe(response));
  return response.status === 204 ? null : response.json();
}

// A call to the mock's own API, as any client makes it.
async function apiCall(method, path, body) {
  const headers = { Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  if (!response.ok) throw new Error(await describe(response));
  const total = response.headers.get("X-Total-Count");
  return { value: response.status === 204 ? null : await response.json(), total: total === null ? null : Number(total) };
}

// MARK: Resources and stubs

function collectionPath(resource) {
  const row = state.routes.find((route) => route.resource === resource && !route.pattern.includes(":"));
  return row ? row.pattern : null;
}

async function loadOverview() {
  const [version, resources, routes] = await Promise.all([
    adminCall("GET", "/version"), adminCall("GET", "/resources"), adminCall("GET", "/routes"),
  ]);
  state.resources = resources;
  state.routes = routes;
  say("server", `Hammock ${version.version} at ${location.origin}`);
  const body = $("resources").tBodies[0];
  body.replaceChildren();
  for (const resource of resources) {
    const list = element("ul");
    for (const route of routes.filter((route) => route.resource === resource.name)) {
      list.append(element("li", {}, element("code", { text: `${route.methods.join(", ")} ${route.pattern}` })));
    }
    const open = element("button", {
      type: "button", class: "secondary", text: resource.name, "aria-label": `Browse ${resource.name}`,
      onclick: () => { $("resource").value = resource.name; chooseResource(resource.name); $("data-heading").focus(); },
    });
    body.append(element("tr", {}, element("th", { scope: "row" }, open), element("td", {}, list),
      element("td", { "data-count": resource.name, text: String(resource.count) })));
  }
  const stubs = $("stubs");
  stubs.replaceChildren();
  const own = routes.filter((route) => !route.resource);
  for (const route of own) stubs.append(element("li", {}, element("code", { text: `${route.methods.join(", ")} ${route.pattern}` })));
  if (own.length === 0) stubs.append(element("li", { text: "None." }));
  const select = $("resource");
  const chosen = select.value;
  select.replaceChildren(...resources.map((resource) => element("option", { value: resource.name, text: resource.name })));
  if (resources.some((resource) => resource.name === chosen)) select.value = chosen;
}

async function refreshCounts() {
  const resources = await adminCall("GET", "/resources");
  for (const resource of resources) {
    const cell = document.querySelector(`[data-count="${CSS.escape(resource.name)}"]`);
    if (cell) cell.textContent = String(resource.count);
  }
}

// MARK: Data

function resource() { return state.resources.find((candidate) => candidate.name === state.current); }

function chooseResource(name) {
  state.current = name;
  state.page = 1;
  state.sort = null;
  state.order = "asc";
  stopEditing();
  buildForm();
  loadRecords().catch((error) => say("data-status", error.message, true));
}

function display(value) {
  if (value === null || value === undefined) return "";
  return typeof value === "object" ? JSON.stringify(value) : String(value);
}

async function loadRecords() {
  const current = resource();
  if (!current) return;
  const path = collectionPath(current.name);
  const table = $("records");
  if (!path) {
    table.tHead.replaceChildren();
    table.tBodies[0].replaceChildren();
    say("page-status", `${current.name} cannot be listed`);
    return;
  }
  const query = new URLSearchParams({ _page: String(state.page), _per_page: String(state.perPage) });
  if (state.sort) { query.set("_sort", state.sort); query.set("_order", state.order); }
  const { value: records, total } = await apiCall("GET", `${path}?${query}`);
  state.total = total ?? records.length;
  const columns = Object.keys(current.fields);
  const head = element("tr");
  for (const column of columns) {
    const sorted = state.sort === column ? (state.order === "asc" ? "ascending" : "descending") : "none";
    const button = element("button", { type: "button", text: column, onclick: () => sortBy(column) });
    head.append(element("th", { scope: "col", "aria-sort": sorted }, button));
  }
  head.append(element("th", { scope: "col", text: "Actions" }));
  table.tHead.replaceChildren(head);
  const body = table.tBodies[0];
  body.replaceChildren();
  for (const record of records) {
    const key = record[current.primaryKey];
    const row = element("tr", { "data-key": String(key) });
    for (const column of columns) row.append(element("td", { text: display(record[column]) }));
    const actions = element("td", {},
      element("button", { type: "button", text: "Edit", "aria-label": `Edit ${current.name} ${key}`, onclick: () => startEditing(record) }),
      " ",
      element("button", { type: "button", class: "danger", text: "Delete", "aria-label": `Delete ${current.name} ${key}`,
        onclick: () => removeRecord(key) }));
    row.append(actions);
    body.append(row);
  }
  const pages = Math.max(1, Math.ceil(state.total / state.perPage));
  say("page-status", `Page ${state.page} of ${pages} (${state.total} records)`);
  $("previous").disabled = state.page <= 1;
  $("next").disabled = state.page >= pages;
}

function sortBy(column) {
  if (state.sort === column) state.order = state.order === "asc" ? "desc" : "asc";
  else { state.sort = column; state.order = "asc"; }
  loadRecords().catch((error) => say("data-status", error.message, true));
}

function buildForm() {
  const current = resource();
  const fields = $("fields");
  fields.replaceChildren();
  if (!current) return;
  for (const [name, type] of Object.entries(current.fields)) {
    if (name === current.primaryKey && current.keyIsGenerated) continue;
    const id = `field-${name}`;
    let input;
    if (type === "boolean") {
      input = element("select", { id, name },
        element("option", { value: "", text: "(not set)" }), element("option", { value: "true", text: "true" }),
        element("option", { value: "false", text: "false" }));
    } else {
      input = element("input", { id, name, type: type === "integer" || type === "float" ? "number" : "text" });
      if (type === "float") input.step = "any";
      if (type === "date") input.placeholder = "2024-05-01";
      if (type === "json") input.placeholder = "JSON, such as {\"a\": 1}";
      if (type === "blob") input.placeholder = "base64";
    }
    input.dataset.type = type;
    const required = (current.required || []).includes(name);
    const fallback = (current.defaults || {})[name];
    // A required field without a default must be given on a create (the server says 422 otherwise).
    if (required && fallback === undefined) input.required = true;
    if (fallback !== undefined && type !== "boolean") input.placeholder = `default: ${display(fallback)}`;
    const notes = [type, required ? "required" : null].filter(Boolean).join(", ");
    fields.append(element("label", { for: id, text: `${name} (${notes})` }), input);
  }
}

function formValues() {
  const current = resource();
  const values = {};
  for (const input of $("fields").querySelectorAll("input, select")) {
    const text = input.value.trim();
    if (text === "" || input.disabled) continue;
    switch (input.dataset.type) {
      case "integer": values[input.name] = parseInt(text, 10); break;
      case "float": values[input.name] = parseFloat(text); break;
      case "boolean": values[input.name] = text === "true"; break;
      case "json":
        try { values[input.name] = JSON.parse(text); } catch { throw new Error(`${input.name} is not JSON`); }
        break;
      default: values[input.name] = text;
    }
  }
  if (current && current.fields[current.primaryKey] && !current.keyIsGenerated && values[current.primaryKey] === undefined && !state.editing) {
    throw new Error(`${current.primaryKey} is required: ${current.name} are keyed by it`);
  }
  return values;
}

function startEditing(record) {
  const current = resource();
  state.editing = record[current.primaryKey];
  for (const input of $("fields").querySelectorAll("input, select")) {
    input.value = display(record[input.name]);
    input.disabled = input.name === current.primaryKey;
  }
  $("form-legend").textContent = `Edit ${current.name} ${state.editing}`;
  $("save").textContent = "Save";
  $("cancel-edit").hidden = false;
  $("fields").querySelector("input:not([disabled]), select:not([disabled])")?.focus();
}

function stopEditing() {
  state.editing = null;
  $("record-form").reset();
  for (const input of $("fields").querySelectorAll("input, select")) input.disabled = false;
  $("form-legend").textContent = "New record";
  $("save").textContent = "Create";
  $("cancel-edit").hidden = true;
}

async function saveRecord(event) {
  event.preventDefault();
  const current = resource();
  const path = collectionPath(current.name);
  try {
    const values = formValues();
    if (state.editing === null) {
      const { value } = await apiCall("POST", path, values);
      say("data-status", `Created ${current.name} ${value[current.primaryKey]}.`);
    } else {
      await apiCall("PATCH", `${path}/${encodeURIComponent(state.editing)}`, values);
      say("data-status", `Saved ${current.name} ${state.editing}.`);
    }
    stopEditing();
    await loadRecords();
    await refreshCounts();
  } catch (error) {
    say("data-status", error.message, true);
  }
}

async function removeRecord(key) {
  const current = resource();
  if (!confirm(`Delete ${current.name} ${key}?`)) return;
  try {
    await apiCall("DELETE", `${collectionPath(current.name)}/${encodeURIComponent(key)}`);
    say("data-status", `Deleted ${current.name} ${key}.`);
    await loadRecords();
    await refreshCounts();
  } catch (error) {
    say("data-status", error.message, true);
  }
}

// MARK: The live log (the journal's event stream, read with fetch so the token can go with it)

function addLogRow(entry) {
  const body = $("log").tBodies[0];
  const status = entry.refused ? "refused" : entry.response ? String(entry.response.status) : "no answer";
  const path = entry.request.path + (entry.request.query ? "?" + entry.request.query : "");
  const row = element("tr", {},
    element("td", { text: new Date(entry.time).toLocaleTimeString([], { hour12: false }) }), element("td", { text: entry.request.method }),
    element("td", {}, element("code", { text: path })),
    element("td", { class: `status-${status[0]}`, text: status + (entry.fault ? " (fault)" : "") }),
    element("td", { text: entry.durationMs.toFixed(1) }));
  body.prepend(row);
  while (body.rows.length > 200) body.deleteRow(body.rows.length - 1);
  if (!["GET", "HEAD"].includes(entry.request.method)) refreshCounts().catch(() => {});
}

async function followLog() {
  for (;;) {
    try {
      const headers = { Accept: "text/event-stream" };
      if (state.token) headers.Authorization = "Bearer " + state.token;
      const response = await fetch(admin + "/events", { headers });
      if (response.status === 401) { $("token-form").hidden = false; return; }
      if (!response.ok || !response.body) throw new Error(await describe(response));
      say("log-status", "Following every request the mock answers.");
      const reader = response.body.getReader();
      const decoder = new TextDecoder();
      let buffer = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        let end;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = block.split("\n").filter((line) => line.startsWith("data:")).map((line) => line.slice(5).trim()).join("\n");
          if (block.includes("event: request") && data) addLogRow(JSON.parse(data));
        }
      }
    } catch (error) {
      say("log-status", `The live log stopped (${error.message}); trying again…`, true);
    }
    await sleep(1000);
  }
}

// MARK: Faults and latency

function faultText(fault) {
  const what = fault.status ? `answers ${fault.status}` : fault.kind ? `${fault.kind}` : fault.delay ? "delays" : "throttles";
  return `${fault.route}: ${what}${fault.rate !== undefined ? ` (${Math.round(fault.rate * 100)}% of requests)` : ""} [${fault.name}]`;
}

async function loadFaults() {
  const [faults, latency] = await Promise.all([adminCall("GET", "/faults"), adminCall("GET", "/latency")]);
  const list = $("faults");
  list.replaceChildren();
  faults.forEach((fault) => {
    list.append(element("li", {}, faultText(fault), " ",
      element("button", { type: "button", class: "danger", text: "Switch off", "aria-label": `Switch off: ${faultText(fault)}`,
        onclick: () => changeFaults(() => adminCall("DELETE", `/faults/${encodeURIComponent(fault.name)}`), `${fault.name} is off.`) })));
  });
  if (faults.length === 0) list.append(element("li", { text: "No fault in force." }));
  $("latency-min").value = latency ? latency.min : 0;
  $("latency-max").value = latency ? latency.max : 0;
}

// One fault at a time, by name (POST /faults, DELETE /faults/NAME): a test changing other faults at
// the same moment keeps its own, which replacing the whole list would have dropped.
async function changeFaults(change, message) {
  try {
    await change();
    say("faults-status", message);
    await loadFaults();
  } catch (error) {
    say("faults-status", error.message, true);
  }
}

async function addFault(event) {
  event.preventDefault();
  const kind = $("fault-kind").value;
  const fault = { route: $("fault-route").value.trim() || "*" };
  if (/^\d+$/.test(kind)) fault.status = Number(kind); else fault.kind = kind;
  const rate = Number($("fault-rate").value);
  if (rate < 100) fault.rate = rate / 100;
  await changeFaults(async () => {
    const added = await adminCall("POST", "/faults", fault);
    return added;
  }, "Fault added.");
}

async function setLatency(event) {
  event.preventDefault();
  try {
    const min = Number($("latency-min").value), max = Number($("latency-max").value);
    if (max < min) throw new Error("The most must be at least the least.");
    await adminCall("PUT", "/latency", { min, max });
    say("faults-status", `Latency ${min} to ${max} s.`);
  } catch (error) {
    say("faults-status", error.message, true);
  }
}

// MARK: Start

async function start() {
  try {
    await loadOverview();
    if (state.resources.length > 0) chooseResource($("resource").value || state.resources[0].name);
    await loadFaults();
    followLog();
  } catch (error) {
    say("server", error.message, true);
  }
}

$("token-form").addEventListener("submit", (event) => {
  event.preventDefault();
  state.token = $("token").value;
  sessionStorage.setItem("hammock-admin-token", state.token);
  $("token-form").hidden = true;
  start();
});
$("resource").addEventListener("change", (event) => chooseResource(event.target.value));
$("per-page").addEventListener("change", (event) => {
  state.perPage = Number(event.target.value);
  state.page = 1;
  loadRecords().catch((error) => say("data-status", error.message, true));
});
$("previous").addEventListener("click", () => { state.page -= 1; loadRecords(); });
$("next").addEventListener("click", () => { state.page += 1; loadRecords(); });
$("record-form").addEventListener("submit", saveRecord);
$("cancel-edit").addEventListener("click", stopEditing);
$("fault-form").addEventListener("submit", addFault);
$("clear-faults").addEventListener("click", () => changeFaults(() => adminCall("DELETE", "/faults"), "Every fault is off."));
$("latency-form").addEventListener("submit", setLatency);
$("clear-latency").addEventListener("click", async () => {
  try { await adminCall("DELETE", "/latency"); say("faults-status", "No latency."); await loadFaults(); }
  catch (error) { say("faults-status", error.message, true); }
});
start();
