// A ticking m:ss timer while a job is queued or running.
export function createTimer(element) {
  let started = 0, ticking = null;
  function show() {
    const s = Math.floor((Date.now() - started) / 1000);
    element.textContent = Math.floor(s / 60) + ":" + String(s % 60).padStart(2, "0");
  }
  return {
    start() {
      started = Date.now();
      element.hidden = false;
      show();
      clearInterval(ticking);
      ticking = setInterval(show, 1000);
    },
    stop() { clearInterval(ticking); ticking = null; },
  };
}
