// Small DOM helpers shared by the workspace modules.
export const $ = (id) => document.getElementById(id);

export function setStatus(text, cls) {
  const box = $("status");
  box.textContent = text;
  box.className = "status" + (cls ? " " + cls : "");
}
