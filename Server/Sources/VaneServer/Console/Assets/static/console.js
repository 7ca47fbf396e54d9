// Vane console: progressive enhancement only. Every flow works without this file.
"use strict";

document.addEventListener("DOMContentLoaded", () => {
  // Copy buttons: <button data-copy="#input-id">.
  for (const button of document.querySelectorAll("button[data-copy]")) {
    button.addEventListener("click", async () => {
      const input = document.querySelector(button.dataset.copy);
      if (!input) return;
      input.select();
      try {
        await navigator.clipboard.writeText(input.value);
        button.textContent = "Copied";
      } catch {
        document.execCommand("copy");
        button.textContent = "Copied";
      }
    });
  }

  // Forms that ask first: <form data-confirm="question">.
  for (const form of document.querySelectorAll("form[data-confirm]")) {
    form.addEventListener("submit", (event) => {
      if (!window.confirm(form.dataset.confirm)) event.preventDefault();
    });
  }

  // Flag values checked as you type, by the type chosen above them: the same rules as the
  // server's validator (which still decides on save).
  const typeSelect = document.querySelector("select[data-value-type]");
  const checkValue = (area) => {
    const message = document.getElementById(area.dataset.checkValue);
    const mode = document.getElementById(area.id.replace(/-value$/, "-mode"));
    if (!message) return;
    let problem = "";
    const text = area.value;
    if (!mode || mode.value === "value") {
      const type = typeSelect ? typeSelect.value : "STRING";
      if (type === "BOOLEAN" && !/^(true|false)$/i.test(text)) {
        problem = `"${text}" is not a BOOLEAN; write true or false`;
      } else if (type === "NUMBER" && !/^-?(\d*\.)?\d+$/.test(text)) {
        problem = `"${text}" is not a NUMBER; write a decimal such as 42 or -0.5`;
      } else if (type === "JSON") {
        try {
          JSON.parse(text);
        } catch (error) {
          problem = `Not valid JSON: ${error.message}`;
        }
      }
    }
    message.textContent = problem;
    message.classList.toggle("check-error", problem !== "");
    area.setAttribute("aria-invalid", problem === "" ? "false" : "true");
  };
  const valueAreas = Array.from(document.querySelectorAll("textarea[data-check-value]"));
  for (const area of valueAreas) {
    area.addEventListener("input", () => checkValue(area));
    const mode = document.getElementById(area.id.replace(/-value$/, "-mode"));
    if (mode) mode.addEventListener("change", () => checkValue(area));
  }
  if (typeSelect) typeSelect.addEventListener("change", () => valueAreas.forEach(checkValue));

  // Live filtering of table rows: <input data-filter-rows="#tbody"> over rows with data-search.
  for (const input of document.querySelectorAll("input[data-filter-rows]")) {
    const body = document.querySelector(input.dataset.filterRows);
    const count = document.getElementById("flag-count");
    if (!body) continue;
    const rows = Array.from(body.rows);
    const total = rows.length;
    input.addEventListener("input", () => {
      const words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
      let shown = 0;
      for (const row of rows) {
        const text = row.dataset.search || "";
        const match = words.every((word) => text.includes(word));
        row.hidden = !match;
        if (match) shown += 1;
      }
      if (count) count.textContent = `Showing ${shown} of ${total}.`;
    });
  }

  // "/" focuses the first filter box, as in most consoles.
  document.addEventListener("keydown", (event) => {
    if (event.key !== "/" || event.ctrlKey || event.metaKey || event.altKey) return;
    const target = event.target;
    if (target instanceof HTMLElement && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName))) return;
    const filter = document.querySelector("input[data-filter-rows]");
    if (filter) {
      event.preventDefault();
      filter.focus();
    }
  });
});

// Who gets what: live filtering by text and "only differences", over rows with data-search and
// data-differs; the same filters work as a plain GET form without script.
function whoGetsWhat() {
  const input = document.querySelector("input[data-evaluate-filter]");
  if (!input) return;
  const body = document.querySelector(input.dataset.evaluateFilter);
  const only = document.querySelector("input[data-evaluate-only]");
  const count = document.getElementById("evaluate-count");
  if (!body) return;
  const rows = Array.from(body.rows);
  const apply = () => {
    const words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
    const differencesOnly = only ? only.checked : false;
    let shown = 0;
    let differing = 0;
    for (const row of rows) {
      const text = row.dataset.search || "";
      const differs = row.dataset.differs === "yes";
      if (differs) differing += 1;
      const match = words.every((word) => text.includes(word)) && (!differencesOnly || differs);
      row.hidden = !match;
      if (match) shown += 1;
    }
    if (count) count.textContent = `Showing ${shown} of ${rows.length} keys.` + (only ? ` ${differing} differ.` : "");
  };
  input.addEventListener("input", apply);
  if (only) only.addEventListener("change", apply);
}
document.addEventListener("DOMContentLoaded", whoGetsWhat);
