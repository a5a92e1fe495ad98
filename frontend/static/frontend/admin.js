// The Django admin, made to pass axe (issue 59, item 16): on a narrow screen the
// admin lets an inline's table scroll sideways inside its group; a keyboard user
// must be able to focus the group to scroll it (axe's scrollable-region-focusable).
document.addEventListener("DOMContentLoaded", () => {
  for (const group of document.querySelectorAll(".inline-group")) {
    if (group.hasAttribute("tabindex")) continue;
    const title = group.querySelector("h2");
    group.setAttribute("tabindex", "0");
    group.setAttribute("role", "region");
    group.setAttribute("aria-label", title ? title.textContent.trim() : "Related records");
  }
});
