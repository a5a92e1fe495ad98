// Every refusal the workspace can meet, as one sentence for the learner: the
// server's own words when it sent them (a JSON "error"), else a sentence for
// what the answer means. Each says where the learner's code is.
const KEPT = "Your code is still in the editor and kept in this browser.";

export const OFFLINE = "Could not reach the server: check your connection, then try again. " + KEPT;
export const OFFLINE_CANCEL = "Could not reach the server to cancel: check your connection, then try again.";

/** A request answered by the login page: the session ended (expired, or logged out in another tab). */
export function isLoggedOut(resp) {
  return resp.redirected || resp.status === 401;
}

export const LOGGED_OUT_DRAFT = "Draft kept in this browser only: you are logged out. Reload the page and log in to save it.";

/**
 * The session has ended: the header (this page's, or the module page's around
 * the embedded workspace) stops naming the user, and nothing claims "Draft saved".
 */
export function markLoggedOut() {
  const docs = [document];
  try { if (window.top !== window && window.top.document) docs.push(window.top.document); } catch (e) { /* another origin */ }
  for (const doc of docs) {
    const who = doc.querySelector(".topbar .who");
    if (who) { who.textContent = "Logged out"; who.classList.add("logged-out"); }
    const logout = doc.querySelector('.topbar form[action*="logout"]');
    if (logout) logout.hidden = true;
  }
  const saveState = document.getElementById("save-state");
  if (saveState) saveState.textContent = LOGGED_OUT_DRAFT;
}

/**
 * The sentence for a refused request. `data` is its JSON body, if any;
 * `limit` the code limit in bytes; `missing` what a 404 means here.
 */
export function refusalText(resp, data, { limit = 0, missing = "" } = {}) {
  if (isLoggedOut(resp)) markLoggedOut();
  if (data && data.error) return data.error;
  if (isLoggedOut(resp)) return "You are logged out: your session has ended. " + KEPT + " Reload the page and log in; your edits come back.";
  const status = resp.status;
  if (status === 403) {
    return "The server no longer accepts this page (you logged in again, perhaps in another tab). Reload the page, then try again. " + KEPT;
  }
  if (status === 404) {
    if (missing) return missing + " " + KEPT;
    return "This exercise is no longer published here. " + KEPT + " Copy it somewhere safe before you leave the page.";
  }
  if (status === 413) {
    return "Your code is too large to send" + (limit ? "; the limit is " + limit.toLocaleString("en-US") + " bytes" : "") + ". Remove some of it, then try again.";
  }
  if (status === 500) return "Something went wrong on our side (error 500), so your code was not graded. " + KEPT + " Try again in a moment.";
  if (status > 500) return "The server is not answering right now (error " + status + "). " + KEPT + " Try again in a moment.";
  return "The server refused this (error " + status + "). " + KEPT + " Reload the page and try again.";
}

/** Why an autosave did not reach the server, after "Draft kept in this browser only: ". */
export function draftRefusal(resp, data) {
  if (data && data.error) return data.error;
  if (isLoggedOut(resp)) return "you are logged out. Reload the page and log in to save it.";
  if (resp.status === 403) return "reload the page to save it on the server.";
  if (resp.status >= 500) return "the server could not save it (error " + resp.status + "). It tries again with your next edit.";
  return "the server refused it (error " + resp.status + ").";
}
