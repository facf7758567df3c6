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

document.addEventListener("DOMContentLoaded", () => {
  const box = document.getElementById("job");
  if (box) followJob(box);
  const area = document.getElementById("policy");
  if (area) validatePolicy(area);
});
