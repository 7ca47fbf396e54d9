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

  // A filter form a phone's first screen should not be filled with: <details data-open-on-wide>
  // comes closed from the server (open while a filter is in use), and opens on wide screens.
  if (window.matchMedia("(min-width: 701px)").matches) {
    for (const details of document.querySelectorAll("details[data-open-on-wide]")) details.open = true;
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

  // A flag's conditions reordered in place: the move buttons (plain submits without this
  // script) move the fieldset and rewrite the hidden order, which saving applies.
  const conditionList = document.querySelector("[data-condition-list]");
  const orderField = document.querySelector("input[data-condition-order]");
  const orderStatus = document.querySelector("[data-order-status]");
  if (conditionList && orderField) {
    const renumber = () => {
      const fields = Array.from(conditionList.querySelectorAll("fieldset[data-condition]"));
      fields.forEach((field, index) => {
        const legend = field.querySelector("[data-legend]");
        if (legend) legend.textContent = `Priority ${index + 1}: ${field.dataset.condition}`;
        const up = field.querySelector("button[data-move='up']");
        const down = field.querySelector("button[data-move='down']");
        if (up) up.disabled = index === 0;
        if (down) down.disabled = index === fields.length - 1;
      });
      orderField.value = fields.map((field) => field.dataset.condition).join("\n");
    };
    conditionList.addEventListener("click", (event) => {
      const button = event.target instanceof Element ? event.target.closest("button[data-move]") : null;
      if (!button) return;
      event.preventDefault();
      const field = button.closest("fieldset[data-condition]");
      if (!field) return;
      if (button.dataset.move === "up" && field.previousElementSibling) {
        conditionList.insertBefore(field, field.previousElementSibling);
      } else if (button.dataset.move === "down" && field.nextElementSibling) {
        conditionList.insertBefore(field.nextElementSibling, field);
      }
      renumber();
      button.focus();
      const position = Array.from(conditionList.children).indexOf(field) + 1;
      if (orderStatus) orderStatus.textContent = `${field.dataset.condition} is now priority ${position}. Save to keep the order.`;
    });
  }

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

// Conditions page: live syntax checking and the instant rule builder in the condition editor,
// drag-and-drop reordering in the list. Without script the editor's buttons post the form and
// the list's Up and Down buttons move conditions.
function conditionsPage() {
  const editor = document.querySelector("form[data-condition-editor]");
  if (editor) conditionEditor(editor);
  const rows = document.querySelector("tbody[data-reorder]");
  if (rows) conditionReordering(rows);
}

function conditionEditor(form) {
  const textarea = form.querySelector("#expression");
  const message = form.querySelector("#expression-message");
  const where = form.querySelector("#expression-where");
  const ruleStatus = form.querySelector("#rule-status");
  const csrf = form.querySelector("input[name=_csrf]").value;
  let timer = null;
  let sequence = 0;

  const post = async (url, fields) => {
    const body = new URLSearchParams(fields);
    body.set("_csrf", csrf);
    const response = await fetch(url, { method: "POST", body, credentials: "same-origin" });
    if (!response.ok) throw new Error(`the server answered ${response.status}`);
    return response.json();
  };

  const show = (text, result) => {
    where.replaceChildren();
    if (!text.trim()) {
      message.textContent = "";
      message.className = "";
      where.hidden = true;
      textarea.removeAttribute("aria-invalid");
      return;
    }
    if (result.ok) {
      message.textContent = "No syntax problem.";
      message.className = "field-ok";
      where.hidden = true;
      textarea.removeAttribute("aria-invalid");
      return;
    }
    message.textContent = result.message;
    message.className = "field-error";
    textarea.setAttribute("aria-invalid", "true");
    const characters = Array.from(text.trim());
    const start = Math.max(0, Math.min(result.column - 1, characters.length));
    const length = Math.min(result.length || 0, characters.length - start);
    const mark = document.createElement("mark");
    mark.textContent = length > 0 ? characters.slice(start, start + length).join("") : " ";
    where.append(characters.slice(0, start).join(""), mark, characters.slice(start + length).join(""));
    where.hidden = false;
  };

  const check = async () => {
    const text = textarea.value;
    const mine = ++sequence;
    if (!text.trim()) {
      show(text, { ok: true });
      return;
    }
    try {
      const result = await post(form.dataset.checkUrl, { expression: text });
      if (mine === sequence) show(text, result);
    } catch (error) {
      if (mine === sequence) message.textContent = `Could not check the expression: ${error.message}`;
    }
  };

  textarea.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(check, 300);
  });

  for (const button of form.querySelectorAll("button[name=add]")) {
    button.addEventListener("click", async (event) => {
      event.preventDefault();
      const fields = Object.fromEntries(new FormData(form));
      fields.add = button.value;
      try {
        const result = await post(form.dataset.buildUrl, fields);
        ruleStatus.textContent = result.message;
        ruleStatus.className = result.ok ? "" : "field-error";
        if (result.ok) {
          textarea.value = result.expression;
          clearTimeout(timer);
          check();
        }
      } catch (error) {
        ruleStatus.textContent = `Could not add the rule: ${error.message}`;
        ruleStatus.className = "field-error";
      }
    });
  }
}

function conditionReordering(body) {
  const form = document.querySelector(body.dataset.reorder);
  if (!form) return;
  let dragged = null;

  const clearMarks = () => {
    for (const row of body.rows) row.classList.remove("drop-before", "drop-after");
  };
  const placement = (row) => {
    const rows = Array.from(body.rows);
    return rows.indexOf(dragged) < rows.indexOf(row) ? "after" : "before";
  };

  for (const handle of body.querySelectorAll(".drag-handle")) {
    handle.hidden = false;
    handle.draggable = true;
    handle.addEventListener("dragstart", (event) => {
      dragged = handle.closest("tr");
      dragged.classList.add("dragging");
      event.dataTransfer.effectAllowed = "move";
      event.dataTransfer.setData("text/plain", dragged.dataset.condition);
    });
    handle.addEventListener("dragend", () => {
      if (dragged) dragged.classList.remove("dragging");
      dragged = null;
      clearMarks();
    });
  }

  body.addEventListener("dragover", (event) => {
    const row = event.target instanceof Element ? event.target.closest("tr") : null;
    if (!dragged || !row || row === dragged) return;
    event.preventDefault();
    event.dataTransfer.dropEffect = "move";
    clearMarks();
    row.classList.add(placement(row) === "after" ? "drop-after" : "drop-before");
  });

  body.addEventListener("drop", (event) => {
    const row = event.target instanceof Element ? event.target.closest("tr") : null;
    if (!dragged || !row || row === dragged) return;
    event.preventDefault();
    if (placement(row) === "after") row.after(dragged);
    else row.before(dragged);
    clearMarks();
    const names = Array.from(body.rows, (each) => each.dataset.condition);
    const status = document.getElementById("reorder-status");
    if (status) status.textContent = `Saving the new order: ${names.join(", ")}.`;
    form.elements.order.value = names.join("\n");
    form.submit();
  });
}

document.addEventListener("DOMContentLoaded", conditionsPage);
