// veil workbench: the little the pages need beyond HTML forms. No inline script (the
// Content-Security-Policy forbids it), no other origin.
"use strict";

function csrf() {
  const meta = document.querySelector('meta[name="csrf"]');
  return meta ? meta.content : "";
}

// A job's page: poll its state, show its last step, move on when it is done.
function followJob(box) {
  const message = document.getElementById("job-message");
  const error = document.getElementById("job-error");
  const bar = document.getElementById("job-progress");
  const tick = async () => {
    const answer = await fetch("/jobs/" + encodeURIComponent(box.dataset.job), { credentials: "same-origin" });
    const job = await answer.json();
    message.textContent = job.message;
    if (job.done && job.error) {
      bar.hidden = true;
      error.hidden = false;
      error.textContent = job.error;
      const back = document.createElement("a");
      back.href = job.after;
      back.textContent = " Back";
      error.appendChild(back);
      return;
    }
    if (job.done) { window.location.assign(job.after); return; }
    setTimeout(tick, 250);
  };
  tick();
}

// The policy editor: validated as it is typed.
function validatePolicy(area) {
  const status = document.getElementById("policy-status");
  let timer = null;
  area.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(async () => {
      const answer = await fetch("/policy/validate", {
        method: "POST", credentials: "same-origin",
        headers: { "X-CSRF-Token": csrf(), "Content-Type": "text/plain" }, body: area.value,
      });
      const result = await answer.json();
      status.textContent = result.message;
      status.className = result.ok ? "note good" : "note bad";
    }, 300);
  });
}

// A role or treatment chosen in the scan's table is saved at once (one click).
function saveOnChange(form) {
  form.querySelectorAll("select").forEach((select) => {
    select.addEventListener("change", () => form.requestSubmit());
  });
}

// The hierarchy wizard's drag and drop: values dragged into named groups write the
// "group: value, value" lines of the rule, which the form posts as typed ones would be.
function grouping(box) {
  const form = box.closest("form");
  const rule = form.querySelector("textarea[name=parameter]");
  const kind = form.querySelector("select[name=kind]");
  let dragged = null;
  const write = () => {
    const lines = [];
    box.querySelectorAll(".buckets .bucket").forEach((bucket) => {
      const name = bucket.querySelector("input").value.trim();
      const values = Array.from(bucket.querySelectorAll(".chip")).map((c) => c.textContent);
      if (name && values.length) lines.push(name + ": " + values.join(", "));
    });
    rule.value = lines.join("\n");
    kind.value = "groups";
  };
  const accept = (bucket) => {
    bucket.addEventListener("dragover", (e) => e.preventDefault());
    bucket.addEventListener("drop", (e) => {
      e.preventDefault();
      if (dragged) { bucket.appendChild(dragged); write(); }
    });
  };
  box.querySelectorAll(".chip").forEach((chip) => {
    chip.addEventListener("dragstart", () => { dragged = chip; });
  });
  accept(box.querySelector(".pool"));
  const add = () => {
    const bucket = document.createElement("div");
    bucket.className = "bucket";
    const name = document.createElement("input");
    name.value = "group " + (box.querySelectorAll(".buckets .bucket").length + 1);
    name.setAttribute("aria-label", "group name");
    name.addEventListener("input", write);
    bucket.appendChild(name);
    box.querySelector(".buckets").appendChild(bucket);
    accept(bucket);
  };
  box.querySelector(".add-group").addEventListener("click", add);
  add();
}

document.addEventListener("DOMContentLoaded", () => {
  document.querySelectorAll(".grouping").forEach(grouping);
  document.querySelectorAll("form.role").forEach(saveOnChange);
  const box = document.getElementById("job");
  if (box) followJob(box);
  const area = document.getElementById("policy");
  if (area) validatePolicy(area);
});
