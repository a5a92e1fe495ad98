// The code's size against the real limit (UTF-8 bytes, as the server counts
// it): always shown beside the editor, so the limit is known before it is
// met, and checked before sending; and the offer to reset an empty editor to
// the starter code.
import { $ } from "./dom.js";

const encoder = new TextEncoder();

function bytes(n) { return n.toLocaleString("en-US"); }

export function createSize(limit, getCode) {
  const box = $("size-state");
  let timer = null;
  function measure() {
    const code = getCode();
    return { code, size: encoder.encode(code).length };
  }
  function now() {
    const { code, size } = measure();
    // Always shown: the limit is stated before it is met, not only once exceeded.
    box.hidden = false;
    box.textContent = bytes(size) + " / " + bytes(limit) + " bytes";
    box.classList.toggle("over", size > limit);
    $("empty-offer").hidden = code.trim() !== "";
  }
  return {
    update() { clearTimeout(timer); timer = setTimeout(now, 150); },
    /** The sentence that refuses this code before it is sent, or "". The server says the same. */
    problem() {
      now();
      const { code, size } = measure();
      if (!code.trim()) return "The editor is empty, so there is nothing to run. Write your solution, or reset to the starter code.";
      if (size > limit) return "Your code is " + bytes(size) + " bytes; the limit is " + bytes(limit) + " bytes. Remove some of it (large data belongs in the tests, not the solution).";
      return "";
    },
  };
}
